#include "protocol/summary.h"

#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using test::TempDir;
using test::write_file;

// A GitPort that answers from a table and records every question.
class FakeGit : public GitPort {
 public:
  bool repo = true;
  std::map<std::string, std::vector<std::string>> commits;  // hash -> files touched
  std::vector<std::string> asked;
  bool fail_all = false;

  bool is_repo() override { return repo; }
  std::optional<bool> commit_exists(const std::string& hash) override {
    asked.push_back("exists " + hash);
    if (fail_all) return std::nullopt;
    return commits.count(hash) > 0;
  }
  std::optional<std::vector<std::string>> files_touched(const std::string& hash) override {
    asked.push_back("files " + hash);
    if (fail_all) return std::nullopt;
    auto it = commits.find(hash);
    if (it == commits.end()) return std::nullopt;
    return it->second;
  }
  std::string last_error() const override { return fail_all ? "git timed out" : ""; }
};

const char* kPlan = R"(---
phase: 01
plan: 02
title: Parser
wave: 1
depends_on: []
must_haves:
  truths: ["parses"]
  artifacts:
    - path: src/parser.cc
      provides: the parser
      contains: "parse_all"
  key_links:
    - from: src/main.cc
      to: src/parser.h
      via: include
---
# Plan
### Task 1: parser
**Files:** `src/parser.cc` (new), `src/parser.h` (new)
### Task 2: wire it
**Files:** `src/main.cc`
)";

std::string summary_text(const std::string& fm_extra = "", const std::string& files = "- `src/parser.cc` (new)\n- `src/main.cc` (wired)\n",
                         const std::string& hashes = "[abc1234]", const std::string& counts = "tasks_completed: 2\ntasks_total: 2\n") {
  return "---\nphase: 01\nplan: 02\ntitle: Parser\nstatus: complete\ncompleted: 2026-02-24\n" + counts +
         "commit_hashes: " + hashes + "\ndeviations: []\n" + fm_extra +
         "---\n\n## What Was Built\nA parser.\n\n## Files Modified\n" + files + "\n## Deviations\nNone\n";
}

struct Repo {
  TempDir dir;
  stdfs::path phase;
  FakeGit git;
  Repo() {
    phase = dir / ".yolo-planning/phases/01-parser";
    write_file(phase / "01-02-PLAN.md", kPlan);
    write_file(dir / "src/parser.cc", "int parse_all() { return 0; }\n");
    write_file(dir / "src/parser.h", "int parse_all();\n");
    write_file(dir / "src/main.cc", "#include \"src/parser.h\"\nint main() { return parse_all(); }\n");
    git.commits["abc1234"] = {"src/parser.cc", "src/parser.h"};
    git.commits["def5678"] = {"README.md"};
  }
  SummaryVerdict verify(const std::string& summary, SummaryMode mode = SummaryMode::Strict) {
    write_file(phase / "01-02-SUMMARY.md", summary);
    return verify_summary(phase / "01-02-SUMMARY.md", std::nullopt, dir.path(), mode, &git);
  }
};

std::vector<const Finding*> findings_of(const SummaryVerdict& v, const std::string& check) {
  std::vector<const Finding*> out;
  for (const auto& f : v.findings())
    if (f.check == check) out.push_back(&f);
  return out;
}

std::string dump(const SummaryVerdict& v) { return v.to_json().dump(2); }

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
  std::map<std::string, bool> want = {{"a/one.rs", false},         {"a/two.rs", false},   {"a/three.rs", false},
                                      {"a/four.rs", false},        {".claude/market.json", true},
                                      {"a/five.md", true},         {"a/six.md", true},    {"a/seven.rs", true},
                                      {"a/eight.rs", false},       {"a/nine.rs", false},  {"a/nested.rs", false},
                                      {"a/gone.rs", true}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(s.files_modified_ignored, 2);  // "Rust modules:" and "None"
}

TEST(SummaryParse, TableRows) {
  Summary s = parse_summary("## Files Modified\n| File | Change |\n|---|---|\n| `src/a.cc` | new |\n| src/b.cc | deleted |\n", "S.md");
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
  std::vector<std::string> pieces = {"## Files Modified\n", "- `", "- **", "**:", "| |", "||\n", "- :", "- a:",
                                     "```\n", "## \n", "#\n", "- (deleted)\n", "- `a/b` (deleted", "\r\n",
                                     "---\n", "tasks_total: 99999999999999999999\n", "commit_hashes: {a: 1}\n",
                                     "- **Deleted:**\n", "1. \n", "1.x\n", "\xe2\x80\x94", "- ../../x\n"};
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
      auto v = verify_summary(d / "fuzz-SUMMARY.md", std::nullopt, d.path(), mode, nullptr);
      EXPECT_FALSE(v.to_json().dump().empty());
    }
    seed += static_cast<unsigned>(s.sections.size());
  }
}

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

