// The run core stepped one event at a time against a fake executor: every decision of a
// phase run (waves, slots, failures, gates, merges, resume, dispatch) without a process.
#include "protocol/run/run_core.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace yolo::run {
namespace {

PlanSeed seed(std::string plan, long long wave, std::vector<std::string> deps = {},
              PlanStatus s = PlanStatus::Pending) {
  PlanSeed p;
  p.node.plan = plan;
  p.node.id = "01-" + plan;
  p.node.wave = wave;
  p.node.depends_on = std::move(deps);
  p.node.status = s;
  return p;
}

// 01 | 02 03 | 04
std::vector<PlanSeed> demo() {
  return {seed("01", 1), seed("02", 2, {"01"}), seed("03", 2, {"01"}), seed("04", 3, {"02", "03"})};
}

Settings with(int max_parallel, bool isolated = false) {
  Settings s;
  s.max_parallel = max_parallel;
  s.isolated = isolated;
  return s;
}

execution::PlanEnd end_as(PlanStatus s, std::string error = "") {
  execution::PlanEnd e;
  e.status = s;
  e.error = std::move(error);
  return e;
}

// A fake executor: carries out the core's actions the way runner/ does (starts in the lowest
// free slot, answers the budget, merges as told), and writes down what it was asked, one
// word per action ("start 0 1", "wave_end 1", "merge 2 0").
struct Fake {
  Core core;
  Outlook look;
  std::vector<std::string> did;
  Answer wave_gate = Answer::Passed;
  MergeOutcome merge_as = MergeOutcome::Merged;
  std::vector<size_t> merges;  // plans merged, in the order the merges came
  std::vector<std::vector<size_t>> reattached;
  std::vector<std::vector<dispatch::Start>> jobs;

  explicit Fake(Core c) : core(std::move(c)) {}

  // One next() and what follows at once from its answers (a gate, the budget, a merge).
  std::vector<std::string> step() {
    std::vector<std::string> now;
    for (bool again = true; again;) {
      again = false;
      for (const Action& a : core.next(look)) {
        std::string w = to_string(a.kind);
        if (a.kind == Act::WaveEnd) w += " " + std::to_string(a.wave) + (a.failed ? " failed" : "");
        if (a.kind == Act::WaveStart || a.kind == Act::AskWaveGate || a.kind == Act::AskBudget)
          w += " " + std::to_string(a.wave);
        if (a.kind == Act::Start || a.kind == Act::MarkReady || a.kind == Act::Merge || a.kind == Act::MergeRefused)
          for (size_t i : a.plans) w += " " + std::to_string(i);
        if (a.kind == Act::WriteState) continue;  // the fake keeps no state file
        now.push_back(w);
        switch (a.kind) {
          case Act::Start:
            for (size_t i : a.plans) {
              core.take_slot(i, core.free_slot());
              core.started(i);
            }
            reattached.push_back(a.reattach);
            jobs.push_back(a.jobs);
            break;
          case Act::AskBudget:
            core.budget(a.wave, Answer::Passed);
            again = true;
            break;
          case Act::AskWaveGate:
            core.wave_gate(a.wave, wave_gate);
            again = true;
            break;
          case Act::Merge:
            for (size_t i : a.plans) {
              merges.push_back(i);
              core.merged(i, merge_as);
            }
            again = true;
            break;
          default:
            break;
        }
      }
    }
    did.insert(did.end(), now.begin(), now.end());
    return now;
  }

  // Plan i's executor ends and its gates decide it.
  std::vector<std::string> finish(size_t i, PlanStatus s = PlanStatus::Complete, std::string head = "") {
    core.executor_exited(i);
    MergeState m = core.settings().isolated && s == PlanStatus::Complete ? MergeState::Pending : MergeState::None;
    if (m == MergeState::Pending && head.empty()) head = "c0mm1t" + std::to_string(i);
    core.concluded(i, end_as(s, s == PlanStatus::Failed ? "its SUMMARY failed" : ""), m, head);
    return step();
  }
};

using V = std::vector<std::string>;

TEST(RunCore, AMergesOutcomeIsWhatItsRecordSays) {
  EXPECT_EQ(merge_outcome(MergeState::Merged), MergeOutcome::Merged);
  EXPECT_EQ(merge_outcome(MergeState::Conflict), MergeOutcome::Conflict);
  EXPECT_EQ(merge_outcome(MergeState::Pending), MergeOutcome::Refused);  // nothing merged: the gated commit kept
  EXPECT_EQ(merge_outcome(MergeState::None), MergeOutcome::Refused);
}

TEST(RunCore, WavesRunInOrder) {
  Fake f(Core(demo(), with(4)));
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "start 0"}));
  EXPECT_EQ(f.core.plan(0).status, PlanStatus::Running);
  EXPECT_EQ(f.finish(0), (V{"wave_end 1", "ask_budget 2", "wave_start 2", "start 1 2"}));
  EXPECT_EQ(f.finish(2), V{});  // 02 still runs: wave 3 waits
  EXPECT_EQ(f.finish(1), (V{"wave_end 2", "ask_budget 3", "wave_start 3", "start 3"}));
  EXPECT_EQ(f.finish(3), (V{"wave_end 3", "complete"}));
  EXPECT_TRUE(f.core.stopped());
  EXPECT_TRUE(f.core.next(f.look).empty());  // a stopped run decides nothing more
}

