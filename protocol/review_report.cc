#include "protocol/review_report.h"

#include <algorithm>

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

namespace {
using json_field::str;
int rank(const std::string& severity) { return severity == "high" ? 0 : severity == "medium" ? 1 : 2; }
bool is_reject(const json& l) { return l.is_object() && str(l, "type") == "plan" && str(l, "verdict") == "reject"; }
}  // namespace

std::vector<RejectedPlan> rejected_plans(const json& lines, size_t top) {
  std::vector<RejectedPlan> out;
  if (!lines.is_array()) return out;
  for (const auto& l : lines) {
    if (!is_reject(l)) continue;
    RejectedPlan r;
    r.plan_id = str(l, "plan_id");
    r.plan = str(l, "plan");
    r.source = str(l, "source");
    r.stop_reason = str(l, "stop_reason");
    if (l.contains("cycles") && l["cycles"].is_number_integer() && l["cycles"].get<long long>() > 0)
      r.cycles = l["cycles"].get<size_t>();
    if (auto esc = l.find("escalated"); esc != l.end() && esc->is_array())
      for (const auto& e : *esc)
        if (e.is_string()) r.escalated.push_back(e.get<std::string>());
    std::vector<json> fs;
    for (const char* key : {"findings", "accumulated_findings"}) {
      if (auto f = l.find(key); f != l.end() && f->is_array() && !f->empty()) {
        for (const auto& x : *f)
          if (x.is_object()) fs.push_back(x);
        break;
      }
    }
    if (fs.empty())
      if (auto s1 = l.find("stage1"); s1 != l.end() && s1->is_object())
        if (auto f = s1->find("findings"); f != s1->end() && f->is_array())
          for (const auto& x : *f)
            if (x.is_object()) fs.push_back(x);
    std::stable_sort(fs.begin(), fs.end(),
                     [](const json& a, const json& b) { return rank(str(a, "severity")) < rank(str(b, "severity")); });
    r.more = fs.size() > top ? fs.size() - top : 0;
    if (fs.size() > top) fs.resize(top);
    r.top_findings = std::move(fs);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> rejected_plan_paths(const json& lines) {
  std::vector<std::string> out;
  if (!lines.is_array()) return out;
  for (const auto& l : lines)
    if (is_reject(l) && !str(l, "plan").empty()) out.push_back(str(l, "plan"));
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
