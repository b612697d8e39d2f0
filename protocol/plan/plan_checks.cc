#include "protocol/plan/plan_checks.h"

#include "protocol/findings/make_finding.h"

namespace yolo::plan_checks {
namespace {

bool argv_of(const json& j, std::vector<std::string>& out) {
  if (!j.is_array() || j.empty()) return false;
  for (const auto& a : j) {
    if (!a.is_string()) return false;
    out.push_back(a.get<std::string>());
  }
  return !out.front().empty();
}

}  // namespace

Parsed parse(const json& must_haves) {
  Parsed r;
  if (!must_haves.is_object()) return r;
  auto it = must_haves.find("checks");
  if (it == must_haves.end() || it->is_null()) return r;
  if (!it->is_array()) {
    r.errors.push_back("must_haves.checks: must be a list of argv lists or {argv, timeout_ms, name} objects");
    return r;
  }
  size_t k = 0;
  for (const auto& c : *it) {
    std::string where = "must_haves.checks[" + std::to_string(k++) + "]";
    Spec s;
    if (c.is_array()) {
      if (!argv_of(c, s.argv)) {
        r.errors.push_back(where + ": an argv list needs at least one element, all strings, the first not empty");
        continue;
      }
    } else if (c.is_object()) {
      auto a = c.find("argv");
      if (a == c.end() || !argv_of(*a, s.argv)) {
        r.errors.push_back(where + ": `argv` must be a non-empty list of strings (no shell: one element per word)");
        continue;
      }
      if (auto t = c.find("timeout_ms"); t != c.end()) {
        if (!t->is_number_integer() || t->get<long long>() <= 0) {
          r.errors.push_back(where + ": `timeout_ms` must be a positive integer");
          continue;
        }
        s.timeout_ms = t->get<long long>();
      }
      if (auto n = c.find("name"); n != c.end() && n->is_string()) s.name = n->get<std::string>();
    } else {
      r.errors.push_back(where + ": must be an argv list or {argv, timeout_ms, name}; a string would need a shell");
      continue;
    }
    if (s.name.empty()) s.name = s.argv.front();
    r.checks.push_back(std::move(s));
  }
  return r;
}

Parsed parse(const Plan& plan) {
  auto it = plan.frontmatter.find("must_haves");
  if (it == plan.frontmatter.end()) return {};
  return parse(*it);
}

json Outcome::to_json() const {
  return {{"name", name},
          {"argv", argv},
          {"passed", passed()},
          {"exit", ran ? json(exit_code) : json(nullptr)},
          {"outcome", describe},
          {"duration_ms", duration_ms},
          {"output_tail", output_tail}};
}

std::vector<Finding> findings(const std::vector<Outcome>& outcomes, const std::vector<std::string>& errors) {
  std::vector<Finding> out;
  for (const auto& e : errors)
    out.push_back(make_finding(Severity::High, "checks", e, "fix the entry in the plan's must_haves.checks"));
  for (const auto& o : outcomes) {
    if (o.passed()) continue;
    Finding f = make_finding(Severity::High, "checks", "check '" + o.name + "' failed: " + o.describe,
                             "make the check pass in the plan's worktree (its output tail is in yolo status --json)");
    f.extra["result"] = o.to_json();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace yolo::plan_checks
