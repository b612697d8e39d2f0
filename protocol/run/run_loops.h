// Which review loops the execution state keeps (PROTOCOL.md section 5: review_loops["{id}"]).
// The state is the run's: it keeps the loops of the plans of its phase only. Before a run
// exists (execution::has_run), a review writes nothing into the state: a review never
// creates or marks a run. Every loop also lives in its phase's review ledger
// (protocol/review/review_ledger.h), so the state stays the size of one phase however many plans
// are reviewed.
#pragma once
#include <optional>
#include <string>

#include "protocol/base/json.h"

namespace yolo::review {

// The number an id or a folder name starts with ("03-01" -> 3, "07-api" -> 7), at most 9
// digits; nullopt when it does not start with a digit.
std::optional<long long> leading_number(const std::string& s);

// Puts `entry` as state.review_loops[plan_id] when there is a run and the plan (of phase
// `phase`, 0 when not known) belongs to it; returns false, leaving `state` as it was, when
// there is no run or the plan is another phase's.
bool put_run_loop(json& state, long long phase, const std::string& plan_id, json entry);

}  // namespace yolo::review
