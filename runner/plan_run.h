// What phase::Run (runner/phase_run_internal.h) holds of one plan while it runs, beside the
// run core's record of it (protocol/run/run_core.h: PlanRecord): facts of its processes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/plan/plan_checks.h"
#include "protocol/run/execution.h"
#include "protocol/run/run_core.h"
#include "runner/plan_gate.h"
#include "runner/refusals.h"
#include "runner/slot_aside.h"
#include "runner/subprocess.h"
#include "runner/worktree.h"

namespace yolo::runner::phase {

// One per plan, in the run's plan order (PlanRuns below, filled once the plans are read, never
// resized after: references into it stay valid): its processes' facts, not decisions (those
// are the run core's records, run::Core::plan(i)).
struct PlanRun {
  uint64_t started_at = 0;              // uv_hrtime() at its start
  std::vector<std::string> argv;        // the executor's argv, for its log
  json sandbox;                         // what its executor ran under (null: not started)
  std::shared_ptr<RefusalLog> refused;  // what its executor's sandbox refused it
  std::optional<std::string> load_hash;  // its content hash when the run read it
  std::filesystem::path gate_requests;  // where its executor leaves gate requests ("": none)
  std::string tool;                     // its executor's current tool call ("Bash: git commit ...")
  std::vector<plan_checks::Spec> check_todo;  // its own checks, one after another
  std::vector<plan_checks::Outcome> check_out;
  std::vector<std::string> check_errors;
  SpawnResult exec_result;               // the executor's result while its checks run
  std::filesystem::path check_dir;       // where its checks run: its worktree, or the checkout
  bool check_in_worktree = false;
  // What its executor left in its slot beyond its commits, put aside while its checks run
  // (runner/slot_aside.h), put back before its gate.
  std::optional<slot_aside::Aside> aside;
  const char* aside_step = nullptr;      // on the live line while that (or its gates) runs off the loop
  std::unique_ptr<GateOut> gated;        // its gates' answer, back from their worker thread (plan_gate.cc)
  std::string dispatch_error;            // why its job's branch cannot be gated ("": none)
  std::string objects_error;             // why its executor's git objects were not taken in ("": none)
  std::vector<std::string> dispatch_res;  // its resources as adapter options
  std::optional<PlanWorktree> worktree;  // its worktree in this run (isolation), until merged
  json worktree_record;                   // its `worktree` record (null: no worktree in this run)
  // Its must_haves.checks as load_plans read them, with the file's identity then
  // (fs::Disk::stamp): run_checks reads the plan again only when the file changed since.
  std::optional<std::pair<std::string, plan_checks::Parsed>> checks_read;
  // Running for the loop: a child of its own (proc: its executor, a check, a dispatch
  // adapter), or none while it waits in a batch (its wave's array, the fetch queue).
  bool running = false;
  std::unique_ptr<Process> proc;
  json dispatch_rec;             // its dispatch record (schemas: plans[].dispatch; null: none)
  bool dispatch_failed_before = false;  // a stopped run left it failed: a new attempt
  bool dispatch_submitting = false;     // its submit runs: Ctrl-C lets it end, then cancels its job
};

// The run's PlanRun records (Run::runs_), and how many of their plans run for the loop: the
// run is settled only when none does.
class PlanRuns {
 public:
  // Once, when the plans are read: references into it stay valid for the run.
  void reset(std::vector<PlanRun> runs) { runs_ = std::move(runs); }
  // Plan i's record; one not read yet (i past the end) is made.
  PlanRun& of(size_t i) {
    if (i >= runs_.size()) runs_.resize(i + 1);
    return runs_[i];
  }
  const PlanRun* at(size_t i) const { return i < runs_.size() ? &runs_[i] : nullptr; }
  PlanRun& operator[](size_t i) { return runs_[i]; }  // plan i's record (i < size())
  const PlanRun& operator[](size_t i) const { return runs_[i]; }
  // Plan i runs for the loop from now on, with its child p (nullptr: none of its own).
  Process* hold(size_t i, std::unique_ptr<Process> p) {
    PlanRun& r = of(i);
    if (!r.running) ++running_;
    r.running = true;
    r.proc = std::move(p);
    return r.proc.get();
  }
  // Plan i no longer runs for the loop; its child (ended: called from its own done callback,
  // its handles still closing, so it detaches cleanly) is dropped. A plan not held: nothing.
  void release(size_t i) {
    if (i >= runs_.size() || !runs_[i].running) return;
    runs_[i].running = false;
    --running_;
    std::unique_ptr<Process> p = std::move(runs_[i].proc);
  }
  void release_all() {
    for (size_t i = 0; i < runs_.size(); ++i) release(i);
  }
  // Ctrl-C: every held child cancelled, but a dispatch submit (its timeout bounds it: killed
  // midway, it may have queued a job whose handle nobody would know; ended, its job is cancelled).
  void cancel_all() {
    for (auto& r : runs_)
      if (r.running && r.proc && !r.dispatch_submitting) r.proc->cancel();
  }
  size_t running() const { return running_; }  // plans held
  // What the run core is to know of each of the first n plans (run::seeds): its dispatched job.
  std::vector<run::PlanKnown> known(size_t n) const {
    std::vector<run::PlanKnown> k(n);
    for (size_t i = 0; i < n && i < runs_.size(); ++i) k[i] = {&runs_[i].dispatch_rec, runs_[i].dispatch_failed_before};
    return k;
  }
  // Plan i's worktree in this run (nullptr: none, or not yet).
  const PlanWorktree* worktree_of(size_t i) const {
    const PlanRun* r = at(i);
    return r && r->worktree ? &*r->worktree : nullptr;
  }
  size_t size() const { return runs_.size(); }
  const std::vector<PlanRun>& all() const { return runs_; }
  std::vector<PlanRun>::iterator begin() { return runs_.begin(); }
  std::vector<PlanRun>::iterator end() { return runs_.end(); }

 private:
  std::vector<PlanRun> runs_;
  size_t running_ = 0;  // plans with running set
};

}  // namespace yolo::runner::phase
