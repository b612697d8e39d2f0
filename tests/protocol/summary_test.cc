// A SUMMARY.md parsed, named and located (protocol/summary/summary.h).
#include "protocol/summary/summary.h"
#include "protocol/summary/summary_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "summary_fixtures.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using namespace summary_fixtures;
using test::TempDir;
using test::write_file;

// ---------------------------------------------------------------- parsing

TEST(SummaryParse, FrontmatterAndSections) {
  Summary s = parse_summary(summary_text(), "S.md");
  EXPECT_TRUE(s.has_frontmatter);
  EXPECT_EQ(s.phase, "01");
  EXPECT_EQ(s.plan, "02");
  EXPECT_EQ(s.status, "complete");
  EXPECT_EQ(s.completed, "2026-02-24");
  EXPECT_EQ(s.tasks_completed, 2);
  EXPECT_EQ(s.tasks_total, 2);
  EXPECT_EQ(s.commit_hashes, std::vector<std::string>{"abc1234"});
  EXPECT_TRUE(s.missing_keys().empty());
  ASSERT_EQ(s.sections.size(), 3u);
  EXPECT_NE(s.section("what was built"), nullptr);
  EXPECT_EQ(s.section("Summary"), nullptr);
  ASSERT_EQ(s.files_modified.size(), 2u);
  EXPECT_EQ(s.files_modified[0].path, "src/parser.cc");
  EXPECT_EQ(s.files_modified[0].action, "(new)");
  EXPECT_EQ(s.files_modified[0].line, 17);
}

TEST(SummaryParse, NumericHashesKeepTheirText) {
  Summary s = parse_summary("---\ncommit_hashes:\n  - 1234567\n  - 0123456\n  - abcdef0\n---\n", "S.md");
  EXPECT_EQ(s.commit_hashes, (std::vector<std::string>{"1234567", "0123456", "abcdef0"}));
  Summary one = parse_summary("---\ncommit_hashes: abc1234\n---\n", "S.md");
  EXPECT_EQ(one.commit_hashes, std::vector<std::string>{"abc1234"});
}

TEST(SummaryParse, FilesModifiedFormsAndDeletions) {
  Summary s = parse_summary(R"(---
title: x
---
## Files Modified (9)
- `a/one.rs` (new, 116 lines)
- a/two.rs -- replaced calls
* `a/three.rs` — Removed two comments referencing `x.sh`
- `a/four.rs` — removed unused `Ordering` import
- .claude/market.json -- deleted: duplicate
- `a/five.md` (deleted)
- `a/six.md` — deleted (redirect stub)
- **Deleted:** `a/seven.rs`
- `a/eight.rs:12-30` (edited)
1. `a/nine.rs` (numbered)
- Rust modules:
  - `a/nested.rs` (indented)
- None
### Removed
- `a/gone.rs`
## Deviations
- `not/a/file.rs` mentioned here
)",
                            "S.md");
  std::map<std::string, bool> got;
  for (const auto& e : s.files_modified) got[e.path] = e.deleted;
  std::map<std::string, bool> want = {{"a/one.rs", false},  {"a/two.rs", false},           {"a/three.rs", false},
                                      {"a/four.rs", false}, {".claude/market.json", true}, {"a/five.md", true},
                                      {"a/six.md", true},   {"a/seven.rs", true},          {"a/eight.rs", false},
                                      {"a/nine.rs", false}, {"a/nested.rs", false},        {"a/gone.rs", true}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(s.files_modified_ignored, 2);  // "Rust modules:" and "None"
}

TEST(SummaryParse, TableRows) {
  Summary s = parse_summary(
      "## Files Modified\n| File | Change |\n|---|---|\n| `src/a.cc` | new |\n| src/b.cc | deleted |\n", "S.md");
  ASSERT_EQ(s.files_modified.size(), 2u);
  EXPECT_EQ(s.files_modified[0].path, "src/a.cc");
  EXPECT_FALSE(s.files_modified[0].deleted);
  EXPECT_EQ(s.files_modified[1].path, "src/b.cc");
  EXPECT_TRUE(s.files_modified[1].deleted);
}

TEST(SummaryParse, HeadingsInCodeFencesAreNotSections) {
  Summary s = parse_summary("## What Was Built\n```\n## Deviations\n```\n", "S.md");
  EXPECT_EQ(s.sections.size(), 1u);
  EXPECT_EQ(s.section("Deviations"), nullptr);
}

TEST(SummaryParse, SiblingPlanNames) {
  EXPECT_EQ(sibling_plan_path("p/01-03-SUMMARY.md"), stdfs::path("p/01-03-PLAN.md"));
  EXPECT_EQ(sibling_plan_path("p/03-SUMMARY.md"), stdfs::path("p/03-PLAN.md"));
  EXPECT_EQ(sibling_plan_path("SUMMARY.md"), stdfs::path("PLAN.md"));
  EXPECT_EQ(sibling_plan_path("p/notes.md"), std::nullopt);
}

TEST(SummaryParse, HashFormat) {
  EXPECT_TRUE(is_commit_hash("abc1"));
  EXPECT_TRUE(is_commit_hash("ABCDEF0123456789abcdef0123456789abcdef01"));
  EXPECT_FALSE(is_commit_hash("abc"));
  EXPECT_FALSE(is_commit_hash(std::string(41, 'a')));
  EXPECT_FALSE(is_commit_hash("--output=/tmp/x"));
  EXPECT_FALSE(is_commit_hash("HEAD; rm -rf ~"));
  EXPECT_FALSE(is_commit_hash("abc1234 "));
  EXPECT_FALSE(is_commit_hash("main~1"));
  EXPECT_FALSE(is_commit_hash("g123456"));
}

