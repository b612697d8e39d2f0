// `yolo execute`: one plan once its executor ended, a part of the Run
// (runner/phase_run_internal.h) with a class of its own: the executor released, its log file
// (only when it printed something), what it cost, its git objects taken in from its slot;
// then its checks (runner/run_checks.h), or its outcome at once: what it put aside back in
// its slot, its gates in its worktree (runner/run_worktrees.h), the facts gathered and
// decided by protocol/run/execute_rules.h (execution::plan_outcome), the run core told, its
// record queued, its events and next steps. The run is reached only through the Host; what
// the plan's end says goes to its Teller (runner/run_teller.h).
#pragma once

#include "runner/phase_parts.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

class PlanConcluder {
 public:
  // What a plan's end needs of the run (phase::Run gives it; a unit test gives its own).
  struct Host {
    std::function<const PlanEntry&(size_t)> entry;  // plan i as the run read it
    std::function<PlanRun&(size_t)> plan;           // what the run holds of plan i
    std::function<bool()> interrupted;              // the run was stopped (Ctrl-C)
    std::function<bool()> isolated;                 // the run's plans have worktrees
    // Plan i's executor ended: it no longer runs for the loop, the run core knows.
    std::function<void(size_t)> exited;
    std::function<void(size_t)> open_gates;  // the gates plan i's executor asked for, answered now
    std::function<void(const PlanWorktree&)> drop;  // its slot and branch go (objects not taken in)
    std::function<void(size_t, SpawnResult)> run_checks;  // its checks, then conclude
    // What plan i put aside goes back into its slot (then conclude again).
    std::function<void(size_t, const stdfs::path&, slot_aside::Aside, const SpawnResult&)> put_back;
    std::function<void(size_t, SpawnResult)> gate;  // its gates in its worktree (then conclude again)
    // The SUMMARY gate in the checkout (sp: the SUMMARY's path as summary_rel_for named it).
    std::function<SummaryState(const PlanEntry&, json& findings, const std::string* sp)> check_summary;
    // The run core's record: plan i ended (merge, head: a plan gated in its worktree).
    std::function<void(size_t, const execution::PlanEnd&, MergeState, const std::string& head)> concluded;
    std::function<void(size_t, execution::PlanUpdate)> queue;  // plan i's record changes (batched)
    std::function<std::string()> cid;                         // the run's correlation id
    std::function<void()> next;  // the plan is decided: what comes next (dispatch's merges ahead, the loop)
  };
  PlanConcluder(const World& world, const stdfs::path& root, const PhaseDir& phase, Teller& tell, Host host)
      : world_(world), root_(root), phase_(phase), tell_(tell), host_(std::move(host)) {}
  PlanConcluder(const PlanConcluder&) = delete;
  PlanConcluder& operator=(const PlanConcluder&) = delete;

  // Plan i's executor ended with r: its log, its usage, its objects; then its checks, or conclude.
  void executor_ended(size_t i, SpawnResult r);
  // Plan i's outcome (r: how its executor, or its job, ended). May hand the plan on (put aside
  // work back, its gates in its worktree) and be called again once that is done.
  void conclude(size_t i, const SpawnResult& r);
  // The usage an agent printed (Claude Code, Codex, Gemini JSON), recorded for this run.
  void record_usage(size_t i, const std::string& agent, const std::string& out);

 private:
  const PlanWorktree* worktree(size_t i) const {
    const PlanRun& r = host_.plan(i);
    return r.worktree ? &*r.worktree : nullptr;
  }
  // The plan's end said: its event, the lines for people, its next step.
  void report(const PlanEntry& e, const std::string& sp, const execution::PlanOutcome& outcome, const json& set,
              const SpawnResult& r);

  const World& world_;
  stdfs::path root_;
  const PhaseDir& phase_;
  Teller& tell_;  // what a plan's end says: events, notes, the event log
  Host host_;
};

}  // namespace yolo::runner::phase
