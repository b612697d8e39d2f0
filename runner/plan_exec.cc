// `yolo execute`: the plans the run core starts, each by its path: a dispatched job, a
// finished worktree resumed, or its worktree made ready and its executor started here
// (ExecutorStarter, runner/run_launch.h); a plan that cannot start halts the phase
// (runner/phase_run_internal.h; what follows the executor: plan_conclude.cc).
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

void Run::start_failed(size_t i, const std::string& why, const std::string& error, const char* said) {
  const execution::PlanEnd end{PlanStatus::Failed, error, json::array()};
  core_.not_started(i, end);
  queue_plan(i, execution::ended(end, world_.now()));
  report_.emit("plan_end", {{"plan", entries_[i].id}, {"status", to_string(PlanStatus::Failed)}, {"error", why}},
               Sym::Fail, "Plan " + entries_[i].id + " " + said + ": " + why);
}

// Called by schedule() only, right after it read the state and decided these starts.
void Run::start_plans(const std::vector<size_t>& idx, long long wave, const std::vector<dispatch::Start>& jobs) {
  std::string now = world_.now();
  ExecutorStarter::Reviewed reviewed = launch_.reviewed(idx);  // each plan as it was reviewed, or why not
  std::vector<size_t> changed;
  for (const auto& [i, why] : reviewed.changed) {
    start_failed(i, why, "not started: " + why, "not started");
    changed.push_back(i);
  }
  if (!changed.empty()) {
    for (size_t i : idx)  // the batch is given up: its other plans wait for the next decision
      if (std::find(changed.begin(), changed.end(), i) == changed.end()) core_.put_back(i);
    flush_plans();
    schedule();  // the phase halts on the failed plan; nothing else of this wave starts
    return;
  }
  for (size_t i : idx) {  // running for the waves since the core decided their start
    execution::PlanUpdate u = execution::started(now);
    u.set = {{"scope", nullptr}, {"checks", nullptr}};
    queue_plan(i, std::move(u));
  }
  std::vector<StateWrites::Spawned> spawned;  // who runs each plan, for a later run to find (kill -9 of this one)
  bool failed_to_start = false, journaled = true;
  for (size_t k = 0; k < idx.size(); ++k) {
    const size_t i = idx[k];
    if (dispatched()) {  // a job of the cluster engine: submitted, waited on, fetched (runner/run_dispatch.h)
      dispatch_.start(i, wave, jobs[k]);
      continue;
    }
    // A killed run's finished work in its slot: said, gated from the loop, not run again.
    if (isolated() && worktrees_.resume_finished(i)) continue;
    if (isolated()) {
      std::string err;
      if (!worktrees_.prepare(i, wave, err)) {
        start_failed(i, err, err, "failed");
        failed_to_start = true;
        continue;
      }
    }
    // Here, on this machine (runner/run_launch.h): its sandbox, its executor, who runs it.
    ExecutorStarter::Start s = launch_.start(i, wave, reviewed.bytes[i]);
    if (!s.error.empty()) {
      start_failed(i, s.error, s.error, "not started");
      failed_to_start = true;
      continue;
    }
    if (!s.executor.is_null()) spawned.push_back({i, entries_[i].id, std::move(s.executor)});
    journaled = journaled && s.journaled;
  }
  worktrees_.start_resumed();  // gated from the loop, as an executor that ends is (never inside schedule())
  if (dispatched()) dispatch_.submit_waves(wave);  // the wave-level form: the plans gathered above, as arrays
  if (dispatch_.take_start_failed()) {  // a dispatched plan failed before its submit (plan_dispatch.cc)
    if (runs_.running() == 0) {
      flush_plans();
      schedule();
    }
  }
  if (!spawned.empty()) {  // a later execute must find them to end them (runner/run_state_writes.h)
    if (std::string err = writes_.record_executors(spawned, journaled); !err.empty())
      report_.note("could not record the executors' pids: " + err);
  } else if (failed_to_start) {
    flush_plans();
    schedule();  // nothing runs: the failure halts the phase now
  }
}

// What a start here (runner/run_launch.h) reaches of the run.
ExecutorStarter::Host Run::launch_host() {
  ExecutorStarter::Host h = plans_host_.fill(ExecutorStarter::Host{});
  h.started = [this](size_t i) { core_.started(i); };
  h.done = [this](size_t i, SpawnResult r) { on_done(i, std::move(r)); };
  h.journal = [this](const std::string& id, const json& record) { return writes_.journal(id, record); };
  h.queued = [this](size_t i) { return writes_.queued(i); };
  return h;
}

// What worktree isolation (runner/run_worktrees.h) reaches of the run.
WorktreeDriver::Host Run::worktrees_host() {
  WorktreeDriver::Host h = plans_host_.fill(WorktreeDriver::Host{});
  h.gated = [this](size_t i, SpawnResult r) { conclude(i, r); };
  h.resumed = [this](size_t i, SpawnResult r) { on_done(i, std::move(r)); };
  h.merged = [this](const std::vector<std::string>& branches) {
    if (!dispatched()) return;
    dispatch_.premerge_reset();  // the checkout moved: a chain computed ahead starts again from it
    dispatch_.delete_merged(branches);  // a child of the loop: runs while the local ones go
  };
  return h;
}

}  // namespace yolo::runner::phase
