// What the three classes of dispatch (runner/run_dispatch.h) share: the run as it reaches
// them (DispatchHost, given by phase::Run or a unit test), what they say (a Teller,
// runner/run_teller.h), and what DispatchDriver keeps for its two parts, DispatchJobs
// (runner/dispatch_jobs.h) and DispatchReturn (runner/dispatch_return.h): a plan's record,
// its failure, Ctrl-C and its branch (DispatchPlans), and what the jobs hand the return path
// (DispatchBack).
#pragma once

#include <functional>

#include "protocol/run/dispatch.h"
#include "runner/phase_parts.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

// What dispatch needs of the run (phase::Run gives it; a unit test gives its own).
struct DispatchHost {
  std::function<size_t()> plans;                                  // how many plans the phase has
  std::function<const PlanEntry&(size_t)> entry;                  // plan i as the run read it
  std::function<PlanRun&(size_t)> plan;                           // what the run holds of plan i
  std::function<const PlanRun*(size_t)> plan_at;                  // the same, nullptr when none yet
  std::function<run::Core&()> core;                               // the run core's records
  std::function<Worktrees*()> trees;                              // the worktree slots (nullptr: none)
  std::function<std::map<long long, std::string>&()> wave_bases;  // wave -> the commit it starts from
  std::function<std::string()> correlation_id;
  std::function<std::string()> phase_rel;  // ".yolo-planning/phases/01-demo"
  std::function<bool()> interrupted;       // Ctrl-C (or a signal) stopped the run
  std::function<bool()> stopping;
  // Plan i runs for the loop from now on, with its child p (nullptr: none of its own);
  // release: it no longer does.
  std::function<Process*(size_t, std::unique_ptr<Process>)> hold;
  std::function<void(size_t)> release;
  std::function<void(size_t, execution::PlanUpdate)> queue;  // plan i's record changes (batched)
  std::function<void()> flush;                               // the queued changes written now
  std::function<void()> schedule;                            // the run core decides what is next
  std::function<std::map<std::string, std::string>(size_t, long long)> plan_vars;  // the templates' variables
  // The fetched branch's worktree as plan i's; false: err says why.
  std::function<bool(size_t, const PlanWorktree&, int slot, std::string& err)> adopt_worktree;
  std::function<void(size_t, SpawnResult)> run_checks;  // plan i's checks, then its gates
  std::function<std::string(const PlanEntry&, const json& worktree_record)> merge_message;
};

// What DispatchDriver keeps of each plan for its parts (a unit test of one part gives its own).
struct DispatchPlans {
  std::function<std::string(size_t)> branch_of;  // plan i's branch (its attempt's)
  // Plan i's dispatch record, queued (flush: written before the next step).
  std::function<void(size_t, json rec, bool flush)> record;
  // Plan i failed (a `dispatch` finding); reschedule false: the caller schedules once.
  std::function<void(size_t, const std::string& error, const std::string& fix, const SpawnResult*, bool reschedule)>
      fail;
  std::function<void(size_t)> on_interrupt;  // Ctrl-C reached plan i: its job cancelled, pending again
};

// What DispatchJobs hands the return path (DispatchReturn; a unit test of the jobs gives its own).
class DispatchBack {
 public:
  virtual ~DispatchBack() = default;
  // Plan i's job ended with its branch to gate: fetched, checked out, handed to the run's checks.
  virtual void fetch(size_t i, long long wave, SpawnResult r) = 0;
  // The job's own log when wait's output r holds none: true when it is being fetched (`then`
  // gets r back with it); false: r is as it was.
  virtual bool fetch_job_log(size_t i, SpawnResult& r, std::function<void(SpawnResult)> then) = 0;
};

// The driver's setting, shared by reference with its parts.
struct DispatchEnv {
  const Config& cfg;
  const World& world;
  const stdfs::path& root;
  uv_loop_t* loop;
  DispatchHost& host;
  Teller& tell;  // what dispatch says: events, notes, the event log
  DispatchPlans& plans;
  const std::string& url;  // the remote as the jobs see it (a URL or path; set by init)
};

}  // namespace yolo::runner::phase
