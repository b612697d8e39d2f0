// Verdicts and Stage 1 findings: the vocabulary every review step speaks.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/json.h"

namespace yolo {

enum class Verdict { Approve, Conditional, Reject };
enum class Severity { High, Medium, Low };

const char* to_string(Verdict v);
const char* to_string(Severity s);
std::optional<Verdict> parse_verdict(std::string_view s);    // exact lower-case word
std::optional<Severity> parse_severity(std::string_view s);  // case-insensitive
// How many findings of a JSON findings array (objects with a "severity") are of severity s,
// read as parse_severity reads it ("critical" is high); a finding without one counts as none.
size_t count_severity(const json& findings, Severity s);
// The review-plan exit code: 0 approve, 1 reject, 2 conditional.
int exit_code(Verdict v);
// The worse of two verdicts (reject > conditional > approve).
Verdict worst(Verdict a, Verdict b);

struct Finding {
  Severity severity = Severity::Low;
  std::string check;
  std::string issue;
  std::string suggested_fix;
  bool auto_fixable = false;
  json extra = json::object();  // optional fields (line, path, related plans)
  json to_json() const;
};

// A Stage 1 check's outcome: a high finding fails it, any other finding warns.
enum class CheckStatus { Pass, Warn, Fail };
const char* to_string(CheckStatus s);  // "pass" | "warn" | "fail"

struct Check {
  std::string name;
  CheckStatus status = CheckStatus::Pass;
  json counts = json::object();
};

// A Stage 1 result: checks, findings and the verdict they imply.
struct StructuralReview {
  std::string plan_path;
  std::string plan_id;
  std::vector<Check> checks;
  std::vector<Finding> findings;

  Verdict verdict() const;  // any high: reject; any finding: conditional; else approve
  // Adds a finding and degrades the named check's status accordingly.
  void add(Finding f);
  Check& check(const std::string& name);  // finds or appends (status pass)
  json to_json() const;                   // the review-plan output object
};

}  // namespace yolo
