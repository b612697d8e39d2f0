// The SUMMARY gate: structural checks, modes, verdicts (protocol/summary/summary_gate.h).
#include "protocol/summary/summary_gate.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "summary_fixtures.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using namespace summary_fixtures;
using test::TempDir;
using test::write_file;

// ---------------------------------------------------------------- structural checks

TEST(SummaryStructural, TruthfulSummaryPasses) {
  Repo r;
  auto v = r.verify(summary_text(), SummaryMode::Structural);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
  EXPECT_TRUE(r.git.asked.empty());  // structural mode never asks git
  EXPECT_EQ(v.to_json()["cmd"], "verify-summary");
  EXPECT_EQ(v.to_json()["ok"], true);
  EXPECT_EQ(v.to_json()["verdict"], "pass");
  EXPECT_EQ(v.plan_id, "01-02");
}

TEST(SummaryStructural, EachRuleFailsPrecisely) {
  struct Case {
    std::string name, text, check, issue_part;
  };
  std::string good = summary_text();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::vector<Case> cases = {
      {"missing key", replace("title: Parser\n", ""), "frontmatter", "missing required key 'title'"},
      {"bad status", replace("status: complete", "status: done"), "status", "'done', not complete, partial or failed"},
      {"bad date", replace("2026-02-24", "24/02/2026"), "completed", "not a date"},
      {"impossible date", replace("2026-02-24", "2026-02-30"), "completed", "not a date"},
      {"no commits", replace("[abc1234]", "[]"), "commit_hashes", "at least one commit"},
      {"null commits", replace("[abc1234]", ""), "commit_hashes", "at least one commit"},
      {"incomplete", replace("tasks_completed: 2", "tasks_completed: 1"), "task_counts", "only 1 of 2"},
      {"over", replace("tasks_completed: 2", "tasks_completed: 3"), "task_counts", "more than tasks_total"},
      {"not a number", replace("tasks_total: 2", "tasks_total: two"), "task_counts", "'two', not a whole number"},
      {"no frontmatter", good.substr(good.find("## What")), "frontmatter", "no YAML frontmatter"},
      {"broken yaml", replace("title: Parser", "title: [Parser"), "frontmatter", "does not parse"},
  };
  for (const auto& c : cases) {
    Repo r;
    auto v = r.verify(c.text, SummaryMode::Structural);
    EXPECT_EQ(v.verdict(), VerifyVerdict::Fail) << c.name << "\n" << dump(v);
    auto fs = findings_of(v, c.check);
    ASSERT_FALSE(fs.empty()) << c.name << "\n" << dump(v);
    EXPECT_EQ(fs[0]->severity, Severity::High) << c.name;
    EXPECT_NE(fs[0]->issue.find(c.issue_part), std::string::npos) << c.name << ": " << fs[0]->issue;
  }
}

// Keys and sections that only describe the work (the day it was finished, the
// deviations) are warnings: the reference's own completion check accepts a SUMMARY without
// them. A wrong value is still a failure, and the claims stay strict.
TEST(SummaryStructural, DescriptiveKeysAndSectionsAreWarnings) {
  std::string good = summary_text();
  auto without = [&](std::vector<std::pair<std::string, std::string>> edits) {
    std::string t = good;
    for (const auto& [from, to] : edits) {
      auto at = t.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) t.replace(at, from.size(), to);
    }
    return t;
  };
  for (const auto& [name, text, part] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"no completed", without({{"completed: 2026-02-24\n", ""}}), "missing key 'completed'"},
           {"no deviations key", without({{"deviations: []\n", ""}}), "missing key 'deviations'"},
           {"no deviations section", without({{"## Deviations\n", "## Notes\n"}}), "'## Deviations'"}}) {
    Repo r;
    auto v = r.verify(text, SummaryMode::Structural);
    EXPECT_EQ(v.verdict(), VerifyVerdict::Warn) << name << "\n" << dump(v);
    bool found = false;
    for (const auto& f : v.findings())
      if (f.issue.find(part) != std::string::npos) {
        found = true;
        EXPECT_NE(f.severity, Severity::High) << name;
      }
    EXPECT_TRUE(found) << name << "\n" << dump(v);
  }
  // Claims stay strict: no commit_hashes, no status, no task counts.
  for (const std::string key : {"commit_hashes: [abc1234]\n", "status: complete\n", "tasks_total: 2\n"}) {
    Repo r;
    auto v = r.verify(without({{key, ""}}), SummaryMode::Structural);
    EXPECT_EQ(v.verdict(), VerifyVerdict::Fail) << key << dump(v);
  }
}

