// Dispatch's jobs (runner/run_dispatch.h), a class of its own: the wave's base pushed, each
// plan submitted as a job (or a wave as arrays, one submit_wave and one wait_wave per array),
// waited on, cancelled when yolo gives up or is stopped, and what a wait's exit means; a job
// whose branch is to be gated goes to the return path (DispatchBack: DispatchReturn). It
// reaches the run through DispatchHost and the driver through DispatchPlans only.
//   dispatch_submit.cc  the wave's base pushed, submitting (one by one, or a wave's arrays)
//   dispatch_wait.cc    waiting (one job, or an array by one poller), cancelling, wait's exit
#pragma once

#include "runner/dispatch_parts.h"

namespace yolo::runner::phase {

class DispatchJobs {
 public:
  DispatchJobs(DispatchEnv env, DispatchBack& back) : e_(env), back_(back) {}
  DispatchJobs(const DispatchJobs&) = delete;
  DispatchJobs& operator=(const DispatchJobs&) = delete;

  int parallel() const {
    return e_.cfg.dispatch.max_parallel > 0 ? e_.cfg.dispatch.max_parallel : std::max(e_.cfg.max_parallel, 8);
  }
  // The per-plan form: the wave's base pushed (once), then plan i's job submitted and waited on.
  void begin_submit(size_t i, long long wave, int attempt, bool reschedule);
  // Plan i re-attached to its job of an earlier execute: waited on.
  void wait(size_t i, long long wave);
  // The wave-level form: plan i gathered for its wave's arrays (to submit, or re-attached to
  // one), held as running meanwhile; submit_waves submits (and waits on) them as arrays.
  void gather(size_t i, long long wave, int attempt);
  void gather_reattached(size_t i, long long wave);
  void submit_waves(long long wave);
  // Runs `cancel` for the plan's job now; false when it failed (why in `why`).
  bool cancel(size_t i, std::string& why);
  // Ctrl-C: each wave's poller is cancelled (its plans' jobs are cancelled when it ends).
  void cancel_pollers();

 private:
  static constexpr size_t kNoPlan = dispatch::kNoPlan;  // an array's task not waited on here

  const PlanEntry& entry(size_t i) const { return e_.host.entry(i); }
  PlanRun& run_of(size_t i) { return e_.host.plan(i); }
  Worktrees* trees() const { return e_.host.trees(); }
  std::map<long long, std::string>& wave_base() const { return e_.host.wave_bases(); }
  bool interrupted() const { return e_.host.interrupted(); }
  void release(size_t i) { e_.host.release(i); }
  void emit(const std::string& event, json data, Sym sym, const std::string& human) {
    e_.tell.emit(event, std::move(data), sym, human);
  }
  void record(size_t i, json rec, bool flush) { e_.plans.record(i, std::move(rec), flush); }
  void fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r, bool reschedule = true) {
    e_.plans.fail(i, error, fix, r, reschedule);
  }
  std::vector<std::string> resources(size_t i) const {
    const PlanRun* r = e_.host.plan_at(i);
    return r ? r->dispatch_res : std::vector<std::string>();
  }
  std::map<std::string, std::string> vars_of(size_t i, long long wave) const;
  SpawnSpec adapter_spec(const std::vector<std::string>& argv, long long timeout_ms) const;
  // The wave's base on the remote as yolo/RUN/base (once per wave); false: err says why.
  bool push_base(long long wave, std::string& err);

  // ---- dispatch_submit.cc ----
  void submit_array(long long wave, const std::vector<size_t>& plans, const std::string& key);
  void submit(size_t i, long long wave, int attempt);
  // ---- dispatch_wait.cc ----
  void reattach_arrays(long long wave);  // re-attached plans: one wait_wave per array
  void wait_array(long long wave, const std::vector<size_t>& plans, const std::string& key, const std::string& handle);
  void waited(size_t i, long long wave, SpawnResult r);
  bool branch_on_remote(const std::string& branch);
  // A wave's poller ended with tasks unreported: one cancel of the wave, one remote lookup.
  void give_up_wave(long long wave, const std::string& handle, const std::vector<size_t>& plans,
                    const std::vector<bool>& reported);
  void engine_status(size_t i, std::string status);

  DispatchEnv e_;
  DispatchBack& back_;
  std::set<long long> pushed_;                         // waves whose base is on the remote
  std::map<size_t, std::string> cancelled_with_wave_;  // plan -> its task handle, cancelled with its wave
  std::optional<std::set<std::string>> remote_heads_;  // the run's branches on the remote, while set
  // The wave-level form (dispatch.submit_wave/wait_wave): plans gathered while start_plans
  // starts them, submitted as arrays once it has, each array waited on by one process.
  std::map<long long, std::vector<std::pair<size_t, int>>> wave_pending_;  // wave -> (plan, attempt) to submit
  std::map<long long, std::vector<size_t>> wave_reattach_;                 // wave -> plans re-attached, to wait on
  std::map<std::string, std::unique_ptr<Process>> wave_submit_procs_;      // array key -> its submit_wave
  std::map<std::string, std::unique_ptr<Process>> wave_wait_procs_;        // array key -> its wait_wave
};

}  // namespace yolo::runner::phase
