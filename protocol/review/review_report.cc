#include "protocol/review/review_report.h"

#include <algorithm>

namespace yolo::review {

std::string PlanReview::source_name() const { return skipped ? "unchanged" : to_string(source); }

bool PlanReview::revised() const {
  return std::any_of(architect.begin(), architect.end(), [](const ArchitectAttempt& a) { return a.changed; });
}

namespace {
json rows_json(const std::vector<ReviewerFinding>& fs) {
  json a = json::array();
  for (const auto& f : fs) a.push_back(f.to_json());
  return a;
}
}  // namespace

json PlanReview::to_json() const {
  json j = {{"plan_id", plan_id},
            {"plan", plan},
            {"hash", hash},
            {"verdict", yolo::to_string(verdict)},
            {"ok", passed()},
            {"source", source_name()},
            {"skipped", skipped},
            {"findings", rows_json(findings)},
            {"cycles", cycles},
            {"stop_reason", stop_reason},
            {"escalated", escalated},
            {"fallback", fallback}};
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

PlanReview plan_review(const PlanLoopResult& loop, std::string plan) {
  PlanReview r;
  r.plan_id = loop.plan_id;
  r.plan = std::move(plan);
  r.hash = loop.hash;
  r.verdict = loop.verdict;
  r.cycles = loop.cycles.size();
  r.stop_reason = loop.stop_reason;
  r.architect = loop.architect;
  r.accumulated = loop.accumulated();
  if (!loop.cycles.empty()) {
    const CycleResult& c = loop.last();
    r.source = c.source;
    r.findings = c.findings;
    for (const auto& f : c.stage1.findings) r.stage1_findings.push_back(from_stage1(f));
    r.reason = c.reason;
    r.escalated = c.escalated;
    r.reviewer = c.reviewer_info;
  }
  return r;
}

std::vector<ReviewerFinding> findings_from_json(const json& rows) {
  std::vector<ReviewerFinding> out;
  if (!rows.is_array()) return out;
  for (const auto& j : rows)
    if (auto f = ReviewerFinding::from_json(j)) out.push_back(std::move(*f));
  return out;
}

std::vector<RejectedPlan> rejected_plans(const std::vector<PlanReview>& rows, size_t top) {
  std::vector<RejectedPlan> out;
  for (const auto& row : rows) {
    if (row.passed()) continue;
    RejectedPlan r;
    r.plan_id = row.plan_id;
    r.plan = row.plan;
    r.source = row.source_name();
    r.stop_reason = row.stop_reason;
    r.cycles = row.cycles;
    r.escalated = row.escalated;
    std::vector<ReviewerFinding> fs = !row.findings.empty()      ? row.findings
                                      : !row.accumulated.empty() ? row.accumulated
                                                                 : row.stage1_findings;
    // High first, then medium, then low; each in its order.
    std::stable_sort(fs.begin(), fs.end(), [](const ReviewerFinding& a, const ReviewerFinding& b) {
      return static_cast<int>(a.severity) < static_cast<int>(b.severity);
    });
    r.more = fs.size() > top ? fs.size() - top : 0;
    if (fs.size() > top) fs.resize(top);
    r.top_findings = std::move(fs);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> rejected_plan_paths(const std::vector<PlanReview>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows)
    if (!row.passed() && !row.plan.empty()) out.push_back(row.plan);
  return out;
}

}  // namespace yolo::review
