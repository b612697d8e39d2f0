// The one reader of `yolo review --json` output across the process boundary.
#include "protocol/review_report.h"

#include <gtest/gtest.h>

namespace yolo::review {
namespace {

TEST(ReviewReport, ReadsPlanLinesAndTellsReviewsFromSkipsAndTheSummary) {
  std::string out =
      R"({"cmd":"review","type":"plan","plan_id":"01-01","verdict":"approve","source":"reviewer","cycles":1})"
      "\n"
      "  ⚠ a line for people\n"
      R"({"cmd":"review","type":"plan","plan_id":"01-02","verdict":"reject","source":"unchanged","skipped":true})"
      "\r\n"
      "{not json\n"
      R"({"cmd":"review","type":"phase_summary","verdict":"reject","halted":true})"
      "\n";
  auto r = parse_review_output(out);
  ASSERT_EQ(r.lines.size(), 3u);
  auto reviews = r.reviews();
  ASSERT_EQ(reviews.size(), 1u);
  EXPECT_EQ((*reviews[0])["plan_id"], "01-01");
  EXPECT_TRUE(r.to_json().is_array());
  EXPECT_EQ(r.to_json().size(), 3u);
}

TEST(ReviewReport, OnlyObjectsWithAVerdictAreReviews) {
  EXPECT_FALSE(ReviewReport::is_review(json::array()));
  EXPECT_FALSE(ReviewReport::is_review({{"plan_id", "x"}}));
  EXPECT_TRUE(ReviewReport::is_review({{"verdict", "approve"}}));
  EXPECT_TRUE(ReviewReport::is_review({{"verdict", "approve"}, {"skipped", "yes"}}));  // not a boolean skip
  EXPECT_FALSE(ReviewReport::is_review({{"verdict", "approve"}, {"skipped", true}}));
  EXPECT_TRUE(parse_review_output("").lines.empty());
  EXPECT_TRUE(parse_review_output("[1,2]\n\"s\"\n").lines.empty());
}

// What a person is told about a rejected review: the rejected plans only, their findings high
// first, at most `top` of them and how many more.
TEST(ReviewReport, RejectedPlansChooseWhatAPersonReadsFirst) {
  json lines = json::array();
  lines.push_back({{"type", "plan"}, {"plan_id", "01-01"}, {"plan", "p/01-01-PLAN.md"}, {"verdict", "approve"}});
  lines.push_back({{"type", "plan"},
                   {"plan_id", "01-02"},
                   {"plan", "p/01-02-PLAN.md"},
                   {"verdict", "reject"},
                   {"source", "reviewer"},
                   {"cycles", 2},
                   {"stop_reason", "max cycles"},
                   {"escalated", {"f-001", 7}},
                   {"findings",
                    {{{"id", "f-003"}, {"severity", "low"}},
                     {{"id", "f-002"}, {"severity", "medium"}},
                     {{"id", "f-001"}, {"severity", "high"}},
                     {{"id", "f-004"}, {"severity", "high"}},
                     "not an object"}}});
  lines.push_back({{"type", "plan"},
                   {"plan_id", "01-03"},
                   {"plan", "p/01-03-PLAN.md"},
                   {"verdict", "reject"},
                   {"stage1", {{"findings", {{{"id", "s1"}, {"severity", "high"}}}}}}});
  lines.push_back({{"type", "phase_summary"}, {"verdict", "reject"}});
  auto r = rejected_plans(lines, 3);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].plan_id, "01-02");
  EXPECT_EQ(r[0].cycles, 2u);
  EXPECT_EQ(r[0].source, "reviewer");
  EXPECT_EQ(r[0].stop_reason, "max cycles");
  EXPECT_EQ(r[0].escalated, std::vector<std::string>{"f-001"});
  ASSERT_EQ(r[0].top_findings.size(), 3u);
  EXPECT_EQ(r[0].top_findings[0]["id"], "f-001");  // high first, in their order
  EXPECT_EQ(r[0].top_findings[1]["id"], "f-004");
  EXPECT_EQ(r[0].top_findings[2]["id"], "f-002");
  EXPECT_EQ(r[0].more, 1u);
  ASSERT_EQ(r[1].top_findings.size(), 1u);  // Stage 1's findings when the reviewer gave none
  EXPECT_EQ(r[1].top_findings[0]["id"], "s1");
  EXPECT_EQ(rejected_plan_paths(lines), (std::vector<std::string>{"p/01-02-PLAN.md", "p/01-03-PLAN.md"}));
  EXPECT_TRUE(rejected_plans(json::object()).empty());
}

}  // namespace
}  // namespace yolo::review
