// The one rule for "the most severe finding" of a review, a finding's one line (what
// `yolo status` and the watcher tell a person about a rejected plan), and counting by severity.
#include "protocol/review/finding_rows.h"
#include "protocol/findings/findings.h"

#include <gtest/gtest.h>

namespace yolo {
namespace {

TEST(MostSevereFinding, TheFirstOfTheHighestSeverityPresent) {
  const json rows = json::parse(R"([
    {"id": "f-1", "severity": "low", "title": "a typo"},
    {"id": "f-2", "severity": "medium", "title": "vague task"},
    {"id": "f-3", "severity": "high", "title": "no tests"},
    {"id": "f-4", "severity": "high", "title": "second high"}])");
  const json* top = most_severe_finding(rows);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ((*top)["id"], "f-3");
  const json no_high = json::parse(R"([{"severity": "low", "title": "l"}, {"severity": "medium", "title": "m"}])");
  ASSERT_NE(most_severe_finding(no_high), nullptr);
  EXPECT_EQ((*most_severe_finding(no_high))["title"], "m");
}

TEST(MostSevereFinding, NothingToSayIsNull) {
  EXPECT_EQ(most_severe_finding(json()), nullptr);
  EXPECT_EQ(most_severe_finding(json::array()), nullptr);
  EXPECT_EQ(most_severe_finding(json::object({{"severity", "high"}})), nullptr);  // not a list
  // Rows of any shape (a reviewer's output, a hand-edited ledger): skipped, never thrown on.
  const json odd = json::parse(R"([1, "high", {"severity": 3}, {"severity": "HIGH"}, {"severity": "critical"}])");
  EXPECT_EQ(most_severe_finding(odd), nullptr);
}

// The same rule on a review's typed rows (the watcher's, in the reviewing process).
TEST(MostSevereFinding, TypedFindingsFollowTheSameRule) {
  std::vector<review::ReviewerFinding> fs(3);
  fs[0].id = "f-1";
  fs[0].severity = Severity::Medium;
  fs[1].id = "f-2";
  fs[1].severity = Severity::High;
  fs[1].description = "no tests";
  fs[2].id = "f-3";
  fs[2].severity = Severity::High;
  const review::ReviewerFinding* top = most_severe_finding(fs);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->id, "f-2");
  EXPECT_EQ(finding_headline(*top), "no tests") << "no title: the description";
  EXPECT_EQ(most_severe_finding(std::vector<review::ReviewerFinding>{}), nullptr);
}

TEST(FindingHeadline, TitleThenIssueThenDescription) {
  EXPECT_EQ(finding_headline({{"title", "t"}, {"issue", "i"}, {"description", "d"}}), "t");
  EXPECT_EQ(finding_headline({{"issue", "i"}, {"description", "d"}}), "i");  // a Stage 1 row
  EXPECT_EQ(finding_headline({{"title", ""}, {"description", "d"}}), "d");
  EXPECT_EQ(finding_headline({{"title", 7}, {"description", "d"}}), "d");
  EXPECT_EQ(finding_headline(json::object()), "");
  EXPECT_EQ(finding_headline(json("not a row")), "");
}

TEST(CountSeverity, ReadsEachFindingsSeverityAsTheParserDoes) {
  json f = json::array({{{"severity", "high"}}, {{"severity", "Critical"}}, {{"severity", "medium"}},
                        {{"severity", 3}}, {{"check", "no severity"}}, "not an object"});
  EXPECT_EQ(count_severity(f, Severity::High), 2u);
  EXPECT_EQ(count_severity(f, Severity::Medium), 1u);
  EXPECT_EQ(count_severity(f, Severity::Low), 0u);
  EXPECT_EQ(count_severity(json::object(), Severity::High), 0u);
}

}  // namespace
}  // namespace yolo
