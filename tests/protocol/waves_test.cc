#include "protocol/plan/waves.h"

#include <gtest/gtest.h>

#include <random>

namespace yolo::waves {
namespace {

PlanNode node(std::string plan, long long wave, std::vector<std::string> deps = {},
              PlanStatus s = PlanStatus::Pending) {
  PlanNode n;
  n.plan = plan;
  n.id = "01-" + plan;
  n.wave = wave;
  n.depends_on = std::move(deps);
  n.status = s;
  return n;
}

std::vector<size_t> starts(const std::vector<PlanNode>& p, int max_parallel = 4, bool frozen = false) {
  Options o;
  o.max_parallel = max_parallel;
  o.frozen = frozen;
  return next(p, o).start;
}

// The three-wave demo shape: 01 | 02 03 | 04.
std::vector<PlanNode> demo() {
  return {node("01", 1), node("02", 2, {"01"}), node("03", 2, {"01-01"}), node("04", 3, {"02", "03"})};
}

TEST(Waves, StatusNamesRoundTrip) {
  for (auto s : {PlanStatus::Pending, PlanStatus::Ready, PlanStatus::Running, PlanStatus::Complete, PlanStatus::Failed})
    EXPECT_EQ(parse_status(to_string(s)), s);
  EXPECT_FALSE(parse_status("done").has_value());
}

TEST(Waves, FirstWaveOnlyAtStart) {
  auto p = demo();
  Decision d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Start);
  EXPECT_EQ(d.start, (std::vector<size_t>{0}));
  EXPECT_EQ(d.wave, 1);
  EXPECT_EQ(d.total_waves, 3);
}

TEST(Waves, NextWaveWaitsForWholePreviousWave) {
  auto p = demo();
  p[0].status = PlanStatus::Running;
  Decision d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Waiting);
  EXPECT_TRUE(d.start.empty());
  EXPECT_EQ(d.running, 1u);
  p[0].status = PlanStatus::Complete;
  EXPECT_EQ(starts(p), (std::vector<size_t>{1, 2}));
  // One plan of wave 2 complete, the other still running: wave 3 must not start.
  p[1].status = PlanStatus::Complete;
  p[2].status = PlanStatus::Running;
  d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Waiting);
  EXPECT_EQ(d.wave, 2);
  p[2].status = PlanStatus::Complete;
  EXPECT_EQ(starts(p), (std::vector<size_t>{3}));
}

TEST(Waves, WaveRuleHoldsEvenWithoutDependencies) {
  std::vector<PlanNode> p = {node("01", 1), node("02", 2), node("03", 1, {}, PlanStatus::Running)};
  EXPECT_EQ(starts(p), (std::vector<size_t>{0}));
}

TEST(Waves, MaxParallelCountsRunningPlans) {
  std::vector<PlanNode> p = {node("01", 1), node("02", 1), node("03", 1), node("04", 1)};
  EXPECT_EQ(starts(p, 2), (std::vector<size_t>{0, 1}));
  p[0].status = PlanStatus::Running;
  EXPECT_EQ(starts(p, 2), (std::vector<size_t>{1}));
  p[1].status = PlanStatus::Running;
  Decision d = next(p, {2, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Waiting);
  EXPECT_EQ(starts(p, 1), (std::vector<size_t>{}));
}

TEST(Waves, DependencyWithinWaveIsRespected) {
  // Precheck rejects same-wave dependencies, but the scheduler must still never start early.
  std::vector<PlanNode> p = {node("01", 1), node("02", 1, {"01"})};
  EXPECT_EQ(starts(p), (std::vector<size_t>{0}));
  p[0].status = PlanStatus::Complete;
  EXPECT_EQ(starts(p), (std::vector<size_t>{1}));
}

TEST(Waves, FrozenStartsNothingButReportsRunning) {
  auto p = demo();
  Decision d = next(p, {4, true, ""});
  EXPECT_EQ(d.outcome, Outcome::Frozen);
  EXPECT_TRUE(d.start.empty());
  p[0].status = PlanStatus::Running;
  d = next(p, {4, true, ""});
  EXPECT_EQ(d.outcome, Outcome::Frozen);
  EXPECT_EQ(d.running, 1u);
}

TEST(Waves, CompleteWinsOverFrozen) {
  auto p = demo();
  for (auto& n : p) n.status = PlanStatus::Complete;
  EXPECT_EQ(next(p, {1, true, ""}).outcome, Outcome::Complete);
  EXPECT_EQ(next(p, {1, false, ""}).outcome, Outcome::Complete);
}

TEST(Waves, FailedPlanStopsNextWaveButNotItsSiblings) {
  std::vector<PlanNode> p = {node("01", 1, {}, PlanStatus::Failed), node("02", 1), node("03", 2)};
  Decision d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Start);
  EXPECT_EQ(d.start, (std::vector<size_t>{1}));
  p[1].status = PlanStatus::Complete;
  d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Failed);
  EXPECT_TRUE(d.start.empty());
  EXPECT_NE(d.reason.find("01-01"), std::string::npos);
}

