// The decisions of one phase run of `yolo execute`, as a state machine without side effects:
// which plan starts (and in which worktree slot), when a wave starts and ends, when its gate
// or the budget is asked, in which order gated plans are merged, when the run pauses, halts
// or is complete. runner/ (phase::Run) carries the actions out (processes, git, the state
// file, the drawing) and reports what happened as events; this decides the next actions.
//
// The split is the one of a build system's plan and builder: the core holds one record per
// plan and knows nothing of processes, files or clocks, so a run can be stepped one event at
// a time against a fake executor (tests/protocol/run_core_test.cc).
//
// Use: build the core from the plans as the state holds them (statuses after
// execution::prepare, worktree merge states, dispatch handles), then after every event call
// next() with what the state file says now (a gate open, a rejected gate) and carry out the
// actions it returns, in order. Some actions answer with an event at once (a merge, a wave
// gate, the budget): next() is then called again.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/run/dispatch.h"
#include "protocol/run/execution.h"
#include "protocol/plan/waves.h"

namespace yolo::run {

using execution::MergeState;
using waves::PlanStatus;

// Where a plan stands in this run, beyond its status: what holds it.
enum class Step {
  Idle,       // not started by this run (pending, or complete / failed as the state said)
  Executing,  // its executor (or its dispatched job) runs: it holds a slot
  Checking,   // its executor ended; its own checks run: it still holds its slot
  Gating,     // its SUMMARY gate runs in this process: its slot serves the next plan
  Done,       // this run ended it (complete, failed, or pending again when interrupted)
};
const char* to_string(Step s);

// One plan of the run.
struct PlanRecord {
  PlanStatus status = PlanStatus::Pending;
  Step step = Step::Idle;
  int slot = 0;        // the worktree slot it holds while it runs (0: none)
  int attempt = 0;     // its starts, the state's earlier attempts included
  std::string handle;  // its dispatched job, when one was submitted
  MergeState merge = MergeState::None;
  std::string head;                       // the commit that passed its gates (what a merge names)
  std::optional<execution::PlanEnd> end;  // how this run ended it
};

// What a plan brings from the state when the core is built.
struct PlanSeed {
  waves::PlanNode node;  // id, plan number, wave, depends_on, status (after execution::prepare)
  MergeState merge = MergeState::None;
  std::string head;
  int attempt = 0;             // attempts recorded so far (a dispatched plan's record)
  // Its dispatched job's record as a stopped run left it (plans[].dispatch; null: none): the
  // core decides from it whether its next start re-attaches to that job, submits the same
  // attempt again, or submits a new one (dispatch::decide_start).
  json job = nullptr;
  bool failed_before = false;  // the state said failed
};

// What the runner knows of a plan beside the state file: its dispatched job's record as a
// stopped run left it (nullptr or null: none), and whether that job failed before.
struct PlanKnown {
  const json* job = nullptr;
  bool failed_before = false;
};
struct Seeds {
  std::vector<PlanSeed> plans;
  // Per plan: its worktree record in doc when its merge is pending (the run merges from that
  // record), else nullptr. Points into the doc given.
  std::vector<const json*> pending_worktree;
};
// The seeds of the core, in the entries' order, from the state document (an object; {}
// when unreadable): each plan's node with its status (execution::nodes), its worktree's merge
// state and head, and its dispatched job with its attempt (the record's, else 1) from
// known[i] (nothing known past the end of known).
Seeds seeds(const json& doc, const std::vector<execution::PlanEntry>& entries, const std::vector<PlanKnown>& known);

struct Settings {
  bool executor = true;        // an executor is configured (else plans are marked ready)
  bool isolated = false;       // worktree isolation: gated plans are merged back in plan order
  bool wave_approval = false;  // every wave after the first asks its wave gate
  int max_parallel = 1;        // executors at once (the fd limit included)
  std::string only;            // --plan: only that plan runs
};

// What the state file says now: another process (a person approving, rejecting) changes it.
struct Outlook {
  bool halted = false;  // the run is halted (a rejected gate, or a halt written by someone)
  bool frozen = false;  // a gate is open, or the approval the waves need is missing
};

enum class Act {
  WriteState,    // write the plans' queued records now (before a merge, a pause, an end)
  Merge,         // merge `plans` (gated, not merged) in this order; answer with merged()
  WaveEnd,       // every plan of `wave` is complete or failed (`failed`: one failed)
  Halted,        // the state says halted: stop (exit: halted)
  Frozen,        // a gate is open while plans run: say so once; nothing new starts
  Pause,         // a gate is open and nothing runs: pause (exit: paused)
  Halt,          // a plan failed (or nothing can start): halt the phase with `reason`
  PlanComplete,  // --plan's plan is complete, the rest of the phase is not
  Complete,      // every plan is complete: the phase ends
  AskWaveGate,   // before `wave` starts: its wave gate; answer with wave_gate()
  AskBudget,     // before `wave` starts: the budget; answer with budget()
  WaveStart,     // `wave` starts (said once)
  Start,         // start `plans` (their executors; answer with started() or not_started())
  MarkReady,     // no executor: `plans` wait for their SUMMARY files (the run stops)
  MergeRefused,  // a gated plan could not be merged (local changes in the way): the run halts
};
const char* to_string(Act a);

struct Action {
  Action(Act k = Act::WriteState) : kind(k) {}  // NOLINT(google-explicit-constructor): {Act::X} reads as the action
  Act kind;
  std::vector<size_t> plans;
  long long wave = 0;
  long long total_waves = 0;
  bool failed = false;
  std::string reason;
  // Start: the plans among `plans` whose dispatched job a stopped run left submitted: waited
  // on again, not submitted again.
  std::vector<size_t> reattach;
  // Start: for each of `plans`, how its dispatched job starts (re-attach to a handle, or
  // submit an attempt, after looking up an earlier attempt's branch).
  std::vector<dispatch::Start> jobs;
};

// The answer to AskWaveGate / AskBudget: passed (the run goes on), or it stopped (paused or
// halted, the driver said so).
enum class Answer { Passed, Stopped };

// How a merge of a gated plan went.
enum class MergeOutcome { Merged, Conflict, Refused };
// The outcome a merge's record says (its merge state after it): merged, a conflict, or
// refused (anything else: nothing was merged).
MergeOutcome merge_outcome(MergeState after);

class Core {
 public:
  Core() = default;
  Core(std::vector<PlanSeed> plans, Settings s);

