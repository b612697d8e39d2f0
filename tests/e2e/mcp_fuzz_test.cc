// Runs the real `yolo mcp` over stdio with malformed JSON-RPC: every bad message gets the
// error that is due (or none, for notifications and stray responses), and a valid ping
// after each one is still answered, in order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace yolo::test {
namespace {

std::string line(const json& j) { return j.dump() + "\n"; }

std::string init_line(const std::string& version = "2025-06-18", const json& id = 0) {
  return line({{"jsonrpc", "2.0"},
               {"id", id},
               {"method", "initialize"},
               {"params",
                {{"protocolVersion", version},
                 {"capabilities", json::object()},
                 {"clientInfo", {{"name", "fuzz"}, {"version", "1"}}}}}});
}

std::string ping_line(const json& id) { return line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}); }

std::string initialized_line() { return line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}); }

struct Case {
  std::string name;
  std::string raw;        // the message, without its newline
  int code = 0;           // expected error code; 0 = no response at all
  json id = nullptr;      // expected id of the error
};

std::string nested(size_t depth) {
  return R"({"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}}";
}

std::vector<Case> cases() {
  std::vector<Case> c = {
      {"truncated", R"({"jsonrpc":"2.0","id":1,"method":"tools/li)", -32700},
      {"lone brace", "{", -32700},
      {"garbage", "hello world", -32700},
      {"trailing garbage", R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)", -32700},
      {"nul byte", std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping"})") + std::string(1, '\0'), -32700},
      {"lone surrogate escape", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}})", -32700},
      {"number overflow", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e99999}})", -32700},
      {"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}", -32700},
      {"utf-8 surrogate bytes", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
       -32700},
      {"overlong utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xc0\xafng\"}", -32700},
      {"method not a string", R"({"jsonrpc":"2.0","id":2,"method":42})", -32600, 2},
      {"id an object", R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", -32600},
      {"id null", R"({"jsonrpc":"2.0","id":null,"method":"ping"})", -32600},
      {"id fractional", R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", -32600},
      {"id boolean", R"({"jsonrpc":"2.0","id":true,"method":"ping"})", -32600},
      {"params a string", R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"})", -32600, 3},
      {"missing jsonrpc", R"({"id":4,"method":"ping"})", -32600, 4},
      {"jsonrpc 1.0", R"({"jsonrpc":"1.0","id":"v1","method":"ping"})", -32600, "v1"},
      {"jsonrpc a number", R"({"jsonrpc":2.0,"id":5,"method":"ping"})", -32600, 5},
      {"no method", R"({"jsonrpc":"2.0","id":6})", -32600, 6},
      {"not an object: number", "123", -32600},
      {"not an object: string", R"("ping")", -32600},
      {"not an object: null", "null", -32600},
      {"batch", R"([{"jsonrpc":"2.0","id":7,"method":"ping"}])", -32600},
      {"empty batch", "[]", -32600},
      {"unknown method", R"({"jsonrpc":"2.0","id":8,"method":"no/such"})", -32601, 8},
      {"huge method name", R"({"jsonrpc":"2.0","id":9,"method":")" + std::string(100000, 'm') + R"("})", -32601, 9},
      {"notification, unknown method", R"({"jsonrpc":"2.0","method":"no/such"})", 0},
      {"notification of a request method", R"({"jsonrpc":"2.0","method":"tools/list"})", 0},
      {"notification with bad params", R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]})", 0},
      {"stray response", R"({"jsonrpc":"2.0","id":99,"result":{}})", 0},
      {"stray error response", R"({"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}})", 0},
      {"second initialize", R"({"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}})",
       -32600, 10},
      {"tools/call params array", R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2]})", -32602, 11},
      {"tools/call name a number", R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}})", -32602,
       12},
      {"tools/call unknown tool", R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"rm_rf"}})",
       -32602, 13},
      {"tools/call arguments an array",
       R"({"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"review_plan","arguments":[1]}})", -32602, 14},
      {"tools/call arguments wrong type",
       R"({"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"review_plan","arguments":{"plan_path":5}}})",
       -32602, 15},
      {"tools/call missing argument",
       R"({"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"request_human_approval","arguments":{}}})",
       -32602, 16},
      {"tools/call extra argument",
       R"({"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"manage_hitl_gate","arguments":{"action":"list","rm":true}}})",
       -32602, 17},
      {"tools/call bad enum",
       R"({"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"manage_hitl_gate","arguments":{"action":"destroy"}}})",
       -32602, 18},
      {"tools/list with a cursor", R"({"jsonrpc":"2.0","id":19,"method":"tools/list","params":{"cursor":"abc"}})",
       -32602, 19},
      {"deeply nested params", nested(100000), -32600},
      {"nested just past the limit", nested(70), -32600},
      {"deep object nesting", [] {
         std::string s;
         for (int i = 0; i < 5000; ++i) s += R"({"a":)";
         s += "1";
         s += std::string(5000, '}');
         return s;
       }(),
       -32600},
      {"huge line", R"({"jsonrpc":"2.0","id":"huge","method":"ping","params":{"x":")" + std::string(5u << 20, 'a') +
                        R"("}})",
       -32600},
  };
  return c;
}