TEST(Waves, FailedPlanWaitsForRunningSiblings) {
  std::vector<PlanNode> p = {node("01", 1, {}, PlanStatus::Failed), node("02", 1, {}, PlanStatus::Running),
                             node("03", 2)};
  EXPECT_EQ(next(p, {4, false, ""}).outcome, Outcome::Waiting);
}

TEST(Waves, DependentOfFailedPlanNeverStarts) {
  std::vector<PlanNode> p = {node("01", 1, {}, PlanStatus::Failed), node("02", 1, {"01"})};
  EXPECT_EQ(next(p, {4, false, ""}).outcome, Outcome::Failed);
}

TEST(Waves, ReadyPlansMayStart) {
  std::vector<PlanNode> p = {node("01", 1, {}, PlanStatus::Ready), node("02", 2)};
  EXPECT_EQ(starts(p), (std::vector<size_t>{0}));
}

TEST(Waves, UnknownDependencyBlocksWithReason) {
  std::vector<PlanNode> p = {node("01", 1, {"09"})};
  Decision d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Blocked);
  EXPECT_NE(d.reason.find("'09'"), std::string::npos);
}

TEST(Waves, InvalidWaveBlocks) {
  std::vector<PlanNode> p = {node("01", 0)};
  Decision d = next(p, {4, false, ""});
  EXPECT_EQ(d.outcome, Outcome::Blocked);
  EXPECT_NE(d.reason.find("wave"), std::string::npos);
}

TEST(Waves, EmptyPhaseIsComplete) { EXPECT_EQ(next({}, {1, false, ""}).outcome, Outcome::Complete); }

TEST(Waves, OnlyOnePlan) {
  auto p = demo();
  Options o{4, false, "1"};
  Decision d = next(p, o);
  EXPECT_EQ(d.start, (std::vector<size_t>{0}));
  o.only = "01-04";
  d = next(p, o);
  EXPECT_EQ(d.outcome, Outcome::Blocked);  // wave 1 not complete yet
  for (size_t i = 0; i < 3; ++i) p[i].status = PlanStatus::Complete;
  EXPECT_EQ(next(p, o).start, (std::vector<size_t>{3}));
  p[3].status = PlanStatus::Complete;
  EXPECT_EQ(next(p, o).outcome, Outcome::Complete);
  o.only = "7";
  EXPECT_EQ(next(p, o).outcome, Outcome::Blocked);
}

TEST(Waves, OnlyPlanCompleteWhileOthersPending) {
  auto p = demo();
  p[0].status = PlanStatus::Complete;
  EXPECT_EQ(next(p, {4, false, "01"}).outcome, Outcome::Complete);
}

TEST(Waves, ResolveDependencyAnySpelling) {
  auto p = demo();
  EXPECT_EQ(resolve_dependency(p, "3"), 2);
  EXPECT_EQ(resolve_dependency(p, "03"), 2);
  EXPECT_EQ(resolve_dependency(p, "1-03"), 2);
  EXPECT_EQ(resolve_dependency(p, "01-03"), 2);
  EXPECT_EQ(resolve_dependency(p, "02-03"), -1);
  EXPECT_EQ(resolve_dependency(p, ""), -1);
}

