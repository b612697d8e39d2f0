// What the execution state says about a run: a review is no run.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "protocol/run/execute_rules.h"
#include "protocol/run/execution.h"

namespace yolo::execution {
namespace {

const json kRun = {{"status", "running"}, {"phase", 1}, {"phase_name", "demo"}, {"phase_dir", ".yolo-planning/phases/01-demo"}};

TEST(RunRules, OnlyARunThatExecuteStartedIsARun) {
  EXPECT_FALSE(has_run(json::object()));
  EXPECT_FALSE(has_run(json()));
  // What an older `yolo review` wrote, and a gate requested outside a run.
  EXPECT_FALSE(has_run({{"status", "running"}, {"review_loops", json::object()}}));
  EXPECT_FALSE(has_run({{"status", "awaiting_approval"}, {"gates", json::array()}}));
  EXPECT_TRUE(has_run(kRun));
  EXPECT_TRUE(has_run({{"status", "running"}, {"phase", 2}}));  // older tools: phase and phase_name only
  EXPECT_TRUE(has_run({{"status", "running"}, {"phase_dir", "x"}}));
}

TEST(RunRules, TheCoreIsToldWhatRunsAndHowManyPlansAtOnce) {
  // 7 plans, max_parallel 3, --plan 01-02.
  run::Settings s = core_settings(true, false, true, 3, "01-02", 7, std::nullopt, false);
  EXPECT_TRUE(s.executor);
  EXPECT_FALSE(s.isolated);
  EXPECT_TRUE(s.wave_approval);
  EXPECT_EQ(s.only, "01-02");
  EXPECT_EQ(s.max_parallel, 3);
  EXPECT_TRUE(core_settings(true, true, false, 3, "", 7, std::nullopt, false).isolated);
  EXPECT_EQ(core_settings(true, false, false, 3, "", 7, std::nullopt, true).max_parallel, 3)
      << "the wave-level form is dispatch's";
  s = core_settings(false, false, false, 3, "", 7, std::nullopt, false);  // every plan marked ready at once
  EXPECT_FALSE(s.executor);
  EXPECT_EQ(s.max_parallel, 8);
  EXPECT_EQ(core_settings(true, true, false, 3, "", 7, 5, false).max_parallel, 5) << "the jobs at once";
  EXPECT_EQ(core_settings(true, true, false, 3, "", 7, 5, true).max_parallel, 8) << "a whole wave at once";
}

TEST(RunRules, InProgressMeansRunningOrAwaitingApproval) {
  for (const char* s : {"running", "awaiting_approval"}) {
    json st = kRun;
    st["status"] = s;
    EXPECT_TRUE(run_in_progress(st)) << s;
  }
  for (const char* s : {"complete", "halted"}) {
    json st = kRun;
    st["status"] = s;
    EXPECT_FALSE(run_in_progress(st)) << s;
  }
  EXPECT_FALSE(run_in_progress({{"status", "running"}}));
}

json run_of_two() {
  return {{"status", "running"},
          {"phase", 1},
          {"phase_dir", "p"},
          {"plans",
           {{{"id", "01-01"}, {"wave", 1}, {"status", "pending"}}, {{"id", "01-02"}, {"wave", 2}, {"status", "pending"}}}}};
}

// The statuses of the state file, each word written and read in one place.
TEST(Statuses, EachWordRoundTripsAndAnUnknownOneIsNone) {
  for (RunStatus r : {RunStatus::Running, RunStatus::AwaitingApproval, RunStatus::Halted, RunStatus::Complete})
    EXPECT_EQ(parse_run_status(to_string(r)), r);
  EXPECT_EQ(to_string(RunStatus::AwaitingApproval), std::string("awaiting_approval"));
  EXPECT_EQ(parse_run_status("RUNNING"), std::nullopt);
  EXPECT_EQ(run_status(json{{"status", "halted"}}), RunStatus::Halted);
  EXPECT_EQ(run_status(json{{"status", 3}}), std::nullopt);
  EXPECT_EQ(run_status(json::array()), std::nullopt);
  EXPECT_EQ(plan_status(json{{"status", "ready"}}), PlanStatus::Ready);
  EXPECT_EQ(plan_status(json{{"status", "done"}}), std::nullopt);
  for (MergeState m : {MergeState::None, MergeState::Pending, MergeState::Merged, MergeState::Conflict})
    EXPECT_EQ(merge_state(json{{"merge", to_string(m)}}), m);
  EXPECT_EQ(merge_state(json::object()), MergeState::None);  // not gated yet
  EXPECT_EQ(merge_state(json{{"merge", "later"}}), MergeState::None);
}

// A start and an end as the run queues them: the same records start_plans and end_plan write.
TEST(Statuses, StartedAndEndedAreTheTransitionsAsUpdates) {
  PlanUpdate s = started(std::string("t1"));
  EXPECT_EQ(s.status, PlanStatus::Running);
  EXPECT_EQ(s.started_at, std::optional<std::string>("t1"));
  EXPECT_TRUE(s.completed_at.is_null());
  EXPECT_EQ(started(std::nullopt).started_at, std::nullopt);
  PlanUpdate f = ended({PlanStatus::Failed, "boom", json::object()}, "t2");
  EXPECT_EQ(f.completed_at, "t2");
  EXPECT_EQ(f.findings, json::array()) << "a failed plan's findings are always a list";
  PlanUpdate p = ended({PlanStatus::Pending, "interrupted", json::array({1})}, "t3");
  EXPECT_TRUE(p.completed_at.is_null()) << "pending again: not completed";
  EXPECT_TRUE(p.findings.is_null()) << "only a failed plan keeps findings";
}

TEST(Transitions, ReadyStartEndAndComplete) {
  json doc = run_of_two();
  mark_ready(doc, {"01-01", "nope"});
  EXPECT_EQ(doc["plans"][0]["status"], "ready");
  EXPECT_EQ(start_plans(doc, {"01-01"}, "t1").error, "");
  EXPECT_EQ(doc["plans"][0]["status"], "running");
  EXPECT_EQ(doc["plans"][0]["started_at"], "t1");
  EXPECT_TRUE(doc["plans"][0]["completed_at"].is_null());
  EXPECT_EQ(start_plans(doc, {"01-09"}, "t1").error, "plan 01-09 is missing from the state");

  end_plan(doc, "01-01", {PlanStatus::Failed, "no SUMMARY", json::array({{{"severity", "high"}}})}, "t2");
  EXPECT_EQ(doc["plans"][0]["status"], "failed");
  EXPECT_EQ(doc["plans"][0]["error"], "no SUMMARY");
  EXPECT_EQ(doc["plans"][0]["findings"].size(), 1u);
  EXPECT_EQ(doc["plans"][0]["completed_at"], "t2");
  // A new start clears what the failure left.
  ASSERT_EQ(start_plans(doc, {"01-01"}, "t3").error, "");
  EXPECT_FALSE(doc["plans"][0].contains("error"));
  EXPECT_FALSE(doc["plans"][0].contains("findings"));
  end_plan(doc, "01-01", {PlanStatus::Pending, "interrupted", json::array()}, "t4");  // Ctrl-C: it may run again
  EXPECT_EQ(doc["plans"][0]["status"], "pending");
  EXPECT_TRUE(doc["plans"][0]["completed_at"].is_null());
  end_plan(doc, "01-01", {PlanStatus::Complete, "", json::array()}, "t5");
  EXPECT_EQ(doc["plans"][0]["status"], "complete");
  EXPECT_FALSE(doc["plans"][0].contains("error"));
  EXPECT_EQ(doc["wave"], 2);  // the lowest wave with a plan not complete

  end_plan(doc, "01-02", {PlanStatus::Complete, "", json::array()}, "t6");
  complete_phase(doc, "t7");
  EXPECT_EQ(doc["status"], "complete");
  EXPECT_EQ(doc["completed_at"], "t7");
  EXPECT_TRUE(has_step(doc, "step_3"));
  complete_phase(doc, "t8");
  EXPECT_EQ(doc["completed_at"], "t7");  // set once
}

TEST(Transitions, HaltLeavesAGateAndAnEarlierHaltAlone) {
  json doc = run_of_two();
  EXPECT_TRUE(halt(doc));
  EXPECT_EQ(doc["status"], "halted");
  EXPECT_FALSE(halt(doc));
  json frozen = run_of_two();
  frozen["status"] = "awaiting_approval";
  EXPECT_FALSE(halt(frozen));
  EXPECT_EQ(frozen["status"], "awaiting_approval");
  // A phase that completes while a gate is open stays frozen.
  complete_phase(frozen, "t");
  EXPECT_EQ(frozen["status"], "awaiting_approval");
}

// The exit codes of `yolo execute` as the process that started it reads them (the watcher).
TEST(RunRules, ExecuteExitCodesSayHowTheRunEnded) {
  EXPECT_EQ(execute_end(kExitComplete), ExecuteEnd::Complete);
  EXPECT_EQ(execute_end(kExitHalted), ExecuteEnd::HaltedOrFailed);
  EXPECT_EQ(execute_end(kExitPaused), ExecuteEnd::Paused);
  EXPECT_EQ(execute_end(kExitWaitingSummary), ExecuteEnd::WaitingForSummaries);
  EXPECT_EQ(execute_end(kExitUsage), ExecuteEnd::Other);
  EXPECT_EQ(execute_end(2), ExecuteEnd::Other);
  EXPECT_EQ(execute_end(137), ExecuteEnd::Other);
  // The documented numbers: scripts and the watcher rely on them.
  EXPECT_EQ(kExitComplete, 0);
  EXPECT_EQ(kExitHalted, 1);
  EXPECT_EQ(kExitPaused, 3);
  EXPECT_EQ(kExitWaitingSummary, 4);
  EXPECT_EQ(kExitUsage, 64);
  // A run that completed, paused at a gate or waits for SUMMARY files ended as it chose to;
  // only the others have an error worth showing.
  EXPECT_TRUE(expected_end(ExecuteEnd::Complete));
  EXPECT_TRUE(expected_end(ExecuteEnd::Paused));
  EXPECT_TRUE(expected_end(ExecuteEnd::WaitingForSummaries));
  EXPECT_FALSE(expected_end(ExecuteEnd::HaltedOrFailed));
  EXPECT_FALSE(expected_end(ExecuteEnd::Other));
}

// review_gate: "always" runs it, "never" never (not even with --review), anything else only
// when asked with --review.
TEST(RunRules, ResultWordsAreDistinct) {
  std::set<std::string> words;
  for (Result r : {Result::Complete, Result::Halted, Result::Error, Result::Interrupted, Result::Locked, Result::Paused,
                   Result::WaitingForSummary})
    words.insert(to_string(r));
  EXPECT_EQ(words.size(), 7u);
  EXPECT_EQ(std::string(to_string(Result::WaitingForSummary)), "waiting_for_summary");
  EXPECT_EQ(std::string(to_string(ReviewGateStatus::Rejected)), "rejected");
}

// An escape attempt the executor's sandbox refused fails a plan whatever its gates said,
// with a high finding naming the calls; an interrupted plan stays pending.
TEST(RunRules, AnEscapeAttemptFailsThePlanWhateverElseItDid) {
  PlanFacts f;
  f.summary_path = "p/01-01-SUMMARY.md";
  f.summary = SummaryState::Passed;
  f.plan_id = "01-01";
  f.refused = {"unshare(CLONE_NEWUSER) by sh (pid 12)", "ioctl(TIOCSTI) on a terminal by python3 (pid 13)"};
  auto o = plan_outcome(f);
  EXPECT_EQ(o.end.status, PlanStatus::Failed);
  EXPECT_EQ(o.end.error,
            "the sandbox refused unshare(CLONE_NEWUSER) by sh (pid 12); ioctl(TIOCSTI) on a terminal by python3 (pid 13)");
  ASSERT_EQ(o.end.findings.size(), 1u);
  EXPECT_EQ(o.end.findings[0]["check"], "sandbox");
  EXPECT_EQ(o.end.findings[0]["severity"], "high");
  PlanFacts crashed = f;
  crashed.executor_ok = false;
  crashed.executor_outcome = "exited with status 2";
  EXPECT_EQ(plan_outcome(crashed).end.error,
            "the executor exited with status 2; the sandbox refused unshare(CLONE_NEWUSER) by sh (pid 12); "
            "ioctl(TIOCSTI) on a terminal by python3 (pid 13)");
  PlanFacts stopped = f;
  stopped.interrupted = true;
  EXPECT_EQ(plan_outcome(stopped).end.status, PlanStatus::Pending);
}

// How a plan ends once its executor is done: each fact in the order it decides.
TEST(RunRules, ThePlanOutcome) {
  PlanFacts f;
  f.summary_path = "p/01-01-SUMMARY.md";
  f.summary = SummaryState::Passed;
  EXPECT_EQ(plan_outcome(f).end.status, PlanStatus::Complete);
  EXPECT_EQ(plan_outcome(f).end.error, "");

  PlanFacts stopped = f;
  stopped.interrupted = true;
  stopped.executor_ok = false;
  EXPECT_EQ(plan_outcome(stopped).end.status, PlanStatus::Pending) << "interrupted: it may run again";
  EXPECT_EQ(plan_outcome(stopped).end.error, "interrupted");

  PlanFacts job = f;
  job.dispatch_error = "the job failed (exit 3)";
  EXPECT_EQ(plan_outcome(job).end.status, PlanStatus::Failed);
  EXPECT_EQ(plan_outcome(job).end.error, "the job failed (exit 3)");

  PlanFacts crashed = f;
  crashed.executor_ok = false;
  crashed.executor_outcome = "exited with status 2";
  crashed.executor_err = "error: no such model\nUsage: agent [OPTIONS]\nFor more information, try '--help'.\n";
  EXPECT_EQ(plan_outcome(crashed).end.error, "the executor exited with status 2: error: no such model")
      << "the line that says why, not the usage tail";

  PlanFacts missing = f;
  missing.summary = SummaryState::Missing;
  EXPECT_EQ(plan_outcome(missing).end.error, "the executor exited 0 but wrote no SUMMARY (p/01-01-SUMMARY.md)");

  json fence = {{"severity", "high"}, {"check", "scope_fence"}, {"issue", "src/x.cc is outside the plan"}};
  json claim = {{"severity", "high"}, {"check", "files_exist"}, {"issue", "a.cc does not exist"}};
  PlanFacts fenced = f;
  fenced.summary = SummaryState::Failed;
  fenced.summary_findings = json::array({fence});
  auto o = plan_outcome(fenced);
  EXPECT_EQ(o.end.error, "the scope fence: src/x.cc is outside the plan");
  EXPECT_FALSE(o.summary_failed) << "only the fence failed it";
  EXPECT_EQ(o.end.findings.size(), 1u);
  fenced.summary_findings.push_back(claim);
  o = plan_outcome(fenced);
  EXPECT_EQ(o.end.error,
            "its SUMMARY fails the SUMMARY gate (p/01-01-SUMMARY.md); the scope fence: src/x.cc is outside the plan");
  EXPECT_TRUE(o.summary_failed);

  Finding check;
  check.severity = Severity::High;
  check.check = "checks";
  check.issue = "check `make test` failed: exited with status 1";
  PlanFacts checked = f;
  checked.check_findings = {check};
  o = plan_outcome(checked);
  EXPECT_EQ(o.end.status, PlanStatus::Failed) << "a failing check fails a plan whose SUMMARY passes";
  EXPECT_EQ(o.end.error, check.issue);
  ASSERT_EQ(o.end.findings.size(), 1u);
  checked.summary = SummaryState::Missing;
  EXPECT_EQ(plan_outcome(checked).end.error,
            "the executor exited 0 but wrote no SUMMARY (p/01-01-SUMMARY.md); " + check.issue);
}

// A plan's SUMMARY gate in its worktree: any high finding fails it; a failed check keeps its
// SUMMARY off the branch.
TEST(RunRules, TheWorktreeGate) {
  json medium = json::array({{{"severity", "medium"}, {"check", "scope_fence"}}});
  json high = json::array({{{"severity", "low"}}, {{"severity", "high"}, {"check", "claims"}}});
  EXPECT_EQ(worktree_gate(medium, true).state, SummaryState::Passed);
  EXPECT_TRUE(worktree_gate(medium, true).commit);
  EXPECT_FALSE(worktree_gate(medium, false).commit);
  EXPECT_EQ(worktree_gate(medium, false).state, SummaryState::Passed) << "the check, not the gate, fails the plan";
  EXPECT_EQ(worktree_gate(high, true).state, SummaryState::Failed);
  EXPECT_FALSE(worktree_gate(high, true).commit);
  EXPECT_TRUE(worktree_gate(json::array(), true).commit);
}

TEST(RunRules, AnyPlanStage1RejectsHaltsTheRunBeforeAnythingRuns) {
  Precheck none = precheck({});
  EXPECT_FALSE(none.halts());
  EXPECT_EQ(none.verdict(), Verdict::Approve);
  EXPECT_EQ(none.why(), "");
  Precheck warned = precheck({Verdict::Approve, Verdict::Conditional, Verdict::Conditional});
  EXPECT_FALSE(warned.halts());  // warnings are said; the run goes on
  EXPECT_EQ(warned.conditional, 2);
  EXPECT_EQ(warned.verdict(), Verdict::Conditional);
  Precheck one = precheck({Verdict::Conditional, Verdict::Approve, Verdict::Reject, Verdict::Approve});
  EXPECT_TRUE(one.halts());  // one reject among many approvals is enough
  EXPECT_EQ(one.rejected, 1);
  EXPECT_EQ(one.conditional, 1);
  EXPECT_EQ(one.verdict(), Verdict::Reject);
  EXPECT_EQ(one.why(), "1 plan(s) rejected by the structural pre-check");
}

TEST(RunRules, TheReviewGatePolicy) {
  EXPECT_EQ(review_gate("always", false), ReviewGate::Runs);
  EXPECT_EQ(review_gate("always", true), ReviewGate::Runs);
  EXPECT_EQ(review_gate("never", false), ReviewGate::OffByConfig);
  EXPECT_EQ(review_gate("never", true), ReviewGate::OffByConfig);
  EXPECT_EQ(review_gate("on_request", false), ReviewGate::NotRequested);
  EXPECT_EQ(review_gate("on_request", true), ReviewGate::Runs);
  EXPECT_EQ(review_gate("", false), ReviewGate::NotRequested);
  EXPECT_EQ(review_gate("", true), ReviewGate::Runs);
}

// A missing agent's program before a run: the executor or a dispatch command refuses it; the
// reviewer and architect matter only while the review gate runs.
TEST(RunRules, AMissingAgentBeforeTheRun) {
  using S = MissingAgentStep;
  for (bool reviewing : {false, true})
    for (bool required : {false, true}) {
      EXPECT_EQ(missing_agent_step("executor", reviewing, required), S::Refuse);
      EXPECT_EQ(missing_agent_step("dispatch.submit", reviewing, required), S::Refuse);
      EXPECT_EQ(missing_agent_step("dispatch.wait", reviewing, required), S::Refuse);
    }
  EXPECT_EQ(missing_agent_step("reviewer", true, true), S::RefuseReviewerRequired);
  EXPECT_EQ(missing_agent_step("reviewer", true, false), S::WarnStage1Only);
  EXPECT_EQ(missing_agent_step("reviewer", false, true), S::Ignore);
  EXPECT_EQ(missing_agent_step("reviewer", false, false), S::Ignore);
  EXPECT_EQ(missing_agent_step("architect", true, true), S::WarnNoRevision);
  EXPECT_EQ(missing_agent_step("architect", false, false), S::Ignore);
  EXPECT_EQ(missing_agent_step("dispatcher", true, true), S::Ignore);  // no "dispatch." prefix
}

// Which phase execute runs: the one asked for by folder or number, else the state's (unless
// complete with nothing added), else the first not complete on disk.
TEST(RunRules, WhichPhaseRuns) {
  const std::vector<PhaseName> phases{{"01-demo", 1, ".yolo-planning/phases/01-demo"},
                                      {"02-api", 2, ".yolo-planning/phases/02-api"},
                                      {"notes", 0, ".yolo-planning/phases/notes"}};
  std::set<size_t> complete{0}, added;
  auto new_plans = [&](size_t i) { return added.count(i) > 0; };
  auto done = [&](size_t i) { return complete.count(i) > 0; };
  using Kind = PhaseChoice::Kind;
  auto pick = [&](const std::string& asked, const json* state) {
    return choose_phase(phases, asked, state, new_plans, done);
  };
  EXPECT_EQ(choose_phase({}, "", nullptr, new_plans, done).kind, Kind::NoPhases);
  // Asked for: by folder, by number (leading zeros, a path, a trailing slash), never a number
  // for a folder without one; an unknown one is not found.
  EXPECT_EQ(pick("02-api", nullptr).index, 1u);
  EXPECT_EQ(pick("2", nullptr).index, 1u);
  EXPECT_EQ(pick("002", nullptr).index, 1u);
  EXPECT_EQ(pick(".yolo-planning/phases/01-demo/", nullptr).index, 0u);
  EXPECT_EQ(pick("01-demo", nullptr).kind, Kind::Run) << "asked for runs it, complete or not";
  EXPECT_EQ(pick("notes", nullptr).index, 2u);
  EXPECT_EQ(pick("0", nullptr).kind, Kind::NotFound) << "notes has no number";
  EXPECT_EQ(pick("9", nullptr).kind, Kind::NotFound);
  EXPECT_EQ(pick("api", nullptr).kind, Kind::NotFound);
  // Not asked: the first not complete on disk.
  auto first = pick("", nullptr);
  EXPECT_EQ(first.kind, Kind::Run);
  EXPECT_EQ(first.index, 1u);
  // The state's phase runs even when its SUMMARY files all pass...
  json running = kRun;
  EXPECT_EQ(pick("", &running).index, 0u);
  // ...unless its run is complete and no plan was added since.
  json finished = kRun;
  finished["status"] = "complete";
  EXPECT_EQ(pick("", &finished).index, 1u);
  added.insert(0);
  EXPECT_EQ(pick("", &finished).index, 0u) << "a plan added to a completed phase runs it again";
  added.clear();
  // Every phase complete: the last is named.
  complete = {0, 1, 2};
  auto all = pick("", nullptr);
  EXPECT_EQ(all.kind, Kind::AllComplete);
  EXPECT_EQ(all.index, 2u);
}

}  // namespace
}  // namespace yolo::execution
