#include "protocol/run/statuses.h"

#include "protocol/base/json_field.h"

namespace yolo::execution {

using json_field::str;

std::optional<PlanStatus> plan_status(const json& plan_record) {
  return waves::parse_status(str(plan_record, "status"));
}

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Running:
      return "running";
    case RunStatus::AwaitingApproval:
      return "awaiting_approval";
    case RunStatus::Halted:
      return "halted";
    case RunStatus::Complete:
      return "complete";
  }
  return "running";
}

std::optional<RunStatus> parse_run_status(std::string_view s) {
  for (RunStatus r : {RunStatus::Running, RunStatus::AwaitingApproval, RunStatus::Halted, RunStatus::Complete})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

std::optional<RunStatus> run_status(const json& state) { return parse_run_status(str(state, "status")); }

const char* to_string(MergeState s) {
  switch (s) {
    case MergeState::None:
      return "none";
    case MergeState::Pending:
      return "pending";
    case MergeState::Merged:
      return "merged";
    case MergeState::Conflict:
      return "conflict";
  }
  return "none";
}

MergeState merge_state(const json& worktree_record) {
  const std::string w = str(worktree_record, "merge");
  for (MergeState m : {MergeState::Pending, MergeState::Merged, MergeState::Conflict})
    if (w == to_string(m)) return m;
  return MergeState::None;
}

std::optional<PlanStatus> status_after_merge(MergeState s) {
  if (s == MergeState::Merged) return PlanStatus::Complete;
  if (s == MergeState::Conflict) return PlanStatus::Failed;
  return std::nullopt;
}

}  // namespace yolo::execution

namespace yolo::gates {

std::optional<GateStatus> status_of(const json& gate) {
  const std::string s = gate.is_object() ? json_field::str(gate, "status") : std::string();
  for (GateStatus g : {GateStatus::Open, GateStatus::Approved, GateStatus::Rejected})
    if (s == to_string(g)) return g;
  return std::nullopt;
}

std::string_view to_string(GateStatus s) {
  switch (s) {
    case GateStatus::Open:
      return "OPEN";
    case GateStatus::Approved:
      return "APPROVED";
    case GateStatus::Rejected:
      return "REJECTED";
  }
  return "OPEN";
}

}  // namespace yolo::gates
