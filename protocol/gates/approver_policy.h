// Approver policy: which approver decides each gate type (config `approvers`: manual, skip or
// a command), how a command approver's answer is read, and what its verdict does to the gate.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/state/config.h"
#include "protocol/gates/gates.h"
#include "protocol/base/json.h"

namespace yolo::gates {

enum class Decision { Approved, Rejected, Pending };
std::string_view to_string(Decision d);

struct ApproverSpec {
  enum class Kind { Manual, Skip, Command, Invalid };
  Kind kind = Kind::Manual;
  std::vector<std::string> argv;  // Command: the argv template
  long long timeout_ms = 0;       // Command: 0 = command_timeout_ms
  std::string error;              // Invalid: why
};
// config approvers[gate_type] (or approvers.default): "manual" | "skip" | argv array |
// {"command": [...], "timeout_ms": n}. Anything else is Invalid.
ApproverSpec approver_spec(const Config& cfg, GateType type);

struct ApproverRequest {
  std::filesystem::path root;
  std::vector<std::string> argv_template;
  long long timeout_ms = 30000;
  std::string gate_id, gate_type, plan_path, reason;
};
struct ApproverVerdict {
  Decision decision = Decision::Pending;
  std::string feedback;
  std::string error;  // the approver failed: the gate stays pending with last_error
};
// The port to a command approver (implemented in runner/approvers.h).
class ApproverPort {
 public:
  virtual ~ApproverPort() = default;
  virtual ApproverVerdict decide(const ApproverRequest& req) = 0;
};
// Parses an approver's stdout: {"decision":"approved|rejected|pending","feedback":".."}.
ApproverVerdict parse_verdict(std::string_view stdout_text);

// Applies an approver's verdict to gate_id while it is OPEN: approved -> approve (by, digest),
// rejected -> reject (feedback; an empty one becomes "rejected by <by>"), pending -> stays
// open (last_error cleared), error -> stays open with last_error (gate_error event).
// A gate no longer OPEN is left alone (changed=false, message says so).
// covers/project/key: as in ResolveInput (what the gate covers now, the key that seals an
// approval: without one an approving verdict is recorded as the approver's error).
Transition apply_verdict(json& state, const std::string& gate_id, const ApproverVerdict& v, const std::string& by,
                         const std::string& digest, const std::string& now = {}, const json& covers = nullptr,
                         const std::string& project = {}, const seal::Key* key = nullptr);

}  // namespace yolo::gates
