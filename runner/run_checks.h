// `yolo execute`'s work on a plan between its executor's end and its outcome, a part of the
// Run (runner/phase_run_internal.h) with a class of its own: the gates the executor asked
// for from inside its sandbox, then the plan's own checks (must_haves.checks) one after
// another on the loop, each a confined child run by argv in the plan's worktree (the
// checkout without isolation). In a worktree, what the executor left beyond its commits is
// put aside while the checks run (runner/slot_aside.h, on a worker thread) and put back
// before the gates, so the checks judge what would be merged.
//
// The results go to the plan's record (PlanRun: check_out, check_errors); the run is
// reached only through the Host: its children held and released, and done(i, executor) once
// the plan is ready for its outcome (Run::conclude); events and notes go to its Teller
// (runner/run_teller.h).
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "protocol/ports/world.h"
#include "protocol/run/execution.h"
#include "protocol/state/config.h"
#include "runner/approvers.h"
#include "runner/output.h"
#include "runner/plan_run.h"
#include "runner/run_teller.h"
#include "runner/slot_aside.h"
#include "runner/subprocess.h"

namespace yolo::runner::phase {

class PlanChecks {
 public:
  struct Host {
    std::function<PlanRun&(size_t)> plan;                      // plan i's record in the run
    std::function<const execution::PlanEntry&(size_t)> entry;  // plan i as the run read it
    std::function<bool()> interrupted;                         // Ctrl-C: conclude what ended
    std::function<bool()> stopping;                            // the run stops: start nothing
    // Plan i's checks hold no slot (none to run) and its gates run in this process: the
    // run may start the next plan meanwhile.
    std::function<void(size_t)> slot_free;
    std::function<void(size_t, std::unique_ptr<Process>)> hold;  // a child of plan i runs
    std::function<void(size_t)> release;                         // it ended
    std::function<void(size_t, SpawnResult)> done;              // checks over: the outcome next
    std::function<std::map<std::string, std::string>(size_t)> vars;  // {placeholders} of plan i
    std::function<std::vector<std::pair<std::string, std::string>>(size_t)> env;
  };
  // phase_rel: the phase folder, root-relative, for the checks' logs (known once the run
  // chose its phase; read when a check ends).
  PlanChecks(const World& world, std::filesystem::path root, const Config& cfg, CommandApprover& approver,
             uv_loop_t* loop, const std::string& phase_rel, Teller& tell, Host host)
      : world_(world), root_(std::move(root)), cfg_(cfg), approver_(approver), loop_(loop), phase_rel_(phase_rel),
        tell_(tell), host_(std::move(host)) {}

  // Opens the gates plan i's executor asked for from inside its sandbox (`yolo
  // request-approval` there leaves a request file: it cannot write the state), then removes
  // the folder.
  void open_requested_gates(size_t i);
  // Plan i's checks, in `dir` (its worktree when `in_worktree`, else the checkout); then
  // done(i, executor). isolated: the run's plans have worktrees (their gates run there, later).
  void run(size_t i, SpawnResult executor, const std::filesystem::path& dir, bool in_worktree, bool isolated);
  // What plan i's executor left aside in `slot` goes back; then done(i, r).
  void put_back(size_t i, const std::filesystem::path& slot, slot_aside::Aside a, SpawnResult r);

 private:
  void next(size_t i);
  void set_aside(size_t i, const std::filesystem::path& slot, std::vector<std::string> keep);
  bool halting() const { return host_.interrupted() || host_.stopping(); }
  void finish(size_t i);  // done(i, the executor's result)

  const World& world_;
  std::filesystem::path root_;
  const Config& cfg_;
  CommandApprover& approver_;
  uv_loop_t* loop_;
  const std::string& phase_rel_;
  Teller& tell_;  // what the checks say: events and notes
  Host host_;
};

}  // namespace yolo::runner::phase
