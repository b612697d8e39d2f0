#include "protocol/review/finding_rows.h"

#include <iterator>
#include <optional>

#include "protocol/base/json_field.h"

namespace yolo {

namespace {
// The first row of the highest severity present, whatever the rows are.
template <class Rows, class SeverityOf>
auto first_most_severe(const Rows& rows, SeverityOf severity_of) -> decltype(&*std::begin(rows)) {
  for (Severity sev : {Severity::High, Severity::Medium, Severity::Low})
    for (const auto& f : rows)
      if (severity_of(f) == sev) return &f;
  return nullptr;
}
}  // namespace

const json* most_severe_finding(const json& findings) {
  if (!findings.is_array()) return nullptr;
  return first_most_severe(findings, [](const json& f) -> std::optional<Severity> {
    const std::string s = json_field::str(f, "severity");  // the exact lower-case word, as written
    if (s == "high") return Severity::High;
    if (s == "medium") return Severity::Medium;
    if (s == "low") return Severity::Low;
    return std::nullopt;
  });
}

const review::ReviewerFinding* most_severe_finding(const std::vector<review::ReviewerFinding>& findings) {
  return first_most_severe(findings, [](const review::ReviewerFinding& f) { return std::optional<Severity>(f.severity); });
}

std::string finding_headline(const json& finding) {
  for (const char* k : {"title", "issue", "description"})
    if (std::string t = json_field::str(finding, k); !t.empty()) return t;
  return {};
}

std::string finding_headline(const review::ReviewerFinding& finding) {
  for (const std::string* t : {&finding.title, &finding.description})
    if (!t->empty()) return *t;
  return {};
}

}  // namespace yolo
