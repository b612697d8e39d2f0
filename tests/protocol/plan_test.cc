// PLAN.md parsing: tasks, file references, frontmatter fields (PROTOCOL.md section 2).
#include "protocol/plan/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.h"

namespace yolo {
namespace {

const char* const kHead =
    "---\nphase: 01\nplan: 02\ntitle: A plan\nwave: 1\ndepends_on: []\nmust_haves:\n  - it works\n---\n";

Plan parse_body(const std::string& body) { return parse_plan(std::string(kHead) + body, "01-02-PLAN.md"); }

const FileRef* find_file(const Plan& p, const std::string& path) {
  auto it = std::find_if(p.files.begin(), p.files.end(), [&](const FileRef& f) { return f.path == path; });
  return it == p.files.end() ? nullptr : &*it;
}

std::vector<std::string> paths_of(const Plan& p) {
  std::vector<std::string> v;
  for (const auto& f : p.files) v.push_back(f.path);
  return v;
}

// --- tasks ------------------------------------------------------------------

TEST(PlanTasks, CountsH3Headings) {
  auto p = parse_body("# Plan\n### Task 1: one\ntext\n### Task 2: two\n### Task 3: three\n");
  EXPECT_EQ(p.task_count, 3);
}

TEST(PlanTasks, CountsH2Headings) {
  auto p = parse_body("## Task 1: one\n## Task 2: two\n");
  EXPECT_EQ(p.task_count, 2);
}

TEST(PlanTasks, CountsTaskElements) {
  auto p = parse_body(
      "<tasks>\n<task type=\"auto\">\n  <name>a</name>\n</task>\n<task>\nb\n</task>\n<task\n>c</task>\n</tasks>\n");
  EXPECT_EQ(p.task_count, 3) << "<task type=..>, <task> and a bare '<task' at line end; <tasks> is not a task";
}

TEST(PlanTasks, MixedFormsAddUp) {
  auto p = parse_body("### Task 1: heading\n## Task 2: heading\n<task>x</task>\n");
  EXPECT_EQ(p.task_count, 3);
}

TEST(PlanTasks, HeadingsThatAreNotTasks) {
  auto p = parse_body(
      "## Tasks\n### Task: no number\n#### Task 1: too deep\n# Task 1: too shallow\n###Task 1: no space\n"
      "Task 1: not a heading\n<tasks>\n</tasks>\n");
  EXPECT_EQ(p.task_count, 0);
}

TEST(PlanTasks, CaseInsensitiveAndIndented) {
  auto p = parse_body("### task 1: lower\n  ### TASK 2: upper, indented\n");
  EXPECT_EQ(p.task_count, 2);
}

TEST(PlanTasks, FencedCodeIsIgnored) {
  auto p = parse_body(
      "### Task 1: real\n"
      "```markdown\n### Task 2: example\n<task>x</task>\n**Files:** `fenced.cc`\n```\n"
      "~~~\n## Task 3: example\n```\n### Task 4: still fenced (``` inside ~~~)\n~~~\n"
      "````\n### Task 5: four backticks\n````\n"
      "### Task 6: real again\n");
  EXPECT_EQ(p.task_count, 2);
  EXPECT_EQ(find_file(p, "fenced.cc"), nullptr);
}

TEST(PlanTasks, UnterminatedFenceHidesTheRest) {
  auto p = parse_body("### Task 1: a\n```\n### Task 2: b\n");
  EXPECT_EQ(p.task_count, 1);
}

TEST(PlanTasks, NoTasksOnFrontmatterError) {
  auto p = parse_plan("---\nphase: [1\n---\n### Task 1: a\n", "x.md");
  ASSERT_TRUE(p.frontmatter_error);
  EXPECT_EQ(p.task_count, 0);
}

TEST(PlanTasks, CrlfLineEndings) {
  auto p = parse_plan(
      "---\r\nphase: 01\r\nplan: 01\r\ntitle: t\r\nwave: 1\r\ndepends_on: []\r\nmust_haves: [x]\r\n---\r\n"
      "### Task 1: a\r\n**Files:** `src/a.cc`\r\n### Task 2: b\r\n",
      "p.md");
  ASSERT_FALSE(p.frontmatter_error) << p.frontmatter_error->message;
  EXPECT_EQ(p.task_count, 2);
  EXPECT_EQ(p.wave, 1);
  EXPECT_NE(find_file(p, "src/a.cc"), nullptr);
}

// --- files ------------------------------------------------------------------

TEST(PlanFiles, FilesLineWithBackticks) {
  auto p = parse_body("### Task 1: a\n**Files:** `src/a.cc`, `src/b.h` (new), `docs/c.md`\n");
  ASSERT_EQ(paths_of(p), (std::vector<std::string>{"src/a.cc", "src/b.h", "docs/c.md"}));
  EXPECT_FALSE(find_file(p, "src/a.cc")->is_new);
  EXPECT_TRUE(find_file(p, "src/b.h")->is_new);
  EXPECT_FALSE(find_file(p, "docs/c.md")->is_new);
  for (const auto& f : p.files) {
    EXPECT_EQ(f.source, "files_line");
    EXPECT_EQ(f.line, 11) << f.path;  // 9 frontmatter lines + heading + this line
  }
}

TEST(PlanFiles, SingularFileLabelAndListBullet) {
  auto p = parse_body("- **File:** `lib/x.rs`\n* **Files**: `lib/y.rs` (NEW)\n");
  ASSERT_NE(find_file(p, "lib/x.rs"), nullptr);
  ASSERT_NE(find_file(p, "lib/y.rs"), nullptr);
  EXPECT_TRUE(find_file(p, "lib/y.rs")->is_new);
}

TEST(PlanFiles, FilesLineWithoutBackticksAndParentheticals) {
  auto p = parse_body("**Files:** src/a.cc (modify), src/b.cc (new), README.md (update docs, add section)\n");
  EXPECT_EQ(paths_of(p), (std::vector<std::string>{"src/a.cc", "src/b.cc", "README.md"}));
  EXPECT_FALSE(find_file(p, "src/a.cc")->is_new);
  EXPECT_TRUE(find_file(p, "src/b.cc")->is_new);
  EXPECT_FALSE(find_file(p, "README.md")->is_new);
}

TEST(PlanFiles, BacktickedNonPathsAreSkipped) {
  auto p = parse_body("**Files:** `src/a.cc` (new, replaces `old thing`), `make`\n");
  EXPECT_EQ(paths_of(p), (std::vector<std::string>{"src/a.cc"}));
  EXPECT_TRUE(p.files[0].is_new);
}

TEST(PlanFiles, Globs) {
  auto p = parse_body("**Files:** `src/*.cc`, `tests/**/x?.cc`, `a/[ab].h`, `plain.h`\n");
  ASSERT_EQ(p.files.size(), 4u);
  EXPECT_TRUE(find_file(p, "src/*.cc")->is_glob);
  EXPECT_TRUE(find_file(p, "tests/**/x?.cc")->is_glob);
  EXPECT_TRUE(find_file(p, "a/[ab].h")->is_glob);
  EXPECT_FALSE(find_file(p, "plain.h")->is_glob);
}

TEST(PlanFiles, FilesBlockMultiLine) {
  auto p =
      parse_body("<task>\n<files>\n- src/one.cc\n`src/two.cc` (new)\nsrc/three.cc, src/four.cc\n</files>\n</task>\n");
  EXPECT_EQ(paths_of(p), (std::vector<std::string>{"src/one.cc", "src/two.cc", "src/three.cc", "src/four.cc"}));
  EXPECT_TRUE(find_file(p, "src/two.cc")->is_new);
  for (const auto& f : p.files) EXPECT_EQ(f.source, "files_block");
  EXPECT_EQ(find_file(p, "src/one.cc")->line, 12);
  EXPECT_EQ(p.task_count, 1);
}

TEST(PlanFiles, FilesBlockOnOneLine) {
  auto p = parse_body("<task><files>src/a.cc, src/b.cc</files></task>\n");
  EXPECT_EQ(paths_of(p), (std::vector<std::string>{"src/a.cc", "src/b.cc"}));
  EXPECT_EQ(p.task_count, 1);
}

TEST(PlanFiles, FilesBlockClosedOnLastEntryLine) {
  auto p = parse_body("<files>\nsrc/a.cc\nsrc/b.cc</files>\n**Files:** `after.cc`\n");
  EXPECT_EQ(paths_of(p), (std::vector<std::string>{"src/a.cc", "src/b.cc", "after.cc"}));
  EXPECT_EQ(find_file(p, "after.cc")->source, "files_line");
}

TEST(PlanFiles, FilesModifiedListAndScalar) {
  auto list = parse_plan(
      "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves: [x]\n"
      "files_modified:\n  - src/a.cc\n  - src/*.h\n---\n",
      "p.md");
  ASSERT_EQ(paths_of(list), (std::vector<std::string>{"src/a.cc", "src/*.h"}));
  EXPECT_EQ(list.files[0].source, "files_modified");
  EXPECT_EQ(list.files[0].line, 0);
  EXPECT_TRUE(list.files[1].is_glob);
  auto scalar = parse_plan("---\nfiles_modified: src/only.cc\n---\n", "p.md");
  EXPECT_EQ(paths_of(scalar), (std::vector<std::string>{"src/only.cc"}));
  auto empty = parse_plan("---\nfiles_modified: []\n---\n", "p.md");
  EXPECT_TRUE(empty.files.empty());
}

TEST(PlanFiles, AllThreeSourcesTogether) {
  auto p = parse_plan(
      "---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\nmust_haves: [x]\nfiles_modified: [fm.cc]\n---\n"
      "**Files:** `line.cc`\n<files>block.cc</files>\n",
      "p.md");
  ASSERT_EQ(p.files.size(), 3u);
  EXPECT_EQ(find_file(p, "fm.cc")->source, "files_modified");
  EXPECT_EQ(find_file(p, "line.cc")->source, "files_line");
  EXPECT_EQ(find_file(p, "block.cc")->source, "files_block");
}

TEST(PlanFiles, ProseIsNotAFilesLine) {
  auto p = parse_body("The Files: section lists src/a.cc\nFiles: src/b.cc\n");
  EXPECT_TRUE(p.files.empty());
}

// --- frontmatter fields --------------------------------------------------------

TEST(PlanFields, TextKeptAsWritten) {
  auto p = parse_plan(
      "---\nphase: 01\nplan: 03\ntitle: \"Hello: world\"\nwave: 2\ndepends_on: []\nmust_haves: [a]\n---\n", "p.md");
  EXPECT_EQ(p.phase, "01");
  EXPECT_EQ(p.plan, "03");
  EXPECT_EQ(p.id(), "01-03");
  EXPECT_EQ(p.title, "Hello: world");
  ASSERT_TRUE(p.wave);
  EXPECT_EQ(*p.wave, 2);
  EXPECT_TRUE(p.missing_keys().empty());
  EXPECT_EQ(p.content_hash.size(), 64u);
}

TEST(PlanFields, NumericPhaseAndPlan) {
  auto p = parse_plan("---\nphase: 1\nplan: 2\n---\n", "p.md");
  EXPECT_EQ(p.id(), "1-2");
}

TEST(PlanFields, WaveOnlyForPositiveIntegers) {
  for (const char* w : {"0", "-1", "\"1\"", "1.5", "one", "[1]", "null"}) {
    auto p = parse_plan(std::string("---\nwave: ") + w + "\n---\n", "p.md");
    EXPECT_FALSE(p.wave) << "wave: " << w;
  }
  auto p = parse_plan("---\nwave: 3\n---\n", "p.md");
  EXPECT_EQ(p.wave, 3);
}

TEST(PlanFields, MissingKeys) {
  auto p = parse_plan("---\nphase: 1\ntitle: t\n---\n", "p.md");
  EXPECT_EQ(p.missing_keys(), (std::vector<std::string>{"plan", "wave", "depends_on", "must_haves"}));
  auto none = parse_plan("no frontmatter\n", "p.md");
  EXPECT_EQ(none.missing_keys().size(), 6u);
}

TEST(PlanFields, MustHavesListShape) {
  auto p = parse_plan("---\nmust_haves:\n  - a\n  - b\n  - c\n---\n", "p.md");
  EXPECT_EQ(p.must_have_count, 3u);
}

TEST(PlanFields, MustHavesMapShape) {
  auto p = parse_plan(
      "---\nmust_haves:\n  truths:\n    - one\n    - two\n  artifacts:\n    - path: src/a.cc\n      provides: A\n"
      "      contains: \"int a\"\n  key_links:\n    - from: a\n      to: b\n      via: c\n---\n",
      "p.md");
  EXPECT_EQ(p.must_have_count, 4u);
}

TEST(PlanFields, MustHavesEmptyShapes) {
  for (const char* mh : {"[]", "{}", "\n  truths: []\n  artifacts: []", "null", "\"\""}) {
    auto p = parse_plan(std::string("---\nmust_haves: ") + mh + "\n---\n", "p.md");
    EXPECT_EQ(p.must_have_count, 0u) << mh;
  }
}

TEST(PlanFields, DependsOnForms) {
  auto list = parse_plan("---\ndepends_on: [01, 02]\n---\n", "p.md");
  EXPECT_EQ(list.depends_on, (std::vector<std::string>{"01", "02"}));
  auto ids = parse_plan("---\ndepends_on:\n  - \"01-01\"\n  - 01-02\n---\n", "p.md");
  EXPECT_EQ(ids.depends_on, (std::vector<std::string>{"01-01", "01-02"}));
  auto numbers = parse_plan("---\ndepends_on: [1, 2]\n---\n", "p.md");
  EXPECT_EQ(numbers.depends_on, (std::vector<std::string>{"1", "2"}));
  auto scalar = parse_plan("---\ndepends_on: 03\n---\n", "p.md");
  EXPECT_EQ(scalar.depends_on, (std::vector<std::string>{"03"}));
  auto empty = parse_plan("---\ndepends_on: []\n---\n", "p.md");
  EXPECT_TRUE(empty.depends_on.empty());
  auto null = parse_plan("---\ndepends_on:\n---\n", "p.md");
  EXPECT_TRUE(null.depends_on.empty());
}

TEST(PlanFields, UnknownKeysAreKept) {
  auto p = parse_plan("---\nphase: 1\nskills_used: [a, b]\nautonomous: true\ncustom: {x: 1}\n---\n", "p.md");
  EXPECT_EQ(p.frontmatter["skills_used"], json::parse(R"(["a","b"])"));
  EXPECT_EQ(p.frontmatter["autonomous"], true);
  EXPECT_EQ(p.frontmatter["custom"]["x"], 1);
}

TEST(PlanRefs, NormalizeRef) {
  EXPECT_EQ(normalize_ref("01-02"), "1-2");
  EXPECT_EQ(normalize_ref("03"), "3");
  EXPECT_EQ(normalize_ref("3"), "3");
  EXPECT_EQ(normalize_ref("00"), "0");
  EXPECT_EQ(normalize_ref("010-0020"), "10-20");
  EXPECT_EQ(normalize_ref("01-a"), "1-a");
  EXPECT_EQ(normalize_ref("abc"), "abc");
  EXPECT_EQ(normalize_ref(""), "");
  EXPECT_EQ(normalize_ref("01-02-03"), "1-2-3");
  EXPECT_EQ(normalize_ref("01-02"), normalize_ref("1-2"));
}

TEST(PlanRefs, ScalarText) {
  EXPECT_EQ(scalar_text(json("01")), "01");
  EXPECT_EQ(scalar_text(json(7)), "7");
  EXPECT_EQ(scalar_text(json(true)), "true");
  EXPECT_EQ(scalar_text(json(nullptr)), "");
  EXPECT_EQ(scalar_text(json::array()), "");
}

TEST(PlanFilenames, PlanAndSummaryNames) {
  EXPECT_TRUE(is_plan_filename("01-PLAN.md"));
  EXPECT_TRUE(is_plan_filename("01-02-PLAN.md"));
  EXPECT_TRUE(is_plan_filename("PLAN.md"));
  EXPECT_FALSE(is_plan_filename("-PLAN.md"));
  EXPECT_FALSE(is_plan_filename("01-PLAN.md.bak"));
  EXPECT_FALSE(is_plan_filename("01-SUMMARY.md"));
  EXPECT_TRUE(is_summary_filename("01-02-SUMMARY.md"));
  EXPECT_FALSE(is_summary_filename("01-PLAN.md"));
}

TEST(PlanFiles, ListPlanFilesSortedAndFiltered) {
  test::TempDir t;
  for (const char* n : {"02-PLAN.md", "01-PLAN.md", "01-SUMMARY.md", "notes.md", "01-01-PLAN.md"})
    test::write_file(t / n, "x");
  std::filesystem::create_directories(t / "03-PLAN.md");  // a folder, not a plan
  auto files = list_plan_files(test::real_world(), t.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "01-01-PLAN.md");
  EXPECT_EQ(files[1].filename(), "01-PLAN.md");
  EXPECT_EQ(files[2].filename(), "02-PLAN.md");
  EXPECT_TRUE(list_plan_files(test::real_world(), t / "missing").empty());
}

TEST(PlanLoad, ErrorsNameTheFile) {
  test::TempDir t;
  auto missing = load_plan(test::real_world(), t / "nope-PLAN.md");
  EXPECT_FALSE(missing.plan);
  EXPECT_TRUE(missing.not_found);
  EXPECT_NE(missing.error.find("nope-PLAN.md"), std::string::npos) << missing.error;

  std::string binary = "---\nphase: 1";
  binary.push_back('\0');
  binary += "\x01\x02\xff\n";
  test::write_file(t / "bin-PLAN.md", binary);
  auto bin = load_plan(test::real_world(), t / "bin-PLAN.md");
  EXPECT_FALSE(bin.plan);
  EXPECT_FALSE(bin.not_found);
  EXPECT_NE(bin.error.find("bin-PLAN.md"), std::string::npos) << bin.error;

  test::write_file(t / "big-PLAN.md", "---\nphase: 1\n---\n" + std::string(2000, 'x'));
  auto big = load_plan(test::real_world(), t / "big-PLAN.md", 1000);
  EXPECT_FALSE(big.plan);
  EXPECT_NE(big.error.find("big-PLAN.md"), std::string::npos) << big.error;

  test::write_file(t / "ok-PLAN.md", "---\nphase: 1\n---\n### Task 1: x\n");
  auto ok = load_plan(test::real_world(), t / "ok-PLAN.md");
  ASSERT_TRUE(ok.plan);
  EXPECT_EQ(ok.plan->task_count, 1);
  EXPECT_EQ(ok.plan->path, (t / "ok-PLAN.md").string());
}

}  // namespace
}  // namespace yolo