TEST(RunCore, ParallelSlotsAreReused) {
  std::vector<PlanSeed> p;
  for (int k = 1; k <= 5; ++k) p.push_back(seed("0" + std::to_string(k), 1));
  Fake f(Core(p, with(2)));
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "start 0 1"}));
  EXPECT_EQ(f.core.plan(0).slot, 1);
  EXPECT_EQ(f.core.plan(1).slot, 2);
  EXPECT_EQ(f.finish(1), V{"start 2"});
  EXPECT_EQ(f.core.plan(2).slot, 2);  // the slot 02 left
  EXPECT_EQ(f.core.plan(1).slot, 0);
  EXPECT_EQ(f.finish(0), V{"start 3"});
  EXPECT_EQ(f.core.plan(3).slot, 1);
  // A plan whose gates run in this process frees its slot for the next one.
  f.core.executor_exited(2);
  f.core.gating(2);
  EXPECT_EQ(f.step(), V{"start 4"});
  EXPECT_EQ(f.core.plan(4).slot, 3);  // 03's slot stays its own until its gates end
}

TEST(RunCore, AFailureStopsTheNextWave) {
  // 01 and 02 in wave 1 (independent), 03 in wave 2; one slot.
  Fake f(Core({seed("01", 1), seed("02", 1), seed("03", 2)}, with(1)));
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "start 0"}));
  // 01 fails: 02 of the same wave still runs (it does not depend on 01) ...
  EXPECT_EQ(f.finish(0, PlanStatus::Failed), V{"start 1"});
  // ... and once it ends, wave 2 never starts: the phase halts.
  EXPECT_EQ(f.finish(1), (V{"wave_end 1 failed", "halt"}));
  EXPECT_EQ(f.core.plan(2).status, PlanStatus::Pending);
  EXPECT_EQ(f.core.plan(2).attempt, 0);
  ASSERT_TRUE(f.core.plan(0).end.has_value());
  EXPECT_EQ(f.core.plan(0).end->error, "its SUMMARY failed");
}

TEST(RunCore, AFailureWaitsForThePlansStillRunning) {
  // Two slots: 01 fails while 02 runs; the phase halts only once 02 has ended.
  Fake f(Core({seed("01", 1), seed("02", 1), seed("03", 2)}, with(2)));
  EXPECT_EQ(f.step().back(), "start 0 1");
  EXPECT_EQ(f.finish(0, PlanStatus::Failed), V{});
  EXPECT_FALSE(f.core.stopped());
  EXPECT_EQ(f.finish(1), (V{"wave_end 1 failed", "halt"}));
}

TEST(RunCore, AFailedPlanLeftByTheStateHaltsWithoutStarting) {
  // No --retry-failed: the state's failed plan stays failed; nothing starts.
  Fake f(Core({seed("01", 1, {}, PlanStatus::Failed), seed("02", 2, {"01"})}, with(2)));
  V got = f.step();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "halt");
}

TEST(RunCore, RetryIsANewAttempt) {
  // A re-run with --retry-failed: execution::prepare made the failed plan pending again; the
  // core starts it as its second attempt.
  auto p = demo();
  p[0].node.status = PlanStatus::Pending;
  p[0].attempt = 1;
  p[0].failed_before = true;
  Fake f(Core(p, with(2)));
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "start 0"}));
  EXPECT_EQ(f.core.plan(0).attempt, 2);
  EXPECT_EQ(f.finish(0, PlanStatus::Failed), (V{"wave_end 1 failed", "halt"}));
}

