// The scope fence (protocol/plan/scope_fence.h) and the checks yolo runs itself
// (protocol/plan/plan_checks.h): plain inputs, no git, no processes.
#include "protocol/plan/scope_fence.h"

#include <gtest/gtest.h>

#include "protocol/plan/plan_checks.h"
#include "protocol/review/stage1.h"
#include "test_support.h"

namespace yolo {
namespace {

using scope::glob_match;

TEST(ScopeGlob, PlainPathsMatchOnlyThemselves) {
  EXPECT_TRUE(glob_match("src/a.cc", "src/a.cc"));
  EXPECT_FALSE(glob_match("src/a.cc", "src/a.cc.orig"));
  EXPECT_FALSE(glob_match("src/a.cc", "lib/src/a.cc"));
  EXPECT_FALSE(glob_match("", ""));
}

TEST(ScopeGlob, StarStaysInOneSegmentDoubleStarSpansThem) {
  EXPECT_TRUE(glob_match("src/*.cc", "src/a.cc"));
  EXPECT_FALSE(glob_match("src/*.cc", "src/sub/a.cc"));
  EXPECT_TRUE(glob_match("src/**", "src/sub/deep/a.cc"));
  EXPECT_TRUE(glob_match("src/**/*.cc", "src/a.cc"));
  EXPECT_TRUE(glob_match("src/**/*.cc", "src/x/y/a.cc"));
  EXPECT_FALSE(glob_match("src/**/*.cc", "src/x/y/a.h"));
  EXPECT_TRUE(glob_match("**/a.cc", "a.cc"));
  EXPECT_TRUE(glob_match("**/a.cc", "x/y/a.cc"));
  EXPECT_TRUE(glob_match("a?.txt", "ab.txt"));
  EXPECT_FALSE(glob_match("a?.txt", "a/.txt"));
  EXPECT_TRUE(glob_match("f[0-9].txt", "f7.txt"));
  EXPECT_FALSE(glob_match("f[!0-9].txt", "f7.txt"));
  EXPECT_TRUE(glob_match("f[!0-9].txt", "fx.txt"));
  EXPECT_TRUE(glob_match("f[.txt", "f[.txt"));  // no closing bracket: a literal
}

TEST(ScopeGlob, AFolderEntryCoversEverythingUnderIt) {
  EXPECT_TRUE(glob_match("docs/", "docs/a/b.md"));
  EXPECT_FALSE(glob_match("docs/", "docs"));
  EXPECT_FALSE(glob_match("docs/", "docsx/a.md"));
}

TEST(ScopeFence, ExactScopePassesWithNoFindings) {
  auto r = scope::check({"greeting/en.txt", "src/*.cc"}, {"greeting/en.txt", "src/a.cc", "./src/b.cc"}, {});
  EXPECT_TRUE(r.outside.empty());
  EXPECT_TRUE(r.untouched.empty());
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.changed, (std::vector<std::string>{"greeting/en.txt", "src/a.cc", "src/b.cc"}));
}

TEST(ScopeFence, FilesOutsideAndUntouchedPlannedFilesAreFindings) {
  scope::Options o;
  o.exempt = {".yolo-planning/phases/01-x/01-01-SUMMARY.md"};
  auto r =
      scope::check({"a.txt", "b.txt", "lib/**"}, {"a.txt", "c.txt", ".yolo-planning/phases/01-x/01-01-SUMMARY.md"}, o);
  EXPECT_EQ(r.outside, (std::vector<std::string>{"c.txt"}));
  EXPECT_EQ(r.untouched, (std::vector<std::string>{"b.txt", "lib/**"}));
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].severity, Severity::High);
  EXPECT_EQ(r.findings[0].check, "scope_fence");
  EXPECT_NE(r.findings[0].issue.find("c.txt"), std::string::npos);
  EXPECT_EQ(r.findings[0].extra["files"], json::array({"c.txt"}));
  EXPECT_NE(r.findings[1].issue.find("b.txt"), std::string::npos);
}

TEST(ScopeFence, SeveritiesAreConfigurableAndOffIsSilent) {
  scope::Options o;
  o.outside = scope::severity_setting("medium");
  o.untouched = scope::severity_setting("off");
  auto r = scope::check({"a.txt", "b.txt"}, {"a.txt", "z.txt"}, o);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].severity, Severity::Medium);
  EXPECT_EQ(r.untouched, (std::vector<std::string>{"b.txt"}));  // still reported in the record
  EXPECT_EQ(scope::severity_setting("high"), Severity::High);
  EXPECT_EQ(scope::severity_setting("low"), Severity::Low);
  EXPECT_FALSE(scope::severity_setting("bogus"));
}

