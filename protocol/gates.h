// Gates and approvals (PROTOCOL.md section 6): one mechanism for the vision gate and every
// other gate_type. A gate is OPEN -> APPROVED | REJECTED; the run is RUNNING -> FROZEN (a
// gate is open) -> RUNNING (approved) | HALTED (rejected, feedback kept).
//
// The transition functions are pure: they mutate a state document (`json& state`, the
// content of .execution-state.json) and return what happened, including the events the
// caller logs (events::log_always). The run_*/request_gate/resolve_gate helpers at the end
// wrap them in state::update (locked read-modify-write) and run approvers outside the lock.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/config.h"
#include "protocol/events.h"
#include "protocol/json.h"

namespace yolo::gates {

// ---- vocabulary --------------------------------------------------------------------

// A new gate kind is added here and in the table of gates.cc (name and label), then in the
// schemas' gate_type enums (schemas/*.json).
enum class GateType { Vision, Wave, Security, ScopeChange };
std::string_view to_string(GateType t);  // "vision" | "wave" | ...
std::optional<GateType> parse_gate_type(std::string_view s);
// For people: "Vision", "Wave", "Security", "Scope change".
std::string_view label(GateType t);
// The label of a type name as stored ("Approval" for an unknown or empty one).
std::string_view label_of(std::string_view gate_type);
// "vision, wave, security or scope_change": every type, for messages.
std::string gate_type_names();

enum class GateStatus { Open, Approved, Rejected };
std::string_view to_string(GateStatus s);  // "OPEN" | "APPROVED" | "REJECTED"

// The run's state, derived from the document (never stored as its own field).
enum class RunState { Running, Frozen, Halted, Complete };
std::string_view to_string(RunState s);  // "RUNNING" | "FROZEN" | "HALTED" | "COMPLETE"
// Complete when status is complete; Halted when halted; Frozen when a gate is OPEN or the
// status is awaiting_approval; else Running (also for an empty document).
RunState run_state(const json& state);

// The gates array (empty when absent), and lookups into it. Pointers stay valid until the
// document is changed.
const json* find_gate(const json& state, const std::string& gate_id);
const json* open_gate(const json& state);  // the OPEN gate, if any (at most one)
std::vector<json> list_gates(const json& state, bool open_only = false);

// ---- events --------------------------------------------------------------------------

// An event for events::log_always: phase and correlation id from the state, data holds
// gate_id, gate_type, plan_path and the transition's details.
events::Event gate_event(const json& state, const std::string& type, const json& gate, json extra = json::object());
// Logs each event unconditionally; returns the first error (empty when all were written).
std::string log_events(const std::filesystem::path& root, const std::vector<events::Event>& evs);

// ---- outcomes ---------------------------------------------------------------------------

// What a gate step came to, typed: the runner chooses the symbol, the words around it and the
// next step to offer (CLI syntax for the terminal, tool calls over MCP); protocol/ messages
// carry none of that.
enum class Outcome {
  Paused,          // a gate is open and waits for a decision
  Cleared,         // approved: the run goes on
  Rejected,        // rejected: the run is halted, feedback kept
  Pending,         // an approver answered pending: it waits for a person
  Waiting,         // a manual approver: it waits for a person
  ApproverFailed,  // the approver could not decide (last_error): approving retries it
  Retrying,        // approve runs the failed approver again
  NotApplied,      // a verdict for a gate that was no longer open
  Warning,         // something went wrong on the side (an event not logged, an approver not run)
};
std::string_view to_string(Outcome o);  // "paused" | "cleared" | ...

struct Message {
  Outcome kind = Outcome::Warning;
  std::string text;     // one sentence for people and MCP clients (no CLI syntax)
  std::string gate_id;  // the gate it is about ("" when none)
};
// The texts of messages, in order.
std::vector<std::string> texts(const std::vector<Message>& messages);
// ---- what a gate covers ----------------------------------------------------------------
//
// A gate binds, from the moment it opens: the project (project_id), the run (the state's
// correlation_id) and `covers`, the digest of everything it governs: "file:<path>" for each
// covered file (vision: ROADMAP.md; wave: every plan of the wave; others: the requested
// file) and, for vision, "config:<key>" for every config key that decides gates, reviewers
// and executors (kGateConfigKeys). The person approves exactly that; the seal covers it; a
// later change of any of it makes the approval Stale and the gate opens again.

// approvers, review_gate, reviewer, architect, executor, summary_checks, mcp_can_approve,
// wave_approval, review_max_cycles, command_timeout_ms.
const std::vector<std::string>& gate_config_keys();

// The covers of a gate of `type` over `files` (relative to root) as they are now. A file
// that cannot be read is "absent"; an unparseable config.json is "config:config.json".
json coverage(const std::filesystem::path& root, GateType type, const std::vector<std::string>& files);
// The files a gate covers (its "file:" entries; else its plan_path).
std::vector<std::string> covered_files(const json& gate);
// One line per difference: "ROADMAP.md changed (sha256:ab… -> sha256:cd…)", "config key
// reviewer changed", "plan X added". Empty when equal.
std::vector<std::string> coverage_changes(const json& before, const json& after);
// The project's identity for approvals sealed with the local key: its canonical path.
std::string project_id(const std::filesystem::path& root);

// What approvals are checked against: the project and a way to get a gate's covers now.
// With signatures (the project commits an allowed-signers file, runner/signing.h), an
// approval counts only with a verifying SSH signature, which stands in for the local seal
// and project path (it binds the project's first commit), so it counts in any clone.
struct Now {
  std::string project;
  std::function<json(GateType, const std::vector<std::string>&)> covers;
  bool signatures_required = false;
  std::function<std::string(const json& gate)> signature_problem;  // "" when it verifies
};
// The runner registers how to tell whether a project requires signatures and how to verify
// one (ssh-keygen is a child process: not protocol's). now_of() uses them.
void use_signatures(std::function<bool(const std::filesystem::path& root)> required,
                    std::function<std::string(const std::filesystem::path& root, const json& gate)> check);
Now now_of(const std::filesystem::path& root);
// For pure callers and tests: the project "" and covers {"file:<plan_path>": digest}.
Now now_with_digest(const std::string& plan_path, const std::string& digest);

// The gates as list_gates gives them, each APPROVED one with "counts" (whether the approval
// counts now: gate_status) and, when it does not, "problem" (why): what `gates`, `status`
// and `verify` show, the same way.
std::vector<json> checked_gates(const json& state, const Now& now, bool open_only = false);

// ---- transitions (pure) ----------------------------------------------------------------

struct RequestInput {
  GateType type = GateType::Vision;
  std::string plan_path;                // as the requester gave it (relative to the project root)
  std::string reason;                   // optional
  std::optional<int> wave;              // for wave gates
  std::string now;                      // ISO-8601; now_iso8601() when empty
  std::string state_file;               // for the paused answer
  std::vector<std::string> files = {};  // more files the gate covers (wave: every plan), plan_path first anyway
  json covers = nullptr;                // coverage() when the gate opens (request_gate fills it); null: none
  std::string project = {};             // project_id()
};

struct Transition {
  std::string error;  // empty = done; else a whole sentence, the document is untouched
  bool changed = false;
  json gate;    // the gate after the transition (null when none)
  json answer;  // request: {"status":"paused","approval":{requested_at,plan_path,state_file},...}
  std::vector<events::Event> events;
  std::string message;                 // for people ("Vision gate: cleared", ...)
  Outcome outcome = Outcome::Warning;  // what message says, typed
  bool ok() const { return error.empty(); }
};

// Opens a gate: gates[] gets an OPEN gate, status becomes awaiting_approval and
// approval = {requested_at, plan_path, approved: false, gate_type, gate_id}. The same type
// and file while that gate is OPEN answers as the first request did (changed = false).
// A different gate while one is OPEN: "Cannot freeze: already frozen ...". Allowed from
// RUNNING and HALTED (a revised request after a rejection); not on a complete run.
// A correlation_id already present is kept; one is created when absent.
Transition request(json& state, const RequestInput& in);

struct ResolveInput {
  std::string gate_id;             // empty: the open gate
  std::string by;                  // approved_by / rejected by
  std::string digest;              // "sha256:..." of the gate's file now (approve); may be empty for reject
  std::string feedback;            // required for reject; optional note for approve
  std::string now;                 // ISO-8601; now_iso8601() when empty
  bool override_approver = false;  // approve: a person decides in place of a failing command approver
  json covers = nullptr;     // approve: the covers now; must equal the gate's (null: {"file:<plan_path>": digest})
  std::string project = {};  // approve: project_id(); must equal the gate's when it has one
};

// OPEN -> APPROVED: refused when in.covers differs from what the gate covered when it opened
// (the caller re-opens it with refresh_covers). Records approved_by, digest, resolved_at (and override: true when
// override_approver); the approval object (when it
// belongs to this gate) gets approved/approved_at/approved_by/digest; status back to
// running. Errors: "No pending approval to resolve" (nothing open), unknown gate id,
// a gate that is not OPEN, a missing digest or approver.
Transition approve(json& state, const ResolveInput& in);
// OPEN -> REJECTED with feedback kept; the run is halted. Same errors as approve, plus an
// empty feedback.
Transition reject(json& state, const ResolveInput& in);

// The content of an OPEN gate changed before it was approved: the gate shows the new covers
// (covers_changed_at, event gate_content_changed with the changes). changed=false when equal.
Transition refresh_covers(json& state, const std::string& gate_id, const json& covers, const std::string& now = {});

// Problems of the gates array as a whole: duplicate ids, more than one OPEN gate. Each a sentence.
std::vector<std::string> gate_list_problems(const json& state);

// An older state written by other tools may carry a pending approval object and no gates:
// adopts it as an OPEN gate so approve/reject/list see it. Returns true when it changed.
bool adopt_legacy_approval(json& state, const std::string& now = {});

// ---- resume rules ---------------------------------------------------------------------

// Resuming a run: a correlation_id already present is kept (new_correlation_id is used
// only when there is none); a missing status becomes running; awaiting_approval, halted
// and complete are left as they are. Returns the run state after.
RunState resume(json& state, const std::string& new_correlation_id);
// Sets status to running unless the run is frozen (awaiting_approval is only ever
// replaced by an approval), halted or complete; returns an error sentence then.
std::string set_running(json& state);
// Waves advance only when the approval object is set and approved and nothing is open.
bool waves_may_advance(const json& state);

// ---- approvals and digests ------------------------------------------------------------

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
                               const std::string& current_digest);