TEST(RunCore, ResumeAfterAKillStartsOnlyWhatIsLeft) {
  // A killed run left 01 complete, 02 running (now pending again), 03 never started.
  auto p = demo();
  p[0].node.status = PlanStatus::Complete;
  Fake f(Core(p, with(4)));
  EXPECT_EQ(f.step(), (V{"ask_budget 2", "wave_start 2", "start 1 2"}));
  EXPECT_EQ(f.core.plan(0).step, Step::Idle);  // not run again
  EXPECT_EQ(f.core.plan(0).attempt, 0);
}

TEST(RunCore, ResumeMergesWhatPassedBeforeTheKillFirst) {
  // Isolated: 01 passed its gates (merge pending, its gated commit known) before the kill.
  auto p = demo();
  p[0].node.status = PlanStatus::Complete;
  p[0].merge = MergeState::Pending;
  p[0].head = "abc123";
  Fake f(Core(p, with(4, true)));
  V got = f.step();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front(), "merge 0");
  EXPECT_EQ(f.core.plan(0).merge, MergeState::Merged);
  EXPECT_EQ(got.back(), "start 1 2");
}

TEST(RunCore, KilledRunInterruptedPlansStartNothingNew) {
  Fake f(Core(demo(), with(4)));
  f.step();
  f.core.stop();  // Ctrl-C: running executors are stopped; their plans end pending
  f.core.executor_exited(0);
  f.core.concluded(0, end_as(PlanStatus::Pending, "interrupted"));
  EXPECT_TRUE(f.step().empty());
  EXPECT_EQ(f.core.plan(0).status, PlanStatus::Pending);
  // The next execute (a core built again from that state) starts it again.
  Fake again(Core(demo(), with(4)));
  EXPECT_EQ(again.step().back(), "start 0");
}

TEST(RunCore, WaveGatePausesThenResumesAfterApproval) {
  Settings s = with(4);
  s.wave_approval = true;
  Fake f(Core(demo(), s));
  f.wave_gate = Answer::Stopped;  // the wave gate is opened and waits for a person
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "start 0"}));  // the first wave needs none
  EXPECT_EQ(f.finish(0), (V{"wave_end 1", "ask_wave_gate 2"}));
  EXPECT_TRUE(f.core.stopped());
  EXPECT_EQ(f.core.plan(1).status, PlanStatus::Pending);
  // After `yolo approve`, the next execute: 01 complete, the gate passes, wave 2 starts.
  auto p = demo();
  p[0].node.status = PlanStatus::Complete;
  Fake g(Core(p, s));
  EXPECT_EQ(g.step(), (V{"ask_wave_gate 2", "ask_budget 2", "wave_start 2", "start 1 2"}));
}

TEST(RunCore, AnOpenGateFreezesThenPauses) {
  // A gate opened while plans run (an executor's request, a review or vision gate): nothing
  // new starts, the running plans finish, then the run pauses.
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 1)};
  Fake f(Core(p, with(2)));
  EXPECT_EQ(f.step().back(), "start 0 1");
  f.look.frozen = true;
  EXPECT_EQ(f.finish(0), V{"frozen"});
  EXPECT_EQ(f.core.plan(2).status, PlanStatus::Pending);
  EXPECT_EQ(f.finish(1), V{"pause"});
  // Approved: the next execute goes on with 03.
  p[0].node.status = p[1].node.status = PlanStatus::Complete;
  Fake g(Core(p, with(2)));
  EXPECT_EQ(g.step().back(), "start 2");
}

TEST(RunCore, AGateOpenBeforeTheRunPausesAtOnce) {
  // The vision gate (or the review gate's approval) not approved yet: the waves are frozen.
  Fake f(Core(demo(), with(2)));
  f.look.frozen = true;
  EXPECT_EQ(f.step(), V{"pause"});
  EXPECT_EQ(f.core.plan(0).attempt, 0);
}

TEST(RunCore, ARejectedGateHalts) {
  Fake f(Core(demo(), with(2)));
  f.look.halted = true;
  EXPECT_EQ(f.step(), V{"halted"});
  EXPECT_TRUE(f.core.stopped());
}

