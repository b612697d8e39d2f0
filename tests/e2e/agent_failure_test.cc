// An agent that fails is shown by the line that says why, not by the usage tail its
// command-line parser prints after it, and the run names `yolo logs PLAN`: the real binary on
// a copy of fixtures/demo with a stand-in agent that fails the way a CLI refusing a flag does.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace yolo::test {
namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
std::string report(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// What clap (Codex CLI's parser) prints for a flag it does not know, then exit 2.
const char* kRefuses =
    "#!/bin/sh\n"
    "echo 'starting' \n"
    "cat >&2 <<'EOF'\n"
    "error: unexpected argument '--full-auto' found\n"
    "\n"
    "  tip: to pass '--full-auto' as a value, use '-- --full-auto'\n"
    "\n"
    "Usage: codex exec [OPTIONS] [PROMPT]\n"
    "       codex exec [OPTIONS] <COMMAND> [ARGS]\n"
    "\n"
    "For more information, try '--help'.\n"
    "EOF\n"
    "exit 2\n";

class AgentFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    write_file(repo() / "agents" / "refuses", kRefuses);
    ::chmod((repo() / "agents" / "refuses").c_str(), 0755);
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "reviewer-approve", repo() / "agents" / "reviewer-approve");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "demo fixture"}}) {
      std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
      argv.insert(argv.end(), args.begin(), args.end());
      ASSERT_EQ(run_program(argv, repo()).exit_code, 0);
    }
  }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  void set_config(const json& patch) {
    json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
    c.merge_patch(patch);
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  RunResult yolo(const std::vector<std::string>& args) { return run_yolo(args, repo(), {"NO_COLOR=1"}); }
  TempDir dir_;
};

TEST_F(AgentFailure, ExecutorFailureShowsTheErrorLineAndNamesTheLogs) {
  set_config({{"review_gate", "never"},
              {"approvers", {{"vision", "skip"}}},
              {"architect", nullptr},
              {"executor", {{"command", {"agents/refuses", "--full-auto", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  auto r = yolo({"execute"});
  EXPECT_NE(r.exit_code, 0) << report(r);
  EXPECT_TRUE(has(r.out,
                  "✗ Plan 01-01 failed: the executor exited with status 2: error: unexpected argument "
                  "'--full-auto' found"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Next: `yolo logs 01-01` shows its whole output")) << r.out;
  // The state keeps the same reason for `yolo status`.
  json s = json::parse(read_file(repo() / ".yolo-planning" / ".execution-state.json"));
  bool found = false;
  for (const auto& p : s["plans"])
    if (p["id"] == "01-01") {
      found = true;
      EXPECT_TRUE(has(p.value("error", ""), "error: unexpected argument '--full-auto' found")) << p.dump();
    }
  EXPECT_TRUE(found) << s.dump(2);
  // And the logs it names hold the whole output.
  auto l = yolo({"logs", "01-01"});
  EXPECT_EQ(l.exit_code, 0) << report(l);
  EXPECT_TRUE(has(l.out, "For more information, try '--help'.")) << l.out;
}

TEST_F(AgentFailure, ReviewerFailureShowsTheErrorLineAndNamesTheLogs) {
  // The fallback to Stage 1 is allowed here (reviewer_required is true by default): what is
  // tested is the line the failure is told with.
  set_config({{"review_gate", "always"},
              {"architect", nullptr},
              {"reviewer_required", false},
              {"reviewer", {{"command", {"agents/refuses", "--full-auto", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  auto r = yolo({"review", ".yolo-planning/phases/01-demo/01-01-PLAN.md"});
  std::string all = r.out + r.err;
  EXPECT_TRUE(has(all, "Reviewer agent unavailable — falling back to CLI review for plan 01-01")) << report(r);
  EXPECT_TRUE(has(all, "reviewer exited with status 2: error: unexpected argument '--full-auto' found")) << report(r);
  EXPECT_FALSE(has(all, "status 2: For more information")) << report(r);
  EXPECT_TRUE(has(all, "Next: `yolo logs 01-01` shows its whole output")) << report(r);

  // Execute's review gate (the same review, in execute's process) says the same under the plan's verdict.
  set_config({{"approvers", {{"vision", "skip"}}}, {"executor", nullptr}});
  auto e = yolo({"execute"});
  EXPECT_TRUE(has(e.out, "01-02 approve (reviewer unavailable: Stage 1 verdict)") ||
              has(e.out, "01-02 conditional (reviewer unavailable: Stage 1 verdict)"))
      << report(e);
  EXPECT_TRUE(has(e.out, "error: unexpected argument '--full-auto' found")) << report(e);
  EXPECT_TRUE(has(e.out, "Next: `yolo logs 01-02` shows its whole output")) << report(e);
}

TEST_F(AgentFailure, AnAgentThatCannotStartPointsAtDoctor) {
  set_config({{"review_gate", "always"},
              {"architect", nullptr},
              {"reviewer", {{"command", {"no-such-agent-cli-here", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  auto r = yolo({"review", ".yolo-planning/phases/01-demo/01-01-PLAN.md"});
  std::string all = r.out + r.err;
  EXPECT_TRUE(has(all, "Reviewer agent unavailable")) << report(r);
  EXPECT_TRUE(has(all, "Next: `yolo doctor` checks the configured agents")) << report(r);
}

}  // namespace
}  // namespace yolo::test
