// Human-readable renderings of protocol results, shared by commands.
#pragma once
#include <string>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/review/review_report.h"

namespace yolo::render {
// A Stage 1 review as a few lines with ✓ ⚠ ✗ (no trailing newline).
std::string structural_review(const StructuralReview& r);
// Its checks, each with its findings, as indented lines (each line starts with "\n").
std::string checks(const StructuralReview& r);
}  // namespace yolo::render

namespace yolo::runner {
// A rejected review told to a person instead of its raw JSON: per rejected plan
// (review::rejected_plans) its verdict, why, the escalated ids, the top findings and where to
// see the rest. Sanitized lines, no trailing newline; empty when no plan was rejected.
std::vector<std::string> rejected_plans_report(const std::vector<review::PlanReview>& rows, size_t top = 3);
using review::rejected_plan_paths;
}  // namespace yolo::runner
