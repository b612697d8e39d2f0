// The watcher's reconcile decisions, without a watcher: what changed -> what to do.
#include "protocol/reconcile.h"

#include <gtest/gtest.h>

#include "protocol/execution.h"

namespace yolo::watch {
namespace {

const std::string kA(64, 'a'), kB(64, 'b');

Situation plain() { return Situation{}; }

TEST(Reconcile, APlainWatchDrivesExecutionOnlyWhileARunIsInProgress) {
  EXPECT_FALSE(drives_execution(plain()));
  EXPECT_TRUE(drives_execution({true, true, false}));
  EXPECT_TRUE(drives_execution({true, false, true}));
  // What a review leaves behind (or an older review's state) is no run in progress.
  json review_only = {{"status", "running"}, {"review_loops", {{"01-01", {{"cycle", 1}}}}}};
  EXPECT_FALSE(drives_execution({true, false, execution::run_in_progress(review_only)}));
  json run = {{"status", "awaiting_approval"}, {"phase", 1}, {"phase_dir", "p"}};
  EXPECT_TRUE(drives_execution({true, false, execution::run_in_progress(run)}));
}

TEST(Reconcile, APlanNeedsAReviewOnlyWhenItDiffersFromItsLastReview) {
  EXPECT_EQ(plan_seen(kA, "", kA), PlanSeen::Unchanged);                // touched
  EXPECT_EQ(plan_seen(std::string_view(""), "", ""), PlanSeen::Unchanged);  // still unreadable
  EXPECT_EQ(plan_seen(std::nullopt, kA, kA), PlanSeen::ReviewedAsIs);   // first seen, reviewed as it is
  EXPECT_EQ(plan_seen(kB, "sha256:" + kA, kA), PlanSeen::ReviewedAsIs); // reverted to what was reviewed
  EXPECT_EQ(plan_seen(std::nullopt, "", kA), PlanSeen::NeedsReview);    // never reviewed
  EXPECT_EQ(plan_seen(kA, kA, kB), PlanSeen::NeedsReview);              // edited
  EXPECT_EQ(plan_seen(std::nullopt, "", ""), PlanSeen::NeedsReview);    // unreadable: its review says so
}

TEST(Reconcile, ChangedPlansAreReviewedUnlessReviewsAreOff) {
  Changes c;
  c.plans["/p/01-a"] = {"/p/01-a/01-01-PLAN.md"};
  c.plans["/p/02-b"] = {};  // a sibling went away
  auto a = decide(c, plain());
  EXPECT_EQ(a.reviews, c.plans);
  EXPECT_FALSE(a.run_execute);
  EXPECT_FALSE(a.request_vision_gate);
  Situation off;
  off.review = false;
  EXPECT_TRUE(decide(c, off).reviews.empty());
}

TEST(Reconcile, ARoadmapChangeAsksForTheVisionGateOrRunsExecuteWhenDriving) {
  Changes c;
  c.roadmap = true;
  auto a = decide(c, plain());
  EXPECT_TRUE(a.request_vision_gate);
  EXPECT_FALSE(a.run_execute);
  auto d = decide(c, {true, true, false});
  EXPECT_FALSE(d.request_vision_gate);  // execute opens the gate itself
  EXPECT_TRUE(d.run_execute);
}

TEST(Reconcile, SummariesAndApprovalsRunExecuteOnlyWhenDriving) {
  for (int which = 0; which < 2; ++which) {
    Changes c;
    (which == 0 ? c.summaries : c.approvals) = true;
    EXPECT_FALSE(decide(c, plain()).run_execute) << which;
    EXPECT_FALSE(decide(c, plain()).request_vision_gate) << which;
    EXPECT_TRUE(decide(c, {true, false, true}).run_execute) << which;
  }
  EXPECT_FALSE(decide(Changes{}, {true, true, true}).run_execute);  // nothing changed
}

}  // namespace
}  // namespace yolo::watch