TEST(RunCore, WorktreePlansMergeInPlanOrderWhateverOrderTheyEnd) {
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 1), seed("04", 2)};
  Fake f(Core(p, with(3, true)));
  EXPECT_EQ(f.step().back(), "start 0 1 2");
  EXPECT_EQ(f.finish(2), V{});  // ended first, merged only once nothing runs
  EXPECT_EQ(f.core.plan(2).merge, MergeState::Pending);
  EXPECT_EQ(f.finish(0), V{});
  EXPECT_TRUE(f.merges.empty());
  EXPECT_EQ(f.finish(1), (V{"merge 0 1 2", "wave_end 1", "ask_budget 2", "wave_start 2", "start 3"}));
  EXPECT_EQ(f.merges, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(f.core.plan(1).merge, MergeState::Merged);
}

TEST(RunCore, AMergeConflictFailsItsPlanAndItsWave) {
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 2)};
  Fake f(Core(p, with(2, true)));
  f.step();
  f.merge_as = MergeOutcome::Conflict;
  EXPECT_EQ(f.finish(1), V{});
  EXPECT_EQ(f.finish(0), (V{"merge 0 1", "wave_end 1 failed", "halt"}));
  EXPECT_EQ(f.core.plan(0).status, PlanStatus::Failed);
  EXPECT_EQ(f.core.plan(0).merge, MergeState::Conflict);
}

TEST(RunCore, AFailedPlanIsNeverMerged) {
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1)};
  Fake f(Core(p, with(2, true)));
  f.step();
  EXPECT_EQ(f.finish(0, PlanStatus::Failed), V{});
  EXPECT_EQ(f.finish(1), (V{"merge 1", "wave_end 1 failed", "halt"}));
  EXPECT_EQ(f.merges, std::vector<size_t>{1});
}

TEST(RunCore, ARefusedMergeHaltsAndKeepsThePlanGated) {
  Fake f(Core({seed("01", 1), seed("02", 2)}, with(1, true)));
  f.step();
  f.merge_as = MergeOutcome::Refused;
  EXPECT_EQ(f.finish(0), (V{"merge 0", "merge_refused 0"}));
  EXPECT_EQ(f.core.plan(0).merge, MergeState::Pending);  // the next execute merges it
  EXPECT_EQ(f.core.plan(1).attempt, 0);
  EXPECT_TRUE(f.core.stopped());
}

// A plan's dispatch record as a stopped run left it (plans[].dispatch).
json job(const std::string& state, const std::string& handle, int attempt) {
  json j = {{"state", state}, {"attempt", attempt}};
  if (!handle.empty()) j["handle"] = handle;
  return j;
}

TEST(RunCore, DispatchReattachesASubmittedJob) {
  // A stopped run left 01's job submitted (handle job-7) and 02's job failed: 01 is waited on
  // again, 02 is a new attempt (a new job).
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 2)};
  p[0].job = job("submitted", "job-7", 1);
  p[0].attempt = 1;
  p[1].job = job("failed", "job-8", 1);
  p[1].attempt = 1;
  p[1].failed_before = true;
  Fake f(Core(p, with(8, true)));
  EXPECT_EQ(f.step().back(), "start 0 1");
  ASSERT_EQ(f.reattached.size(), 1u);
  EXPECT_EQ(f.reattached[0], std::vector<size_t>{0});
  ASSERT_EQ(f.jobs.size(), 1u);
  ASSERT_EQ(f.jobs[0].size(), 2u);
  EXPECT_EQ(f.jobs[0][0].kind, dispatch::Start::Kind::Reattach);
  EXPECT_EQ(f.jobs[0][0].handle, "job-7");
  EXPECT_EQ(f.jobs[0][1].kind, dispatch::Start::Kind::Submit);
  EXPECT_EQ(f.jobs[0][1].attempt, 2);
  EXPECT_EQ(f.jobs[0][1].previous_attempt, 1);  // its job may have pushed after all: looked up first
  EXPECT_EQ(f.core.plan(1).attempt, 2);
  EXPECT_EQ(f.core.plan(0).attempt, 1);  // the same job: the same attempt
  f.core.submitted(1, "job-9");
  EXPECT_EQ(f.core.plan(1).handle, "job-9");
  EXPECT_EQ(f.core.plan(0).handle, "job-7");
  // The job's branch fetched and gated, then merged in plan order.
  EXPECT_EQ(f.finish(1), V{});
  EXPECT_EQ(f.finish(0).front(), "merge 0 1");
  EXPECT_EQ(f.core.plan(0).merge, MergeState::Merged);
}

