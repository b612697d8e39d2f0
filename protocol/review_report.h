// What `yolo review --json` prints, read back by the processes that run it as a child (the
// watcher, `yolo execute`'s review gate): one parser for that process boundary, so no caller
// re-reads the lines its own way. The lines are written by runner/review_gate.cc: one object
// per plan ({"type":"plan", "plan_id", "plan", "verdict", "source", "cycles", "skipped"?, ...}),
// then, for a phase, {"type":"phase_summary", ...}.
//
// What a person is told about a rejected review (rejected_plans) is chosen here too; the
// runner only draws it (runner/render.h: rejected_plans_report).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"

namespace yolo::review {

struct ReviewReport {
  std::vector<json> lines;  // every JSON object line of the output, in order
  // A plan line of a plan that was reviewed now (not one `--changed` left alone because it
  // was reviewed as it is, and not the phase summary).
  static bool is_review(const json& line);
  std::vector<const json*> reviews() const;
  json to_json() const { return lines; }  // the array, as execute reports it
};

// Reads the output of `yolo review --json`: lines that are not JSON objects (and objects too
// deep or too large to trust) are left out.
ReviewReport parse_review_output(std::string_view stdout_text);

// A plan the review rejected, as a person is told about it: what, why, what was
// escalated and the findings most worth reading first.
struct RejectedPlan {
  std::string plan_id, plan, source, stop_reason;
  size_t cycles = 0;
  std::vector<std::string> escalated;  // finding ids high in 2+ cycles, never approved
  std::vector<json> top_findings;      // at most `top`, high first, then medium, then the rest
  size_t more = 0;                     // findings left out of top_findings
};
// The rejected plan lines of `lines` (the array of a ReviewReport), in order. Their findings:
// "findings", else "accumulated_findings", else Stage 1's ("stage1"."findings").
std::vector<RejectedPlan> rejected_plans(const json& lines, size_t top = 3);
// The plan files of the rejected plans (their "plan" field), in order.
std::vector<std::string> rejected_plan_paths(const json& lines);

}  // namespace yolo::review
