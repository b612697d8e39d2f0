// The command approver (PROTOCOL.md section 6): config approvers[gate_type] as an argv
// template with {plan_path} {gate_type} {gate_id} {reason}, run in the project folder
// without a shell; its stdout must be {"decision":"approved|rejected|pending","feedback":".."}.
// A non-zero exit, a timeout or any other output is an error (the gate stays pending with
// last_error; `yolo approve` retries).
#pragma once
#include "protocol/gates/approver_policy.h"

namespace yolo::runner {

class CommandApprover : public gates::ApproverPort {
 public:
  gates::ApproverVerdict decide(const gates::ApproverRequest& req) override;
};

// A shared, stateless instance for commands, the executor and the MCP server.
gates::ApproverPort& command_approver();

}  // namespace yolo::runner