// Dependencies resolved once (a run's nodes) name the same plans as resolve_dependency, and
// every decision is the one made without them.
TEST(Waves, ResolvedDependenciesAgreeWithTheScan) {
  std::vector<PlanNode> p = demo();
  p.push_back(node("05", 3, {"3", "1-03", "01-03", "02-03", "", "05", "1.5"}));
  p.push_back(node("03", 4, {"03"}));  // a duplicate plan number: the first one is named
  p.push_back(node("1.5", 2));
  auto resolved = p;
  resolve_dependencies(resolved);
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(resolved[i].dep_index.size(), p[i].depends_on.size());
    for (size_t k = 0; k < p[i].depends_on.size(); ++k)
      EXPECT_EQ(resolved[i].dep_index[k], resolve_dependency(p, p[i].depends_on[k])) << p[i].depends_on[k];
  }
  const PlanStatus all[] = {PlanStatus::Pending, PlanStatus::Running, PlanStatus::Complete, PlanStatus::Failed};
  for (unsigned mask = 0; mask < 4096; mask += 7) {  // statuses of the first six plans, many combinations
    for (size_t i = 0; i < 6; ++i) p[i].status = resolved[i].status = all[(mask >> (2 * i)) & 3];
    for (int par : {1, 3}) {
      Decision a = next(p, {par, false, ""}), b = next(resolved, {par, false, ""});
      EXPECT_EQ(a.outcome, b.outcome) << mask;
      EXPECT_EQ(a.start, b.start) << mask;
      EXPECT_EQ(a.reason, b.reason) << mask;
    }
  }
}

// The Board decides as next() does on the same plans, whatever the statuses: random phases
// (waves, invalid waves, dependencies, unknown ones), random status changes, every option.
TEST(Waves, TheBoardDecidesAsNextDoes) {
  std::mt19937 rng(19);
  const PlanStatus all[] = {PlanStatus::Pending, PlanStatus::Ready, PlanStatus::Running, PlanStatus::Complete,
                            PlanStatus::Failed};
  size_t decisions = 0, started = 0;
  for (int phase = 0; phase < 300; ++phase) {
    std::vector<PlanNode> p;
    size_t n = 1 + rng() % 25;
    for (size_t i = 0; i < n; ++i) {
      std::vector<std::string> deps;
      if (i > 0 && rng() % 4 == 0) deps.push_back(std::to_string(10 + rng() % i));  // an earlier plan
      if (rng() % 40 == 0) deps.push_back("99");                                    // not a plan
      if (rng() % 60 == 0) deps.push_back(std::to_string(10 + i));                  // itself
      long long wave = rng() % 30 == 0 ? 0 : 1 + static_cast<long long>(rng() % 4);
      p.push_back(node(std::to_string(10 + i), wave, deps, all[rng() % 5]));
    }
    resolve_dependencies(p);
    Board b(p);
    for (int step = 0; step < 60; ++step) {
      for (int par : {0, 1, 2, 5}) {
        for (bool frozen : {false, true}) {
          Options o{par, frozen, ""};
          Decision want = next(p, o), got = b.next(o);
          ++decisions;
          started += got.start.size();
          ASSERT_EQ(got.outcome, want.outcome) << phase << " " << step;
          ASSERT_EQ(got.start, want.start) << phase << " " << step;
          ASSERT_EQ(got.wave, want.wave) << phase << " " << step;
          ASSERT_EQ(got.total_waves, want.total_waves) << phase << " " << step;
          ASSERT_EQ(got.running, want.running) << phase << " " << step;
          ASSERT_EQ(got.reason, want.reason) << phase << " " << step;
        }
      }
      Options only{2, false, std::to_string(10 + rng() % n)};
      ASSERT_EQ(b.next(only).start, next(p, only).start);
      for (long long w = 0; w <= 4; ++w) {
        bool finished = true, failed = false;
        for (const auto& x : p)
          if (x.wave == w) {
            finished = finished && (x.status == PlanStatus::Complete || x.status == PlanStatus::Failed);
            failed = failed || x.status == PlanStatus::Failed;
          }
        ASSERT_EQ(b.wave_finished(w), finished) << w;
        ASSERT_EQ(b.wave_failed(w), failed) << w;
      }
      // A run's change: mostly what a run does (start what it may, end a running plan), some at random.
      size_t i = rng() % n;
      PlanStatus s = all[rng() % 5];
      Decision d = b.next({2, false, ""});
      if (!d.start.empty() && rng() % 2 == 0) {
        i = d.start.front();
        s = PlanStatus::Running;
      } else if (p[i].status == PlanStatus::Running) {
        s = rng() % 5 == 0 ? PlanStatus::Failed : PlanStatus::Complete;
      }
      p[i].status = s;
      b.set(i, s);
      ASSERT_EQ(b[i].status, s);
    }
  }
  // The runs did start plans: the Start path was compared, not only the rest.
  EXPECT_GT(started, decisions / 20) << started << " plans started in " << decisions << " decisions";
}

}  // namespace
}  // namespace yolo::waves
