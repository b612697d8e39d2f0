// Gate runs against a project: each request, approval, rejection and approver verdict is a
// locked read-modify-write of the state (state::update), its events logged after
// (gates::log_events), the command approver run outside the lock. Everything goes through
// the world: its disk (state, covered files, logs), its clock and its key (an approval is
// sealed with World::sealing_key).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/gates/approvals.h"
#include "protocol/gates/approver_policy.h"
#include "protocol/state/config.h"
#include "protocol/gates/gates.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::gates {

struct GateRun {
  std::string error;                  // the request/resolution failed (nothing or part applied)
  json answer;                        // request: the paused answer
  json gate;                          // the gate as it ended
  json state;                         // the state document after
  std::string stamp;                  // the state file's identity (fs::Disk::stamp) as `state` left it; "" unknown
  std::vector<events::Event> events;  // already logged when logged == true
  std::vector<Message> messages;      // for people, in order, each with its kind
  bool ok() const { return error.empty(); }
};

// An authorisation decided under the state's lock, on the exact gate about to be resolved
// and the state as it is then: "" allows, else why not (nothing changes, GateRun::error says
// it). With one, a legacy approval object is never adopted as a gate: only a gate the
// check saw is resolved.
using Authorize = std::function<std::string(const json& state, const json& gate)>;

// request + run the gate's approver at once (manual: stays pending; skip: approved by
// "skip"; command: its verdict). Idempotent requests do not run the approver again.
// Events are logged (events::log_always). port may be null when no command is configured.
GateRun request_gate(const World& w, const std::filesystem::path& root, const Config& cfg, RequestInput in,
                     ApproverPort* port);
// Runs (or re-runs) the approver of an OPEN gate and records its verdict.
GateRun run_approver(const World& w, const std::filesystem::path& root, const Config& cfg, const std::string& gate_id,
                     ApproverPort* port);
// Signs a person's approval with their SSH key inside the write that records it, so an
// approval and its signature are one locked write (runner/signing.h: ssh-keygen; tests: a
// fake). Only a person's `yolo approve` passes one: an approval made through MCP by an agent
// is never signed with the person's key.
class ApprovalSigner {
 public:
  virtual ~ApprovalSigner() = default;
  // The project asks for signed approvals (it has .yolo-planning/allowed_signers).
  virtual bool wanted(const std::filesystem::path& root) const = 0;
  // The armored signature of an APPROVED gate.
  virtual Result<std::string> sign(const std::filesystem::path& root, const json& gate) const = 0;
};

// A person approves: an OPEN gate whose approver errored (last_error set) has its approver
// retried instead, unless `override_approver` (the person decides in its place; the gate
// records override: true); otherwise approved by `by` with the file's digest now.
// `shown`: the covers the person was shown before confirming (null: not shown); the approval
// is refused when the content differs from them or from what the gate covered when it
// opened (then the gate shows the new content: refresh_covers). `signer`: the approval is
// signed in the same write when the project wants it; a signature that cannot be made is a
// warning in the messages (the approval is recorded, and does not count where one is required).
GateRun approve_gate(const World& w, const std::filesystem::path& root, const Config& cfg, const std::string& gate_id,
                     const std::string& by, ApproverPort* port, bool override_approver = false,
                     const json& shown = nullptr, const Authorize& authorize = {},
                     const ApprovalSigner* signer = nullptr);
GateRun reject_gate(const World& w, const std::filesystem::path& root, const std::string& gate_id,
                    const std::string& by, const std::string& feedback, const Authorize& authorize = {});
// The approval of (type, plan_path) no longer counts (a covered file or config key changed
// since: approvals.h, Stale): its gate opens again (reopen_if_stale) in one locked write, its
// events in the audit log, then the new gate's approver runs as on a request. Nothing
// reopened (the approval still counts, was never given, or another gate is open: error):
// GateRun::gate is null. An approver that could not run is a Warning message, not an error.
GateRun reopen_stale_gate(const World& w, const std::filesystem::path& root, const Config& cfg, GateType type,
                          const std::string& plan_path, const Now& now, const std::vector<std::string>& files,
                          ApproverPort* port);

}  // namespace yolo::gates
