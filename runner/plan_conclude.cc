// `yolo execute`: what one plan's end reaches of the Run (runner/phase_run_internal.h): its
// checks (runner/run_checks.h, PlanChecks) and its end (runner/run_conclude.h, PlanConcluder),
// each through its Host (its start: plan_exec.cc).
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

void Run::run_checks(size_t i, SpawnResult executor) {
  const PlanWorktree* w = runs_.worktree_of(i);
  checks_.run(i, std::move(executor), w ? w->path : root_, w != nullptr, isolated());
}

PlanChecks::Host Run::checks_host() {
  PlanChecks::Host h = plans_host_.fill(PlanChecks::Host{});
  h.slot_free = [this](size_t i) {
    core_.gating(i);
    schedule();
  };
  h.done = [this](size_t i, SpawnResult r) { conclude(i, r); };
  h.vars = [this](size_t i) { return launch_.vars(i, entries_[i].wave); };
  h.env = [this](size_t i) { return launch_.env(i, entries_[i].wave); };
  return h;
}

PlanConcluder::Host Run::concluder_host() {
  PlanConcluder::Host h = plans_host_.fill(PlanConcluder::Host{});
  h.exited = [this](size_t i) {
    runs_.release(i);
    core_.executor_exited(i);
  };
  h.open_gates = [this](size_t i) { checks_.open_requested_gates(i); };
  h.drop = [this](const PlanWorktree& w) { worktrees_.drop(w); };
  h.run_checks = [this](size_t i, SpawnResult r) { run_checks(i, std::move(r)); };
  h.put_back = [this](size_t i, const stdfs::path& slot, slot_aside::Aside a, const SpawnResult& r) {
    checks_.put_back(i, slot, std::move(a), r);
  };
  h.gate = [this](size_t i, SpawnResult r) { worktrees_.gate(i, std::move(r)); };
  h.check_summary = [this](const PlanEntry& e, json& findings, const std::string* sp) {
    return prelude_.check_summary(e, findings, sp);
  };
  h.concluded = [this](size_t i, const execution::PlanEnd& end, MergeState merge, const std::string& head) {
    core_.concluded(i, end, merge, head);
  };
  h.cid = [this] { return cid_; };
  h.next = [this] {
    if (dispatched()) dispatch_.premerge();
    schedule();
  };
  return h;
}

}  // namespace yolo::runner::phase
