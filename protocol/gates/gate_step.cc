#include "protocol/gates/gate_step.h"

namespace yolo::gates {

std::string_view to_string(Step s) {
  switch (s) {
    case Step::Proceed:
      return "proceed";
    case Step::Pause:
      return "pause";
    case Step::Halt:
      return "halt";
    case Step::Reopen:
      return "reopen";
    case Step::Request:
      return "request";
  }
  return "request";
}

Need ensure(const json& state, GateType type, const std::string& plan_path, const std::string& digest,
            const seal::Key& key) {
  return ensure(state, type, plan_path, now_with_digest(plan_path, digest, key));
}

Need ensure(const json& state, GateType type, const std::string& plan_path, const Now& now,
            const std::vector<std::string>& files) {
  Need n;
  json doc = state.is_object() ? state : json::object();
  adopt_legacy_approval(doc, "");  // a copy, only looked at
  if (const json* g = open_gate(doc)) {
    n.step = Step::Pause;
    n.gate = *g;
    return n;
  }
  n.status = approval_status(doc, type, plan_path, now, files);
  n.gate = n.status.gate;
  switch (n.status.check) {
    case ApprovalCheck::Approved:
      n.step = Step::Proceed;
      break;
    case ApprovalCheck::Pending:
      n.step = Step::Pause;
      if (!n.gate.is_object()) n.gate = {{"gate_type", std::string(to_string(type))}, {"plan_path", plan_path}};
      break;
    case ApprovalCheck::Rejected:
      n.step = Step::Halt;
      break;
    case ApprovalCheck::Stale:
      n.step = Step::Reopen;
      break;
    case ApprovalCheck::Missing:
      n.step = Step::Request;
      break;
  }
  return n;
}

}  // namespace yolo::gates
