// A review pass's typed rows: what the callers in the review's own process read, and what a
// person is told about a rejected plan.
#include "protocol/review/review_report.h"

#include <gtest/gtest.h>

namespace yolo::review {
namespace {

ReviewerFinding finding(const std::string& id, Severity s) {
  ReviewerFinding f;
  f.id = id;
  f.severity = s;
  f.title = "t " + id;
  return f;
}

// The row of a loop that ran: the last cycle decides source, findings and reason; the
// architect's revisions and the escalated ids ride along.
TEST(ReviewReport, ARowIsTheLoopsLastCycle) {
  PlanLoopResult loop;
  loop.plan_id = "01-02";
  loop.hash = "abc";
  loop.verdict = Verdict::Reject;
  loop.stop_reason = "max cycles";
  CycleResult c1;
  c1.source = Source::Reviewer;
  c1.findings = {finding("f-001", Severity::High)};
  CycleResult c2 = c1;
  c2.cycle = 2;
  c2.escalated = {"f-001"};
  c2.findings.push_back(finding("f-002", Severity::Low));
  loop.cycles = {c1, c2};
  loop.architect.push_back(ArchitectAttempt{1, 1, true, true, "", json::object()});
  PlanReview r = plan_review(loop, "p/01-02-PLAN.md");
  EXPECT_EQ(r.plan, "p/01-02-PLAN.md");
  EXPECT_EQ(r.cycles, 2u);
  EXPECT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.accumulated.size(), 2u);
  EXPECT_EQ(r.escalated, std::vector<std::string>{"f-001"});
  EXPECT_TRUE(r.revised());
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.source_name(), "reviewer");
  json j = r.to_json();
  EXPECT_EQ(j["verdict"], "reject");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["cycles"], 2);
  EXPECT_EQ(j["findings"].size(), 2u);
  EXPECT_FALSE(j.contains("reason"));
  r.skipped = true;
  EXPECT_EQ(r.source_name(), "unchanged");
}

TEST(ReviewReport, LedgerFindingsAreReadAndOddRowsLeftOut) {
  json rows = json::array({{{"id", "f-1"}, {"severity", "high"}, {"title", "x"}},
                           {{"id", "f-2"}, {"severity", "urgent"}},
                           "not a row"});
  auto fs = findings_from_json(rows);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "f-1");
  EXPECT_TRUE(findings_from_json(json::object()).empty());
}

// What a person is told about a rejected review: the rejected plans only, their findings high
// first, at most `top` of them and how many more.
TEST(ReviewReport, RejectedPlansChooseWhatAPersonReadsFirst) {
  std::vector<PlanReview> rows(3);
  rows[0].plan_id = "01-01";
  rows[0].plan = "p/01-01-PLAN.md";
  rows[0].verdict = Verdict::Approve;
  rows[1].plan_id = "01-02";
  rows[1].plan = "p/01-02-PLAN.md";
  rows[1].source = Source::Reviewer;
  rows[1].cycles = 2;
  rows[1].stop_reason = "max cycles";
  rows[1].escalated = {"f-001"};
  rows[1].findings = {finding("f-003", Severity::Low), finding("f-002", Severity::Medium),
                      finding("f-001", Severity::High), finding("f-004", Severity::High)};
  rows[2].plan_id = "01-03";
  rows[2].plan = "p/01-03-PLAN.md";
  rows[2].source = Source::Stage1Reject;
  rows[2].stage1_findings = {finding("s1", Severity::High)};
  auto r = rejected_plans(rows, 3);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].plan_id, "01-02");
  EXPECT_EQ(r[0].cycles, 2u);
  EXPECT_EQ(r[0].source, "reviewer");
  EXPECT_EQ(r[0].stop_reason, "max cycles");
  EXPECT_EQ(r[0].escalated, std::vector<std::string>{"f-001"});
  ASSERT_EQ(r[0].top_findings.size(), 3u);
  EXPECT_EQ(r[0].top_findings[0].id, "f-001");  // high first, in their order
  EXPECT_EQ(r[0].top_findings[1].id, "f-004");
  EXPECT_EQ(r[0].top_findings[2].id, "f-002");
  EXPECT_EQ(r[0].more, 1u);
  ASSERT_EQ(r[1].top_findings.size(), 1u);  // Stage 1's findings when the reviewer gave none
  EXPECT_EQ(r[1].top_findings[0].id, "s1");
  EXPECT_EQ(r[1].source, "stage1_reject");
  EXPECT_EQ(rejected_plan_paths(rows), (std::vector<std::string>{"p/01-02-PLAN.md", "p/01-03-PLAN.md"}));
  EXPECT_TRUE(rejected_plans({}).empty());
}

}  // namespace
}  // namespace yolo::review