std::vector<json> parse_lines(const std::string& out) {
  std::vector<json> v;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    EXPECT_NE(nl, std::string::npos) << "output does not end with a newline";
    if (nl == std::string::npos) break;
    std::string l = out.substr(pos, nl - pos);
    pos = nl + 1;
    EXPECT_FALSE(l.empty()) << "empty output line";
    json j = json::parse(l, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout line is not JSON: " << l.substr(0, 200);
    v.push_back(j);
  }
  return v;
}

TEST(McpFuzz, MalformedMessagesAreAnsweredAndTheServerKeepsServing) {
  TempDir repo;
  std::string input = init_line() + initialized_line();
  auto cs = cases();
  for (size_t i = 0; i < cs.size(); ++i) input += cs[i].raw + "\n" + ping_line("ping-" + std::to_string(i));
  input += "\n   \n";  // blank lines are ignored
  input += ping_line("last");
  auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto out = parse_lines(r.out);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0]["id"], 0);
  EXPECT_EQ(out[0]["result"]["protocolVersion"], "2025-06-18");
  size_t k = 1;
  for (size_t i = 0; i < cs.size(); ++i) {
    SCOPED_TRACE("case: " + cs[i].name);
    if (cs[i].code != 0) {
      ASSERT_LT(k, out.size());
      const json& e = out[k++];
      EXPECT_EQ(e["jsonrpc"], "2.0");
      ASSERT_TRUE(e.contains("error")) << e.dump().substr(0, 300);
      EXPECT_EQ(e["error"]["code"], cs[i].code) << e.dump().substr(0, 300);
      EXPECT_TRUE(e["error"]["message"].is_string());
      EXPECT_EQ(e["id"], cs[i].id) << e.dump().substr(0, 300);
      EXPECT_FALSE(e.contains("result"));
      // Errors never echo a huge message back.
      EXPECT_LT(e.dump().size(), 2000u);
    }
    ASSERT_LT(k, out.size());
    const json& p = out[k++];
    EXPECT_EQ(p["id"], "ping-" + std::to_string(i)) << p.dump().substr(0, 300);
    EXPECT_EQ(p["result"], json::object());
  }
  ASSERT_EQ(k + 1, out.size());
  EXPECT_EQ(out[k]["id"], "last");
}

TEST(McpFuzz, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  TempDir repo;
  std::string input = line({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}) + ping_line(2) +
                      line({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/call"}, {"params", {{"name", "execution_status"}}}}) +
                      line({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "initialize"}, {"params", {{"capabilities", json::object()}}}}) +
                      init_line("2025-06-18", 5) +
                      line({{"jsonrpc", "2.0"}, {"id", 6}, {"method", "tools/list"}});
  auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto out = parse_lines(r.out);
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0]["id"], 1);
  EXPECT_EQ(out[0]["error"]["code"], -32600);
  EXPECT_NE(out[0]["error"]["message"].get<std::string>().find("initialize"), std::string::npos);
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_EQ(out[1]["result"], json::object());
  EXPECT_EQ(out[2]["error"]["code"], -32600);
  EXPECT_EQ(out[3]["id"], 4);  // initialize without protocolVersion
  EXPECT_EQ(out[3]["error"]["code"], -32602);
  EXPECT_EQ(out[4]["id"], 5);
  EXPECT_EQ(out[4]["result"]["serverInfo"]["name"], "yolo");
  EXPECT_EQ(out[4]["result"]["capabilities"], json({{"tools", json::object()}}));
  EXPECT_EQ(out[5]["id"], 6);
  EXPECT_EQ(out[5]["result"]["tools"].size(), 4u);
}

TEST(McpFuzz, VersionNegotiation) {
  TempDir repo;
  for (auto [asked, answered] : std::vector<std::pair<std::string, std::string>>{
           {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"}, {"2025-11-25", "2025-06-18"},
           {"2024-11-05", "2025-06-18"}, {"not-a-version", "2025-06-18"}}) {
    SCOPED_TRACE(asked);
    auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, init_line(asked, "i"));
    EXPECT_EQ(r.exit_code, 0);
    auto out = parse_lines(r.out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]["id"], "i");
    EXPECT_EQ(out[0]["result"]["protocolVersion"], answered);
  }
}

