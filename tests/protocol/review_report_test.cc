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

}  // namespace
}  // namespace yolo::review
