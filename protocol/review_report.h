// What `yolo review --json` prints, read back by the processes that run it as a child (the
// watcher, `yolo execute`'s review gate): one parser for that process boundary, so no caller
// re-reads the lines its own way. The lines are written by runner/review_gate.cc: one object
// per plan ({"type":"plan", "plan_id", "plan", "verdict", "source", "cycles", "skipped"?, ...}),
// then, for a phase, {"type":"phase_summary", ...}.
#pragma once
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

}  // namespace yolo::review
