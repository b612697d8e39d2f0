// `yolo execute`'s start of a plan's executor on this machine, a part of the Run
// (runner/phase_run_internal.h) with a class of its own: the check, just before the start,
// that the plan's file holds the content that was reviewed; that content put back into the
// plan's worktree slot; the executor's sandbox (its slot or its phase folder, its own SUMMARY,
// the checks' programs kept read-only, a folder for the gates it asks for); its argv, folder,
// environment and timeout; its process started on the loop; who runs it, for the executors'
// journal and the state (with the sandbox it runs under, sealed); its plan_start event. And
// the executors a killed run left, ended before their plans start again.
//
// Which plans start, and by which path (a dispatched job, a finished worktree resumed, a
// start here), and what a plan that cannot start means for the run, are the Run's
// (Run::start_plans, plan_exec.cc). The run is reached only through the Host; what a start
// says goes to its Teller (runner/run_teller.h).
#pragma once

#include "runner/phase_parts.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

class ExecutorStarter {
 public:
  // What a start needs of the run (phase::Run gives it; a unit test gives its own).
  struct Host {
    std::function<const PlanEntry&(size_t)> entry;  // plan i as the run read it
    std::function<PlanRun&(size_t)> plan;           // what the run holds of plan i (its worktree)
    std::function<bool()> isolated;                 // the run's plans have worktrees
    // Plan i starts now (the run core's record), just before its executor is spawned.
    std::function<void(size_t)> started;
    // Plan i runs for the loop with its executor p; gives p back.
    std::function<Process*(size_t, std::unique_ptr<Process>)> hold;
    std::function<size_t()> running;                // plans running now (in the start's event)
    std::function<void(size_t, SpawnResult)> done;  // plan i's executor ended
    // Who runs a plan, appended to the executors' journal; false: it could not be.
    std::function<bool(const std::string& plan_id, const json& record)> journal;
    std::function<execution::PlanUpdate*(size_t)> queued;  // plan i's change not written yet
  };
  // phase, cid, check_programs: the run's, read at each start (known once the run chose its
  // phase, prepared its state and read its plans).
  ExecutorStarter(const World& world, const stdfs::path& root, const Config& cfg, uv_loop_t* loop,
                  const PhaseDir& phase, const std::string& cid, const std::vector<std::string>& check_programs,
                  Teller& tell, Host host)
      : world_(world), root_(root), cfg_(cfg), loop_(loop), phase_(phase), cid_(cid),
        check_programs_(check_programs), tell_(tell), host_(std::move(host)) {}
  ExecutorStarter(const ExecutorStarter&) = delete;
  ExecutorStarter& operator=(const ExecutorStarter&) = delete;

  // The plans of a start as their files hold them now (the phase's review ledger read once):
  // each one's bytes, and those that changed since their review (or, without a review
  // record, since the run read them) with why.
  struct Reviewed {
    std::map<size_t, std::string> bytes;
    std::vector<std::pair<size_t, std::string>> changed;
  };
  Reviewed reviewed(const std::vector<size_t>& idx) const;
  // "" when plan i's file holds the content that was reviewed (its record in `ledger`) or,
  // without one, read at the run's start; else why not. `bytes`: the file.
  std::string unchanged(size_t i, const json& ledger, std::string& bytes) const;

  // How a start went: error (not started, nothing spawned) or its executor's record (null
  // when it has no pid), and whether the journal has it.
  struct Start {
    std::string error;
    json executor;
    bool journaled = true;
  };
  // Plan i's executor in wave `wave`, started from `reviewed` (its plan's bytes as reviewed),
  // in its worktree when it has one (made ready by the run), else in the checkout.
  Start start(size_t i, long long wave, const std::string& reviewed);

  // The placeholders of the executor's argv and of the plan's checks, and their environment.
  // sp: the plan's SUMMARY (summary_rel_for), when the caller has it already.
  std::map<std::string, std::string> vars(size_t i, long long wave, const std::string* sp = nullptr) const;
  std::vector<std::pair<std::string, std::string>> env(size_t i, long long wave,
                                                       const std::string* sp = nullptr) const;

  // The plans `running` in doc (the state, or the journal's records) whose executor still
  // lives (the same pid, boot and start time): its process group ended, so no plan runs twice.
  void end_leftovers(const json& doc);
  // What a killed run left, at the start of a run (under the instance lock): the executors
  // the state's doc and the executors' journal (runner/run_state_writes.h) name that still
  // run, ended; then the journal goes.
  void end_leftovers_and_journal(const json& doc);

 private:
  const PlanWorktree* worktree(size_t i) const {
    const PlanRun& r = host_.plan(i);
    return r.worktree ? &*r.worktree : nullptr;
  }

  const World& world_;
  stdfs::path root_;
  const Config& cfg_;
  uv_loop_t* loop_;
  const PhaseDir& phase_;
  const std::string& cid_;
  const std::vector<std::string>& check_programs_;
  Teller& tell_;  // what a start says: events, notes, the event log
  Host host_;
};

}  // namespace yolo::runner::phase
