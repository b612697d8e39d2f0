#include "protocol/review_report.h"

#include "protocol/json_field.h"
#include "protocol/text.h"

namespace yolo::review {

bool ReviewReport::is_review(const json& line) {
  if (!line.is_object() || !line.contains("verdict")) return false;
  if (json_field::str(line, "type") == "phase_summary") return false;
  auto sk = line.find("skipped");
  return !(sk != line.end() && sk->is_boolean() && sk->get<bool>());
}

std::vector<const json*> ReviewReport::reviews() const {
  std::vector<const json*> out;
  for (const auto& l : lines)
    if (is_review(l)) out.push_back(&l);
  return out;
}

ReviewReport parse_review_output(std::string_view stdout_text) {
  ReviewReport r;
  for (auto line : text::lines(stdout_text)) {
    line = text::trim(line);
    if (line.empty() || line.front() != '{') continue;
    JsonParse j = parse_json_bounded(line);
    if (j.ok() && j.doc.is_object()) r.lines.push_back(std::move(j.doc));
  }
  return r;
}

}  // namespace yolo::review