// Issue 16: keys and sections that only describe the work (the day it was finished, the
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

// Issue 16: the SUMMARY of `MM-PLAN.md` in phase folder NN-slug may be `MM-SUMMARY.md` or
// `NN-MM-SUMMARY.md` (12 corpus folders use the second); a new one follows the phase's naming.
TEST(SummaryNaming, NamesBesideAPlan) {
  EXPECT_EQ(summary_names_for_plan("02-PLAN.md", "03-cli"), (std::vector<std::string>{"02-SUMMARY.md", "03-02-SUMMARY.md"}));
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
  auto l1 = locate_summary(ph / "01-PLAN.md");
  EXPECT_TRUE(l1.exists);
  EXPECT_EQ(l1.path.filename(), "03-01-SUMMARY.md");
  auto l2 = locate_summary(ph / "02-PLAN.md");
  EXPECT_FALSE(l2.exists);
  EXPECT_EQ(l2.path.filename(), "03-02-SUMMARY.md");  // the phase's naming
  // And back: NN-MM-SUMMARY.md finds MM-PLAN.md.
  EXPECT_EQ(find_plan_for_summary(ph / "03-01-SUMMARY.md").value_or(stdfs::path()), ph / "01-PLAN.md");
}

TEST(SummaryStructural, PartialMayHaveFewerTasks) {
  Repo r;
  std::string t = summary_text("", "- `src/parser.cc`\n", "[abc1234]", "tasks_completed: 1\ntasks_total: 2\n");
  t.replace(t.find("status: complete"), 16, "status: partial");
  EXPECT_EQ(r.verify(t, SummaryMode::Structural).verdict(), VerifyVerdict::Pass);
}

TEST(SummaryStructural, MissingFileAndBinaryFileAreFindings) {
  TempDir d;
  auto v = verify_summary(d / "nope-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Structural, nullptr);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  ASSERT_EQ(findings_of(v, "file").size(), 1u);
  EXPECT_NE(v.findings()[0].issue.find("nope-SUMMARY.md"), std::string::npos);
  write_file(d / "bin-SUMMARY.md", std::string("---\0\xff---", 8));
  auto b = verify_summary(d / "bin-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Off, nullptr);
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

TEST(SummaryClaims, TruthfulSummaryPasses) {
  Repo r;
  auto v = r.verify(summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
  EXPECT_EQ(v.plan_path, (r.phase / "01-02-PLAN.md").string());
  EXPECT_NE(std::find(r.git.asked.begin(), r.git.asked.end(), "exists abc1234"), r.git.asked.end());
}

TEST(SummaryClaims, HostileHashesAreNeverAsked) {
  Repo r;
  auto v = r.verify(summary_text("", "- `src/parser.cc`\n", R"h([abc1234, "--output=/tmp/x", "HEAD; rm -rf ~", "$(touch x)"])h"));
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
  auto v = verify_summary(r.phase / "07-SUMMARY.md", r.phase / "01-02-PLAN.md", r.dir.path(), SummaryMode::Strict, &r.git);
  auto fs = findings_of(v, "plan");
  ASSERT_EQ(fs.size(), 1u) << dump(v);
  EXPECT_NE(fs[0]->issue.find("reports on plan 01-07"), std::string::npos);
}

TEST(SummaryClaims, PlanFoundByIdWhenNotBeside) {
  Repo r;
  write_file(r.phase / "SUMMARY-for-02.md", "");  // not a summary name: ignored
  std::string t = summary_text();
  write_file(r.phase / "02-SUMMARY.md", t);  // sibling 02-PLAN.md does not exist
  auto v = verify_summary(r.phase / "02-SUMMARY.md", std::nullopt, r.dir.path(), SummaryMode::Strict, &r.git);
  EXPECT_EQ(v.plan_path, (r.phase / "01-02-PLAN.md").string());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << dump(v);
}

TEST(SummaryClaims, NoPlanFailsStrict) {
  TempDir d;
  FakeGit git;
  git.commits["abc1234"] = {"x"};
  write_file(d / "01-SUMMARY.md", summary_text("", "- `x.cc`\n"));
  write_file(d / "x.cc", "");
  auto v = verify_summary(d / "01-SUMMARY.md", std::nullopt, d.path(), SummaryMode::Strict, &git);
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail);
  ASSERT_EQ(findings_of(v, "plan").size(), 1u) << dump(v);
  auto missing = verify_summary(d / "01-SUMMARY.md", d / "nope-PLAN.md", d.path(), SummaryMode::Strict, &git);
  ASSERT_EQ(findings_of(missing, "plan").size(), 1u);
  EXPECT_NE(findings_of(missing, "plan")[0]->issue.find("nope-PLAN.md"), std::string::npos);
}

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
    auto v = verify_summary(it->path(), std::nullopt, root, SummaryMode::Structural, nullptr);
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