TEST(SummaryStructural, PartialMayHaveFewerTasks) {
  Repo r;
  std::string t = summary_text("", "- `src/parser.cc`\n", "[abc1234]", "tasks_completed: 1\ntasks_total: 2\n");
  t.replace(t.find("status: complete"), 16, "status: partial");
  EXPECT_EQ(r.verify(t, SummaryMode::Structural).verdict(), VerifyVerdict::Pass);
}

TEST(SummaryStructural, MissingFileAndBinaryFileAreFindings) {
  TempDir d;
  auto v = verify_summary(test::real_world(), d / "nope-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Structural,
                          nullptr);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  ASSERT_EQ(findings_of(v, "file").size(), 1u);
  EXPECT_NE(v.findings()[0].issue.find("nope-SUMMARY.md"), std::string::npos);
  write_file(d / "bin-SUMMARY.md", std::string("---\0\xff---", 8));
  auto b = verify_summary(test::real_world(), d / "bin-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Off, nullptr);
  EXPECT_EQ(b.verdict(), VerifyVerdict::Fail);
  EXPECT_NE(b.findings()[0].issue.find("binary"), std::string::npos);
}

TEST(SummaryStructural, OffModeOnlyNeedsAReadableFile) {
  Repo r;
  auto v = r.verify("no frontmatter at all\n", SummaryMode::Off);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
  EXPECT_EQ(v.to_json()["mode"], "off");
}

// ---------------------------------------------------------------- claims checks

TEST(SummaryClaims, ModeNames) {
  EXPECT_EQ(parse_summary_mode("structural"), SummaryMode::Structural);
  EXPECT_EQ(parse_summary_mode("STRICT"), std::nullopt);
  EXPECT_EQ(mode_from_config("bogus"), SummaryMode::Strict);
  EXPECT_STREQ(to_string(SummaryMode::Off), "off");
}

// ---------------------------------------------------------------- corpus

TEST(SummaryCorpus, EveryRealSummaryGetsAStructuralVerdict) {
  stdfs::path corpus = test::corpus_dir();
  std::error_code ec;
  if (!stdfs::is_directory(corpus, ec)) GTEST_SKIP() << "corpus not present: " << corpus;
  std::map<std::string, int> counts;
  int n = 0;
  for (auto it = stdfs::recursive_directory_iterator(corpus, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || !is_summary_filename(it->path().filename().string())) continue;
    ++n;
    stdfs::path root = it->path().parent_path();
    auto v = verify_summary(test::real_world(), it->path(), std::nullopt, root, SummaryMode::Structural, nullptr);
    json j = v.to_json();
    ASSERT_TRUE(j["verdict"] == "pass" || j["verdict"] == "warn" || j["verdict"] == "fail");
    EXPECT_EQ(j["ok"], v.verdict() != VerifyVerdict::Fail);
    for (const auto& f : v.findings()) EXPECT_FALSE(f.issue.empty()) << it->path();
    ++counts[to_string(v.verdict())];
  }
  EXPECT_GE(n, 200);
  std::cout << "corpus SUMMARY files: " << n << " (pass " << counts["pass"] << ", warn " << counts["warn"] << ", fail "
            << counts["fail"] << ")\n";
}

}  // namespace
}  // namespace yolo
