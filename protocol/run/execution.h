// Step 2 of `yolo execute` on the state document (PROTOCOL.md section 5), pure JSON:
// initialise a run for a phase or resume the one already there.
//
// Resume rules: a correlation_id already present is kept; awaiting_approval is never
// replaced with running (nor a halt caused by a rejected gate: only a new request lifts
// it); steps_completed keeps what was done; plans with a SUMMARY that passes the SUMMARY
// gate are complete, whatever the state said; a plan left `running` by a run that died is
// pending again; a `ready` plan (waiting for its SUMMARY) stays ready.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/base/json.h"
#include "protocol/plan/waves.h"
#include "protocol/run/statuses.h"

namespace yolo::execution {

// Why a branch that conflicts fails its plan: a high "merge" finding (the files git named).
json merge_conflict_finding(const std::string& branch, const std::vector<std::string>& files,
                            const std::string& error);

struct PhaseInfo {
  long long number = 0;  // NN of the folder name
  std::string name;      // the slug ("demo" for 01-demo)
  std::string dir;       // relative to the project root: ".yolo-planning/phases/01-demo"
};

enum class SummaryState { Missing, Passed, Failed };

struct PlanEntry {
  std::string id, plan, title;
  long long wave = 0;  // 0 when the plan has no valid wave
  std::vector<std::string> depends_on;
  std::string path;  // relative to the project root
  SummaryState summary = SummaryState::Missing;
  json summary_findings = json::array();  // when Failed
};

struct PrepareOptions {
  std::string now;             // ISO-8601
  std::string correlation_id;  // used only when the document has none
  bool retry_failed = false;   // failed plans without a passing SUMMARY become pending (an executor re-runs them)
};

struct Prepared {
  bool new_run = false;      // the document held no run of this phase
  bool was_running = false;  // some plan was left `running` (a run died): now pending
  // Plans the run knew and never started whose passing SUMMARY appeared after the run began:
  // not complete (pending, the plan runs). In the checkout an executor writes its phase
  // folder, where its own SUMMARY lies; a SUMMARY it wrote for a later plan would let that
  // plan pass its wave, and the wave's gate, without running.
  std::vector<std::string> summary_not_counted;
  long long wave = 0;        // current wave (lowest with a plan not complete; total_waves when all are)
  long long total_waves = 0;
};

// Where a killed run left a plan's finished work that a re-run may take up: the slot the
// state's plan record says the run gave the plan, when that record names `branch` and the
// plan was not gated yet (merge "none"); "" otherwise. A slot's HEAD is its executor's to
// move, so a slot found on a plan's branch proves nothing by itself.
std::string slot_to_take_up(const json& plan_record, const std::string& branch);

// Initialises or resumes doc (may be {}) for the phase and its plans (file order).
Prepared prepare(json& doc, const PhaseInfo& phase, const std::vector<PlanEntry>& plans, const PrepareOptions& opts);

// Whether `state` holds a run: `yolo execute` started one (it sets the run's phase). No
// state file, a state that only holds gates requested outside a run, or one written by an
// older `yolo review` (status "running" and review loops, no phase) hold no run yet: a
// review never creates or marks a run.
bool has_run(const json& state);

// Whether a run is in progress: it exists and its status is running or awaiting_approval
// (a complete or halted run waits for a person). The watcher drives execution while one is
// (protocol/watch/reconcile.h: watch::drives_execution).
bool run_in_progress(const json& state);

// True when the run is halted because its latest gate was rejected (only a new approval
// request lifts that halt).
bool halted_by_gate(const json& doc);

// Adds step to steps_completed when absent.
void mark_step(json& doc, const std::string& step);
bool has_step(const json& doc, const std::string& step);

// The plan object of doc.plans with this id (nullptr when none).
json* find_plan(json& doc, const std::string& id);
const json* find_plan(const json& doc, const std::string& id);

// Scheduler nodes: the entries' waves and dependencies with the statuses of doc.plans.
std::vector<waves::PlanNode> nodes(const json& doc, const std::vector<PlanEntry>& plans);
// The entries' statuses in doc, for a run's last JSON line: [{"id", "status"}] in their order
// (pending when doc has no record of one).
json plan_statuses(const json& doc, const std::vector<PlanEntry>& plans);

// `yolo execute --plan ID` naming no plan of the phase (by id or plan number, as a
// depends_on entry does): a usage error, nothing written. Its message names the phase folder,
// the person's next step the ids to choose from. nullopt when only is empty or names a plan.
struct UsageError {
  std::string message;
  std::string next;
};
std::optional<UsageError> unknown_plan(const std::vector<PlanEntry>& plans, const std::string& only,
                                       const std::string& phase_dir);

// Recomputes doc.wave from the plans (lowest wave with a plan not complete).
void update_wave(json& doc);

// ---- transitions (pure; the runner applies them under the state lock) -------------------
// start (prepare above), ready, running, complete, failed, halted, resumed (prepare again).

// The plans wait for their SUMMARY files (no executor): status ready.
void mark_ready(json& doc, const std::vector<std::string>& ids);

// The plans start (started(now) below, applied): fails naming a plan that is not in the
// run (nothing changed then).
Status start_plans(json& doc, const std::vector<std::string>& ids, const std::string& now);

// How a plan's executor ended: complete, failed (error, and the SUMMARY gate's findings when
// its SUMMARY failed it), or pending again (interrupted: it may run again).
struct PlanEnd {
  PlanStatus status = PlanStatus::Failed;  // Complete | Failed | Pending
  std::string error;
  json findings = json::array();
};
// ended(end, now) below, applied.
void end_plan(json& doc, const std::string& id, const PlanEnd& end, const std::string& now);
// A merge in a live run, its plan's end from the record's merge state after it: merged, or
// refused (still pending: nothing merged, the gated commit kept for the next run), leave the
// plan complete; a conflict fails it with error and findings (status_after_merge).
PlanEnd end_after_merge(MergeState after, const std::string& error, const json& findings);

// The phase is complete (every plan is): status complete, completed_at set the first time,
// step_3 marked; a run awaiting approval keeps that status.
void complete_phase(json& doc, const std::string& now);

// Halts the run; a run awaiting approval or already halted is left as it is (false).
bool halt(json& doc);

// ---- batched plan records -----------------------------------------------------------------
// While plans run, `yolo execute` keeps their statuses in memory and writes the changes in
// batches: one read-modify-write of the state (under its lock) for every change queued.
struct PlanUpdate {
  PlanStatus status = PlanStatus::Pending;  // Pending | Running | Complete | Failed
  std::optional<std::string> started_at;  // unset: kept as the record has it
  json completed_at;                      // null or an ISO-8601 time
  std::string error;                      // "": removed
  json findings;                          // null: removed
  json set = json::object();  // other fields of the record (worktree, scope, checks, executor); null removes
};

// A plan starts: running, started_at `now` when given (else kept), no completed_at, error or
// findings.
PlanUpdate started(std::optional<std::string> now);
// A plan ends: its status and error; completed_at `now` unless it is pending again; the
// findings only when it failed (an array), none otherwise.
PlanUpdate ended(const PlanEnd& end, const std::string& now);

// `later` queued for a plan whose `earlier` update is not written yet: one update that writes
// what both would, in order (started_at and the `set` fields of `earlier` are kept unless
// `later` sets them).
PlanUpdate merge_updates(const PlanUpdate& earlier, PlanUpdate later);

// Applies updates (plan id -> its update, in order) to the first record of each id in
// doc.plans, then recomputes doc.wave. A record whose status is no longer `running` loses
// its `executor`. Ids without a record are skipped. Returns the indexes in doc["plans"] of
// the records written (for state::validate_changed_plans).
std::vector<size_t> apply_plan_updates(json& doc, const std::vector<std::pair<std::string, PlanUpdate>>& updates);

// ---- the executors' journal ----------------------------------------------------------------
// The state is written in batches while plans run; who runs a plan that just started is
// appended to this journal at its spawn (one line, no rewrite, no fsync), so a later
// execute, after a kill -9 of this one, ends that executor before the plan starts again
// even when the plan's `running` had not reached the state yet. One execute per project
// writes it (the instance lock); the next one reads it, ends what still runs, removes it.
inline constexpr const char* kExecutorsJournal = ".yolo-planning/.execute-executors.jsonl";

// One line of the journal: the plan's id and its executor's record (pid, pgid, start_ticks,
// boot_id), "\n"-terminated.
std::string journal_line(const std::string& plan_id, const json& executor);

// The journal's lines as a state-shaped document, {"plans": [{"id", "status": "running",
// "executor"}...]}, for the same leftover check as the state's own records. Lines that do
// not parse or lack a plan id or an executor object (a torn last line) are skipped.
json journal_plans(std::string_view text);

}  // namespace yolo::execution