TEST(McpFuzz, BatchesUnderProtocol20250326) {
  TempDir repo;
  std::string input =
      init_line("2025-03-26", 1) + initialized_line() +
      R"([{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},)"
      R"({"jsonrpc":"2.0","id":"b","method":"no/such"},{"jsonrpc":"2.0","id":"c","method":"initialize","params":{}},5])" "\n"
      R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])" "\n" +
      line({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}) + ping_line(3);
  auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto out = parse_lines(r.out);
  ASSERT_EQ(out.size(), 4u);
  ASSERT_TRUE(out[1].is_array());
  ASSERT_EQ(out[1].size(), 4u);
  EXPECT_EQ(out[1][0]["id"], "a");
  EXPECT_EQ(out[1][0]["result"], json::object());
  EXPECT_EQ(out[1][1]["error"]["code"], -32601);
  EXPECT_EQ(out[1][2]["id"], "c");
  EXPECT_EQ(out[1][2]["error"]["code"], -32600);  // initialize may not be batched
  EXPECT_EQ(out[1][3]["id"], nullptr);
  EXPECT_EQ(out[1][3]["error"]["code"], -32600);
  // 2025-03-26 has neither outputSchema nor titles.
  for (const auto& t : out[2]["result"]["tools"]) {
    EXPECT_FALSE(t.contains("outputSchema"));
    EXPECT_TRUE(t.contains("inputSchema"));
  }
  EXPECT_EQ(out[3]["id"], 3);
}

TEST(McpFuzz, ToolResultsUnder20250326CarryTheJsonAsTextOnly) {
  TempDir repo;
  write_file(repo / ".yolo-planning/phases/01-x/01-01-PLAN.md",
             "---\nphase: 01\nplan: 01\ntitle: T\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"x\"\n---\n# P\n");
  json call = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
               {"params", {{"name", "review_plan"}, {"arguments", {{"plan_path", ".yolo-planning/phases/01-x/01-01-PLAN.md"}}}}}};
  for (std::string version : {"2025-03-26", "2025-06-18"}) {
    SCOPED_TRACE(version);
    auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, init_line(version, 1) + line(call));
    auto out = parse_lines(r.out);
    ASSERT_EQ(out.size(), 2u);
    const json& res = out[1]["result"];
    EXPECT_EQ(res["isError"], false);
    json text = json::parse(res["content"].back()["text"].get<std::string>());
    EXPECT_EQ(text["verdict"], "approve");
    EXPECT_EQ(res.contains("structuredContent"), version == "2025-06-18");
    if (version == "2025-06-18") {
      EXPECT_EQ(res["structuredContent"], text);
    }
  }
}

TEST(McpFuzz, LastMessageWithoutNewlineIsAnsweredAndEndOfInputExitsCleanly) {
  TempDir repo;
  auto r = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {},
                    init_line() + R"({"jsonrpc":"2.0","id":"end","method":"ping"})");
  EXPECT_EQ(r.exit_code, 0);
  auto out = parse_lines(r.out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["id"], "end");
  // Empty input: nothing written, clean exit.
  auto e = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, "");
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.out, "");
  // A truncated final message gets its parse error.
  auto t = run_yolo({"mcp", "--repo", repo.path().string()}, repo.path(), {}, init_line() + R"({"jsonrpc":"2.0","id")");
  auto tout = parse_lines(t.out);
  ASSERT_EQ(tout.size(), 2u);
  EXPECT_EQ(tout[1]["error"]["code"], -32700);
}

TEST(McpFuzz, CustomMessageCapAndMissingRepo) {
  TempDir repo;
  std::string big = R"({"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":")" + std::string(3000, 'a') + R"("}})";
  auto r = run_yolo({"mcp", "--repo", repo.path().string(), "--max-message-bytes", "2048"}, repo.path(), {},
                    init_line() + big + "\n" + ping_line("after"));
  auto out = parse_lines(r.out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1]["error"]["code"], -32600);
  EXPECT_NE(out[1]["error"]["message"].get<std::string>().find("2048"), std::string::npos);
  EXPECT_EQ(out[2]["id"], "after");
  auto bad = run_yolo({"mcp", "--repo", (repo.path() / "nope").string()}, repo.path(), {}, init_line());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("nope"), std::string::npos);
}

}  // namespace
}  // namespace yolo::test
