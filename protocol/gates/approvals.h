// Whether an approval counts now: sealed (or SSH-signed), bound to this project and run, and
// covering exactly what the gate covers now. A later change makes it Stale and the gate opens
// again (reopen_if_stale).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/gates/gates.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::gates {

// What approvals are checked against: the project and a way to get a gate's covers now.
// With signatures (the project commits an allowed-signers file, runner/signing.h), an
// approval counts only with a verifying SSH signature, which stands in for the local seal
// and project path (it binds the project's first commit), so it counts in any clone.
struct Now {
  std::string project;
  std::function<json(GateType, const std::vector<std::string>&)> covers;
  bool signatures_required = false;
  // Ok when it verifies, else why not; project_file: whether the project's allowed_signers may be trusted.
  std::function<Status(const json& gate, bool project_file)> verify_signature;
  const seal::Key* key = nullptr;  // the key seals are checked with (null: keys, else no seal counts)
  // Else the key is asked for at each check (KeySource::checking): a key made after this
  // Now was taken (an approver's approval in the same run) is seen.
  seal::KeySource* keys = nullptr;
};
// The project at root as it is now, through the world: its files (World::disk), the key
// that checks seals (World::checking_key, never created) and the signature check
// (World::signatures).
Now now_of(const World& w, const std::filesystem::path& root);
// For pure callers and tests: the project "" and covers {"file:<plan_path>": digest}.
Now now_with_digest(const std::string& plan_path, const std::string& digest, const seal::Key& key);

// Whether the project's .yolo-planning/allowed_signers, as it is now, was pinned by a vision
// approval made under another trust root (sealed here by the person, or signed by a key of
// the person's own allowed-signers file) that covered exactly this content. Only then does
// it verify signatures: a file an agent wrote into the working tree never does.
bool project_signers_pinned(const json& state, const Now& now);

// Where the state's `approval` object (a mirror kept for other tools) disagrees with the
// gate it mirrors (its gate_id, else the latest gate of its type for its file): a missing
// gate, approved or not, who, when, which file, which digest. Each a sentence; empty when
// they agree or there is no approval object. A mirror that disagrees is never shown as fact.
std::vector<std::string> mirror_problems(const json& state);

// The gates as list_gates gives them, each APPROVED one with "counts" (whether the approval
// counts now: gate_status) and, when it does not, "problem" (why): what `gates`, `status`
// and `verify` show, the same way.
std::vector<json> checked_gates(const json& state, const Now& now, bool open_only = false);

// ---- approval status ------------------------------------------------------------------

enum class ApprovalCheck { Approved, Missing, Pending, Rejected, Stale };
struct ApprovalStatus {
  ApprovalCheck check = ApprovalCheck::Missing;
  std::string message;  // why it does not count (empty when Approved)
  json gate;            // the latest gate of that type for that file (null if none)
  bool counts() const { return check == ApprovalCheck::Approved; }
};
// Whether the latest gate of `type` for `plan_path` still counts given the file's digest
// now. An approval whose digest differs (file edited after approval) is Stale. A legacy
// approval object (no gates, approved, no digest) counts for the vision gate.
// A counting approval is sealed, bound to this project (now.project) and run (the state's
// correlation_id), and covers exactly what now.covers gives for `files` (empty: the files
// the gate covered).
ApprovalStatus approval_status(const json& state, GateType type, const std::string& plan_path, const Now& now,
                               const std::vector<std::string>& files = {});
ApprovalStatus approval_status(const json& state, GateType type, const std::string& plan_path,
                               const std::string& current_digest, const seal::Key& key);
// The status of one recorded gate (any status) against now: what `gates`, `status` and
// `verify` show. Approved only for a sealed, bound, current approval.
ApprovalStatus gate_status(const json& state, const json& gate, const Now& now);

// The project's config is a person's decision only while the vision approval of the roadmap
// (kRoadmapPath) counts: it covers config.json's keys that choose agents and approvers. Until
// then a git hook runs no configured agent (Stage 1 alone) and no agent over MCP resolves a
// gate, whatever the config says.
inline constexpr const char* kRoadmapPath = ".yolo-planning/ROADMAP.md";
ApprovalStatus config_approval(const json& state, const Now& now);

// Whether an agent over MCP may resolve `gate` (mcp_can_approve): never the vision gate; only
// with `mcp_can_approve: true` in `config` (config.json as read once, now) and a vision
// approval that counts and covered exactly that value. allowed false: `why` says why ("" when
// the config simply does not allow it).
struct McpResolution {
  bool allowed = false;
  std::string why;
};
McpResolution mcp_may_resolve(const json& state, const json& gate, const json& config, const Now& now);

// When the approval of (type, plan_path) is Stale, opens the gate again (a new OPEN gate
// whose reason says why, status awaiting_approval, approval.approved false) and returns
// the approval_invalidated + gate_frozen events. changed=false when it still counts or was
// never approved. When another gate is open, error says so and nothing changes.
// now_time (ISO-8601, the World's clock) dates the reopened gate.
Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const Now& now,
                           const std::vector<std::string>& files, const std::string& now_time);
Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const std::string& current_digest,
                           const seal::Key& key, const std::string& now);

}  // namespace yolo::gates
