// `yolo execute`: the wave loop (runner/phase_run_internal.h).
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

// ---- waves ----------------------------------------------------------------------------

int Run::waves() {
  {  // each plan brings what the state says of it (status, worktree merge) and its dispatched job
    static const json none = json::object();
    const auto& snap = state_now();
    run::Seeds seeds = run::seeds(snap.ok() ? snap.doc : none, entries_, runs_.known(entries_.size()));
    for (size_t i = 0; i < seeds.pending_worktree.size(); ++i)
      if (const json* w = seeds.pending_worktree[i]) runs_.of(i).worktree_record = *w;  // merged from this record
    std::optional<int> jobs = dispatched() ? std::optional<int>(dispatch_.parallel()) : std::nullopt;
    core_ = run::Core(std::move(seeds.plans),
                      execution::core_settings(executor_configured(cfg_), isolated(), cfg_.wave_approval,
                                               cfg_.max_parallel, o_.only_plan, entries_.size(), jobs,
                                               cfg_.dispatch.wave_form()));
  }
  uv_loop_init(&loop_);
  writes_.start(&loop_);  // from now on, the plans' changes are written in batches
  worktrees_.open();
  signals_.start(&loop_, [this](int signum) { interrupt(signum); });
  if (executor_configured(cfg_) && !dispatched())  // executors at once within the fd limit
    core_.set_max_parallel(parallel_within_fd_limit(cfg_.max_parallel, isolated(), [this](int cap, long limit) {
      report_.max_parallel_lowered(cfg_.max_parallel, cap, limit);
    }));
  report_.start_live(&loop_);  // on a terminal: the running executors and the phase's progress
  schedule();
  uv_run(&loop_, UV_RUN_DEFAULT);
  report_.stop_live();
  signals_.close();
  runs_.release_all();
  flush_plans();
  // Every start is in the state now (and no executor of this run is left): the journal goes,
  // unless the state could not be written.
  writes_.close_journal(!writes_.failed() && writes_.all_written());
  writes_.end();
  worktrees_.close();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  if (final_code_ < 0) return finish(kExecHalted, Result::Halted, report_.nothing_left());
  return finish(final_code_, final_result_, final_message_);
}


void Run::interrupt(int signum) {
  if (interrupted_) return;
  interrupted_ = true;
  stop(kExecHalted, Result::Interrupted, report_.interrupted(signum));
  runs_.cancel_all();  // but a dispatch submit: it ends, then its job is cancelled
  dispatch_.cancel_pollers();  // a wave's poller: its plans' jobs are cancelled when it ends
}

// The driver of the run core (protocol/run/run_core.h): the core decides what comes next from
// the plans' records and what the state file says; this carries its actions out.
void Run::schedule() {
  if (stopping_) return;
  for (bool again = true; again && !stopping_;) {
    again = false;
    const auto& snap = state_now();
    if (stopping_) return;  // a write that ended in state_now() failed
    if (!snap.ok()) {
      stop(kExecHalted, Result::Error, snap.error);
      return;
    }
    gates::RunState rs = gates::run_state(snap.doc);
    run::Outlook look;
    look.halted = rs == gates::RunState::Halted;
    look.frozen = rs == gates::RunState::Frozen || !gates::waves_may_advance(snap.doc);
    for (const run::Action& a : core_.next(look)) {
      if (stopping_) return;
      switch (a.kind) {
        case run::Act::WriteState:
          flush_plans();
          break;
        case run::Act::Merge:
          worktrees_.merge(a.plans);
          again = true;  // a conflict fails its plan: the core decides again
          break;
        case run::Act::MergeRefused:
          stop(kExecHalted, Result::Halted, report_.merge_refused(entries_[a.plans.front()].id));
          return;
        case run::Act::WaveEnd:
          report_.wave_end(a.wave, a.failed);
          break;
        case run::Act::Halted:
          stop(kExecHalted, Result::Halted, report_.halted(state_now().doc));
          return;
        case run::Act::Frozen:
          report_.frozen(runs_.running());
          break;
        case run::Act::Pause:
          gates_.pause(state_now().doc);  // the run stopped, paused at that gate
          return;
        case run::Act::Halt:
          prelude_.set_halted(a.reason);  // in the state, with why in the event log
          stop(kExecHalted, Result::Halted, report_.halt(a.reason));
          return;
        case run::Act::PlanComplete:
          stop(kExecComplete, Result::Complete, report_.plan_complete(o_.only_plan));
          return;
        case run::Act::Complete: {
          std::string now = world_.now();
          flush_plans([&](json& st) { execution::complete_phase(st, now); });  // the last records and the end
          if (stopping_) return;  // the write failed: the writes stopped the run with its error
          report_.phase_complete(entries_.size());
          stop(kExecComplete, Result::Complete, "");
          return;
        }
        case run::Act::AskWaveGate: {
          GateOutcome g = gates_.wave_gate(a.wave, entries_, phase_.folder);  // paused or halted: the run stopped
          core_.wave_gate(a.wave, run_answer(g));
          again = g == GateOutcome::Passed;
          break;
        }
        case run::Act::AskBudget: {             // what the agents cost so far, before the wave starts
          GateOutcome g = gates_.budget(a.wave, phase_.folder, cid_);  // paused or halted: the run stopped
          core_.budget(a.wave, run_answer(g));
          again = g == GateOutcome::Passed;
          break;
        }
        case run::Act::WaveStart: {
          std::vector<std::string> ids;
          for (size_t x : a.plans) ids.push_back(entries_[x].id);
          report_.wave_start(a.wave, a.total_waves, ids);
          break;
        }
        case run::Act::Start:
          start_plans(a.plans, a.wave, a.jobs);
          break;
        case run::Act::MarkReady:
          mark_ready(a.plans);
          break;
      }
    }
  }
}

void Run::mark_ready(const std::vector<size_t>& idx) {
  auto up = state::update(world_, root_, [&](json& doc) {
    std::vector<std::string> ids;
    for (size_t i : idx) ids.push_back(entries_[i].id);
    execution::mark_ready(doc, ids);
    return true;
  });
  if (!up.ok()) {
    stop(kExecHalted, Result::Error, up.error);
    return;
  }
  std::vector<ReadyPlan> ready;
  for (size_t i : idx) {
    const auto& e = entries_[i];
    ready.push_back({e.id, e.wave, e.path, summary_rel_for(world_, root_, e.path)});
  }
  stop(kExecWaitingSummary, Result::WaitingForSummary, report_.plans_ready(ready));
}

}  // namespace yolo::runner::phase
