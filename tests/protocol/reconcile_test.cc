// The watcher's reconcile decisions, without a watcher: what changed -> what to do.
#include "protocol/watch/reconcile.h"

#include <gtest/gtest.h>

#include "protocol/run/execution.h"

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
  EXPECT_EQ(plan_seen(kA, false, kA), PlanSeen::Unchanged);                    // touched
  EXPECT_EQ(plan_seen(std::string_view(""), false, ""), PlanSeen::Unchanged);  // still unreadable
  EXPECT_EQ(plan_seen(std::nullopt, true, kA), PlanSeen::ReviewedAsIs);        // first seen, reviewed as it is
  EXPECT_EQ(plan_seen(kB, true, kA), PlanSeen::ReviewedAsIs);                  // reverted to what was reviewed
  EXPECT_EQ(plan_seen(std::nullopt, false, kA), PlanSeen::NeedsReview);        // never reviewed
  EXPECT_EQ(plan_seen(kA, false, kB), PlanSeen::NeedsReview);                  // edited
  EXPECT_EQ(plan_seen(std::nullopt, false, ""), PlanSeen::NeedsReview);        // unreadable: its review says so
  EXPECT_EQ(plan_seen(std::nullopt, true, ""), PlanSeen::NeedsReview);
}

// Plan 01-02 in 02-PLAN.md on one branch and in 01-02-PLAN.md on another: the records are
// by plan id, so whichever file holds it, it is reviewed as it is exactly when 01-02's
// record holds its content, and a record replaced leaves nothing of the one before.
TEST(Reconcile, AReviewRecordIsThePlanIdsWhateverFileHoldsIt) {
  ReviewRecords r;
  r.set("01-core", "01-02", kA);
  r.set("01-core", "01-01", "sha256:" + kB);
  EXPECT_TRUE(r.reviewed("01-core", kA));
  EXPECT_TRUE(r.reviewed("01-core", "sha256:" + kB));
  EXPECT_FALSE(r.reviewed("02-other", kA));  // another phase's ledger
  const std::string kC(64, 'c');
  r.set("01-core", "01-02", kC);  // reviewed on the other branch: the record moved on
  EXPECT_FALSE(r.reviewed("01-core", kA));
  EXPECT_TRUE(r.reviewed("01-core", kC));
  EXPECT_EQ(r.size(), 2u);
  r.set("01-core", "01-03", kC);  // two ids, one content (a copy): both records hold it
  r.set("01-core", "01-02", kA);
  EXPECT_TRUE(r.reviewed("01-core", kC));
  r.replace("01-core", {{"01-01", kB}});  // the ledger read whole
  EXPECT_FALSE(r.reviewed("01-core", kA));
  EXPECT_FALSE(r.reviewed("01-core", kC));
  EXPECT_TRUE(r.reviewed("01-core", kB));
  EXPECT_EQ(r.size(), 1u);
  r.set("01-core", "01-01", "");  // removed
  EXPECT_EQ(r.size(), 0u);
  EXPECT_FALSE(r.reviewed("01-core", kB));
  EXPECT_FALSE(r.reviewed("01-core", ""));
  r.set("01-core", "01-09", "not a hash");
  EXPECT_EQ(r.size(), 0u);
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

TEST(Reconcile, AGateResolvedWhileExecuteWasPausingRunsExecuteAgain) {
  // execute paused at the gate, and the person's approval landed before the watcher read
  // the state: the run is running again, not awaiting approval.
  EXPECT_TRUE(gate_resolved_since_pause(/*paused=*/true, "running"));
  EXPECT_TRUE(gate_resolved_since_pause(true, "halted"));              // rejected: execute says so
  EXPECT_FALSE(gate_resolved_since_pause(true, "awaiting_approval"));  // still waiting: no loop of runs
  EXPECT_FALSE(gate_resolved_since_pause(false, "running"));           // it did not pause
  EXPECT_FALSE(gate_resolved_since_pause(true, ""));                   // no state to read
}

// ---- the review queue ---------------------------------------------------------------

std::vector<std::string> names(const std::optional<ReviewBatch>& b) {
  std::vector<std::string> v;
  if (b)
    for (const auto& p : b->plans) v.push_back(p.filename().string());
  return v;
}

TEST(ReviewQueue, ASaveGoesInItsOwnLaneAndNeverWaitsForTheBacklog) {
  ReviewQueue q;
  for (int i = 0; i < 10; ++i) q.push("/p/b" + std::to_string(i), Lane::Backlog);
  auto backlog = q.take(Lane::Backlog, 4);
  EXPECT_EQ(names(backlog), (std::vector<std::string>{"b0", "b1", "b2", "b3"}));
  EXPECT_TRUE(q.busy(Lane::Backlog));
  EXPECT_FALSE(q.take(Lane::Backlog, 4));  // one batch per lane at a time
  q.push("/p/s", Lane::Fresh);             // a person saves while the backlog runs
  EXPECT_EQ(names(q.take(Lane::Fresh, 64)), (std::vector<std::string>{"s"}));
  EXPECT_EQ(q.queued(Lane::Backlog), 6u);
}

TEST(ReviewQueue, ABacklogPlanThatIsSavedMovesToTheFreshLane) {
  ReviewQueue q;
  q.push("/p/a", Lane::Backlog);
  q.push("/p/b", Lane::Backlog);
  q.push("/p/b", Lane::Fresh);
  EXPECT_EQ(q.queued(Lane::Backlog), 1u);
  EXPECT_EQ(q.queued(Lane::Fresh), 1u);
  q.push("/p/b", Lane::Backlog);  // a rescan finds it again: it stays fresh
  EXPECT_EQ(q.queued(Lane::Backlog), 1u);
  EXPECT_EQ(names(q.take(Lane::Backlog, 10)), (std::vector<std::string>{"a"}));
  EXPECT_EQ(names(q.take(Lane::Fresh, 10)), (std::vector<std::string>{"b"}));
}

TEST(ReviewQueue, APlanIsNeverInTwoBatchesAtOnce) {
  ReviewQueue q;
  q.push("/p/a", Lane::Backlog);
  auto b = q.take(Lane::Backlog, 1);
  ASSERT_EQ(names(b), (std::vector<std::string>{"a"}));
  q.push("/p/a", Lane::Fresh);  // saved while its backlog review runs
  q.push("/p/c", Lane::Fresh);
  EXPECT_EQ(names(q.take(Lane::Fresh, 64)), (std::vector<std::string>{"c"}));  // a waits for its batch
  q.finish(Lane::Fresh);
  EXPECT_FALSE(q.take(Lane::Fresh, 64));  // still in flight
  EXPECT_EQ(q.queued(Lane::Fresh), 1u);
  q.finish(Lane::Backlog);
  EXPECT_EQ(names(q.take(Lane::Fresh, 64)), (std::vector<std::string>{"a"}));
}

TEST(ReviewQueue, AGonePlanIsDroppedAndOrderIsKept) {
  ReviewQueue q;
  for (const char* n : {"/p/1", "/p/2", "/p/3", "/p/4"}) q.push(n, Lane::Backlog);
  q.drop("/p/2");
  q.drop("/p/zz");  // never queued: nothing happens
  EXPECT_EQ(q.queued(Lane::Backlog), 3u);
  EXPECT_EQ(names(q.take(Lane::Backlog, 10)), (std::vector<std::string>{"1", "3", "4"}));
  q.finish(Lane::Backlog);
  EXPECT_TRUE(q.idle());
  EXPECT_FALSE(q.take(Lane::Backlog, 10));
}

TEST(ReviewQueue, SavesAndSmallRescansAreFreshTheFirstScanAndBigRescansAreTheBacklog) {
  EXPECT_EQ(lane_for(/*full_scan=*/false, false, 1000), Lane::Fresh);  // saves, however many
  EXPECT_EQ(lane_for(true, /*initial=*/true, 1), Lane::Backlog);
  EXPECT_EQ(lane_for(true, false, kFreshRescanMax), Lane::Fresh);  // git finished a checkout
  EXPECT_EQ(lane_for(true, false, kFreshRescanMax + 1), Lane::Backlog);
}

TEST(ReviewQueue, BatchesAreLargeWithoutAgentsAndOnePlanPerAgentCallInTheBacklog) {
  EXPECT_EQ(batch_size(Lane::Backlog, /*agents=*/true), 1u);
  EXPECT_GT(batch_size(Lane::Backlog, /*agents=*/false), 100u);
  EXPECT_GE(batch_size(Lane::Fresh, true), 1u);
}

TEST(ReviewQueue, AQueuedPlanAlreadyReviewedAsItIsIsSkipped) {
  ReviewRecords r;
  r.set("01-a", "01-01", "sha256:" + kA);
  EXPECT_FALSE(still_needs_review(r, "01-a", kA));
  EXPECT_TRUE(still_needs_review(r, "01-a", kB));
  EXPECT_TRUE(still_needs_review(r, "02-b", kA));
  EXPECT_TRUE(still_needs_review(r, "01-a", ""));  // unreadable: its review says so
}

}  // namespace
}  // namespace yolo::watch
