// Gates (PROTOCOL.md section 6), the vocabulary and the transitions: one mechanism for the
// vision gate and every other gate_type. A gate is OPEN -> APPROVED | REJECTED; the run is
// RUNNING -> FROZEN (a gate is open) -> RUNNING (approved) | HALTED (rejected, feedback kept).
//
// The transition functions are pure: they mutate a state document (`json& state`, the
// content of .execution-state.json) and return what happened, including the events the
// caller logs (events::log_always).
//
// The other gate modules, one concept each:
//   gate_coverage.h    what a gate covers (files and config keys), digests, project identity
//   approvals.h        whether an approval counts now: status, staleness, seal, signatures
//   approver_policy.h  which approver decides a gate type, and what its answer does
//   gate_run.h         the whole thing against a project: locked, events logged, approvers run
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/state/events.h"
#include "protocol/base/json.h"
#include "protocol/run/statuses.h"

namespace yolo::seal {
struct Key;
}

namespace yolo::gates {

// ---- vocabulary --------------------------------------------------------------------

// A new gate kind is added here and in the table of gates.cc (name and label), then in the
// schemas' gate_type enums (schemas/*.json).
enum class GateType { Vision, Wave, Security, ScopeChange, Budget };
std::string_view to_string(GateType t);  // "vision" | "wave" | ...
std::optional<GateType> parse_gate_type(std::string_view s);
// For people: "Vision", "Wave", "Security", "Scope change".
std::string_view label(GateType t);
// The label of a type name as stored ("Approval" for an unknown or empty one).
std::string_view label_of(std::string_view gate_type);
// "vision, wave, security or scope_change": every type, for messages.
std::string gate_type_names();

// GateStatus, to_string(GateStatus) and status_of(gate): protocol/run/statuses.h.
inline bool has_status(const json& gate, GateStatus s) { return status_of(gate) == s; }

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

// What a gate covers is an object of "file:PATH", "config:KEY", "waves:PHASE" -> digest.
// One line per difference: "ROADMAP.md changed (sha256:ab… -> sha256:cd…)", "config key
// reviewer changed", "plan X added". Empty when equal. digests false: the names only
// ("ROADMAP.md changed"), for people; the digests are for --verbose and machines.
std::vector<std::string> coverage_changes(const json& before, const json& after, bool digests = true);

// ---- events --------------------------------------------------------------------------

// An event for events::log_always: phase and correlation id from the state, data holds
// gate_id, gate_type, plan_path and the transition's details.
events::Event gate_event(const json& state, const std::string& type, const json& gate, json extra = json::object());
// Logs each event unconditionally; the first failure, if any.
Status log_events(const World& w, const std::filesystem::path& root, const std::vector<events::Event>& evs,
                  bool to_audit = true);

// ---- outcomes ---------------------------------------------------------------------------

// What a gate step came to, typed: the runner chooses the symbol, the words around it and the
// next step to offer (CLI syntax for the terminal, tool calls over MCP); protocol/ messages
// carry none of that.
// What a gate request answers (its "status"): paused, a person decides; approved or rejected
// by the configured approver at once.
enum class Answer { Paused, Approved, Rejected };
const char* answer_name(Answer a);
// The answer's status; anything but "paused" and "approved" reads as rejected.
Answer answer_of(const json& answer);

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
// ---- transitions (pure) ----------------------------------------------------------------

struct RequestInput {
  GateType type = GateType::Vision;
  std::string plan_path;                // as the requester gave it (relative to the project root)
  std::string reason;                   // optional
  std::optional<int> wave;              // for wave gates
  std::string now;                      // ISO-8601, the World's clock; required
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
  std::string now;                 // ISO-8601, the World's clock; required
  bool override_approver = false;  // approve: a person decides in place of a failing command approver
  json covers = nullptr;     // approve: the covers now; must equal the gate's (null: {"file:<plan_path>": digest})
  std::string project = {};  // approve: project_id(); must equal the gate's when it has one
  const seal::Key* key = nullptr;  // approve: the key that seals it (World::sealing_key; null: refused)
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
Transition refresh_covers(json& state, const std::string& gate_id, const json& covers, const std::string& now);

// Problems of the gates array as a whole: duplicate ids, more than one OPEN gate. Each a sentence.
std::vector<std::string> gate_list_problems(const json& state);

// An older state written by other tools may carry a pending approval object and no gates:
// adopts it as an OPEN gate so approve/reject/list see it. Returns true when it changed.
// `now` dates the gate when the approval carries no requested_at; a copy only looked at
// may pass "" (the gate then has no date).
bool adopt_legacy_approval(json& state, const std::string& now);

// ---- resume rules ---------------------------------------------------------------------

// Resuming a run: a correlation_id already present is kept (new_correlation_id is used
// only when there is none); a missing status becomes running; awaiting_approval, halted
// and complete are left as they are. Returns the run state after.
RunState resume(json& state, const std::string& new_correlation_id);
// Sets status to running unless the run is frozen (awaiting_approval is only ever
// replaced by an approval), halted or complete; fails with a sentence then.
Status set_running(json& state);
// Waves advance only when the approval object is set and approved and nothing is open.
bool waves_may_advance(const json& state);

}  // namespace yolo::gates
