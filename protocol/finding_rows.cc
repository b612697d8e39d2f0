#include "protocol/finding_rows.h"

#include "protocol/json_field.h"

namespace yolo {

const json* most_severe_finding(const json& findings) {
  if (!findings.is_array()) return nullptr;
  for (const char* sev : {"high", "medium", "low"})
    for (const auto& f : findings)
      if (json_field::str(f, "severity") == sev) return &f;
  return nullptr;
}

std::string finding_headline(const json& finding) {
  for (const char* k : {"title", "issue", "description"})
    if (std::string t = json_field::str(finding, k); !t.empty()) return t;
  return {};
}

}  // namespace yolo
