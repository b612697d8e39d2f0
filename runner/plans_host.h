// What the parts of `yolo execute`'s run (runner/phase_run_internal.h) reach of its plans, in
// one place: each plan as the run read it, its record (runner/plan_run.h, PlanRuns) and the
// child it holds, its changes queued for the state file (runner/run_state_writes.h), the run
// core's records, whether the run stops, and the person's next step.
//
// Each part has a Host of callbacks of its own (RunPrelude, ExecutorStarter, PlanChecks,
// PlanConcluder, WorktreeDriver, DispatchDriver); the members they share are named alike and
// mean the same in each. fill() sets those of a Host that has them, from here, and leaves the
// rest (what only that part asks of the run) to the run: a member of one of the names below
// means what is said there, in every Host.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "protocol/run/execution.h"
#include "protocol/run/run_core.h"
#include "runner/plan_run.h"
#include "runner/run_state_writes.h"

namespace yolo::runner::phase {

class PlansHost {
 public:
  // References into the run: read when a part calls, never here (the run may build its
  // parts before some of them are). isolated: the run's plans have worktrees.
  PlansHost(const std::vector<execution::PlanEntry>& entries, PlanRuns& runs, StateWrites& writes, run::Core& core,
            const bool& interrupted, const bool& stopping, std::string& next, std::function<bool()> isolated)
      : entries_(entries), runs_(runs), writes_(writes), core_(core), interrupted_(interrupted),
        stopping_(stopping), next_(next), isolated_(std::move(isolated)) {}
  PlansHost(const PlansHost&) = delete;
  PlansHost& operator=(const PlansHost&) = delete;

  // h with the members it shares set (those it lacks are left out at compile time).
  template <class Host>
  Host fill(Host h) {
    // ---- the plans: how many, each as read, its record, its record or none ----
    if constexpr (requires { h.plans; }) h.plans = [this] { return entries_.size(); };
    if constexpr (requires { h.entry; })
      h.entry = [this](size_t i) -> const execution::PlanEntry& { return entries_[i]; };
    if constexpr (requires { h.plan; }) h.plan = [this](size_t i) -> PlanRun& { return runs_.of(i); };
    if constexpr (requires { h.plan_at; }) h.plan_at = [this](size_t i) { return runs_.at(i); };
    // ---- a child of plan i runs for the loop (hold), ended (release); how many run ----
    if constexpr (requires { h.hold; })
      h.hold = [this](size_t i, std::unique_ptr<Process> p) { return runs_.hold(i, std::move(p)); };
    if constexpr (requires { h.release; }) h.release = [this](size_t i) { runs_.release(i); };
    if constexpr (requires { h.running; }) h.running = [this] { return runs_.running(); };
    // ---- plan i's record changes, batched (queue), written now (flush); the core's records ----
    if constexpr (requires { h.queue; })
      h.queue = [this](size_t i, execution::PlanUpdate u) { writes_.queue(i, entries_[i].id, std::move(u)); };
    if constexpr (requires { h.flush; }) h.flush = [this] { writes_.flush(); };
    if constexpr (requires { h.core; }) h.core = [this]() -> run::Core& { return core_; };
    // ---- the run: stopped by a signal, stopping, isolated; the person's next step ----
    if constexpr (requires { h.interrupted; }) h.interrupted = [this] { return interrupted_; };
    if constexpr (requires { h.stopping; }) h.stopping = [this] { return stopping_; };
    if constexpr (requires { h.isolated; }) h.isolated = [this] { return isolated_(); };
    if constexpr (requires { h.next_step; }) h.next_step = [this](std::string s) { next_ = std::move(s); };
    return h;
  }

 private:
  const std::vector<execution::PlanEntry>& entries_;
  PlanRuns& runs_;
  StateWrites& writes_;
  run::Core& core_;
  const bool& interrupted_;
  const bool& stopping_;
  std::string& next_;
  std::function<bool()> isolated_;
};

}  // namespace yolo::runner::phase
