// The live line per agent call: `yolo review` and execute's review gate say which
// plan's reviewer runs, for how long and for how long it may, redrawn in place on a terminal
// (a real pty, through util-linux `script`), one line per event when piped.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bg_process.h"
#include "test_support.h"

namespace yolo::test {
namespace {

bool text_has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
std::string run_report(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}
// A live process (not a zombie) whose argv is exactly `argv`, or 0.
pid_t process_with_argv(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) (want += a) += '\0';
  for (const auto& e : stdfs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd == want) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}
bool alive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}
bool program_on_path(const std::string& name) { return run_program({"sh", "-c", "command -v " + name}).exit_code == 0; }

// fixtures/demo (4 plans) in a git repository, reviewed by fixtures/agents/reviewer-slow.
class AgentProgress : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "reviewer-slow", repo() / "agents" / "reviewer-slow");
    json cfg = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
    cfg.merge_patch({{"review_gate", "always"},
                     {"approvers", {{"vision", "skip"}}},
                     {"executor", nullptr},
                     {"architect", nullptr},
                     {"reviewer", {{"command", {"agents/reviewer-slow", "{plan_path}"}}, {"timeout_ms", 10000}}}});
    write_file(repo() / ".yolo-planning" / "config.json", cfg.dump(2));
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "demo fixture"}}) {
      std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
      argv.insert(argv.end(), args.begin(), args.end());
      ASSERT_EQ(run_program(argv, repo()).exit_code, 0);
    }
  }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  std::string plan() const { return ".yolo-planning/phases/01-demo/01-01-PLAN.md"; }
  // yolo at a terminal: stdout is the pty (script -qec), so the live line may be drawn.
  RunResult on_tty(const std::string& args, const std::string& sleep) {
    std::string cmd = "'" + yolo_bin() + "' " + args;
    return run_program(
        {"env", "TERM=xterm", "NO_COLOR=1", "YOLO_TEST_SLEEP=" + sleep, "script", "-qec", cmd, "/dev/null"}, repo());
  }
  RunResult piped(const std::vector<std::string>& args, const std::string& sleep) {
    return run_yolo(args, repo(), {"NO_COLOR=1", "YOLO_TEST_SLEEP=" + sleep});
  }
  TempDir dir_;
};

TEST_F(AgentProgress, ReviewOnATerminalShowsTheCallLiveWithElapsedAndTimeout) {
  if (!program_on_path("script")) GTEST_SKIP() << "util-linux script is not installed";
  auto r = on_tty("review " + plan(), "2.5");
  EXPECT_EQ(r.exit_code, 0) << run_report(r);
  EXPECT_TRUE(text_has(r.out, "\r\033[K")) << "redrawn in place\n" << r.out;
  EXPECT_TRUE(text_has(r.out, "◆ 01-01 reviewer 0s/10s")) << r.out;
  EXPECT_TRUE(text_has(r.out, "◆ 01-01 reviewer 1s/10s")) << "updated about once a second\n" << r.out;
  EXPECT_TRUE(text_has(r.out, "Reviewer: approve")) << r.out;
}

TEST_F(AgentProgress, ReviewPipedAnimatesNothing) {
  auto r = piped({"review", plan()}, "1.2");
  EXPECT_EQ(r.exit_code, 0) << run_report(r);
  EXPECT_FALSE(text_has(r.out, "\r")) << r.out;
  EXPECT_FALSE(text_has(r.out, "0s/10s")) << r.out;
  EXPECT_TRUE(text_has(r.out, "Reviewer agents/reviewer-slow running (timeout 10 s)")) << r.out;
  // A machine reading --json sees no progress events unless its parent asked for them.
  auto j = piped({"review", plan(), "--json"}, "0");
  EXPECT_EQ(j.exit_code, 0) << run_report(j);
  EXPECT_FALSE(text_has(j.out + j.err, "agent_progress")) << run_report(j);
}

