// Which review loops the execution state keeps (PROTOCOL.md section 5: review_loops["{id}"]).
// The state is the run's: it keeps the loops of the plans of its phase, or, before a run
// has a phase, of the phase reviewed last. Loops of other phases live in their review
// ledgers only (protocol/review_ledger.h), so the state stays the size of one phase however
// many plans are reviewed.
#pragma once
#include <optional>
#include <string>

#include "protocol/json.h"

namespace yolo::review {

// The number an id or a folder name starts with ("03-01" -> 3, "07-api" -> 7), at most 9
// digits; nullopt when it does not start with a digit.
std::optional<long long> leading_number(const std::string& s);

// Puts `entry` as state.review_loops[plan_id] when the plan (of phase `phase`, 0 when not
// known) belongs to the run; returns false, leaving `state` as it was, when it does not.
// Before a run has a phase, loops of other phases (by their ids' leading number) are dropped.
bool put_run_loop(json& state, long long phase, const std::string& plan_id, json entry);

}  // namespace yolo::review
