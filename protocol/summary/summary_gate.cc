#include "protocol/summary/summary_gate.h"

#include <algorithm>
#include <cctype>

#include "protocol/findings/make_finding.h"
#include "protocol/summary/summary_claims.h"
#include "protocol/summary/summary_internal.h"
#include "protocol/base/text.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

using summary_detail::non_negative;

std::string quoted(const json& v) {
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  return v.dump();
}

bool valid_date(std::string_view d) {
  if (d.size() != 10 || d[4] != '-' || d[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (d[i] < '0' || d[i] > '9') return false;
  int y = std::stoi(std::string(d.substr(0, 4)));
  int m = (d[5] - '0') * 10 + (d[6] - '0');
  int day = (d[8] - '0') * 10 + (d[9] - '0');
  if (m < 1 || m > 12 || day < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int max = kDays[m - 1];
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) max = 29;
  return day <= max;
}

// ---------------------------------------------------------------- structural checks

void check_frontmatter(const Summary& s, StructuralReview& r) {
  Check& c = r.check("frontmatter");
  if (s.frontmatter_error) {
    const auto& e = *s.frontmatter_error;
    std::string where =
        e.line ? " at line " + std::to_string(e.line) + (e.column ? ", column " + std::to_string(e.column) : "") : "";
    Finding f =
        make_finding(Severity::High, "frontmatter", s.path + ": frontmatter does not parse" + where + ": " + e.message,
                     "Fix the YAML between the '---' lines");
    if (e.line) f.extra["line"] = e.line;
    r.add(std::move(f));
    return;
  }
  if (!s.has_frontmatter) {
    r.add(make_finding(Severity::High, "frontmatter",
                       s.path + ": no YAML frontmatter block (the first line must be '---')",
                       "Start the SUMMARY with a frontmatter block holding phase, plan, title, status, "
                       "tasks_completed, tasks_total, commit_hashes (and completed, deviations)"));
    return;
  }
  auto missing = s.missing_keys();
  c.counts["missing_keys"] = missing;
  for (const auto& k : missing)
    r.add(make_finding(Severity::High, "frontmatter", "missing required key '" + k + "'",
                       "Add '" + k + ":' to the frontmatter"));
  auto described = s.missing_descriptive_keys();
  if (!described.empty()) c.counts["missing_descriptive_keys"] = described;
  for (const auto& k : described)
    r.add(make_finding(Severity::Low, "frontmatter", "missing key '" + k + "' (it only describes the work: a warning)",
                       "Add '" + k + ":' to the frontmatter" +
                           std::string(k == "completed" ? " (the day the plan was finished, YYYY-MM-DD)"
                                                        : " (write 'none' when there were none)")));
}

void check_status(const Summary& s, StructuralReview& r) {
  r.check("status");
  auto it = s.frontmatter.find("status");
  if (it == s.frontmatter.end()) return;  // reported as a missing key
  if (s.status == "complete" || s.status == "partial" || s.status == "failed") return;
  std::string l = text::to_lower(text::trim(s.status));
  std::string fix = "Set 'status:' to complete, partial or failed";
  bool auto_fix = false;
  if (l == "completed" || l == "done" || l == "complete") {
    fix = "Set 'status: complete'";
    auto_fix = true;
  } else if (l == "fail" || l == "error" || l == "failed") {
    fix = "Set 'status: failed'";
    auto_fix = true;
  }
  r.add(make_finding(Severity::High, "status", "status is " + quoted(*it) + ", not complete, partial or failed", fix,
                     auto_fix));
}

void check_completed(const Summary& s, StructuralReview& r) {
  r.check("completed");
  auto it = s.frontmatter.find("completed");
  if (it == s.frontmatter.end()) return;
  if (valid_date(s.completed)) return;
  r.add(make_finding(Severity::High, "completed", "completed is " + quoted(*it) + ", not a date written YYYY-MM-DD",
                     "Set 'completed:' to the day the plan was finished, e.g. 2026-02-24"));
}

void check_commit_hashes(const Summary& s, StructuralReview& r) {
  Check& c = r.check("commit_hashes");
  auto it = s.frontmatter.find("commit_hashes");
  if (it == s.frontmatter.end()) return;
  c.counts["count"] = s.commit_hashes.size();
  if (s.commit_hashes.empty()) {
    r.add(make_finding(Severity::High, "commit_hashes",
                       "commit_hashes is " + std::string(it->is_array() ? "an empty list" : "empty") +
                           ": at least one commit is required",
                       "List the commits that implement the plan under commit_hashes"));
    return;
  }
  if (it->is_object()) {
    r.add(make_finding(Severity::High, "commit_hashes", "commit_hashes is a map, not a list of commit hashes",
                       "Write commit_hashes as a list: [abc1234, def5678]"));
  }
}

void check_task_counts(const Summary& s, StructuralReview& r) {
  Check& c = r.check("task_counts");
  const json& fm = s.frontmatter;
  bool bad = false;
  for (const char* k : {"tasks_completed", "tasks_total"}) {
    auto it = fm.find(k);
    if (it == fm.end()) continue;
    if (!non_negative(*it)) {
      bad = true;
      r.add(make_finding(Severity::High, "task_counts",
                         std::string(k) + " is " + quoted(*it) + ", not a whole number >= 0",
                         "Set '" + std::string(k) + ":' to a number"));
    }
  }
  if (bad || !s.tasks_completed || !s.tasks_total) return;
  c.counts["tasks_completed"] = *s.tasks_completed;
  c.counts["tasks_total"] = *s.tasks_total;
  if (*s.tasks_completed > *s.tasks_total) {
    r.add(make_finding(Severity::High, "task_counts",
                       "tasks_completed (" + std::to_string(*s.tasks_completed) + ") is more than tasks_total (" +
                           std::to_string(*s.tasks_total) + ")",
                       "Correct the task counts"));
  } else if (s.status == "complete" && *s.tasks_completed != *s.tasks_total) {
    r.add(make_finding(Severity::High, "task_counts",
                       "status is complete but only " + std::to_string(*s.tasks_completed) + " of " +
                           std::to_string(*s.tasks_total) + " tasks are completed",
                       "Finish the remaining tasks, or set 'status: partial'"));
  }
}

void check_sections(const Summary& s, StructuralReview& r) {
  Check& c = r.check("sections");
  json missing = json::array();
  for (const char* name : kSummarySections) {
    if (s.section(name)) continue;
    missing.push_back(name);
    bool descriptive = std::any_of(std::begin(kSummaryDescriptiveSections), std::end(kSummaryDescriptiveSections),
                                   [&](const char* d) { return std::string_view(d) == name; });
    r.add(make_finding(
        descriptive ? Severity::Low : Severity::High, "sections",
        "missing body section '## " + std::string(name) + "'" + (descriptive ? " (it only describes: a warning)" : ""),
        "Add a '## " + std::string(name) + "' section" +
            (std::string_view(name) == "Deviations" ? " (write 'None' when there were none)" : "")));
  }
  c.counts["missing"] = std::move(missing);
}

SummaryVerdict file_failure(const std::string& summary_path, SummaryMode mode, const std::string& why) {
  SummaryVerdict v;
  v.summary_path = summary_path;
  v.mode = mode;
  v.review.plan_path = summary_path;
  v.review.add(make_finding(Severity::High, "file", why, "Write the SUMMARY file the plan's executor must produce"));
  return v;
}

}  // namespace

// ---------------------------------------------------------------- public

const char* to_string(SummaryMode m) {
  switch (m) {
    case SummaryMode::Strict:
      return "strict";
    case SummaryMode::Structural:
      return "structural";
    case SummaryMode::Off:
      return "off";
  }
  return "strict";
}

std::optional<SummaryMode> parse_summary_mode(std::string_view s) {
  if (s == "strict") return SummaryMode::Strict;
  if (s == "structural") return SummaryMode::Structural;
  if (s == "off") return SummaryMode::Off;
  return std::nullopt;
}

SummaryMode mode_from_config(std::string_view s) { return parse_summary_mode(s).value_or(SummaryMode::Strict); }

const char* to_string(VerifyVerdict v) {
  switch (v) {
    case VerifyVerdict::Pass:
      return "pass";
    case VerifyVerdict::Warn:
      return "warn";
    case VerifyVerdict::Fail:
      return "fail";
  }
  return "fail";
}

int exit_code(VerifyVerdict v) {
  switch (v) {
    case VerifyVerdict::Pass:
      return 0;
    case VerifyVerdict::Fail:
      return 1;
    case VerifyVerdict::Warn:
      return 2;
  }
  return 1;
}

VerifyVerdict SummaryVerdict::verdict() const {
  switch (review.verdict()) {
    case Verdict::Approve:
      return VerifyVerdict::Pass;
    case Verdict::Conditional:
      return VerifyVerdict::Warn;
    case Verdict::Reject:
      return VerifyVerdict::Fail;
  }
  return VerifyVerdict::Fail;
}

json SummaryVerdict::to_json() const {
  json j = review.to_json();
  VerifyVerdict v = verdict();
  json out = {{"ok", v != VerifyVerdict::Fail}, {"cmd", "verify-summary"},
              {"verdict", to_string(v)},        {"mode", to_string(mode)},
              {"summary", summary_path},        {"plan", plan_path.empty() ? json(nullptr) : json(plan_path)}};
  if (!plan_id.empty()) out["plan_id"] = plan_id;
  out["checks"] = std::move(j["checks"]);
  out["findings"] = std::move(j["findings"]);
  return out;
}

SummaryVerdict verify_summary(const World& w, const Summary& s, const Plan* plan, const std::filesystem::path& root,
                              SummaryMode mode, GitPort* git) {
  SummaryVerdict v;
  v.summary_path = s.path;
  v.mode = mode;
  v.review.plan_path = s.path;
  if (!s.phase.empty() || !s.plan.empty())
    v.plan_id = s.id();
  else if (plan)
    v.plan_id = plan->id();
  v.review.plan_id = v.plan_id;
  v.review.check("file");
  if (mode == SummaryMode::Off) return v;

  StructuralReview& r = v.review;
  check_frontmatter(s, r);
  if (s.has_frontmatter && !s.frontmatter_error) {
    check_status(s, r);
    check_completed(s, r);
    check_commit_hashes(s, r);
    check_task_counts(s, r);
  }
  check_sections(s, r);
  if (mode == SummaryMode::Structural) return v;

  if (plan) v.plan_path = plan->path;
  check_summary_claims(w, s, plan, root, git, r);
  return v;
}

SummaryVerdict verify_summary(const World& w, const std::filesystem::path& summary_path,
                              const std::optional<std::filesystem::path>& plan_path, const std::filesystem::path& root,
                              SummaryMode mode, GitPort* git) {
  auto load = load_summary(w, summary_path);
  if (!load.summary) {
    return file_failure(summary_path.string(), mode,
                        load.not_found ? "SUMMARY not found: " + summary_path.string() : load.error);
  }
  if (mode != SummaryMode::Strict) return verify_summary(w, *load.summary, nullptr, root, mode, git);

  std::optional<stdfs::path> pp = plan_path ? plan_path : find_plan_for_summary(w, summary_path, &*load.summary);
  std::optional<Plan> plan;
  std::string plan_error;
  if (pp) {
    auto pl = load_plan(w, *pp);
    if (pl.plan)
      plan = std::move(pl.plan);
    else
      plan_error = pl.not_found ? "plan not found: " + pp->string() : pl.error;
  }
  SummaryVerdict v = verify_summary(w, *load.summary, plan ? &*plan : nullptr, root, mode, git);
  if (!plan_error.empty()) {
    // Replace the generic "no plan found" with the reason this plan could not be read.
    for (auto& f : v.review.findings)
      if (f.check == "plan" && f.severity == Severity::High && !plan) f.issue = plan_error;
    v.plan_path = pp->string();
  }
  return v;
}

}  // namespace yolo
