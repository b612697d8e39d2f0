// What `yolo execute` decides before, during and after a run: its exit codes and what each
// says (the watcher reads them), whether the review gate runs, how a plan ends once its
// executor is done, and a plan's SUMMARY gate in its worktree. runner/ gathers the facts
// (processes, files, git) and carries out what these say.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/run/execution.h"
#include "protocol/run/run_core.h"
#include "protocol/findings/findings.h"
#include "protocol/base/json.h"

namespace yolo::execution {

// The exit codes of `yolo execute` (docs/commands.md), for execute itself and for whoever
// started it (the watcher).
inline constexpr int kExitComplete = 0;        // the phase (or --plan's plan) is complete, or a dry run
inline constexpr int kExitHalted = 1;          // halted or failed; also a broken state or config file
inline constexpr int kExitPaused = 3;          // paused at a gate
inline constexpr int kExitWaitingSummary = 4;  // no executor: waiting for SUMMARY files
inline constexpr int kExitUsage = 64;          // an unknown PHASE or --plan: nothing written
enum class ExecuteEnd { Complete, HaltedOrFailed, Paused, WaitingForSummaries, Other };
// What an exit code of `yolo execute` says about the run.
ExecuteEnd execute_end(int exit_code);
// Whether that end is one the run chose (complete, paused, waiting), not a failure to report.
bool expected_end(ExecuteEnd e);

// How a run of `yolo execute` ended, its --json "result": the exit code says less (a halt and
// an error both exit 1).
enum class Result { Complete, Halted, Error, Interrupted, Locked, Paused, WaitingForSummary };
// complete | halted | error | interrupted | locked | paused | waiting_for_summary
const char* to_string(Result r);
std::optional<Result> parse_result(std::string_view word);

// Whether execute runs the review gate: `review_gate` "always" does, "never" never does (not
// even with --review), "on_request" (the default) and any other value only with --review.
enum class ReviewGate { Runs, OffByConfig, NotRequested };
ReviewGate review_gate(const std::string& setting, bool review_flag);
// Before a run starts, a configured agent (role: executor, reviewer, architect, dispatch.*)
// whose program does not exist. A missing executor or dispatch command would fail every plan:
// the run is refused. While the review gate runs (reviewing), a missing reviewer leaves every
// plan only its Stage 1 verdict: refused when reviewer_required, else said loudly; a missing
// architect means a rejected plan is not revised: said. Anything else: nothing to say.
enum class MissingAgentStep { Refuse, RefuseReviewerRequired, WarnStage1Only, WarnNoRevision, Ignore };
MissingAgentStep missing_agent_step(const std::string& role, bool reviewing, bool reviewer_required);
// What execute says of its review gate (the `review_gate` event's "status").
enum class ReviewGateStatus { Running, Passed, Rejected, Skipped, Error };
const char* to_string(ReviewGateStatus s);  // running | passed | rejected | skipped | error

// The cross-plan validation before the waves (Stage 1 of every plan of the phase): how many
// plans it rejected and how many it approved with warnings. Any rejected plan halts the run
// before anything runs; warnings are said and the run goes on.
struct Precheck {
  int rejected = 0, conditional = 0;
  bool halts() const { return rejected > 0; }
  Verdict verdict() const;  // reject, else conditional, else approve
  std::string why() const;  // when it halts: "N plan(s) rejected by the structural pre-check"
};
Precheck precheck(const std::vector<Verdict>& verdicts);

// ---- how a plan ends ----------------------------------------------------------------------
// What is known of a plan once its executor is done and its checks and gates ran.
struct PlanFacts {
  bool interrupted = false;    // the run was stopped (Ctrl-C): the plan may run again
  std::string dispatch_error;  // its cluster job failed (dispatch): why
  bool executor_ok = true;     // the executor exited 0
  std::string executor_outcome;                    // else how it ended ("exited with status 2")
  std::string executor_err, executor_out;          // its output's tails (the line that says why is read from them)
  SummaryState summary = SummaryState::Missing;    // the SUMMARY gate's answer (with isolation: in its worktree)
  json summary_findings = json::array();           // when Failed: the gate's and the scope fence's findings
  std::string summary_path;                        // relative to the project root, for the messages
  std::vector<Finding> check_findings;             // the plan's own checks (must_haves.checks) that failed
  std::string plan_id;
  // Escape attempts the executor's sandbox refused ("unshare(CLONE_NEWUSER) by sh (pid 12)").
  std::vector<std::string> refused;
};
struct PlanOutcome {
  PlanEnd end;                  // status, error, findings
  bool summary_failed = false;  // the SUMMARY gate's own findings failed it (not only the fence or a check)
};
// Interrupted: pending again. A failed job or executor: failed, with why. Else the SUMMARY
// gate decides (missing or failing: failed, headed by what failed: the gate's own high
// findings, the scope fence's, or both), and a failing check of the plan's own fails it
// whatever the SUMMARY says. An escape attempt its sandbox refused fails it too, whatever
// else it did, with a high `sandbox` finding naming the calls.
PlanOutcome plan_outcome(const PlanFacts& f);

// A plan's SUMMARY gate in its worktree (isolation "worktree"), decided on its findings (the
// SUMMARY gate's and the scope fence's): any high finding fails it. The SUMMARY is committed
// on the plan's branch, for the merge, only when the gate passed and the plan's own checks
// passed too (a failed check fails the plan: nothing to merge).
struct WorktreeGate {
  SummaryState state = SummaryState::Passed;
  bool commit = false;
};
WorktreeGate worktree_gate(const json& findings, bool checks_passed);

// ---- which phase runs ----------------------------------------------------------------------
// A phase folder as execute lists them, in order.
struct PhaseName {
  std::string folder;  // "01-demo"
  long long number = 0;
  std::string rel;  // ".yolo-planning/phases/01-demo"
};
struct PhaseChoice {
  enum class Kind { Run, NoPhases, NotFound, AllComplete } kind = Kind::NoPhases;
  size_t index = 0;  // Run: the phase; AllComplete: the last
};
// The phase asked for (`asked`: its folder name, or its number for a folder that starts with
// digits; a trailing path is ignored), else the first not complete: the one the state runs,
// unless that run is complete and no plan was added to its folder since (new_plans); a phase
// whose every SUMMARY passes on disk (complete_on_disk) is complete. state: the execution
// state, or null when there is none.
// What the run core is told of a run (run::Settings): an executor or none, worktree isolation,
// wave approval, --plan (only), and how many of its `plans` run at once: the config's
// max_parallel; a dispatched run's jobs at once (dispatch_parallel; nullopt: not dispatched),
// its whole wave in the wave-level form (wave_form); every plan without an executor (they are
// marked ready). The fd limit lowers it later.
run::Settings core_settings(bool executor, bool isolated, bool wave_approval, int max_parallel, std::string only,
                            size_t plans, std::optional<int> dispatch_parallel, bool wave_form);

PhaseChoice choose_phase(const std::vector<PhaseName>& phases, std::string asked, const json* state,
                         const std::function<bool(size_t)>& new_plans,
                         const std::function<bool(size_t)>& complete_on_disk);

}  // namespace yolo::execution
