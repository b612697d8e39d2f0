// What the execution state says about a run: a review is no run.
#include <gtest/gtest.h>

#include "protocol/execute_rules.h"
#include "protocol/execution.h"

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

TEST(Transitions, ReadyStartEndAndComplete) {
  json doc = run_of_two();
  mark_ready(doc, {"01-01", "nope"});
  EXPECT_EQ(doc["plans"][0]["status"], "ready");
  EXPECT_EQ(start_plans(doc, {"01-01"}, "t1"), "");
  EXPECT_EQ(doc["plans"][0]["status"], "running");
  EXPECT_EQ(doc["plans"][0]["started_at"], "t1");
  EXPECT_TRUE(doc["plans"][0]["completed_at"].is_null());
  EXPECT_EQ(start_plans(doc, {"01-09"}, "t1"), "plan 01-09 is missing from the state");

  end_plan(doc, "01-01", {"failed", "no SUMMARY", json::array({{{"severity", "high"}}})}, "t2");
  EXPECT_EQ(doc["plans"][0]["status"], "failed");
  EXPECT_EQ(doc["plans"][0]["error"], "no SUMMARY");
  EXPECT_EQ(doc["plans"][0]["findings"].size(), 1u);
  EXPECT_EQ(doc["plans"][0]["completed_at"], "t2");
  // A new start clears what the failure left.
  ASSERT_EQ(start_plans(doc, {"01-01"}, "t3"), "");
  EXPECT_FALSE(doc["plans"][0].contains("error"));
  EXPECT_FALSE(doc["plans"][0].contains("findings"));
  end_plan(doc, "01-01", {"pending", "interrupted", json::array()}, "t4");  // Ctrl-C: it may run again
  EXPECT_EQ(doc["plans"][0]["status"], "pending");
  EXPECT_TRUE(doc["plans"][0]["completed_at"].is_null());
  end_plan(doc, "01-01", {"complete", "", json::array()}, "t5");
  EXPECT_EQ(doc["plans"][0]["status"], "complete");
  EXPECT_FALSE(doc["plans"][0].contains("error"));
  EXPECT_EQ(doc["wave"], 2);  // the lowest wave with a plan not complete

  end_plan(doc, "01-02", {"complete", "", json::array()}, "t6");
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

}  // namespace
}  // namespace yolo::execution