TEST_F(AgentProgress, ExecuteReviewGateOnATerminalShowsEachReviewerCall) {
  if (!program_on_path("script")) GTEST_SKIP() << "util-linux script is not installed";
  auto r = on_tty("execute", "1.3");
  EXPECT_EQ(r.exit_code, 4) << run_report(r);  // no executor: the run stops after the gate
  EXPECT_TRUE(text_has(r.out, "\r\033[K")) << r.out;
  EXPECT_TRUE(text_has(r.out, "◆ Review gate: reviewing .yolo-planning/phases/01-demo")) << r.out;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"})
    EXPECT_TRUE(text_has(r.out, std::string("◆ Review gate: ") + id + " reviewer 0s/10s · ")) << id << "\n" << r.out;
  EXPECT_TRUE(text_has(r.out, "reviewer 1s/10s")) << r.out;
  EXPECT_TRUE(text_has(r.out, "Review gate: approve")) << r.out;
  EXPECT_FALSE(text_has(r.out, "agent_progress")) << "the child's events are shown, never printed raw\n" << r.out;
}

TEST_F(AgentProgress, ExecuteReviewGatePipedIsOneLinePerCall) {
  auto r = piped({"execute"}, "0.2");
  EXPECT_EQ(r.exit_code, 4) << run_report(r);
  EXPECT_FALSE(text_has(r.out, "\r")) << r.out;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_TRUE(text_has(r.out, std::string("◆ ") + id + ": reviewer running (timeout 10s)")) << r.out;
    EXPECT_TRUE(text_has(r.out, std::string("○ ") + id + ": reviewer done in 0s (exited with status 0)")) << r.out;
  }
  EXPECT_FALSE(text_has(r.out + r.err, "agent_progress")) << run_report(r);
  EXPECT_TRUE(text_has(r.out, "Review gate: approve")) << r.out;
}

TEST_F(AgentProgress, ExecuteJsonCarriesNoProgressEvents) {
  auto j = piped({"execute", "--json"}, "0");
  EXPECT_EQ(j.exit_code, 4) << run_report(j);
  EXPECT_TRUE(text_has(j.out, "\"review_gate\"")) << j.out;
  EXPECT_TRUE(text_has(j.out, "\"passed\"")) << "the reviewer ran and passed the gate\n" << j.out;
  EXPECT_FALSE(text_has(j.out + j.err, "agent_progress")) << run_report(j);
}

// Ctrl-C while execute's review gate waits for a reviewer: the reviewer's whole process group
// ends, and execute dies of the signal (nothing after the gate runs).
TEST_F(AgentProgress, InterruptDuringExecuteReviewGateEndsTheReviewer) {
  using namespace std::chrono_literals;
  const std::string marker = "41.37";  // the reviewer's sleep, found by its argv
  ::setenv("YOLO_TEST_SLEEP", marker.c_str(), 1);
  BgProcess p({yolo_bin(), "execute", "--json"}, repo());
  ::unsetenv("YOLO_TEST_SLEEP");
  auto ev = p.wait_for(
      [](const json& j) { return j.value("event", "") == "review_gate" && j.value("status", "") == "running"; }, 30s);
  ASSERT_TRUE(ev.has_value()) << p.stderr_text();
  pid_t sleeper = 0;
  for (int i = 0; i < 200 && !sleeper; ++i) {
    sleeper = process_with_argv({"sleep", marker});
    if (!sleeper) std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(sleeper, 0) << "the reviewer never started\n" << p.stderr_text();
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(10s), 128 + SIGINT) << p.stderr_text();
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !alive(sleeper);
    if (!gone) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(gone) << "the reviewer's sleep " << sleeper << " outlived execute";
  for (const auto& j : p.seen) EXPECT_NE(j.value("event", ""), "gate_requested") << j.dump();
}

}  // namespace
}  // namespace yolo::test
