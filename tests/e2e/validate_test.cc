// `yolo validate`: the real binary on real files in temp folders.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "test_support.h"

namespace yolo::test {
namespace {

namespace stdfs = std::filesystem;

stdfs::path example(const std::string& schema, const std::string& file) {
  return source_dir() / "tests" / "schema_examples" / schema / file;
}

// The seed example of a record kind, as JSON text, wrapped ({"kind": {...}}) or not.
json seed(const std::string& schema) { return json::parse(read_file(example(schema, "valid-seed.json"))); }

bool has_error(const json& result, const std::string& pointer, const std::string& text) {
  for (const auto& e : result["errors"])
    if (e["pointer"] == pointer && e["message"].get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(Validate, WrappedRecordIsDetectedAndValid) {
  TempDir d;
  write_file(d / "ev.json", json{{"evidence", seed("evidence")}}.dump());
  auto r = run_yolo({"validate", "ev.json", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cmd"], "validate");
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["schema"], "evidence");
  EXPECT_EQ(j["kind"], "evidence");
  EXPECT_EQ(j["file"], "ev.json");
  EXPECT_EQ(j["errors"], json::array());
}

TEST(Validate, EverySeedRecordValidatesWrappedAndUnwrapped) {
  TempDir d;
  std::vector<std::string> args = {"validate", "--json"};
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"todo", "todo"},       {"evidence", "evidence"}, {"review_gate", "review-gate"}, {"handoff", "handoff"},
      {"conflict", "conflict"}, {"metrics", "metrics"}, {"skill", "skill"},             {"startup", "startup"},
      {"recovery", "recovery"}};
  for (const auto& [kind, schema] : kinds) {
    write_file(d / (kind + ".json"), seed(schema).dump());
    write_file(d / (kind + "-wrapped.json"), json{{kind, seed(schema)}}.dump());
    args.push_back(kind + ".json");
    args.push_back(kind + "-wrapped.json");
  }
  auto r = run_yolo(args, d.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto lines = r.json_lines();
  ASSERT_EQ(lines.size(), kinds.size() * 2);
  for (size_t i = 0; i < kinds.size(); ++i) {
    for (size_t w = 0; w < 2; ++w) {
      const json& j = lines[2 * i + w];
      EXPECT_EQ(j["valid"], true) << j.dump();
      EXPECT_EQ(j["schema"], kinds[i].second) << j.dump();
      EXPECT_EQ(j["kind"], kinds[i].first) << j.dump();
    }
  }
}

TEST(Validate, InvalidRecordPrintsEachErrorWithItsPointer) {
  TempDir d;
  json ev = seed("evidence");
  ev["id"] = "E-impl-abc-1";
  ev["verified"] = "yes";
  ev.erase("claim");
  write_file(d / "bad.json", json{{"evidence", ev}}.dump());
  auto r = run_yolo({"validate", "bad.json", "--json"}, d.path());
  EXPECT_EQ(r.exit_code, 1);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["schema"], "evidence");
  // Pointers point into the file, through the wrapper.
  EXPECT_TRUE(has_error(j, "/evidence/id", "regex")) << j.dump();
  EXPECT_TRUE(has_error(j, "/evidence/verified", "type")) << j.dump();
  EXPECT_TRUE(has_error(j, "/evidence", "'claim'")) << j.dump();
  EXPECT_EQ(j["errors"].size(), 3u) << j.dump();

  auto h = run_yolo({"validate", "bad.json"}, d.path());
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_NE(h.out.find("✗ bad.json: 3 errors against evidence"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("/evidence/id: "), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("(got \"E-impl-abc-1\")"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("/evidence: Missing required property 'claim'"), std::string::npos) << h.out;
}

TEST(Validate, MissingFileIsOneWithAClearMessage) {
  TempDir d;
  auto r = run_yolo({"validate", "nope.json", "--json"}, d.path());
  EXPECT_EQ(r.exit_code, 1);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"], "file not found: nope.json");
  auto h = run_yolo({"validate", "nope.json"}, d.path());
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_NE(h.out.find("file not found: nope.json"), std::string::npos) << h.out;
}

TEST(Validate, PlanAndSummaryFrontmatterByFileName) {
  TempDir d;
  write_file(d / "01-02-PLAN.md",
             "---\nphase: 01\nplan: 02\ntitle: CLI\nwave: 1\ndepends_on: []\nmust_haves:\n  - works\n---\n# body\n");
  write_file(d / "03-PLAN.md", "---\nphase: 1\ntitle: CLI\nwave: 0\ndepends_on: []\nmust_haves: []\n---\n");
  write_file(d / "01-02-SUMMARY.md",
             "---\nphase: 01\nplan: 02\ntitle: CLI\nstatus: complete\ncompleted: 2026-02-24\ntasks_completed: 2\n"
             "tasks_total: 2\ncommit_hashes: [abc1234]\ndeviations: []\n---\n## What Was Built\n");
  write_file(d / "03-SUMMARY.md", "---\nphase: 1\nplan: 3\ntitle: x\nstatus: done\n---\n");
  auto r = run_yolo({"validate", "--json", "01-02-PLAN.md", "03-PLAN.md", "01-02-SUMMARY.md", "03-SUMMARY.md"}, d.path());
  EXPECT_EQ(r.exit_code, 1);
  auto l = r.json_lines();
  ASSERT_EQ(l.size(), 4u) << r.out;
  EXPECT_EQ(l[0]["schema"], "plan-frontmatter");
  EXPECT_EQ(l[0]["valid"], true) << l[0].dump();
  EXPECT_EQ(l[0]["frontmatter"], true);
  EXPECT_EQ(l[1]["valid"], false);
  EXPECT_TRUE(has_error(l[1], "", "'plan'")) << l[1].dump();
  EXPECT_TRUE(has_error(l[1], "/wave", "greater than or equal to 1")) << l[1].dump();
  EXPECT_TRUE(has_error(l[1], "/must_haves", "")) << l[1].dump();
  EXPECT_EQ(l[2]["schema"], "summary-frontmatter");
  EXPECT_EQ(l[2]["valid"], true) << l[2].dump();
  EXPECT_EQ(l[3]["valid"], false);
  EXPECT_TRUE(has_error(l[3], "/status", "enum")) << l[3].dump();
  EXPECT_TRUE(has_error(l[3], "", "'commit_hashes'")) << l[3].dump();
}

TEST(Validate, BrokenMarkdownAndJsonNameTheFileAndPlace) {
  TempDir d;
  write_file(d / "nofm-PLAN.md", "# just a heading\n");
  write_file(d / "yaml-PLAN.md", "---\ntitle: x\nlist: [a, b\nwave: 1\n---\n");
  write_file(d / "broken.json", "{\"evidence\":\n  {\"id\": 1,,}}");
  write_file(d / "binary.json", std::string("{\"a\":\0\x01\x02}", 10));
  write_file(d / "deep.json", std::string(200000, '[') + std::string(200000, ']'));
  write_file(d / "huge.json", "[" + std::string(2 << 20, ' ') + "]");
  for (const char* f : {"nofm-PLAN.md", "yaml-PLAN.md", "broken.json", "binary.json", "deep.json", "huge.json"}) {
    auto r = run_yolo({"validate", f, "--json"}, d.path());
    EXPECT_EQ(r.exit_code, 1) << f << ": " << r.out << r.err;
    json j = r.json_out();
    EXPECT_EQ(j["ok"], false) << f;
    std::string e = j.value("error", "");
    EXPECT_EQ(e.rfind(f, 0), 0u) << f << " not named first in: " << e;
  }
  auto yaml = run_yolo({"validate", "yaml-PLAN.md", "--json"}, d.path()).json_out();
  EXPECT_NE(yaml["error"].get<std::string>().find("yaml-PLAN.md:"), std::string::npos);
  EXPECT_NE(yaml["error"].get<std::string>().find("YAML"), std::string::npos) << yaml.dump();
  auto broken = run_yolo({"validate", "broken.json", "--json"}, d.path()).json_out();
  EXPECT_NE(broken["error"].get<std::string>().find("line 2"), std::string::npos) << broken.dump();
  auto deep = run_yolo({"validate", "deep.json", "--json"}, d.path()).json_out();
  EXPECT_NE(deep["error"].get<std::string>().find("nested deeper than"), std::string::npos) << deep.dump();
}

TEST(Validate, StateAndConfigByFileName) {
  TempDir d;
  write_file(d / ".yolo-planning" / ".execution-state.json", read_file(example("execution-state", "valid-running.json")));
  write_file(d / ".yolo-planning" / "config.json", R"({"review_gate": "sometimes", "approvers": {"vision": "skip"}})");
  write_file(d / "other" / ".execution-state.json", R"({"status": "paused"})");
  auto r = run_yolo({"validate", "--json", ".yolo-planning/.execution-state.json", ".yolo-planning/config.json",
                     "other/.execution-state.json"},
                    d.path());
  EXPECT_EQ(r.exit_code, 1);
  auto l = r.json_lines();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0]["schema"], "execution-state");
  EXPECT_EQ(l[0]["valid"], true) << l[0].dump();
  EXPECT_EQ(l[1]["schema"], "config");
  EXPECT_TRUE(has_error(l[1], "/review_gate", "enum")) << l[1].dump();
  EXPECT_EQ(l[1]["errors"].size(), 1u) << l[1].dump();
  EXPECT_EQ(l[2]["schema"], "execution-state");
  EXPECT_TRUE(has_error(l[2], "/status", "enum")) << l[2].dump();
}

TEST(Validate, AReviewLedgerByItsFolder) {
  TempDir d;
  write_file(d / ".yolo-planning" / ".reviews" / "01-core.json", read_file(example("review-ledger", "valid-phase.json")));
  write_file(d / ".yolo-planning" / ".reviews" / "02-api.json", read_file(example("review-ledger", "invalid-record.json")));
  auto r = run_yolo({"validate", "--json", ".yolo-planning/.reviews/01-core.json", ".yolo-planning/.reviews/02-api.json"},
                    d.path());
  EXPECT_EQ(r.exit_code, 1);
  auto l = r.json_lines();
  ASSERT_EQ(l.size(), 2u) << r.out << r.err;
  EXPECT_EQ(l[0]["schema"], "review-ledger");
  EXPECT_EQ(l[0]["valid"], true) << l[0].dump();
  EXPECT_EQ(l[1]["schema"], "review-ledger");
  EXPECT_TRUE(has_error(l[1], "/reviews/01-01/verdict", "enum")) << l[1].dump();
}

TEST(Validate, SchemaOptionOverridesDetection) {
  TempDir d;
  write_file(d / "fm.md", "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves: [x]\n---\n");
  write_file(d / "msg.json", R"({"type": "hitl_approval", "from_role": "dev", "payload": {"plan_path": "R.md", "gate_type": "vision", "status": "pending"}})");
  EXPECT_EQ(run_yolo({"validate", "fm.md"}, d.path()).exit_code, 1);  // kind unknown by name
  EXPECT_EQ(run_yolo({"validate", "fm.md", "--schema", "plan-frontmatter"}, d.path()).exit_code, 0);
  // The typed message is detected by content; dev may not send hitl_approval.
  auto m = run_yolo({"validate", "msg.json", "--json"}, d.path());
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(m.json_out()["schema"], "hitl-approval");
  EXPECT_TRUE(has_error(m.json_out(), "/from_role", "enum")) << m.out;
  auto roles = run_yolo({"validate", "msg.json", "--schema", "message-roles", "--json"}, d.path());
  EXPECT_EQ(roles.exit_code, 1);
  EXPECT_TRUE(has_error(roles.json_out(), "/from_role", "enum")) << roles.out;
  // A wrapped record given with --schema is unwrapped too.
  write_file(d / "rg.json", json{{"review_gate", seed("review-gate")}}.dump());
  EXPECT_EQ(run_yolo({"validate", "rg.json", "--schema", "review-gate"}, d.path()).exit_code, 0);
  EXPECT_EQ(run_yolo({"validate", "rg.json", "--schema", "evidence"}, d.path()).exit_code, 1);
}

TEST(Validate, UnknownSchemaOrStageIsAUsageError) {
  TempDir d;
  write_file(d / "a.json", "{}");
  auto r = run_yolo({"validate", "a.json", "--schema", "nope", "--json"}, d.path());
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.json_out()["error"].get<std::string>().find("unknown schema 'nope'"), std::string::npos);
  EXPECT_NE(r.json_out()["error"].get<std::string>().find("plan-frontmatter"), std::string::npos);
  auto s = run_yolo({"validate", "--stage", "DEPLOY", "a.json"}, d.path());
  EXPECT_EQ(s.exit_code, 64);
  EXPECT_NE(s.err.find("unknown stage 'DEPLOY'"), std::string::npos) << s.err;
  EXPECT_EQ(run_yolo({"validate"}, d.path()).exit_code, 64);
}

TEST(Validate, UndetectableDocumentAsksForASchema) {
  TempDir d;
  write_file(d / "notes.json", R"({"hello": "world"})");
  auto r = run_yolo({"validate", "notes.json", "--json"}, d.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.json_out()["error"].get<std::string>().find("--schema"), std::string::npos) << r.out;
}

TEST(Validate, ListPrintsEverySchemaFile) {
  std::set<std::string> files;
  for (const auto& e : stdfs::directory_iterator(source_dir() / "schemas"))
    if (e.path().extension() == ".json") files.insert(e.path().stem().string());
  auto r = run_yolo({"validate", "--list", "--json"});
  ASSERT_EQ(r.exit_code, 0);
  std::set<std::string> listed;
  json j = r.json_out();
  for (const auto& n : j["schemas"]) listed.insert(n.get<std::string>());
  EXPECT_EQ(listed, files);
  auto h = run_yolo({"validate", "--list"});
  EXPECT_EQ(h.exit_code, 0);
  for (const auto& f : files) EXPECT_NE(h.out.find(f + "\n"), std::string::npos) << f;
}

TEST(Validate, StageGatePassesWithTheRequiredRecords) {
  TempDir d;
  write_file(d / "todo.json", seed("todo").dump());
  write_file(d / "evidence.json", json{{"evidence", seed("evidence")}}.dump());
  auto r = run_yolo({"validate", "--stage", "plan", "todo.json", "evidence.json", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["stage"], "PLAN");
  EXPECT_EQ(j["action"], "PROCEED");
  EXPECT_EQ(j["required"], json({"todo", "evidence"}));
  EXPECT_EQ(j["checked"], json({"todo", "evidence"}));
  EXPECT_EQ(j["missing"], json::array());
  auto h = run_yolo({"validate", "--stage", "PLAN", "todo.json", "evidence.json"}, d.path());
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("✓ PLAN gate passed: PROCEED"), std::string::npos) << h.out;
}

TEST(Validate, StageGateFailsOnMissingOrInvalidRecords) {
  TempDir d;
  json skill = seed("skill");
  skill["tested"] = "yes";
  // A file of records (a JSON array), one broken; plus a file that is not a record.
  write_file(d / "learn.json", json::array({json{{"skill", skill}}, json{{"metrics", seed("metrics")}}}).dump());
  write_file(d / "notes.json", R"({"hello": 1})");
  auto r = run_yolo({"validate", "--stage", "LEARN", "learn.json", "notes.json", "--json"}, d.path());
  EXPECT_EQ(r.exit_code, 1);
  json j = r.json_out();
  EXPECT_EQ(j["action"], "REVISE");
  EXPECT_EQ(j["missing"], json::array());
  ASSERT_EQ(j["records"].size(), 3u);
  EXPECT_EQ(j["records"][0]["source"], "learn.json[0]");
  EXPECT_EQ(j["records"][0]["valid"], false);
  EXPECT_EQ(j["records"][0]["errors"][0]["pointer"], "/skill/tested");
  EXPECT_EQ(j["records"][2]["kind"], nullptr);
  EXPECT_EQ(j["errors"].size(), 1u) << j.dump();

  auto m = run_yolo({"validate", "--stage", "TEST", "notes.json", "--json"}, d.path());
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(m.json_out()["missing"], json({"evidence", "metrics"}));
  EXPECT_EQ(m.json_out()["errors"], json({"Missing required: evidence", "Missing required: metrics"}));

  auto h = run_yolo({"validate", "--stage", "TEST", "notes.json", "missing.json"}, d.path());
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_NE(h.out.find("○ notes.json: not a workflow record (ignored)"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("✗ file not found: missing.json"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("✗ Missing required: evidence"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("✗ TEST gate failed: REVISE"), std::string::npos) << h.out;
}

TEST(Validate, NoColourOnAPipe) {
  TempDir d;
  write_file(d / "notes.json", R"({"hello": 1})");
  auto r = run_yolo({"validate", "--stage", "TEST", "notes.json"}, d.path());
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

TEST(Validate, EveryCorpusPlanValidatesInOneProcess) {
  std::vector<std::string> args = {"validate", "--json"};
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(corpus_dir(), ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (it->is_regular_file() && n.size() > 8 && n.ends_with("-PLAN.md")) args.push_back(it->path().string());
  }
  if (args.size() == 2) GTEST_SKIP() << "no corpus";
  auto r = run_yolo(args);
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  auto lines = r.json_lines();
  EXPECT_EQ(lines.size(), args.size() - 2);
  for (const auto& l : lines) EXPECT_EQ(l["schema"], "plan-frontmatter");
}

}  // namespace
}  // namespace yolo::test