TEST(RunCore, DispatchJobsAStoppedRunLeftStartAsTheirRecordsSay) {
  // 01: its job was submitted, then the plan failed because yolo could neither reach the
  // engine nor cancel the job: waited on again (never a second job). 02: its submit may have
  // reached the engine before the stop: the same attempt submitted again (the adapter answers
  // with that job). 03: its job ended well, its branch not gated yet: re-attached. 04: its
  // job's branch was gated and failed: a new attempt, nothing looked up.
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 1), seed("04", 1)};
  p[0].job = job("submitted", "job-1", 2);
  p[0].attempt = 2;
  p[0].failed_before = true;
  p[1].job = job("submitting", "", 1);
  p[1].attempt = 1;
  p[2].job = job("done", "job-3", 1);
  p[2].attempt = 1;
  p[3].job = job("done", "job-4", 1);
  p[3].attempt = 1;
  p[3].failed_before = true;
  Fake f(Core(p, with(8, true)));
  EXPECT_EQ(f.step().back(), "start 0 1 2 3");
  ASSERT_EQ(f.jobs.size(), 1u);
  const auto& j = f.jobs[0];
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(f.reattached[0], (std::vector<size_t>{0, 2}));
  EXPECT_EQ(j[0].kind, dispatch::Start::Kind::Reattach);
  EXPECT_EQ(j[0].handle, "job-1");
  EXPECT_EQ(j[1].kind, dispatch::Start::Kind::Submit);
  EXPECT_EQ(j[1].attempt, 1);
  EXPECT_EQ(j[2].kind, dispatch::Start::Kind::Reattach);
  EXPECT_EQ(j[3].kind, dispatch::Start::Kind::Submit);
  EXPECT_EQ(j[3].attempt, 2);
  EXPECT_EQ(j[3].previous_attempt, 0);
  // The attempts the core counts are the ones the jobs carry.
  EXPECT_EQ(f.core.plan(0).attempt, 2);
  EXPECT_EQ(f.core.plan(1).attempt, 1);
  EXPECT_EQ(f.core.plan(2).attempt, 1);
  EXPECT_EQ(f.core.plan(3).attempt, 2);
  EXPECT_EQ(f.core.plan(0).handle, "job-1");
}

TEST(RunCore, APlanWithoutAJobRecordSubmitsItsFirstAttempt) {
  std::vector<PlanSeed> p = {seed("01", 1)};
  Fake f(Core(p, with(1, true)));
  EXPECT_EQ(f.step().back(), "start 0");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_EQ(f.jobs[0][0].kind, dispatch::Start::Kind::Submit);
  EXPECT_EQ(f.jobs[0][0].attempt, 1);
  EXPECT_EQ(f.jobs[0][0].previous_attempt, 0);
  EXPECT_TRUE(f.reattached[0].empty());
}

// The seeds a run builds its core from: the state's statuses, worktree merges and heads,
// and the dispatched job and past failure the runner knows of each plan.
TEST(RunCore, SeedsComeFromTheStateAndWhatTheRunnerKnowsOfEachPlan) {
  std::vector<execution::PlanEntry> entries(3);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].plan = "0" + std::to_string(i + 1);
    entries[i].id = "01-" + entries[i].plan;
    entries[i].wave = i == 0 ? 1 : 2;
  }
  entries[1].depends_on = {"01"};
  const json doc = {{"plans",
                     {{{"id", "01-01"}, {"status", "complete"}, {"worktree", {{"merge", "pending"}, {"head", "abc1"}}}},
                      {{"id", "01-02"}, {"status", "failed"}, {"worktree", {{"merge", "merged"}, {"head", "def2"}}}},
                      {{"id", "01-03"}, {"status", "pending"}, {"worktree", "not a record"}}}}};
  const json rec = {{"attempt", 3}, {"handle", "j-7"}}, first = {{"handle", "j-8"}};
  Seeds s = seeds(doc, entries, {{}, {&rec, true}, {&first, false}});
  ASSERT_EQ(s.plans.size(), 3u);
  ASSERT_EQ(s.pending_worktree.size(), 3u);
  EXPECT_EQ(s.plans[0].node.status, PlanStatus::Complete);
  EXPECT_EQ(s.plans[0].merge, MergeState::Pending);
  EXPECT_EQ(s.plans[0].head, "abc1");
  EXPECT_EQ(s.pending_worktree[0], &doc["plans"][0]["worktree"]) << "a pending merge is merged from its record";
  EXPECT_TRUE(s.plans[0].job.is_null());
  EXPECT_EQ(s.plans[0].attempt, 0);
  EXPECT_EQ(s.plans[1].node.status, PlanStatus::Failed);
  EXPECT_EQ(s.plans[1].node.depends_on, std::vector<std::string>{"01"});
  EXPECT_EQ(s.plans[1].merge, MergeState::Merged);
  EXPECT_EQ(s.plans[1].head, "def2");
  EXPECT_EQ(s.pending_worktree[1], nullptr);
  EXPECT_EQ(s.plans[1].job, rec);
  EXPECT_EQ(s.plans[1].attempt, 3);
  EXPECT_TRUE(s.plans[1].failed_before);
  EXPECT_EQ(s.plans[2].merge, MergeState::None);
  EXPECT_EQ(s.plans[2].head, "");
  EXPECT_EQ(s.plans[2].attempt, 1) << "a job record without attempts is the first";
  EXPECT_FALSE(s.plans[2].failed_before);

  // No state (unreadable), nothing known: every plan pending, first attempt to come.
  s = seeds(json::object(), entries, {});
  ASSERT_EQ(s.plans.size(), 3u);
  for (const auto& p : s.plans) {
    EXPECT_EQ(p.node.status, PlanStatus::Pending);
    EXPECT_EQ(p.merge, MergeState::None);
    EXPECT_TRUE(p.job.is_null());
    EXPECT_FALSE(p.failed_before);
  }
}