  size_t size() const { return plans_.size(); }
  const PlanRecord& plan(size_t i) const { return plans_[i]; }
  const waves::PlanNode& node(size_t i) const { return board_[i]; }
  const Settings& settings() const { return settings_; }
  void set_max_parallel(int n) { settings_.max_parallel = n; }

  // ---- events -------------------------------------------------------------------------------
  // Plan i's executor (or its job) started: a new attempt, unless its stopped run's job is
  // re-attached. A resumed plan whose work a killed run finished starts too (its gates come
  // next, without an executor).
  void started(size_t i);
  // Plan i holds worktree slot `slot` (free_slot() chose it, or a killed run left its work
  // there) until its gates end.
  void take_slot(size_t i, int slot);
  // Plan i could not start (its file changed, no worktree, no sandbox): failed with `end`.
  void not_started(size_t i, const execution::PlanEnd& end);
  // A plan a Start named was not started after all (another plan of the batch failed before
  // any started): pending again.
  void put_back(size_t i);
  // Its dispatched job was submitted, or a stopped run's job was found again.
  void submitted(size_t i, const std::string& handle);
  // Its executor (or job) ended and its own checks run now.
  void executor_exited(size_t i);
  // Its gates run in this process from now on: its slot serves the next plan.
  void gating(size_t i);
  // Its gates decided it (execution::plan_outcome): complete, failed, or pending again.
  // merge / head: what its worktree gate left (Pending with the gated commit when it passed).
  void concluded(size_t i, const execution::PlanEnd& end, MergeState merge = MergeState::None,
                 const std::string& head = "");
  // A merge of a plan the Merge action named.
  void merged(size_t i, MergeOutcome m);
  void wave_gate(long long wave, Answer a);
  void budget(long long wave, Answer a);
  // The run stops (Ctrl-C, an error): nothing new is decided; running plans end as they can.
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  // ---- decisions ----------------------------------------------------------------------------
  // The actions to carry out now, in order.
  std::vector<Action> next(const Outlook& o);

  // The lowest worktree slot no running plan holds; whether a plan other than `except` holds one.
  int free_slot() const;
  bool slot_held(int slot, size_t except) const;
  // A plan holds a slot or its checks run: what a merge waits for.
  bool busy() const;
  size_t gating_count() const;
  // Plans this run or the state counts as done for the progress line.
  size_t done_count() const;

 private:
  void set_status(size_t i, PlanStatus s);
  bool merge_due() const;
  std::vector<size_t> merge_order() const;

  Settings settings_;
  waves::Board board_;
  std::vector<PlanRecord> plans_;
  long long first_wave_ = 0;
  std::set<long long> wave_gate_passed_, budget_passed_, waves_started_, waves_ended_, waves_touched_;
  bool frozen_noted_ = false;
  bool stopped_ = false;
  std::vector<size_t> refused_;          // plans whose merge was refused: the run halts
  std::vector<dispatch::Start> start_;  // per plan: how its next start goes (a re-attach keeps the attempt)
};

}  // namespace yolo::run
