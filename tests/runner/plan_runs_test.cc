// The run's plan records (runner/plan_run.h: PlanRuns), alone: holding and releasing plans
// counts the plans running for the loop once each, a plan released when not held changes
// nothing, a record asked for past the end is made, and a plan's worktree shows once it has one.
#include "runner/plan_run.h"

#include <gtest/gtest.h>

namespace yolo::runner::phase {
namespace {

TEST(PlanRuns, HoldAndReleaseCountEachPlanOnce) {
  PlanRuns runs;
  runs.reset(std::vector<PlanRun>(3));
  EXPECT_EQ(runs.running(), 0u);
  EXPECT_EQ(runs.hold(0, nullptr), nullptr);
  runs.hold(2, nullptr);
  EXPECT_EQ(runs.running(), 2u);
  runs.hold(0, nullptr);  // held again (its next child): still one plan
  EXPECT_EQ(runs.running(), 2u);
  EXPECT_TRUE(runs.at(0)->running);
  EXPECT_FALSE(runs.at(1)->running);
  runs.release(0);
  EXPECT_EQ(runs.running(), 1u);
  EXPECT_FALSE(runs.at(0)->running);
  runs.release(0);  // released twice: counted once
  EXPECT_EQ(runs.running(), 1u);
  runs.release(2);
  EXPECT_EQ(runs.running(), 0u);
}

TEST(PlanRuns, ReleaseOfAPlanNotHeldChangesNothing) {
  PlanRuns runs;
  runs.reset(std::vector<PlanRun>(2));
  runs.hold(1, nullptr);
  runs.release(0);  // never held
  runs.release(7);  // past the end: no record is made
  EXPECT_EQ(runs.running(), 1u);
  EXPECT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs.at(1)->running);
  EXPECT_EQ(runs.at(7), nullptr);
}

TEST(PlanRuns, RecordsGrowOnlyWhenAskedForOne) {
  PlanRuns runs;
  EXPECT_EQ(runs.size(), 0u);
  EXPECT_EQ(runs.at(0), nullptr);
  runs.of(4).argv = {"exec"};
  EXPECT_EQ(runs.size(), 5u);
  ASSERT_NE(runs.at(4), nullptr);
  EXPECT_EQ(runs.at(4)->argv, std::vector<std::string>{"exec"});
  EXPECT_EQ(&runs.of(4), runs.at(4));  // the same record, not a new one
  EXPECT_EQ(runs.size(), 5u);
  runs.hold(6, nullptr);  // holding a plan past the end makes its record too
  EXPECT_EQ(runs.size(), 7u);
  EXPECT_EQ(runs.running(), 1u);
  size_t held = 0;
  for (PlanRun& r : runs) held += r.running;
  EXPECT_EQ(held, 1u);
}

TEST(PlanRuns, WorktreeShowsOnceThePlanHasOne) {
  PlanRuns runs;
  runs.reset(std::vector<PlanRun>(1));
  EXPECT_EQ(runs.worktree_of(0), nullptr);
  EXPECT_EQ(runs.worktree_of(3), nullptr);
  runs.of(0).worktree.emplace();
  runs.of(0).worktree->branch = "yolo/01-01";
  ASSERT_NE(runs.worktree_of(0), nullptr);
  EXPECT_EQ(runs.worktree_of(0)->branch, "yolo/01-01");
}

// What the run core is told of each plan (its dispatched job), and every plan released at
// the loop's end.
TEST(PlanRuns, KnownGivesEachPlansJobAndReleaseAllEndsTheCount) {
  PlanRuns runs;
  runs.reset(std::vector<PlanRun>(2));
  runs.of(1).dispatch_rec = {{"attempt", 2}};
  runs.of(1).dispatch_failed_before = true;
  auto known = runs.known(3);  // the third plan: nothing known
  ASSERT_EQ(known.size(), 3u);
  EXPECT_EQ(known[1].job, &runs.at(1)->dispatch_rec);
  EXPECT_TRUE(known[1].failed_before);
  EXPECT_FALSE(known[0].failed_before);
  EXPECT_EQ(known[2].job, nullptr);
  runs.hold(0, nullptr);
  runs.hold(1, nullptr);
  runs.cancel_all();  // no child of their own: nothing to cancel
  EXPECT_EQ(runs.running(), 2u);
  runs.release_all();
  EXPECT_EQ(runs.running(), 0u);
  EXPECT_FALSE(runs.at(0)->running || runs.at(1)->running);
}

}  // namespace
}  // namespace yolo::runner::phase
