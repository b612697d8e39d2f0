// What agents cost, end to end: stand-in agents print their usage the way Claude Code does
// with `--output-format json` (and log what they printed to a file of the test's own); yolo
// records each call, `yolo status` totals them per plan, phase and run, and a `budget` the run
// passes pauses it at the budget gate until a person approves at a terminal.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace yolo::test {
namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
std::string report(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// The executor does the plan's work with fixtures/agents/executor-ok, then prints its usage:
// $0.30 and 1000 + the plan's number input tokens, 100 output, 7 cache read, 3 cache write.
const char* kExecutor =
    "#!/bin/sh\n"
    "set -e\n"
    "\"$(dirname \"$0\")/executor-ok\" \"$1\" \"$2\" >&2\n"
    "n=$(expr 1000 + \"${YOLO_PLAN_ID#*-}\")\n"
    "echo \"$YOLO_PLAN_ID executor 0.30 $(expr $n + 110)\" >> \"$COST_LOG\"\n"
    "printf '{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"done\",\"total_cost_usd\":0.30,\"usage\":"
    "{\"input_tokens\":%s,\"output_tokens\":100,\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":3}}\\n' "
    "\"$n\"\n";

// The reviewer approves inside its JSON result: $0.01, 50 + 20 tokens.
const char* kReviewer =
    "#!/bin/sh\n"
    "echo \"$YOLO_PLAN_ID reviewer 0.01 70\" >> \"$COST_LOG\"\n"
    "printf '%s\\n' '{\"type\":\"result\",\"result\":\"VERDICT: approve\\nFINDINGS:\\n- none\",\"total_cost_usd\":0.01,"
    "\"usage\":{\"input_tokens\":50,\"output_tokens\":20}}'\n";

struct Scripted {
  double usd = 0;
  long long tokens = 0, calls = 0;
};

class AgentCost : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "executor-ok", repo() / "agents" / "executor-ok");
    script("executor-priced", kExecutor);
    script("reviewer-priced", kReviewer);
    json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
    c.merge_patch({{"review_gate", "always"},
                   {"approvers", {{"vision", "skip"}, {"budget", "manual"}}},
                   {"architect", nullptr},
                   {"reviewer", {{"command", {"agents/reviewer-priced", "{plan_path}"}}, {"timeout_ms", 10000}}},
                   {"executor",
                    {{"command", {"agents/executor-priced", "{plan_path}", "{summary_path}"}}, {"timeout_ms", 30000}}},
                   {"budget", {{"phase_usd", 0.5}}},
                   // The priced stand-ins log what they reported beside the project (costs.log):
                   // granted to them as a user grants an agent a folder of its own.
                   {"sandbox",
                    {{"write", {{"executor", {dir_.path().string()}}, {"reviewer", {dir_.path().string()}}}}}}});
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "demo fixture"}}) {
      std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
      argv.insert(argv.end(), args.begin(), args.end());
      ASSERT_EQ(run_program(argv, repo()).exit_code, 0);
    }
  }
  void script(const std::string& name, const char* text) {
    write_file(repo() / "agents" / name, text);
    ::chmod((repo() / "agents" / name).c_str(), 0755);
  }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path cost_log() const { return dir_.path() / "costs.log"; }
  std::vector<std::string> env() const { return {"NO_COLOR=1", "COST_LOG=" + cost_log().string()}; }
  RunResult yolo(const std::vector<std::string>& args) { return run_yolo(args, repo(), env()); }

  // What the stand-ins said they printed.
  Scripted scripted(const std::string& only_plan = "") {
    Scripted s;
    std::ifstream f(cost_log());
    std::string plan, agent;
    double usd;
    long long tokens;
    while (f >> plan >> agent >> usd >> tokens) {
      if (!only_plan.empty() && plan != only_plan) continue;
      s.usd += usd;
      s.tokens += tokens;
      s.calls += 1;
    }
    return s;
  }
  static void expect_equal(const json& u, const Scripted& s, const std::string& what) {
    ASSERT_TRUE(u.is_object()) << what;
    EXPECT_NEAR(u["cost_usd"].get<double>(), s.usd, 1e-9) << what << ": " << u.dump();
    EXPECT_EQ(u["tokens"].get<long long>(), s.tokens) << what << ": " << u.dump();
    EXPECT_EQ(u["calls"].get<long long>(), s.calls) << what << ": " << u.dump();
  }
  TempDir dir_;
};