TEST(RunCore, NoExecutorMarksTheWaveReady) {
  Settings s = with(1);
  s.executor = false;
  s.max_parallel = 5;
  Fake f(Core({seed("01", 1), seed("02", 1), seed("03", 2)}, s));
  EXPECT_EQ(f.step(), (V{"ask_budget 1", "wave_start 1", "mark_ready 0 1"}));
  EXPECT_TRUE(f.core.stopped());
}

TEST(RunCore, OnlyOnePlanWithDashDashPlan) {
  Settings s = with(4);
  s.only = "02";
  auto p = demo();
  p[0].node.status = PlanStatus::Complete;
  Fake f(Core(p, s));
  EXPECT_EQ(f.step().back(), "start 1");
  EXPECT_EQ(f.finish(1), V{"plan_complete"});
}

TEST(RunCore, ABatchGivenUpPutsItsPlansBack) {
  // One plan of a batch could not start (its file changed): the batch's other plans are
  // pending again; the next wave never starts, the failed plan's own wave goes on.
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1), seed("03", 2)};
  Fake f(Core(p, with(2)));
  auto ask = f.core.next(f.look);
  ASSERT_EQ(ask.size(), 1u);
  EXPECT_EQ(ask[0].kind, Act::AskBudget);
  f.core.budget(1, Answer::Passed);
  auto acts = f.core.next(f.look);
  ASSERT_EQ(acts.back().kind, Act::Start);
  EXPECT_EQ(acts.back().plans, (std::vector<size_t>{0, 1}));
  f.core.not_started(0, end_as(PlanStatus::Failed, "its PLAN file changed"));
  f.core.put_back(1);
  EXPECT_EQ(f.core.plan(1).status, PlanStatus::Pending);
  EXPECT_EQ(f.core.plan(1).attempt, 0);
  EXPECT_EQ(f.step(), (V{"start 1"}));
  EXPECT_EQ(f.core.plan(1).attempt, 1);
  EXPECT_EQ(f.finish(1), (V{"wave_end 1 failed", "halt"}));
  EXPECT_EQ(f.core.plan(2).step, Step::Idle);
}

TEST(RunCore, WhileAPlanIsGatedNothingButAStartIsDecided) {
  std::vector<PlanSeed> p = {seed("01", 1), seed("02", 1)};
  Fake f(Core(p, with(1)));
  f.step();
  f.core.executor_exited(0);
  f.core.gating(0);
  EXPECT_EQ(f.step(), V{"start 1"});
  f.core.executor_exited(1);
  f.core.gating(1);
  EXPECT_EQ(f.step(), V{});  // both gated, the phase's end waits for their outcome
  f.core.concluded(1, end_as(PlanStatus::Complete));
  EXPECT_EQ(f.step(), V{});
  f.core.concluded(0, end_as(PlanStatus::Complete));
  EXPECT_EQ(f.step(), (V{"wave_end 1", "complete"}));
}

}  // namespace
}  // namespace yolo::run
