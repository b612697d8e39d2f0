// What `yolo status --json` prints (and the MCP server's execution status): the phase, its
// waves, each plan's state and review outcome, the approval and the gates, read from
// .yolo-planning/.execution-state.json (a snapshot, no lock).
#pragma once
#include <filesystem>

#include "protocol/status/overview.h"
#include "protocol/ports/world.h"
#include "protocol/base/json.h"

namespace yolo {

// {"ok", "cmd":"status", "state_file", "exists", "phase", "phase_name", "phase_dir",
//  "status", "run_state" (RUNNING|FROZEN|HALTED|COMPLETE), "wave", "total_waves",
//  "correlation_id", "started_at", "completed_at", "steps_completed",
//  "counts": {plan status: n}, "waves": [{"wave", "status", "plans": [ids]}],
//  "plans": [{"id","title","wave","status","path","error","review": {...}|null}],
//  "other_reviews": {id: {...}} (reviewed plans that are not plans of the run),
//  "review_ledger_errors": [...] (ledgers that could not be read),
//  "plans_not_in_run": [paths] (plan files of the run's phase the run does not know: added
//  since; absent when none),
//  "approval": {...}|null, "approval_counts" and "approval_problem" (an approved file edited
//  since: the approval no longer counts), "gates": [...], "open_gates": [...]}.
// A state that cannot be read gives {"ok": false, "error": "<file>: <problem>"}; a
// missing one gives ok with exists=false and status null.
//
// Bounded by default: the review records read are those of the run's phase (the ledger of
// state.phase_dir, else the ledgers named after state.phase; none before a run), so the
// output and the time stay those of one phase however many plans the project has; the
// other ledgers are only named, in "other_ledgers": {"count", "files" (at most 20),
// "hint"}. With all_records (`yolo status --records`), every ledger is read and every
// record shows in other_reviews, as before.
struct StatusOptions {
  bool all_records = false;
  OverviewProgress progress;  // the project overview's rows as they are computed (overview.h)
};
json execution_status(const World& w, const std::filesystem::path& root, const StatusOptions& opts = {});

// The status of a document already loaded (same shape, without file fields). `reviews`:
// plan id -> ledger record (review_ledger::load_all), or null.
json execution_status_of(const json& state, const json& reviews = nullptr);

}  // namespace yolo