TEST_F(AgentCost, ARunPassingItsBudgetPausesUntilAPersonApproves) {
  auto r = yolo({"execute"});
  ASSERT_EQ(r.exit_code, 3) << "paused at the budget gate\n" << report(r);
  // Reviews ($0.04), wave 1 ($0.30): within $0.50; wave 2 ($0.60) passes it: no wave 3.
  EXPECT_TRUE(has(r.out, "Review gate: approve")) << "the verdict was read inside the JSON result\n" << r.out;
  EXPECT_TRUE(has(r.out, "Budget: the phase spent $0.94 of its $0.50 budget")) << r.out;
  EXPECT_TRUE(has(r.out, "Budget gate: Awaiting human approval for .yolo-planning/.costs/budget-01-demo.md")) << r.out;
  EXPECT_FALSE(has(read_file(cost_log()), "01-04 executor")) << "wave 3 did not start";

  auto st = yolo({"status", "--json"});
  ASSERT_EQ(st.exit_code, 0) << report(st);
  json s = st.json_out();
  ASSERT_TRUE(s.contains("usage")) << s.dump(2);
  expect_equal(s["usage"]["run"], scripted(), "run");
  expect_equal(s["usage"]["phase"], scripted(), "phase");
  for (const char* id : {"01-01", "01-02", "01-03"}) expect_equal(s["usage"]["plans"][id], scripted(id), id);
  EXPECT_EQ(scripted().calls, 4 + 3) << "four reviews, three executors";
  EXPECT_TRUE(s["budget"]["passed"].is_string()) << s.dump(2);
  auto human = yolo({"status"});
  EXPECT_TRUE(has(human.out, "Agents' cost (as their CLIs reported it):")) << human.out;
  EXPECT_TRUE(has(human.out, "run     $0.9400")) << human.out;

  // Not approved: a new execute stays at the gate and no agent runs.
  auto again = yolo({"execute"});
  EXPECT_EQ(again.exit_code, 3) << report(again);
  EXPECT_EQ(scripted().calls, 7);

  // A person approves at a terminal; the run goes on with wave 3.
  auto a = run_yolo_tty({"approve", "--by", "tester"}, repo(), env());
  ASSERT_EQ(a.exit_code, 0) << report(a);
  auto done = yolo({"execute"});
  EXPECT_EQ(done.exit_code, 0) << report(done);
  EXPECT_TRUE(has(done.out, "Budget gate: approved (by tester)")) << done.out;
  EXPECT_TRUE(has(read_file(cost_log()), "01-04 executor")) << "wave 3 ran";

  json s2 = yolo({"status", "--json"}).json_out();
  expect_equal(s2["usage"]["run"], scripted(), "run after the approval");
  expect_equal(s2["usage"]["plans"]["01-04"], scripted("01-04"), "01-04");
  EXPECT_EQ(s2["status"], "complete") << s2.dump(2);
}

TEST_F(AgentCost, WithinTheBudgetNothingPauses) {
  json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
  c["budget"] = {{"phase_usd", 100.0}, {"run_tokens", 1000000}};
  write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  auto r = yolo({"execute"});
  EXPECT_EQ(r.exit_code, 0) << report(r);
  EXPECT_FALSE(has(r.out, "Budget gate")) << r.out;
  json s = yolo({"status", "--json"}).json_out();
  expect_equal(s["usage"]["run"], scripted(), "run");
  EXPECT_TRUE(s["budget"]["passed"].is_null()) << s.dump(2);
}

// The live line shows a running executor's current tool call, read from its CLI's event
// stream (here a stand-in printing Claude Code's stream-json) as it arrives.
TEST_F(AgentCost, TheLiveLineShowsTheExecutorsCurrentToolCall) {
  script("executor-streaming",
         "#!/bin/sh\n"
         "printf '%s\\n' '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\","
         "\"input\":{\"command\":\"make check-the-greeting\"}}]}}'\n"
         "sleep 2.5\n"
         "exec \"$(dirname \"$0\")/executor-ok\" \"$@\"\n");
  json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
  c["review_gate"] = "never";
  c["executor"]["command"] = {"agents/executor-streaming", "{plan_path}", "{summary_path}"};
  c.erase("budget");
  write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  if (run_program({"sh", "-c", "command -v script"}).exit_code != 0)
    GTEST_SKIP() << "skipped: util-linux script is not installed";
  auto r = run_program({"env", "TERM=xterm", "NO_COLOR=1", "COST_LOG=" + cost_log().string(), "script", "-qec",
                        "'" + yolo_bin() + "' execute 01-demo", "/dev/null"},
                       repo());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("executor"), std::string::npos) << r.out;
  EXPECT_NE((r.out + r.err).find("s/30s Bash: make check"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace yolo::test
