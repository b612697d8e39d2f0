// The Run of `yolo execute` (runner/phase_run.h), shared by the files that implement it:
// phase_run.cc (run()), phase_loop.cc (the wave loop), plan_exec.cc and plan_conclude.cc,
// which also give the parts their Hosts. The parts are classes of their own with unit tests
// (RunPrelude, RunReport, StateWrites, RunGates, ExecutorStarter, PlanConcluder, PlanChecks,
// WorktreeDriver, DispatchDriver), and say what they say through one Teller
// (runner/run_teller.h); docs/architecture.md says what each file holds.
// Internal to those files.
#pragma once

#include "runner/phase_dry_run.h"
#include "runner/phase_parts.h"
#include "runner/plans_host.h"
#include "runner/run_checks.h"
#include "runner/run_conclude.h"
#include "runner/run_dispatch.h"
#include "runner/run_gates.h"
#include "runner/run_launch.h"
#include "runner/run_prelude.h"
#include "runner/run_report.h"
#include "runner/run_state_writes.h"
#include "runner/run_worktrees.h"
#include "runner/stop_signals.h"

namespace yolo::runner::phase {

class Run {
 public:
  Run(Context ctx, ExecuteOptions o) : ctx_(std::move(ctx)), o_(std::move(o)), root_(ctx_.root) {
    writes_.on_failed = [this](const std::string& error) { stop(kExecHalted, execution::Result::Error, error); };
    writes_.stopping = [this] { return stopping_; };
  }

  int run();
  // Nothing of the run is left to finish: no child, no write in flight, no Stage 1 thread.
  bool settled() const { return runs_.running() == 0 && !writes_.writing() && !prelude_.stage1_pending(); }

 private:
  // ---- what the run says (runner/run_report.h: a class of its own, report_) ---------------
  // It is the parts' Teller (runner/run_teller.h); Run says what it says through report_ too.
  // The run's last word (what killed runs left tidied first): its exit code.
  int finish(int code, execution::Result result, const std::string& message) {
    worktrees_.tidy();  // once (runner/run_worktrees.h)
    return report_.finish(code, result, message);
  }

  // ---- the loop (the steps before it: prelude_, runner/run_prelude.h) -------------------------
  int waves();
  void schedule();
  // jobs: per plan of idx, how its dispatched job starts (the core's decision).
  void start_plans(const std::vector<size_t>& idx, long long wave, const std::vector<dispatch::Start>& jobs);
  // Plan i could not start (why): failed in the run core and in its record (error: why as the
  // record says it), said as "Plan ID <said>: why"; the phase halts on it.
  void start_failed(size_t i, const std::string& why, const std::string& error, const char* said);
  void mark_ready(const std::vector<size_t>& idx);
  // After the executor (concluder_, runner/run_conclude.h): its log, usage and objects, the
  // plan's checks one after another on the loop (checks_, runner/run_checks.h), then
  // conclude(): the SUMMARY gate, the scope fence and the checks decide the plan.
  void on_done(size_t i, SpawnResult r) { concluder_.executor_ended(i, std::move(r)); }
  void run_checks(size_t i, SpawnResult executor);  // plan_conclude.cc
  void conclude(size_t i, const SpawnResult& r) { concluder_.conclude(i, r); }

  // ---- worktree isolation (runner/run_worktrees.h: a class of its own, worktrees_) ----------
  bool isolated() const { return (cfg_.isolation == "worktree" && executor_configured(cfg_)) || dispatched(); }
  WorktreeDriver::Host worktrees_host();  // what worktrees_ reaches of the run (plan_exec.cc)
  // ---- dispatch (runner/run_dispatch.h: classes of their own, dispatch_) -----------------
  // Each plan a job of a cluster engine (submit / wait / cancel templates), its branch
  // fetched from the remote, then gated and merged as a worktree plan.
  bool dispatched() const { return cfg_.dispatch.configured(); }
  DispatchDriver::Host dispatch_host();  // what dispatch_ reaches of the run (phase_run.cc)

  void stop(int code, execution::Result result, const std::string& message) {
    if (final_code_ < 0) {
      final_code_ = code;
      final_result_ = result;
      final_message_ = message;
    }
    stopping_ = true;
    core_.stop();  // nothing more is decided; running plans end as they can
    flush_plans();
  }

