// The command approver (PROTOCOL.md section 6): config approvers[gate_type] as an argv
// template with {plan_path} {gate_type} {gate_id} {reason}, run in the project folder
// without a shell; its stdout must be {"decision":"approved|rejected|pending","feedback":".."}.
// A non-zero exit, a timeout or any other output is an error (the gate stays pending with
// last_error; `yolo approve` retries).
#pragma once
#include "protocol/gates/approver_policy.h"
#include "protocol/ports/world.h"

namespace yolo::runner {

// The project's config (the approver's sandbox) is read through the World it is given.
class CommandApprover : public gates::ApproverPort {
 public:
  explicit CommandApprover(const World& w) : world_(w) {}
  gates::ApproverVerdict decide(const gates::ApproverRequest& req) override;

 private:
  const World& world_;
};

}  // namespace yolo::runner