// The status of one recorded gate (any status) against now: what `gates`, `status` and
// `verify` show. Approved only for a sealed, bound, current approval.
ApprovalStatus gate_status(const json& state, const json& gate, const Now& now);

// When the approval of (type, plan_path) is Stale, opens the gate again (a new OPEN gate
// whose reason says why, status awaiting_approval, approval.approved false) and returns
// the approval_invalidated + gate_frozen events. changed=false when it still counts or was
// never approved. When another gate is open, error says so and nothing changes.
Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const Now& now,
                           const std::vector<std::string>& files = {}, const std::string& now_time = {});
Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const std::string& current_digest,
                           const std::string& now = {});

// "sha256:..." of the gate's file (plan_path relative to root, or absolute inside root).
// Empty with err set when it cannot be read or lies outside the project.
std::string file_digest(const std::filesystem::path& root, const std::string& plan_path, std::string& err);
// plan_path as it is stored: relative to root, normalised; err when outside the project.
std::string normalize_plan_path(const std::filesystem::path& root, const std::string& plan_path, std::string& err);

// ---- approvers ----------------------------------------------------------------------------

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
// covers/project: as in ResolveInput (what the gate covers now).
Transition apply_verdict(json& state, const std::string& gate_id, const ApproverVerdict& v, const std::string& by,
                         const std::string& digest, const std::string& now = {}, const json& covers = nullptr,
                         const std::string& project = {});

