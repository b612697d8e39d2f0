// yolo execute, end to end: the real binary on a copy of fixtures/demo (a git repository),
// with the fixture executors of fixtures/agents as real child processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "bg_process.h"
#include "protocol/base/sha256.h"
#include "test_support.h"

namespace yolo::test {
namespace {

struct Times {
  double start = -1, end = -1;
};

class ExecuteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    for (const char* a : {"executor-ok", "executor-fail", "executor-broken-summary", "reviewer-approve",
                          "reviewer-reject-until-marker", "architect-fix"})
      stdfs::copy_file(source_dir() / "fixtures" / "agents" / a, repo() / "agents" / a);
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture"});
    // Fast by default: no review gate, skip the vision gate, a reviewer that approves (the
    // demo's own reviewer rejects once to show the architect loop); tests change what they need.
    set_config({{"review_gate", "never"},
                {"approvers", {{"vision", "skip"}}},
                {"reviewer", {{"command", {"agents/reviewer-approve", "{plan_path}"}}, {"timeout_ms", 10000}}},
                {"architect", nullptr},
                // The executors' timing log lies outside the project: granted as a user grants
                // an agent a folder of its own.
                {"sandbox", {{"write", {{"executor", {logs_.path().string()}}}}}}});
  }

  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path log_path() const { return logs_.path() / "exec.log"; }
  stdfs::path state_path() const { return repo() / ".yolo-planning" / ".execution-state.json"; }
  stdfs::path phase_dir() const { return repo() / ".yolo-planning" / "phases" / "01-demo"; }

  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv, repo());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  json config() { return json::parse(read_file(repo() / ".yolo-planning" / "config.json")); }
  void set_config(const json& patch) {
    json c = config();
    c.merge_patch(patch);
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  void use_executor(const std::string& name) {
    set_config(
        {{"executor", {{"command", {"agents/" + name, "{plan_path}", "{summary_path}"}}, {"timeout_ms", 30000}}}});
  }

  RunResult yolo(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    env.push_back("YOLO_EXEC_LOG=" + log_path().string());
    env.push_back("NO_COLOR=1");
    // approve and reject are a person's: at a terminal (a pty), answering y.
    if (!args.empty() && (args[0] == "approve" || args[0] == "reject")) return run_yolo_tty(args, repo(), env);
    return run_yolo(args, repo(), env);
  }
  RunResult execute(std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> args = {"execute"};
    args.insert(args.end(), extra.begin(), extra.end());
    return yolo(args, std::move(env));
  }

  json state() { return json::parse(read_file(state_path())); }
  std::string plan_status(const std::string& id) {
    json s = state();
    for (const auto& p : s["plans"])
      if (p["id"] == id) return p["status"].get<std::string>();
    return "absent";
  }

  std::map<std::string, Times> exec_log() {
    std::map<std::string, Times> m;
    std::ifstream f(log_path());
    std::string kind, id;
    double t;
    while (f >> kind >> id >> t) (kind == "start" ? m[id].start : m[id].end) = t;
    return m;
  }

  std::vector<json> events() {
    std::vector<json> v;
    std::istringstream in(read_file(repo() / ".yolo-planning" / ".events" / "event-log.jsonl"));
    std::string l;
    while (std::getline(in, l))
      if (!l.empty()) v.push_back(json::parse(l));
    return v;
  }
  size_t count_events(const std::string& type) {
    auto ev = events();
    return static_cast<size_t>(std::count_if(ev.begin(), ev.end(), [&](const json& e) { return e["event"] == type; }));
  }

  // What an agent or a person does without an executor: run the fixture executor by hand.
  void write_summary_by_hand(const std::string& plan) {
    std::string rel = ".yolo-planning/phases/01-demo/01-" + plan + "-";
    auto r = run_program({(repo() / "agents" / "executor-ok").string(), rel + "PLAN.md", rel + "SUMMARY.md"}, repo(),
                         {"YOLO_PLAN_ID=01-" + plan});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  TempDir dir_, logs_;
};

TEST_F(ExecuteTest, ThreeWavesRunInOrderWithParallelismInsideAWave) {
  use_executor("executor-ok");
  set_config({{"max_parallel", 2}});
  auto r = execute({}, {"YOLO_EXEC_SLEEP=0.4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto t = exec_log();
  ASSERT_EQ(t.size(), 4u);
  for (const auto& [id, x] : t) {
    ASSERT_GT(x.start, 0) << id;
    ASSERT_GE(x.end, x.start) << id;
  }
  // No overlap across waves: every plan of wave N+1 starts after every plan of wave N ended.
  EXPECT_GE(t["01-02"].start, t["01-01"].end);
  EXPECT_GE(t["01-03"].start, t["01-01"].end);
  EXPECT_GE(t["01-04"].start, std::max(t["01-02"].end, t["01-03"].end));
  // Overlap inside wave 2 (max_parallel 2).
  EXPECT_LT(t["01-02"].start, t["01-03"].end);
  EXPECT_LT(t["01-03"].start, t["01-02"].end);

  json s = state();
  EXPECT_EQ(s["status"], "complete");
  EXPECT_TRUE(s["completed_at"].is_string());
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(plan_status(id), "complete") << id;
  EXPECT_EQ(s["total_waves"], 3);
  for (const char* step : {"step_2", "step_2c", "step_3"})
    EXPECT_NE(std::find(s["steps_completed"].begin(), s["steps_completed"].end(), step), s["steps_completed"].end())
        << step;
  // The skip approver passed the vision gate and it is recorded as such.
  EXPECT_EQ(s["approval"]["approved"], true);
  EXPECT_EQ(s["approval"]["approved_by"], "skip");
  // Real commits, one per plan, and the files exist.
  auto log = run_program({"git", "log", "--oneline"}, repo());
  EXPECT_NE(log.out.find("plan 01-04"), std::string::npos);
  EXPECT_TRUE(stdfs::exists(repo() / "greeting" / "index.txt"));
  // Events: one phase_start/phase_end, three waves, four plans, all with the run's correlation id.
  EXPECT_EQ(count_events("phase_start"), 1u);
  EXPECT_EQ(count_events("phase_end"), 1u);
  EXPECT_EQ(count_events("wave_start"), 3u);
  EXPECT_EQ(count_events("wave_end"), 3u);
  EXPECT_EQ(count_events("plan_start"), 4u);
  EXPECT_EQ(count_events("plan_end"), 4u);
  for (const auto& e : events()) {
    if (e["event"] == "plan_start") {
      EXPECT_EQ(e["correlation_id"], s["correlation_id"]);
    }
  }

  // Running again changes nothing and runs nothing.
  auto again = execute();
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(exec_log().size(), 4u);
}

// Started with stdin, stdout and stderr closed (a daemon's child, `<&- >&- 2>&-`): the first
// files and pipes yolo opens would take numbers 0 to 2 (libuv aborted on closing one). Each
// closed one is /dev/null instead, and execute runs every plan.
TEST_F(ExecuteTest, RunsWithStdinStdoutAndStderrClosed) {
  use_executor("executor-ok");
  auto r = run_program({"sh", "-c", "exec \"$0\" execute <&- >&- 2>&-", yolo_bin()}, repo(),
                       {"YOLO_EXEC_LOG=" + log_path().string(), "NO_COLOR=1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(exec_log().size(), 4u);
  EXPECT_EQ(state()["status"], "complete");
}

TEST_F(ExecuteTest, MaxParallelOneNeverOverlaps) {
  use_executor("executor-ok");
  set_config({{"max_parallel", 1}});
  auto r = execute({}, {"YOLO_EXEC_SLEEP=0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto t = exec_log();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t["01-02"].end <= t["01-03"].start || t["01-03"].end <= t["01-02"].start);
}

// The demo's reviewer rejects each plan once; the architect revises it; execute says so per plan.
TEST_F(ExecuteTest, ReviewGateShowsEachPlansLoop) {
  use_executor("executor-ok");
  set_config({{"review_gate", "always"},
              {"reviewer", {{"command", {"agents/reviewer-reject-until-marker", "{plan_path}", "{cycle}"}}}},
              {"architect", {{"command", {"agents/architect-fix", "{plan_path}"}}}}});
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_NE(r.out.find(std::string("✓ ") + id + " approve after 2 cycles (the architect revised it) (reviewer)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(read_file(phase_dir() / (std::string(id) + "-PLAN.md")).find("REVIEW-FIX-APPLIED"), std::string::npos)
        << id;
  }
  EXPECT_EQ(exec_log().size(), 4u);
}

// An agent (or anyone) writing an approval into the state file does not pass the gate: only
// a sealed approval made by `yolo approve` or an approver counts.
TEST_F(ExecuteTest, AHandWrittenApprovalIsNotAnApproval) {
  use_executor("executor-ok");
  set_config({{"approvers", {{"vision", "manual"}}}});
  ASSERT_EQ(execute().exit_code, 3);
  json s = state();
  s["status"] = "running";
  s["approval"]["approved"] = true;
  s["approval"]["approved_by"] = "agent";
  for (auto& g : s["gates"]) {
    g["status"] = "APPROVED";
    g["approved_by"] = "agent";
    g["resolved_at"] = s["approval"]["requested_at"];
    g["digest"] = "sha256:" + yolo::sha256_hex(read_file(repo() / ".yolo-planning" / "ROADMAP.md"));
  }
  write_file(state_path(), s.dump(2));
  auto r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("carries no valid seal"), std::string::npos) << r.out;
  EXPECT_FALSE(stdfs::exists(log_path())) << "a plan ran on a forged approval";
  EXPECT_EQ(state()["status"], "awaiting_approval");
  // A person approves for real: the run goes on.
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  r = execute();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(exec_log().size(), 4u);
}

TEST_F(ExecuteTest, NothingExecutesWhileAwaitingApprovalThenApproveResumes) {
  use_executor("executor-ok");
  set_config({{"approvers", {{"vision", "manual"}}}, {"review_gate", "always"}});
  auto r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("⏸ Vision gate: Awaiting human approval for .yolo-planning/ROADMAP.md. Execution paused."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Review gate: approve"), std::string::npos) << r.out;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"})
    EXPECT_NE(r.out.find(std::string("✓ ") + id + " approve (reviewer)"), std::string::npos)
        << "one line per plan: " << r.out;
  EXPECT_FALSE(stdfs::exists(log_path()));
  json s = state();
  EXPECT_EQ(s["status"], "awaiting_approval");
  EXPECT_EQ(s["approval"]["approved"], false);
  std::string cid = s["correlation_id"];
  for (const auto& p : s["plans"]) EXPECT_EQ(p["status"], "pending");

  // Still paused on a second run; nothing ran, status not overwritten, correlation id kept.
  r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_FALSE(stdfs::exists(log_path()));
  EXPECT_EQ(state()["status"], "awaiting_approval");
  EXPECT_EQ(state()["correlation_id"], cid);

  auto a = yolo({"approve", "--by", "tester"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  r = execute();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(exec_log().size(), 4u);
  s = state();
  EXPECT_EQ(s["status"], "complete");
  EXPECT_EQ(s["correlation_id"], cid);
  EXPECT_EQ(s["approval"]["approved_by"], "tester");
}

TEST_F(ExecuteTest, RejectedGateHaltsWithFeedbackKept) {
  use_executor("executor-ok");
  set_config({{"approvers", {{"vision", "manual"}}}});
  ASSERT_EQ(execute().exit_code, 3);
  auto rj = yolo({"reject", "--feedback", "the vision is too vague"});
  ASSERT_EQ(rj.exit_code, 0) << rj.out << rj.err;
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("the vision is too vague"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(stdfs::exists(log_path()));
  json s = state();
  EXPECT_EQ(s["status"], "halted");
  EXPECT_EQ(s["gates"].back()["status"], "REJECTED");
  EXPECT_EQ(s["gates"].back()["feedback"], "the vision is too vague");
}

TEST_F(ExecuteTest, EditedRoadmapAfterApprovalReopensTheGate) {
  use_executor("executor-ok");
  set_config({{"approvers", {{"vision", "manual"}}}});
  ASSERT_EQ(execute().exit_code, 3);
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  write_file(repo() / ".yolo-planning" / "ROADMAP.md",
             read_file(repo() / ".yolo-planning" / "ROADMAP.md") + "\nA late change.\n");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("changed after it was approved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("⏸ Vision gate: Awaiting human approval"), std::string::npos) << r.out;
  EXPECT_FALSE(stdfs::exists(log_path()));
  json s = state();
  EXPECT_EQ(s["status"], "awaiting_approval");
  EXPECT_EQ(s["gates"].size(), 2u);
  EXPECT_EQ(s["gates"][1]["status"], "OPEN");
  // Approving the new content lets it run.
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  EXPECT_EQ(execute().exit_code, 0);
}

TEST_F(ExecuteTest, BrokenSummaryFailsItsPlanAndStopsTheNextWave) {
  use_executor("executor-broken-summary");
  set_config({{"v3_event_log", true}});
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("Plan 01-01 failed"), std::string::npos) << r.out;
  auto t = exec_log();
  EXPECT_EQ(t.size(), 1u);  // wave 2 never started
  EXPECT_EQ(plan_status("01-01"), "failed");
  EXPECT_EQ(plan_status("01-02"), "pending");
  json s = state();
  EXPECT_EQ(s["status"], "halted");
  const json& p = s["plans"][0];
  ASSERT_TRUE(p["findings"].is_array());
  EXPECT_FALSE(p["findings"].empty());
  EXPECT_EQ(count_events("summary_claims_failed"), 1u);
}

TEST_F(ExecuteTest, FailingExecutorFailsItsPlanThenAFixedExecutorRetries) {
  use_executor("executor-fail");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(plan_status("01-01"), "failed");
  json s = state();
  EXPECT_NE(s["plans"][0]["error"].get<std::string>().find("status 3"), std::string::npos) << s.dump();
  EXPECT_EQ(exec_log().size(), 1u);
  use_executor("executor-ok");
  r = execute();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(state()["status"], "complete");
}

TEST_F(ExecuteTest, NoExecutorMarksReadyAndWaitsForSummaries) {
  set_config({{"executor", nullptr}});
  auto r = execute();
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("Waiting for SUMMARY"), std::string::npos) << r.out;
  EXPECT_EQ(plan_status("01-01"), "ready");
  EXPECT_EQ(plan_status("01-02"), "pending");
  write_summary_by_hand("01");
  r = execute();
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_EQ(plan_status("01-01"), "complete");
  EXPECT_EQ(plan_status("01-02"), "ready");
  EXPECT_EQ(plan_status("01-03"), "ready");
  EXPECT_EQ(plan_status("01-04"), "pending");
  write_summary_by_hand("02");
  write_summary_by_hand("03");
  EXPECT_EQ(execute().exit_code, 4);
  EXPECT_EQ(plan_status("01-04"), "ready");
  write_summary_by_hand("04");
  r = execute();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(state()["status"], "complete");
}

TEST_F(ExecuteTest, JsonLinesOfEvents) {
  use_executor("executor-ok");
  auto r = execute({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto lines = r.json_lines();
  ASSERT_FALSE(lines.empty());
  std::vector<std::string> kinds;
  for (const auto& l : lines)
    if (l.contains("event")) kinds.push_back(l["event"]);
  EXPECT_EQ(kinds.front(), "phase_start");
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "plan_start"), 4);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "wave_start"), 3);
  const json& last = lines.back();
  EXPECT_EQ(last["cmd"], "execute");
  EXPECT_EQ(last["ok"], true);
  EXPECT_EQ(last["result"], "complete");
  EXPECT_EQ(last["plans"].size(), 4u);
}

TEST_F(ExecuteTest, WaveApprovalGatesEachWaveAfterTheFirst) {
  use_executor("executor-ok");
  set_config({{"wave_approval", true}, {"approvers", {{"vision", "skip"}, {"wave", "manual"}}}});
  auto r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(plan_status("01-01"), "complete");
  EXPECT_EQ(plan_status("01-02"), "pending");
  EXPECT_NE(r.out.find("Wave gate: Awaiting human approval"), std::string::npos) << r.out;
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  r = execute();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // wave 3's gate
  EXPECT_EQ(plan_status("01-03"), "complete");
  EXPECT_EQ(plan_status("01-04"), "pending");
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  EXPECT_EQ(execute().exit_code, 0);
  EXPECT_EQ(exec_log().size(), 4u);
}

TEST_F(ExecuteTest, ReviewGateNeverIsAnnounced) {
  set_config({{"executor", nullptr}});
  auto r = execute();
  EXPECT_NE(r.out.find("○ Review gate skipped (review_gate: never)"), std::string::npos) << r.out;
}

TEST_F(ExecuteTest, StructuralRejectHaltsBeforeAnythingRuns) {
  use_executor("executor-ok");
  auto plan = phase_dir() / "01-02-PLAN.md";
  std::string text = read_file(plan);
  text.replace(text.find("depends_on: [\"01\"]"), 17, "depends_on: [\"09\"]");
  write_file(plan, text);
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("Halted before anything ran"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(log_path()));
  EXPECT_EQ(state()["status"], "halted");
}

TEST_F(ExecuteTest, OnlyOnePlan) {
  use_executor("executor-ok");
  auto r = execute({"--plan", "01"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(exec_log().size(), 1u);
  EXPECT_EQ(plan_status("01-01"), "complete");
  EXPECT_EQ(plan_status("01-02"), "pending");
  EXPECT_NE(state()["status"], "complete");
}

TEST_F(ExecuteTest, BrokenStateFileIsAClearErrorAndKept) {
  write_file(state_path(), "{ this is not json");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(".execution-state.json"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(state_path()), "{ this is not json");
}

TEST_F(ExecuteTest, BrokenConfigIsAClearError) {
  write_file(repo() / ".yolo-planning" / "config.json", "[1, 2");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
}

TEST_F(ExecuteTest, PhaseByNumberOrNameAndUsageErrors) {
  set_config({{"executor", nullptr}});
  EXPECT_EQ(execute({"7"}).exit_code, 64);
  EXPECT_EQ(execute({"1"}).exit_code, 4);
  EXPECT_EQ(execute({"01-demo"}).exit_code, 4);
  EXPECT_EQ(execute({"--no-such-flag"}).exit_code, 64);
}

TEST_F(ExecuteTest, ExecutorTimeoutFailsThePlan) {
  use_executor("executor-ok");
  set_config({{"executor", {{"timeout_ms", 300}}}});
  auto r = execute({}, {"YOLO_EXEC_SLEEP=5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(plan_status("01-01"), "failed");
  EXPECT_NE(state()["plans"][0]["error"].get<std::string>().find("timed out"), std::string::npos);
}

TEST_F(ExecuteTest, GateOpenedDuringAWaveLetsRunningPlansFinishAndStartsNothingNew) {
  use_executor("executor-ok");
  set_config({{"max_parallel", 2}});
  // Plan 01-02 (wave 2, beside 01-03) opens a security gate while it runs.
  auto r = execute({}, {"YOLO_EXEC_OPEN_GATE=" + yolo_bin(), "YOLO_EXEC_OPEN_GATE_FOR=01-02", "YOLO_EXEC_SLEEP=0.3"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("Security gate: Awaiting human approval"), std::string::npos) << r.out;
  // Both running plans finished and were recorded; wave 3 did not start.
  EXPECT_EQ(plan_status("01-02"), "complete");
  EXPECT_EQ(plan_status("01-03"), "complete");
  EXPECT_EQ(plan_status("01-04"), "pending");
  EXPECT_EQ(exec_log().size(), 3u);
  EXPECT_EQ(state()["status"], "awaiting_approval");
  ASSERT_EQ(yolo({"approve", "--by", "tester"}).exit_code, 0);
  r = execute();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Exactly where it stopped: only 01-04 ran now, nothing ran twice.
  std::ifstream f(log_path());
  std::string kind, id;
  double t;
  std::map<std::string, int> starts;
  while (f >> kind >> id >> t)
    if (kind == "start") ++starts[id];
  EXPECT_EQ(starts.size(), 4u);
  for (const auto& [plan, n] : starts) EXPECT_EQ(n, 1) << plan;
}

TEST_F(ExecuteTest, InterruptStopsRunningExecutorsAndLeavesTheirPlansPending) {
  using namespace std::chrono_literals;
  use_executor("executor-ok");
  ::setenv("YOLO_EXEC_SLEEP", "30", 1);
  ::setenv("YOLO_EXEC_LOG", log_path().c_str(), 1);
  auto started = std::chrono::steady_clock::now();
  BgProcess p({yolo_bin(), "execute", "--json"}, repo());
  ::unsetenv("YOLO_EXEC_SLEEP");
  ::unsetenv("YOLO_EXEC_LOG");
  auto ev = p.wait_for([](const json& j) { return j.value("event", "") == "plan_start"; }, 20s);
  ASSERT_TRUE(ev.has_value()) << p.stderr_text();
  int pid = (*ev)["pid"].get<int>();
  ASSERT_GT(pid, 0);
  // The executor's process group comes alive: the loop goes on as soon as the child is cloned,
  // so the child may still be making its session when plan_start is printed.
  bool alive = false;
  for (int i = 0; i < 100 && !alive; ++i) {
    alive = ::kill(-pid, 0) == 0;
    if (!alive) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(alive) << "the executor's process group " << pid << " never appeared";
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(10s), 1) << p.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
  // The whole group (bash and its sleep) is gone.
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    gone = ::kill(-pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(plan_status("01-01"), "pending");
  EXPECT_EQ(state()["plans"][0]["error"], "interrupted");
}

// `yolo execute --watch`: the watcher drives execute; nothing is typed but the approval.
class ExecuteWatchTest : public ExecuteTest {
 protected:
  std::unique_ptr<BgProcess> w;
  void start_watch() {
    ::setenv("YOLO_EXEC_LOG", log_path().c_str(), 1);
    w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "execute", "--watch", "--json"}, repo());
    ::unsetenv("YOLO_EXEC_LOG");
  }
  // The exit code of the first `execute` run after which `done()` holds, or fails the test.
  // The watcher may run execute more than once for one change (an approval that execute
  // wrote itself is seen mid-run and queues a rerun): a test waits for the outcome, not for
  // a count of runs.
  int execute_until(const std::function<bool()>& done) {
    using namespace std::chrono;
    auto deadline = steady_clock::now() + 30s;
    while (steady_clock::now() < deadline) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      auto ev = w->wait_for([](const json& j) { return j.value("event", "") == "execute_done"; }, left);
      if (!ev) break;
      if (done()) return (*ev)["exit_code"].get<int>();
    }
    ADD_FAILURE() << "no execute run reached the expected state; stderr: " << w->stderr_text();
    return -100;
  }
  void TearDown() override {
    using namespace std::chrono_literals;
    if (w) {
      w->signal(SIGTERM);
      EXPECT_EQ(w->wait_exit(5s), 0) << w->stderr_text();
      if (HasFailure())
        for (const auto& j : w->seen) std::cerr << "watch: " << j.dump() << "\n";
    }
  }
};

// The person's approval may land while the watcher's execute child is pausing at the gate
// (after it last read the state, before the watcher read it again): the watcher must not
// take it for execute's own write (watch::gate_resolved_since_pause).
TEST_F(ExecuteWatchTest, AnApprovalResumesTheRunAtOnce) {
  using namespace std::chrono_literals;
  use_executor("executor-ok");
  set_config({{"approvers", {{"vision", "manual"}}}});
  start_watch();
  ASSERT_EQ(execute_until([&] { return state()["status"] == "awaiting_approval"; }), 3);  // paused at the vision gate
  EXPECT_FALSE(stdfs::exists(log_path()));
  // A person approves from another terminal; nothing else is typed.
  auto a = yolo({"approve", "--by", "tester"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  auto approved = w->wait_for([](const json& j) { return j.value("event", "") == "approved"; }, 20s);
  ASSERT_TRUE(approved.has_value()) << w->stderr_text();
  EXPECT_EQ((*approved)["approved_by"], "tester");
  EXPECT_EQ(execute_until([&] { return state()["status"] == "complete"; }), 0);
  EXPECT_EQ(exec_log().size(), 4u);  // every plan ran exactly once
}

TEST_F(ExecuteWatchTest, ASummaryAdvancesTheWave) {
  set_config({{"executor", nullptr}});  // a person or an outside agent does the work
  start_watch();
  ASSERT_EQ(execute_until([&] { return plan_status("01-01") == "ready"; }), 4);
  EXPECT_EQ(plan_status("01-02"), "pending");
  write_summary_by_hand("01");  // wave 1 done: wave 2 (01-02, 01-03) becomes ready
  EXPECT_EQ(execute_until([&] { return plan_status("01-01") == "complete"; }), 4);
  EXPECT_EQ(plan_status("01-02"), "ready");
  EXPECT_EQ(plan_status("01-03"), "ready");
  EXPECT_EQ(plan_status("01-04"), "pending");
  write_summary_by_hand("02");  // half of wave 2: wave 3 must not start
  EXPECT_EQ(execute_until([&] { return plan_status("01-02") == "complete"; }), 4);
  EXPECT_EQ(plan_status("01-04"), "pending");
  write_summary_by_hand("03");
  EXPECT_EQ(execute_until([&] { return plan_status("01-03") == "complete"; }), 4);
  EXPECT_EQ(plan_status("01-04"), "ready");
  write_summary_by_hand("04");
  EXPECT_EQ(execute_until([&] { return state()["status"] == "complete"; }), 0);
  EXPECT_EQ(plan_status("01-04"), "complete");
}

}  // namespace
}  // namespace yolo::test
