// The SUMMARY claims checked against git and files (protocol/summary/summary_claims.h, through
// verify_summary in strict mode).
#include "protocol/summary/summary_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "summary_fixtures.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using namespace summary_fixtures;
using test::TempDir;
using test::write_file;

TEST(SummaryClaims, TruthfulSummaryPasses) {
  Repo r;
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
  EXPECT_EQ(v.plan_path, (r.phase / "01-02-PLAN.md").string());
  EXPECT_NE(std::find(r.git.asked.begin(), r.git.asked.end(), "exists abc1234"), r.git.asked.end());
}

TEST(SummaryClaims, HostileHashesAreNeverAsked) {
  Repo r;
  auto v = r.verify(
      summary_text("", "- `src/parser.cc`\n", R"h([abc1234, "--output=/tmp/x", "HEAD; rm -rf ~", "$(touch x)"])h"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "commits_exist");
  ASSERT_EQ(fs.size(), 3u) << dump(v);
  for (const auto* f : fs) EXPECT_NE(f->issue.find("is not a commit hash"), std::string::npos);
  for (const auto& q : r.git.asked) EXPECT_TRUE(q == "exists abc1234" || q == "files abc1234") << q;
}

TEST(SummaryClaims, HostileHashesRefusedEvenWithoutRepo) {
  Repo r;
  r.git.repo = false;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n", R"(["--output=/tmp/x"])"));
  EXPECT_EQ(findings_of(v, "commits_exist").size(), 1u);
  EXPECT_EQ(findings_of(v, "git").size(), 1u);
  EXPECT_TRUE(r.git.asked.empty());
}

TEST(SummaryClaims, InventedCommit) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n", "[abc1234, feedbee]"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "commits_exist");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("commit feedbee is not a commit of this repository"), std::string::npos);
  EXPECT_EQ(fs[0]->extra["hash"], "feedbee");
}

TEST(SummaryClaims, CommitTouchingNoneOfThePlansFiles) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n", "[def5678]"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "commits_touch_plan_files");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("touch none of the 3 files the plan names"), std::string::npos) << fs[0]->issue;
}

TEST(SummaryClaims, OneMatchingCommitAmongOthersIsEnough) {
  Repo r;
  EXPECT_EQ(r.verify(summary_text("", "- `src/parser.cc`\n", "[def5678, abc1234]")).verdict(), VerifyVerdict::Pass);
}

TEST(SummaryClaims, GitErrorsFailClosed) {
  Repo r;
  r.git.fail_all = true;
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "commits_exist");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0]->issue.find("git timed out"), std::string::npos);
}

TEST(SummaryClaims, NoRepositoryFailsStrictButNotStructural) {
  Repo r;
  r.git.repo = false;
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "git");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0]->suggested_fix.find("summary_checks: structural"), std::string::npos);
  EXPECT_EQ(r.verify(summary_text(), SummaryMode::Structural).verdict(), VerifyVerdict::Pass);
}

TEST(SummaryClaims, MissingListedFile) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n- `src/ghost.cc` (new)\n- `src/old.cc` (deleted)\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "files_exist");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("'src/ghost.cc' is listed under '## Files Modified' (line 18) but does not exist"),
            std::string::npos)
      << fs[0]->issue;
}

TEST(SummaryClaims, DeletedFileThatStillExistsIsAWarning) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n- `src/main.cc` (deleted)\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Warn) << dump(v);
  EXPECT_EQ(findings_of(v, "files_exist").size(), 1u);
}

TEST(SummaryClaims, EscapingPathsAreRefusedNotRead) {
  Repo r;
  TempDir outside;
  write_file(outside / "secret.txt", "x");
  stdfs::create_directory_symlink(outside.path(), r.dir / "link");
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n- `../secret.txt`\n- `/etc/passwd`\n- `link/secret.txt`\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "files_exist");
  ASSERT_EQ(fs.size(), 3u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("escapes the project root"), std::string::npos);
  EXPECT_NE(fs[2]->issue.find("symbolic link"), std::string::npos);
}

TEST(SummaryClaims, MissingArtifact) {
  Repo r;
  stdfs::remove(r.dir / "src/parser.cc");
  auto v = r.verify(summary_text("", "- `src/main.cc`\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "artifacts");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("artifact 'src/parser.cc' named by the plan's must_haves does not exist"),
            std::string::npos);
}

TEST(SummaryClaims, ArtifactWithoutItsContainsText) {
  Repo r;
  write_file(r.dir / "src/parser.cc", "// TODO\n");
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "artifacts");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_EQ(fs[0]->issue, "artifact 'src/parser.cc' does not contain 'parse_all'");
}

TEST(SummaryClaims, BrokenKeyLinkIsOnlyAWarning) {
  Repo r;
  write_file(r.dir / "src/main.cc", "int main() { return 0; }\n");
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Warn) << dump(v);
  auto fs = findings_of(v, "key_links");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0]->issue.find("'src/main.cc' does not mention 'src/parser.h'"), std::string::npos);
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(exit_code(v.verdict()), 2);
}

TEST(SummaryClaims, WrongTaskCount) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n", "[abc1234]", "tasks_completed: 3\ntasks_total: 3\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  auto fs = findings_of(v, "plan_task_count");
  ASSERT_FALSE(fs.empty()) << dump(v);
  EXPECT_NE(fs[0]->issue.find("tasks_total is 3 but the plan"), std::string::npos);
  EXPECT_NE(fs[0]->issue.find("has 2 tasks"), std::string::npos);
}

TEST(SummaryClaims, SummaryOfAnotherPlan) {
  Repo r;
  std::string t = summary_text();
  t.replace(t.find("plan: 02"), 8, "plan: 07");
  write_file(r.phase / "07-SUMMARY.md", t);
  auto v = verify_summary(test::real_world(), r.phase / "07-SUMMARY.md", r.phase / "01-02-PLAN.md", r.dir.path(),
                          SummaryMode::Strict, &r.git);
  auto fs = findings_of(v, "plan");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("reports on plan 01-07"), std::string::npos);
}

TEST(SummaryClaims, PlanFoundByIdWhenNotBeside) {
  Repo r;
  write_file(r.phase / "SUMMARY-for-02.md", "");  // not a summary name: ignored
  std::string t = summary_text();
  write_file(r.phase / "02-SUMMARY.md", t);  // sibling 02-PLAN.md does not exist
  auto v = verify_summary(test::real_world(), r.phase / "02-SUMMARY.md", std::nullopt, r.dir.path(),
                          SummaryMode::Strict, &r.git);
  EXPECT_EQ(v.plan_path, (r.phase / "01-02-PLAN.md").string());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
}

TEST(SummaryClaims, NoPlanFailsStrict) {
  TempDir d;
  FakeGit git;
  git.commits["abc1234"] = {"x"};
  write_file(d / "01-SUMMARY.md", summary_text("", "- `x.cc`\n"));
  write_file(d / "x.cc", "");
  auto v = verify_summary(test::real_world(), d / "01-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Strict, &git);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  ASSERT_EQ(findings_of(v, "plan").size(), 1u) << dump(v);
  auto missing =
      verify_summary(test::real_world(), d / "01-SUMMARY.md", d / "nope-PLAN.md", d.path(), SummaryMode::Strict, &git);
  ASSERT_EQ(findings_of(missing, "plan").size(), 1u);
  EXPECT_NE(findings_of(missing, "plan")[0]->issue.find("nope-PLAN.md"), std::string::npos);
}

}  // namespace
}  // namespace yolo
