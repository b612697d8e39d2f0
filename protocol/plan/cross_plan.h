// The cross-plan checks of one phase (Stage 1's part that reads every sibling): a plan id
// used twice, a dependency on a plan that is not there, on itself or on a plan of a later or
// the same wave, dependency cycles, and two plans of one wave modifying the same file. Stage 1
// (stage1.h) and the phase snapshot that remembers their result (phase_snapshot.h) both run
// them from here.
#pragma once
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/plan/plan.h"

namespace yolo {

// For each plan (same order), the findings that concern it: dependencies, dependency_cycle,
// wave_order, file_overlap, duplicate_id.
std::vector<std::vector<Finding>> cross_plan_findings(const std::vector<Plan>& phase);
// The same over plans held elsewhere (no copies).
std::vector<std::vector<Finding>> cross_plan_findings(const std::vector<const Plan*>& phase);

}  // namespace yolo