TEST(ScopeFence, LongListsAreCutInTheIssueButKeptInFull) {
  std::vector<std::string> changed;
  for (int k = 0; k < 25; ++k) changed.push_back("f" + std::to_string(k));
  auto r = scope::check({}, changed, {});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NE(r.findings[0].issue.find("(15 more)"), std::string::npos);
  EXPECT_EQ(r.findings[0].extra["files"].size(), 25u);
}

TEST(ScopeFence, PlannedFilesPreferFilesModified) {
  Plan with = parse_plan(
      "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves: [x]\n"
      "files_modified: [src/*.cc, ./README.md]\n---\n### Task 1: a\n**Files:** `other.txt`\n",
      "01-01-PLAN.md");
  EXPECT_EQ(scope::planned_files(with), (std::vector<std::string>{"src/*.cc", "README.md"}));
  Plan without = parse_plan(
      "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves: [x]\n---\n"
      "### Task 1: a\n**Files:** `a.txt`, `b.txt` (new)\n### Task 2: b\n**Files:** `a.txt`\n",
      "01-01-PLAN.md");
  EXPECT_EQ(scope::planned_files(without), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST(PlanChecks, ArgvListsAndObjectsParse) {
  auto p = plan_checks::parse(json::parse(
      R"({"truths": ["x"], "checks": [["make", "test"], {"argv": ["./lint", "{worktree}"], "timeout_ms": 500, "name": "lint"}]})"));
  ASSERT_TRUE(p.errors.empty());
  ASSERT_EQ(p.checks.size(), 2u);
  EXPECT_EQ(p.checks[0].name, "make");
  EXPECT_EQ(p.checks[0].argv, (std::vector<std::string>{"make", "test"}));
  EXPECT_EQ(p.checks[0].timeout_ms, 0);
  EXPECT_EQ(p.checks[1].name, "lint");
  EXPECT_EQ(p.checks[1].timeout_ms, 500);
}

TEST(PlanChecks, ShellStringsAndBadEntriesAreErrorsNotChecks) {
  auto p = plan_checks::parse(json::parse(
      R"({"checks": ["make test && rm -rf /", [], [""], {"argv": "make"}, {"argv": ["x"], "timeout_ms": -1}, [1, 2]]})"));
  EXPECT_TRUE(p.checks.empty());
  EXPECT_EQ(p.errors.size(), 6u);
  EXPECT_NE(p.errors[0].find("must_haves.checks[0]"), std::string::npos);
  EXPECT_NE(p.errors[0].find("shell"), std::string::npos);
  EXPECT_FALSE(plan_checks::parse(json::parse(R"({"checks": "make"})")).errors.empty());
  EXPECT_TRUE(plan_checks::parse(json::parse(R"(["a list of truths"])")).checks.empty());
}

TEST(PlanChecks, FailedChecksAreHighFindingsWithTheirRecord) {
  plan_checks::Outcome ok{"t", {"true"}, true, 0, "exited with status 0", 3, ""};
  plan_checks::Outcome bad{"lint", {"lint"}, true, 2, "exited with status 2", 40, "E: bad\n"};
  plan_checks::Outcome slow{"slow", {"sleep"}, false, -1, "timed out after 100 ms", 100, ""};
  EXPECT_TRUE(ok.passed());
  EXPECT_FALSE(bad.passed());
  EXPECT_FALSE(slow.passed());
  auto f = plan_checks::findings({ok, bad, slow}, {"must_haves.checks[3]: nope"});
  ASSERT_EQ(f.size(), 3u);
  for (const auto& x : f) EXPECT_EQ(x.severity, Severity::High);
  EXPECT_NE(f[1].issue.find("lint"), std::string::npos);
  EXPECT_EQ(f[1].extra["result"]["exit"], 2);
  EXPECT_EQ(f[1].extra["result"]["output_tail"], "E: bad\n");
  EXPECT_TRUE(f[2].extra["result"]["exit"].is_null());
}

TEST(PlanChecks, Stage1RejectsAMalformedCheckAndAcceptsArgvLists) {
  const std::string head = "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves:\n  truths: [x]\n";
  auto bad =
      stage1_plan(test::real_world(),
                  parse_plan(head + "  checks:\n    - \"make test\"\n---\n### Task 1: a\n", "01-01-PLAN.md"), {});
  EXPECT_EQ(bad.verdict(), Verdict::Reject);
  bool named = false;
  for (const auto& f : bad.findings) named = named || f.issue.find("must_haves.checks[0]") != std::string::npos;
  EXPECT_TRUE(named);
  auto good =
      stage1_plan(test::real_world(),
                  parse_plan(head + "  checks:\n    - [make, test]\n---\n### Task 1: a\n", "01-01-PLAN.md"), {});
  EXPECT_EQ(good.verdict(), Verdict::Approve);
}

}  // namespace
}  // namespace yolo