// ---- the whole thing against a project (locks via state::update) -------------------------

struct GateRun {
  std::string error;                  // the request/resolution failed (nothing or part applied)
  json answer;                        // request: the paused answer
  json gate;                          // the gate as it ended
  json state;                         // the state document after
  std::vector<events::Event> events;  // already logged when logged == true
  std::vector<Message> messages;      // for people, in order, each with its kind
  bool ok() const { return error.empty(); }
};

// request + run the gate's approver at once (manual: stays pending; skip: approved by
// "skip"; command: its verdict). Idempotent requests do not run the approver again.
// Events are logged (events::log_always). port may be null when no command is configured.
GateRun request_gate(const std::filesystem::path& root, const Config& cfg, RequestInput in, ApproverPort* port);
// Runs (or re-runs) the approver of an OPEN gate and records its verdict.
GateRun run_approver(const std::filesystem::path& root, const Config& cfg, const std::string& gate_id,
                     ApproverPort* port);
// A person approves: an OPEN gate whose approver errored (last_error set) has its approver
// retried instead, unless `override_approver` (the person decides in its place; the gate
// records override: true); otherwise approved by `by` with the file's digest now.
// `shown`: the covers the person was shown before confirming (null: not shown); the approval
// is refused when the content differs from them or from what the gate covered when it
// opened (then the gate shows the new content: refresh_covers).
GateRun approve_gate(const std::filesystem::path& root, const Config& cfg, const std::string& gate_id,
                     const std::string& by, ApproverPort* port, bool override_approver = false,
                     const json& shown = nullptr);
GateRun reject_gate(const std::filesystem::path& root, const std::string& gate_id, const std::string& by,
                    const std::string& feedback);

}  // namespace yolo::gates
