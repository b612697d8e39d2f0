// The state file's statuses, typed: a plan's, the run's, a worktree branch's merge and a
// gate record's, each with the word the file spells it with. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json.h"
#include "protocol/plan/waves.h"

namespace yolo::execution {

// ---- the statuses of the state file, typed --------------------------------------------
// A plan's status (plans[].status): waves::PlanStatus, written and read as its word by
// waves::to_string / waves::parse_status.
using waves::PlanStatus;
// The plan record's status; nullopt when it has none or a word not in the vocabulary.
std::optional<PlanStatus> plan_status(const json& plan_record);

// The run's status (the top-level "status").
enum class RunStatus { Running, AwaitingApproval, Halted, Complete };
const char* to_string(RunStatus s);  // running | awaiting_approval | halted | complete
std::optional<RunStatus> parse_run_status(std::string_view s);
// The state's run status; nullopt when it has none or a word not in the vocabulary.
std::optional<RunStatus> run_status(const json& state);

// Where a plan's worktree branch stands (plans[].worktree.merge, isolation "worktree"): not
// gated yet, gated and waiting for its turn, merged, or refused by a conflict.
enum class MergeState { None, Pending, Merged, Conflict };
const char* to_string(MergeState s);  // none | pending | merged | conflict
// The record's merge state; a missing or unknown word is None (not gated).
MergeState merge_state(const json& worktree_record);
// A gated plan's status once a run took up its merge (a killed run left it pending): merged is
// complete, a conflict fails it; nullopt (refused, still pending) keeps the plan as it was.
std::optional<PlanStatus> status_after_merge(MergeState s);

}  // namespace yolo::execution

namespace yolo::gates {
// A gate record's status (gates[].status), with the state file's other statuses: the run
// reads it (a run halted by a rejected gate stays halted) below the gates that write it.
enum class GateStatus { Open, Approved, Rejected };
std::string_view to_string(GateStatus s);  // "OPEN" | "APPROVED" | "REJECTED"
// A gate record's status (nullopt: none, or not one of the three).
std::optional<GateStatus> status_of(const json& gate);
}  // namespace yolo::gates
