// Which gate a step of a run needs and what to do about it, as a typed action (PROTOCOL.md
// section 6): `yolo execute` asks before the vision gate and before each wave; the runner
// carries the action out (pause, open the gate, re-open it, halt, go on) and prints.
#pragma once
#include <string>

#include "protocol/gates/approvals.h"
#include "protocol/base/json.h"

namespace yolo::gates {

enum class Step {
  Proceed,  // the approval of this file counts (sealed, digest of the file now)
  Pause,    // a gate is open (this one or another): wait for a decision
  Halt,     // the latest gate of this type for this file was rejected
  Reopen,   // it was approved, but the file changed since (or cannot be read): open it again
  Request,  // never requested: open the gate (its approver decides)
};
std::string_view to_string(Step s);  // "proceed" | "pause" | ...

struct Need {
  Step step = Step::Request;
  json gate;              // the gate the step is about: the open one (Pause), the latest of this
                          // type for the file (Proceed, Halt, Reopen), or null
  ApprovalStatus status;  // approval_status of (type, plan_path) given the digest
};

// `state` as read (a legacy approval object is adopted on a copy); `digest` is the
// "sha256:..." of plan_path now. Any open gate pauses, whatever its type.
Need ensure(const json& state, GateType type, const std::string& plan_path, const std::string& digest,
            const seal::Key& key);
// The same against everything the gate covers now (gates::Now: the project, the covered
// files' and config keys' digests, signatures); `files` are the files a gate of this type
// covers (wave: every plan of the wave; empty: plan_path alone).
Need ensure(const json& state, GateType type, const std::string& plan_path, const Now& now,
            const std::vector<std::string>& files = {});

}  // namespace yolo::gates