  // ---- the run's state file (runner/run_state_writes.h: changes written in batches) ------
  const state::LoadResult& state_now() { return writes_.now(); }
  void queue_plan(size_t i, execution::PlanUpdate u) { writes_.queue(i, entries_[i].id, std::move(u)); }
  void flush_plans(const std::function<void(json&)>& also = nullptr) { writes_.flush(also); }
  void interrupt(int signum);

  Context ctx_;                     // the command's World, project root and config
  const World& world_ = ctx_.world;  // every file, time and key of the run goes through it
  CommandApprover approver_{ctx_.world};  // the gates' approver commands (config approvers)
  ExecuteOptions o_;
  stdfs::path root_;
  Config& cfg_ = ctx_.config;
  SummaryMode mode_ = SummaryMode::Strict;
  std::string cid_;
  PhaseDir phase_;
  std::vector<PlanEntry> entries_;
  // What the run says: its events, lines, event log, live line and last word (runner/run_report.h).
  RunReport report_{world_, root_, cfg_, phase_, cid_, entries_, o_.json, [this] { return live(); }};
  // What its live line shows now (runner/run_report.h).
  LiveView live() const { return live_view(core_, entries_, runs_.all(), cfg_.timeout_for(cfg_.executor), uv_hrtime()); }
  // The next step for the person, when a step knows better than the exit code (the report's).
  std::string& next_ = report_.next();

  uv_loop_t loop_{};
  StopSignals signals_;  // SIGINT and SIGTERM while the loop runs (runner/stop_signals.h)
  InstanceLock lock_;
  // What runs next (protocol/run/run_core.h): one record per plan (status, step, slot, attempt,
  // merge), built once the loop starts; schedule() carries out its actions.
  run::Core core_;
  StateWrites writes_{ctx_.world, ctx_.root};  // the state file: read, batched writes, the journal
  // What the parts reach of the plans, the members their Hosts share (runner/plans_host.h).
  PlansHost plans_host_{entries_, runs_, writes_, core_, interrupted_, stopping_, next_, [this] { return isolated(); }};
  // The vision, wave and budget gates (runner/run_gates.h).
  RunGates gates_{ctx_.world, ctx_.root, ctx_.config, writes_, approver_, report_, gates_host()};
  RunGates::Host gates_host();
  // The steps before the waves (runner/run_prelude.h): the plans as read, Stage 1 on its
  // thread. Declared after the config, options and gates it reads: destroyed (waited for)
  // before them.
  RunPrelude prelude_{world_, root_, cfg_, o_, report_, gates_, prelude_host()};
  RunPrelude::Host prelude_host();
  int ready(const json& doc);  // the run's own steps before step 2 (prelude_host().ready)
  // Worktree isolation (runner/run_worktrees.h): the slots, the gates in them, the merges;
  // it reaches the run through worktrees_host().
  WorktreeDriver worktrees_{world_, root_, cfg_, &loop_, report_, worktrees_host()};
  // Dispatch (runner/run_dispatch.h): its jobs, arrays, fetches and merges ahead; it reaches
  // the run through dispatch_host(). Declared after what that reaches at its start.
  DispatchDriver dispatch_{cfg_, world_, root_, &loop_, report_, dispatch_host()};
  // Between a plan's executor and its outcome: the gates it asked for, its checks, what it
  // left put aside meanwhile (runner/run_checks.h).
  PlanChecks checks_{ctx_.world, ctx_.root, ctx_.config, approver_, &loop_, phase_.rel, report_, checks_host()};
  PlanChecks::Host checks_host();
  // One plan once its executor ended: its log, usage, objects, then its outcome
  // (runner/run_conclude.h); it reaches the run through concluder_host() (plan_conclude.cc).
  PlanConcluder concluder_{ctx_.world, ctx_.root, phase_, report_, concluder_host()};
  PlanConcluder::Host concluder_host();
  // The programs the phase's checks name inside the project (absolute): read-only for an
  // executor in the checkout, so a check runs as the wave's approval covered it.
  std::vector<std::string> check_programs_;
  // A plan's executor started here (runner/run_launch.h): the plan as reviewed, its sandbox,
  // its process, its journal record; and the executors a killed run left, ended.
  ExecutorStarter launch_{world_, root_, cfg_, &loop_, phase_, cid_, check_programs_, report_, launch_host()};
  ExecutorStarter::Host launch_host();
  PlanRuns runs_;  // the plans' records of their processes (runner/plan_run.h)
  bool stopping_ = false;
  bool interrupted_ = false;
  int final_code_ = -1;
  execution::Result final_result_ = execution::Result::Halted;
  std::string final_message_;
};

}  // namespace yolo::runner::phase
