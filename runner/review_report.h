// A rejected review, told to a person (issue 16): the plan, its verdict, the escalated
// finding ids, the top findings and the next step, instead of the review's raw JSON.
#pragma once
#include <string>
#include <vector>

#include "protocol/json.h"

namespace yolo::runner {

// lines: the JSON lines `yolo review --json` printed (plan lines and the phase summary).
// Returns the lines to print for the rejected plans (sanitized, no trailing newline),
// at most `top` findings per plan, high first. Empty when no plan line is a reject.
std::vector<std::string> rejected_plans_report(const json& lines, size_t top = 3);

// The plan files of the rejected plans (their "plan" field), in order.
std::vector<std::string> rejected_plan_paths(const json& lines);

}  // namespace yolo::runner
