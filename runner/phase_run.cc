#include "runner/phase_run.h"

#include <memory>

#include "runner/child_keeper.h"
#include "runner/phase_run_internal.h"

namespace yolo::runner {
namespace phase {

// ---- the whole run ----------------------------------------------------------------------

int Run::run() {
  // The keeper is forked first, while this process is small (runner/child_keeper.h), and
  // before the lock: a copy of this process forked after it would hold the lock's socket and
  // file until it got round to closing them, which on a loaded machine outlived a short run
  // (a dry run) and refused the next execute in the name of a process that had exited. (A
  // dry run may start children too: git, for the SUMMARY gate's claims.)
  start_keeper();
  // One execute per project: a second one would start the same plans again.
  std::string lock_err;
  if (!lock_.acquire(root_, "execute", lock_err))
    return finish(kExecHalted, Result::Locked,
                  lock_err + "; wait for it to finish, or stop it (kill " +
                      (lock_.holder_pid() > 0 ? std::to_string(lock_.holder_pid()) : std::string("<pid>")) + ")");
  auto c = ctx_.read_config();
  if (!c.ok()) return finish(kExecHalted, Result::Error, c.error);
  cfg_ = c.config;
  mode_ = mode_from_config(cfg_.summary_checks);
  auto snap = state::load(world_, root_);
  if (!snap.ok()) {
    std::string msg = snap.error;
    if (!snap.kept_copy.empty()) msg += " (a copy was kept at " + snap.kept_copy + ")";
    return finish(kExecHalted, Result::Error, msg);
  }
  // The steps before the waves, in order (runner/run_prelude.h), the run's own among them
  // through prelude_host(): the phase and its plans, step 2, Stage 1, the review and vision gates.
  if (int rc = prelude_.prepare(snap, phase_, entries_, cid_); rc >= 0) return rc;
  // The gates passed: recorded with the first plans' records (a write of its own cost the
  // first executor's start a state write). A run stopped before that write checks
  // the gates again, and finds them passed.
  writes_.step_done("step_2c");
  return waves();
}

// Before step 2 (doc: the state as read): what a stopped run left ended, the worktrees' git
// checks and what a killed run left of them, the config's dispatch. -1 or an exit code.
int Run::ready(const json& doc) {
  launch_.end_leftovers_and_journal(doc);
  if (isolated())
    if (auto stop = worktrees_.init(doc, phase_.rel, prelude_.fresh_cid(), mode_))
      return finish(stop->code, stop->result, stop->message);
  if (!dispatched()) return -1;
  if (std::string msg = dispatch_.config_error(); !msg.empty()) {
    next_ = "correct `dispatch` in .yolo-planning/config.json (docs/dispatch.md shows a complete block), then `yolo "
            "execute`";
    return finish(kExecHalted, Result::Error, msg);
  }
  dispatch_.init(doc);
  return -1;
}

// The gates speak through the run: its events and lines, its stop, its next step.
RunGates::Host Run::gates_host() {
  RunGates::Host h = plans_host_.fill(RunGates::Host{});
  h.stop = [this](int code, Result result, const std::string& message) { stop(code, result, message); };
  h.set_halted = [this](const std::string& reason) { prelude_.set_halted(reason); };
  return h;
}

// The steps before the waves speak through the run too, and end it with its last word.
RunPrelude::Host Run::prelude_host() {
  RunPrelude::Host h = plans_host_.fill(RunPrelude::Host{});
  h.finish = [this](int code, Result result, const std::string& message) { return finish(code, result, message); };
  h.stopped = [this] { return finish(final_code_ < 0 ? kExecHalted : final_code_, final_result_, final_message_); };
  h.plans_read = [this](std::vector<PlanRun> runs, std::vector<std::string> programs) {
    runs_.reset(std::move(runs));  // once: references into it stay valid for the run
    check_programs_ = std::move(programs);
  };
  h.dry_run = [this] {
    return dry_run({world_, root_, cfg_, o_, phase_, entries_, prelude_.loaded(), dispatched(),
                    dispatched() ? dispatch_.parallel() : 0, isolated(),
                    [this](const PlanEntry& e, json& f) { return prelude_.check_summary(e, f); }},
                   next_);
  };
  h.ready = [this](const json& doc) { return ready(doc); };
  h.phase_start = [&r = report_](size_t plans, long long waves, bool resumed, size_t done, bool was_running) {
    r.phase_start(plans, waves, resumed, done, was_running);
  };
  h.summary_not_counted = [&r = report_](const std::string& plan) { r.summary_not_counted(plan); };
  h.summary_failed = [&r = report_](const std::string& plan, const json& findings) {
    r.summary_failed(plan, findings);
  };
  h.state_written = [this](json doc, std::string stamp) { writes_.wrote(std::move(doc), std::move(stamp)); };
  h.already_complete = [&r = report_](size_t plans) { r.already_complete(plans); };
  return h;
}

// What dispatch (runner/run_dispatch.h) reaches of the run.
DispatchDriver::Host Run::dispatch_host() {
  DispatchDriver::Host h = plans_host_.fill(DispatchDriver::Host{});
  h.trees = [this] { return worktrees_.trees(); };
  h.wave_bases = [this]() -> std::map<long long, std::string>& { return worktrees_.wave_bases(); };
  h.correlation_id = [this] { return cid_; };
  h.phase_rel = [this] { return phase_.rel; };
  h.schedule = [this] { schedule(); };
  h.plan_vars = [this](size_t i, long long wave) { return launch_.vars(i, wave); };
  h.adopt_worktree = [this](size_t i, const PlanWorktree& w, int slot, std::string& err) {
    return worktrees_.adopt(i, w, slot, err);
  };
  h.run_checks = [this](size_t i, SpawnResult r) { run_checks(i, std::move(r)); };
  h.merge_message = [](const PlanEntry& e, const json& wt) { return WorktreeDriver::merge_message(e, wt); };
  return h;
}

}  // namespace phase

int execute(const Context& ctx, const ExecuteOptions& opts) {
  auto run = std::make_unique<phase::Run>(ctx, opts);
  int code = run->run();
  // `yolo execute` ends here: its state and logs are written and synced, its children reaped.
  // Freeing a large run node by node, then the process's static caches, costs more than the
  // kernel's freeing it all at once.
  if (run->settled()) return exit_without_freeing(code);
  return code;
}

}  // namespace yolo::runner