TEST(SummaryParse, GarbageNeverCrashes) {
  std::vector<std::string> pieces = {"## Files Modified\n",
                                     "- `",
                                     "- **",
                                     "**:",
                                     "| |",
                                     "||\n",
                                     "- :",
                                     "- a:",
                                     "```\n",
                                     "## \n",
                                     "#\n",
                                     "- (deleted)\n",
                                     "- `a/b` (deleted",
                                     "\r\n",
                                     "---\n",
                                     "tasks_total: 99999999999999999999\n",
                                     "commit_hashes: {a: 1}\n",
                                     "- **Deleted:**\n",
                                     "1. \n",
                                     "1.x\n",
                                     "\xe2\x80\x94",
                                     "- ../../x\n"};
  unsigned seed = 12345;
  for (int round = 0; round < 400; ++round) {
    std::string doc;
    int n = static_cast<int>(seed % 40);
    for (int i = 0; i < n; ++i) {
      seed = seed * 1103515245u + 12345u;
      doc += pieces[(seed >> 8) % pieces.size()];
    }
    Summary s = parse_summary(doc, "fuzz.md");
    TempDir d;
    write_file(d / "fuzz-SUMMARY.md", doc);
    for (auto mode : {SummaryMode::Structural, SummaryMode::Strict}) {
      auto v = verify_summary(test::real_world(), d / "fuzz-SUMMARY.md", std::nullopt, d.path(), mode, nullptr);
      EXPECT_FALSE(v.to_json().dump().empty());
    }
    seed += static_cast<unsigned>(s.sections.size());
  }
}

// The SUMMARY of `MM-PLAN.md` in phase folder NN-slug may be `MM-SUMMARY.md` or
// `NN-MM-SUMMARY.md` (12 corpus folders use the second); a new one follows the phase's naming.
TEST(SummaryNaming, NamesBesideAPlan) {
  EXPECT_EQ(summary_names_for_plan("02-PLAN.md", "03-cli"),
            (std::vector<std::string>{"02-SUMMARY.md", "03-02-SUMMARY.md"}));
  EXPECT_EQ(summary_names_for_plan("02-PLAN.md", "03b-cleanup"),
            (std::vector<std::string>{"02-SUMMARY.md", "03b-02-SUMMARY.md"}));
  EXPECT_EQ(summary_names_for_plan("03-02-PLAN.md", "03-cli"), (std::vector<std::string>{"03-02-SUMMARY.md"}));
  EXPECT_EQ(summary_names_for_plan("PLAN.md", "03-cli"), (std::vector<std::string>{"SUMMARY.md"}));
  EXPECT_TRUE(summary_names_for_plan("notes.md", "03-cli").empty());
  EXPECT_EQ(preferred_summary_name("02-PLAN.md", "03-cli", {}), "02-SUMMARY.md");
  EXPECT_EQ(preferred_summary_name("02-PLAN.md", "03-cli", {"03-01-SUMMARY.md"}), "03-02-SUMMARY.md");
  EXPECT_EQ(preferred_summary_name("02-PLAN.md", "03-cli", {"01-SUMMARY.md", "03-01-SUMMARY.md"}), "02-SUMMARY.md");
  EXPECT_EQ(preferred_summary_name("03-02-PLAN.md", "03-cli", {"01-SUMMARY.md"}), "03-02-SUMMARY.md");

  test::TempDir d;
  stdfs::path ph = d / "03-cli";
  stdfs::create_directories(ph);
  test::write_file(ph / "01-PLAN.md", "---\nphase: 3\nplan: 1\n---\n");
  test::write_file(ph / "02-PLAN.md", "---\nphase: 3\nplan: 2\n---\n");
  test::write_file(ph / "03-01-SUMMARY.md", "x");
  auto l1 = locate_summary(test::real_world(), ph / "01-PLAN.md");
  EXPECT_TRUE(l1.exists);
  EXPECT_EQ(l1.path.filename(), "03-01-SUMMARY.md");
  auto l2 = locate_summary(test::real_world(), ph / "02-PLAN.md");
  EXPECT_FALSE(l2.exists);
  EXPECT_EQ(l2.path.filename(), "03-02-SUMMARY.md");  // the phase's naming
  // summary_name_for names what locate_summary finds, asking the disk only for MM-PLAN.md.
  EXPECT_EQ(summary_name_for(test::real_world(), ph, "01-PLAN.md"), "03-01-SUMMARY.md");
  EXPECT_EQ(summary_name_for(test::real_world(), ph, "02-PLAN.md"), "03-02-SUMMARY.md");
  EXPECT_EQ(summary_name_for(test::real_world(), ph, "03-04-PLAN.md"), "03-04-SUMMARY.md");
  test::write_file(ph / "03-04-SUMMARY.md", "x");
  EXPECT_EQ(summary_name_for(test::real_world(), ph, "03-04-PLAN.md"),
            locate_summary(test::real_world(), ph / "03-04-PLAN.md").path.filename().string());
  test::write_file(ph / "02-SUMMARY.md", "x");
  EXPECT_EQ(summary_name_for(test::real_world(), ph, "02-PLAN.md"), "02-SUMMARY.md") << "the one that exists";
  // And back: NN-MM-SUMMARY.md finds MM-PLAN.md.
  EXPECT_EQ(find_plan_for_summary(test::real_world(), ph / "03-01-SUMMARY.md").value_or(stdfs::path()),
            ph / "01-PLAN.md");
}

}  // namespace
}  // namespace yolo
