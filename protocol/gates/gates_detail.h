// Helpers shared by the gate modules (gates, gate_coverage, approvals, approver_policy,
// gate_run): not part of the protocol's interface; nothing outside those files includes this.
#pragma once
#include <string>

#include "protocol/base/json.h"
#include "protocol/base/result.h"

namespace yolo::gates {
enum class GateType;
}

namespace yolo::gates::detail {

inline constexpr const char* kOpen = "OPEN";
inline constexpr const char* kApproved = "APPROVED";
inline constexpr const char* kRejected = "REJECTED";
inline constexpr const char* kAwaiting = "awaiting_approval";

bool is_open(const json& g);
// "Vision", "Security", "Scope change" for messages (an empty type is a legacy vision gate).
std::string label(const std::string& type);
// The gates array of doc (created when absent), and a gate in it by id.
json& gates_array(json& doc);
json* find_gate_mut(json& doc, const std::string& id);
// "gate <id> (<type> for <plan_path>)".
std::string describe_gate(const json& g);
// "<type>-<n>", the first n not used.
std::string new_gate_id(const json& doc, GateType t);
bool valid_digest(const std::string& d);
// The first 12 hex digits with an ellipsis, for messages.
std::string short_digest(const std::string& d);
// Whether the state's approval object is about gate g.
bool approval_belongs_to(const json& doc, const json& g);
// The answer of a request: {"status":"paused","approval":{...},"gate_id","gate_type"}.
json paused_answer(const json& g, const std::string& state_file);
// Finds the gate a resolution is about; fails with a sentence when there is none to resolve.
Result<json*> resolve_target(json& doc, const std::string& gate_id);

}  // namespace yolo::gates::detail
