#include "protocol/findings/findings.h"

#include "protocol/base/text.h"

namespace yolo {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Approve:
      return "approve";
    case Verdict::Conditional:
      return "conditional";
    case Verdict::Reject:
      return "reject";
  }
  return "reject";
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::High:
      return "high";
    case Severity::Medium:
      return "medium";
    case Severity::Low:
      return "low";
  }
  return "high";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  if (s == "approve") return Verdict::Approve;
  if (s == "conditional") return Verdict::Conditional;
  if (s == "reject") return Verdict::Reject;
  return std::nullopt;
}

std::optional<Severity> parse_severity(std::string_view s) {
  std::string l = text::to_lower(text::trim(s));
  if (l == "high" || l == "critical") return Severity::High;
  if (l == "medium") return Severity::Medium;
  if (l == "low") return Severity::Low;
  return std::nullopt;
}

size_t count_severity(const json& findings, Severity s) {
  if (!findings.is_array()) return 0;
  size_t n = 0;
  for (const auto& f : findings) {
    if (!f.is_object() || !f.contains("severity") || !f["severity"].is_string()) continue;
    n += parse_severity(f["severity"].get<std::string>()) == s;
  }
  return n;
}

int exit_code(Verdict v) {
  switch (v) {
    case Verdict::Approve:
      return 0;
    case Verdict::Reject:
      return 1;
    case Verdict::Conditional:
      return 2;
  }
  return 1;
}

Verdict worst(Verdict a, Verdict b) {
  auto rank = [](Verdict v) { return v == Verdict::Reject ? 2 : v == Verdict::Conditional ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

json Finding::to_json() const {
  json j = {{"severity", yolo::to_string(severity)},
            {"check", check},
            {"issue", issue},
            {"suggested_fix", suggested_fix},
            {"auto_fixable", auto_fixable}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

const char* to_string(CheckStatus s) {
  switch (s) {
    case CheckStatus::Pass:
      return "pass";
    case CheckStatus::Warn:
      return "warn";
    case CheckStatus::Fail:
      return "fail";
  }
  return "fail";
}

Verdict StructuralReview::verdict() const {
  bool any = false;
  for (const auto& f : findings) {
    if (f.severity == Severity::High) return Verdict::Reject;
    any = true;
  }
  return any ? Verdict::Conditional : Verdict::Approve;
}

Check& StructuralReview::check(const std::string& name) {
  for (auto& c : checks)
    if (c.name == name) return c;
  checks.push_back(Check{name, CheckStatus::Pass, json::object()});
  return checks.back();
}

void StructuralReview::add(Finding f) {
  Check& c = check(f.check);
  if (f.severity == Severity::High)
    c.status = CheckStatus::Fail;
  else if (c.status == CheckStatus::Pass)
    c.status = CheckStatus::Warn;
  findings.push_back(std::move(f));
}

json StructuralReview::to_json() const {
  Verdict v = verdict();
  json checks_j = json::array();
  for (const auto& c : checks) {
    json cj = {{"name", c.name}, {"status", to_string(c.status)}};
    for (auto it = c.counts.begin(); it != c.counts.end(); ++it) cj[it.key()] = it.value();
    checks_j.push_back(std::move(cj));
  }
  json findings_j = json::array();
  for (const auto& f : findings) findings_j.push_back(f.to_json());
  json out = {{"ok", v != Verdict::Reject}, {"cmd", "review-plan"},          {"verdict", to_string(v)},
              {"plan", plan_path},          {"checks", std::move(checks_j)}, {"findings", std::move(findings_j)}};
  if (!plan_id.empty()) out["plan_id"] = plan_id;
  return out;
}

}  // namespace yolo
