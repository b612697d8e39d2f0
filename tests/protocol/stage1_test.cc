// Stage 1 structural pre-check: every check of PROTOCOL.md section 3, failing and passing.
#include "protocol/review/stage1.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

struct PlanSpec {
  std::string phase = "01";
  std::string plan = "01";
  std::string wave = "1";
  std::string depends_on = "[]";
  std::string must_haves = "[\"it works\"]";
  std::string extra;  // more frontmatter lines
  std::string body = "### Task 1: do it\n";
};

std::string plan_text(const PlanSpec& s) {
  return "---\nphase: " + s.phase + "\nplan: " + s.plan + "\ntitle: Plan " + s.plan + "\nwave: " + s.wave +
         "\ndepends_on: " + s.depends_on + "\nmust_haves: " + s.must_haves + "\n" + s.extra + "---\n# Plan\n" + s.body;
}

Plan make_plan(const PlanSpec& s) { return parse_plan(plan_text(s), s.phase + "-" + s.plan + "-PLAN.md"); }

std::vector<const Finding*> by_check(const StructuralReview& r, const std::string& check) {
  std::vector<const Finding*> v;
  for (const auto& f : r.findings)
    if (f.check == check) v.push_back(&f);
  return v;
}
std::vector<const Finding*> by_check(const std::vector<Finding>& fs, const std::string& check) {
  std::vector<const Finding*> v;
  for (const auto& f : fs)
    if (f.check == check) v.push_back(&f);
  return v;
}

const Check* find_check(const StructuralReview& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

// --- single-plan checks ------------------------------------------------------

TEST(Precheck, WellFormedPlanApproves) {
  auto r = stage1_plan(test::real_world(), make_plan({}), {});
  EXPECT_TRUE(r.findings.empty()) << r.to_json().dump(2);
  EXPECT_EQ(r.verdict(), Verdict::Approve);
  EXPECT_EQ(r.plan_id, "01-01");
  for (const char* c : {"frontmatter", "task_count", "must_haves", "wave_valid"}) {
    const Check* ch = find_check(r, c);
    ASSERT_NE(ch, nullptr) << c;
    EXPECT_EQ(ch->status, CheckStatus::Pass) << c;
  }
  EXPECT_EQ(find_check(r, "file_paths"), nullptr) << "file_paths runs only with a project root";
  json j = r.to_json();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cmd"], "review-plan");
  EXPECT_EQ(j["verdict"], "approve");
}

TEST(Precheck, FrontmatterMissing) {
  auto r = stage1_plan(test::real_world(), parse_plan("# Just a title\n### Task 1: x\n", "x-PLAN.md"), {});
  auto f = by_check(r, "frontmatter");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_EQ(find_check(r, "frontmatter")->status, CheckStatus::Fail);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST(Precheck, FrontmatterPartialNamesEachMissingKey) {
  auto r = stage1_plan(test::real_world(),
                       parse_plan("---\nphase: 01\nplan: 02\nwave: 1\nmust_haves: [x]\n---\n", "p.md"), {});
  auto f = by_check(r, "frontmatter");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_NE(f[0]->issue.find("'title'"), std::string::npos) << f[0]->issue;
  EXPECT_NE(f[1]->issue.find("'depends_on'"), std::string::npos) << f[1]->issue;
  for (auto* x : f) EXPECT_EQ(x->severity, Severity::High);
  EXPECT_EQ(find_check(r, "frontmatter")->counts["missing_keys"], json::parse(R"(["title","depends_on"])"));
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST(Precheck, FrontmatterYamlErrorGivesLineAndColumn) {
  auto r = stage1_plan(test::real_world(),
                       parse_plan("---\nphase: 01\nplan: 02\ntitle: [unclosed\nwave: 1\n---\n", "p.md"), {});
  auto f = by_check(r, "frontmatter");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_NE(f[0]->issue.find("line"), std::string::npos) << f[0]->issue;
  ASSERT_TRUE(f[0]->extra.contains("line"));
  EXPECT_GE(f[0]->extra["line"].get<int>(), 4);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
  EXPECT_EQ(r.findings.size(), 1u) << "a plan whose YAML fails gets no other findings";
}

TEST(Precheck, UnterminatedFrontmatterRejects) {
  auto r = stage1_plan(test::real_world(), parse_plan("---\nphase: 01\n### Task 1: x\n", "p.md"), {});
  ASSERT_EQ(by_check(r, "frontmatter").size(), 1u);
  EXPECT_NE(r.findings[0].issue.find("unterminated"), std::string::npos) << r.findings[0].issue;
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST(Precheck, TaskCountOverDefault) {
  PlanSpec s;
  s.body.clear();
  for (int i = 1; i <= 6; ++i) s.body += "### Task " + std::to_string(i) + ": t\n";
  auto r = stage1_plan(test::real_world(), make_plan(s), {});
  auto f = by_check(r, "task_count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::Medium);
  EXPECT_EQ(find_check(r, "task_count")->status, CheckStatus::Warn);
  EXPECT_EQ(find_check(r, "task_count")->counts["count"], 6);
  EXPECT_EQ(find_check(r, "task_count")->counts["max"], 5);
  EXPECT_EQ(r.verdict(), Verdict::Conditional);
  EXPECT_EQ(r.to_json()["ok"], true);
}

TEST(Precheck, TaskCountAtDefaultPasses) {
  PlanSpec s;
  s.body.clear();
  for (int i = 1; i <= 5; ++i) s.body += "## Task " + std::to_string(i) + ": t\n";
  auto r = stage1_plan(test::real_world(), make_plan(s), {});
  EXPECT_TRUE(by_check(r, "task_count").empty());
  EXPECT_EQ(r.verdict(), Verdict::Approve);
}

TEST(Precheck, TaskCountConfigMax) {
  PlanSpec s;
  s.body = "<task>a</task>\n<task>b</task>\n<task>c</task>\n";
  Stage1Options two;
  two.max_tasks = 2;
  EXPECT_EQ(by_check(stage1_plan(test::real_world(), make_plan(s), two), "task_count").size(), 1u);
  Stage1Options three;
  three.max_tasks = 3;
  EXPECT_TRUE(by_check(stage1_plan(test::real_world(), make_plan(s), three), "task_count").empty());
  s.body.clear();
  for (int i = 1; i <= 8; ++i) s.body += "### Task " + std::to_string(i) + ": t\n";
  Stage1Options ten;
  ten.max_tasks = 10;
  EXPECT_TRUE(by_check(stage1_plan(test::real_world(), make_plan(s), ten), "task_count").empty())
      << "config raises the limit";
}

TEST(Precheck, MustHavesEmptyAndAbsent) {
  PlanSpec empty;
  empty.must_haves = "[]";
  auto r = stage1_plan(test::real_world(), make_plan(empty), {});
  auto f = by_check(r, "must_haves");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_NE(f[0]->issue.find("empty"), std::string::npos);
  EXPECT_EQ(r.verdict(), Verdict::Reject);

  PlanSpec empty_map;
  empty_map.must_haves = "\n  truths: []\n  artifacts: []\n  key_links: []";
  EXPECT_EQ(by_check(stage1_plan(test::real_world(), make_plan(empty_map), {}), "must_haves").size(), 1u);

  auto absent = stage1_plan(test::real_world(),
                            parse_plan("---\nphase: 1\nplan: 1\ntitle: t\nwave: 1\ndepends_on: []\n---\n", "p.md"), {});
  auto fa = by_check(absent, "must_haves");
  ASSERT_EQ(fa.size(), 1u);
  EXPECT_NE(fa[0]->issue.find("absent"), std::string::npos);
}

TEST(Precheck, MustHavesMapPasses) {
  PlanSpec s;
  s.must_haves = "\n  truths: [\"x works\"]\n  artifacts:\n    - {path: a.cc, provides: A, contains: x}";
  auto r = stage1_plan(test::real_world(), make_plan(s), {});
  EXPECT_TRUE(by_check(r, "must_haves").empty()) << r.to_json().dump(2);
  EXPECT_EQ(find_check(r, "must_haves")->counts["count"], 2);
}

TEST(Precheck, WaveValid) {
  for (const char* bad : {"0", "-2", "\"1\"", "1.5", "first"}) {
    PlanSpec s;
    s.wave = bad;
    auto r = stage1_plan(test::real_world(), make_plan(s), {});
    auto f = by_check(r, "wave_valid");
    ASSERT_EQ(f.size(), 1u) << bad;
    EXPECT_EQ(f[0]->severity, Severity::High);
    EXPECT_EQ(r.verdict(), Verdict::Reject) << bad;
  }
  auto absent =
      stage1_plan(test::real_world(),
                  parse_plan("---\nphase: 1\nplan: 1\ntitle: t\ndepends_on: []\nmust_haves: [x]\n---\n", "p.md"), {});
  ASSERT_EQ(by_check(absent, "wave_valid").size(), 1u);
  EXPECT_NE(by_check(absent, "wave_valid")[0]->issue.find("absent"), std::string::npos);
  PlanSpec good;
  good.wave = "3";
  EXPECT_TRUE(by_check(stage1_plan(test::real_world(), make_plan(good), {}), "wave_valid").empty());
}

// --- file_paths ----------------------------------------------------------------

class FilePaths : public ::testing::Test {
 protected:
  void SetUp() override {
    stdfs::create_directories(tmp.path() / ".yolo-planning");
    test::write_file(tmp / "src/exists.cc", "int x;\n");
    opts.root = tmp.path();
  }
  StructuralReview review(const std::string& files_line) {
    PlanSpec s;
    s.body = "### Task 1: t\n**Files:** " + files_line + "\n";
    return stage1_plan(test::real_world(), make_plan(s), opts);
  }
  test::TempDir tmp;
  Stage1Options opts;
};

TEST_F(FilePaths, ExistingNewAndGlobPass) {
  auto r = review("`src/exists.cc`, `src/created.cc` (new), `src/*.cc`, `./src/../src/exists.cc`");
  EXPECT_TRUE(r.findings.empty()) << r.to_json().dump(2);
  EXPECT_EQ(find_check(r, "file_paths")->status, CheckStatus::Pass);
  EXPECT_EQ(r.verdict(), Verdict::Approve);
}

TEST_F(FilePaths, MissingIsLow) {
  auto r = review("`src/missing.cc`");
  auto f = by_check(r, "file_paths");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::Low);
  EXPECT_EQ(f[0]->extra["path"], "src/missing.cc");
  EXPECT_EQ(f[0]->extra["line"], 11);
  EXPECT_EQ(r.verdict(), Verdict::Conditional);
  EXPECT_EQ(find_check(r, "file_paths")->counts["missing"], 1);
}

TEST_F(FilePaths, AbsoluteIsHigh) {
  auto r = review("`/etc/passwd`");
  auto f = by_check(r, "file_paths");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST_F(FilePaths, DotDotEscapeIsHigh) {
  for (const char* p : {"`../outside.cc`", "`src/../../outside.cc`", "`./../x.cc`"}) {
    auto r = review(p);
    auto f = by_check(r, "file_paths");
    ASSERT_EQ(f.size(), 1u) << p;
    EXPECT_EQ(f[0]->severity, Severity::High) << p;
  }
}

TEST_F(FilePaths, EscapeIsHighEvenWhenMarkedNew) {
  auto r = review("`../evil.cc` (new)");
  ASSERT_EQ(by_check(r, "file_paths").size(), 1u);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST_F(FilePaths, TildeIsHigh) {
  auto r = review("`~/.bashrc`");
  auto f = by_check(r, "file_paths");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
}

TEST_F(FilePaths, FilesModifiedAndBlocksAreChecked) {
  PlanSpec s;
  s.extra = "files_modified: [src/gone.h]\n";
  s.body = "<task><files>/abs/path.cc</files></task>\n";
  auto r = stage1_plan(test::real_world(), make_plan(s), opts);
  auto f = by_check(r, "file_paths");
  ASSERT_EQ(f.size(), 2u) << r.to_json().dump(2);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
}

TEST_F(FilePaths, DuplicatesReportedOnce) {
  auto r = review("`src/missing.cc`, `src/missing.cc`");
  EXPECT_EQ(by_check(r, "file_paths").size(), 1u);
}

// --- verdict rules -------------------------------------------------------------

TEST(PrecheckVerdict, Rules) {
  StructuralReview r;
  EXPECT_EQ(r.verdict(), Verdict::Approve);
  EXPECT_EQ(r.to_json()["ok"], true);
  r.add(Finding{Severity::Low, "x", "i", "f", false, json::object()});
  EXPECT_EQ(r.verdict(), Verdict::Conditional);
  EXPECT_EQ(r.to_json()["ok"], true);
  EXPECT_EQ(r.check("x").status, CheckStatus::Warn);
  r.add(Finding{Severity::Medium, "y", "i", "f", false, json::object()});
  EXPECT_EQ(r.verdict(), Verdict::Conditional);
  r.add(Finding{Severity::High, "x", "i", "f", false, json::object()});
  EXPECT_EQ(r.verdict(), Verdict::Reject);
  EXPECT_EQ(r.to_json()["ok"], false);
  EXPECT_EQ(r.to_json()["verdict"], "reject");
  EXPECT_EQ(r.check("x").status, CheckStatus::Fail);
  r.add(Finding{Severity::Low, "x", "i", "f", false, json::object()});
  EXPECT_EQ(r.check("x").status, CheckStatus::Fail) << "a later low finding does not lift a fail";
}

TEST(PrecheckVerdict, ExitCodesAndWorst) {
  EXPECT_EQ(exit_code(Verdict::Approve), 0);
  EXPECT_EQ(exit_code(Verdict::Reject), 1);
  EXPECT_EQ(exit_code(Verdict::Conditional), 2);
  EXPECT_EQ(worst(Verdict::Approve, Verdict::Conditional), Verdict::Conditional);
  EXPECT_EQ(worst(Verdict::Reject, Verdict::Conditional), Verdict::Reject);
  EXPECT_EQ(worst(Verdict::Conditional, Verdict::Reject), Verdict::Reject);
  EXPECT_EQ(worst(Verdict::Approve, Verdict::Approve), Verdict::Approve);
}

TEST(PrecheckVerdict, FindingJsonShape) {
  StructuralReview r;
  Finding f{Severity::Medium, "task_count", "too many", "split", true, json{{"line", 3}}};
  r.add(f);
  json j = r.to_json();
  ASSERT_EQ(j["findings"].size(), 1u);
  const json& fj = j["findings"][0];
  EXPECT_EQ(fj["severity"], "medium");
  EXPECT_EQ(fj["check"], "task_count");
  EXPECT_EQ(fj["issue"], "too many");
  EXPECT_EQ(fj["suggested_fix"], "split");
  EXPECT_EQ(fj["auto_fixable"], true);
  EXPECT_EQ(fj["line"], 3);
  ASSERT_EQ(j["checks"].size(), 1u);
  EXPECT_EQ(j["checks"][0]["name"], "task_count");
  EXPECT_EQ(j["checks"][0]["status"], "warn");
}

// ok is false exactly on reject, over many generated plans.
TEST(PrecheckVerdict, OkFalseExactlyOnReject) {
  int seen[3] = {0, 0, 0};
  for (const char* wave : {"1", "0"})
    for (const char* mh : {"[x]", "[]"})
      for (int tasks : {1, 7}) {
        PlanSpec s;
        s.wave = wave;
        s.must_haves = mh;
        s.body.clear();
        for (int i = 1; i <= tasks; ++i) s.body += "### Task " + std::to_string(i) + ": t\n";
        auto r = stage1_plan(test::real_world(), make_plan(s), {});
        json j = r.to_json();
        EXPECT_EQ(j["ok"].get<bool>(), r.verdict() != Verdict::Reject);
        EXPECT_EQ(j["verdict"], to_string(r.verdict()));
        ++seen[exit_code(r.verdict())];
      }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
}

// --- cross-plan checks -----------------------------------------------------------

TEST(CrossPlan, CleanPhaseHasNoFindings) {
  PlanSpec a, b, c;
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[01]";
  c.plan = "03";
  c.wave = "3";
  c.depends_on = "[\"01-01\", 2]";
  auto out = cross_plan_findings({make_plan(a), make_plan(b), make_plan(c)});
  ASSERT_EQ(out.size(), 3u);
  for (const auto& v : out) EXPECT_TRUE(v.empty()) << v.front().issue;
}

TEST(CrossPlan, MissingDependency) {
  PlanSpec a, b;
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[07]";
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  auto f = by_check(out[1], "dependencies");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_NE(f[0]->issue.find("07"), std::string::npos);
  EXPECT_TRUE(out[0].empty());
}

TEST(CrossPlan, DependencyOnOtherPhaseIdIsMissing) {
  PlanSpec a, b;
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[\"02-01\"]";  // phase 02 does not exist here
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  EXPECT_EQ(by_check(out[1], "dependencies").size(), 1u);
}

TEST(CrossPlan, SelfDependency) {
  PlanSpec a;
  a.depends_on = "[01]";
  auto out = cross_plan_findings({make_plan(a)});
  auto f = by_check(out[0], "dependencies");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_NE(f[0]->issue.find("itself"), std::string::npos);
  EXPECT_TRUE(by_check(out[0], "dependency_cycle").empty()) << "a self edge is reported once, as self dependency";
}

TEST(CrossPlan, CycleOfTwo) {
  PlanSpec a, b;
  a.depends_on = "[02]";
  a.wave = "2";
  b.plan = "02";
  b.depends_on = "[01]";
  b.wave = "2";
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  for (int i : {0, 1}) {
    auto f = by_check(out[static_cast<size_t>(i)], "dependency_cycle");
    ASSERT_EQ(f.size(), 1u) << i;
    EXPECT_EQ(f[0]->severity, Severity::High);
    EXPECT_NE(f[0]->issue.find("01-01"), std::string::npos) << f[0]->issue;
    EXPECT_NE(f[0]->issue.find("01-02"), std::string::npos) << f[0]->issue;
  }
}

TEST(CrossPlan, CycleOfThree) {
  PlanSpec a, b, c, d;
  a.depends_on = "[03]";
  b.plan = "02";
  b.depends_on = "[01]";
  c.plan = "03";
  c.depends_on = "[02]";
  d.plan = "04";  // outside the cycle
  d.depends_on = "[]";
  auto out = cross_plan_findings({make_plan(a), make_plan(b), make_plan(c), make_plan(d)});
  for (size_t i = 0; i < 3; ++i) {
    auto f = by_check(out[i], "dependency_cycle");
    ASSERT_EQ(f.size(), 1u) << i;
    for (const char* id : {"01-01", "01-02", "01-03"})
      EXPECT_NE(f[0]->issue.find(id), std::string::npos) << f[0]->issue;
  }
  EXPECT_TRUE(out[3].empty());
}

TEST(CrossPlan, AcyclicDiamondIsNotACycle) {
  PlanSpec a, b, c, d;
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[01]";
  c.plan = "03";
  c.wave = "2";
  c.depends_on = "[01]";
  d.plan = "04";
  d.wave = "3";
  d.depends_on = "[02, 03]";
  auto out = cross_plan_findings({make_plan(a), make_plan(b), make_plan(c), make_plan(d)});
  for (const auto& v : out) EXPECT_TRUE(by_check(v, "dependency_cycle").empty());
}

TEST(CrossPlan, DependencyInSameWave) {
  PlanSpec a, b;
  b.plan = "02";
  b.depends_on = "[01]";  // both wave 1
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  auto f = by_check(out[1], "wave_order");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_TRUE(out[0].empty());
}

TEST(CrossPlan, DependencyInLaterWave) {
  PlanSpec a, b;
  a.wave = "3";
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[01]";
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  EXPECT_EQ(by_check(out[1], "wave_order").size(), 1u);
}

TEST(CrossPlan, SameWaveFileOverlapIsMedium) {
  PlanSpec a, b;
  a.body = "**Files:** `src/shared.cc`, `src/a.cc`\n";
  b.plan = "02";
  b.extra = "files_modified: [./src/shared.cc]\n";
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  for (size_t i : {0u, 1u}) {
    auto f = by_check(out[i], "file_overlap");
    ASSERT_EQ(f.size(), 1u) << i;
    EXPECT_EQ(f[0]->severity, Severity::Medium);
    EXPECT_EQ(f[0]->extra["path"], "src/shared.cc");
  }
}

TEST(CrossPlan, OverlapAcrossWavesIsFine) {
  PlanSpec a, b;
  a.body = "**Files:** `src/shared.cc`\n";
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[01]";
  b.body = "**Files:** `src/shared.cc`\n";
  auto out = cross_plan_findings({make_plan(a), make_plan(b)});
  EXPECT_TRUE(out[0].empty());
  EXPECT_TRUE(out[1].empty());
}

TEST(CrossPlan, DuplicateIds) {
  PlanSpec a, b, c;
  b.plan = "1";  // "01-1" normalises to the same id as "01-01"
  c.plan = "03";
  auto out = cross_plan_findings({make_plan(a), make_plan(b), make_plan(c)});
  for (size_t i : {0u, 1u}) {
    auto f = by_check(out[i], "duplicate_id");
    ASSERT_EQ(f.size(), 1u) << i;
    EXPECT_EQ(f[0]->severity, Severity::High);
    EXPECT_EQ(f[0]->extra["related"].size(), 1u);
  }
  EXPECT_TRUE(out[2].empty());
}

// --- from disk -----------------------------------------------------------------

class PhaseOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    phase = tmp.path() / ".yolo-planning" / "phases" / "01-demo";
    stdfs::create_directories(phase);
  }
  void write(const std::string& name, const PlanSpec& s) { test::write_file(phase / name, plan_text(s)); }
  test::TempDir tmp;
  stdfs::path phase;
};

TEST_F(PhaseOnDisk, MissingPlanFileIsRejectWithFileFinding) {
  auto r = stage1_plan_file(test::real_world(), phase / "09-PLAN.md", std::nullopt, {});
  EXPECT_EQ(r.verdict(), Verdict::Reject);
  auto f = by_check(r, "file");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->severity, Severity::High);
  EXPECT_NE(f[0]->issue.find("09-PLAN.md"), std::string::npos) << f[0]->issue;
  EXPECT_EQ(r.to_json()["ok"], false);
  auto with_phase = stage1_plan_file(test::real_world(), phase / "09-PLAN.md", phase, {});
  EXPECT_EQ(with_phase.verdict(), Verdict::Reject);
}

TEST_F(PhaseOnDisk, RootFoundFromPhase) {
  auto root = root_for_phase(test::real_world(), phase);
  ASSERT_TRUE(root);
  EXPECT_EQ(stdfs::weakly_canonical(*root), stdfs::weakly_canonical(tmp.path()));
}

TEST_F(PhaseOnDisk, ReviewPhaseRunsCrossChecks) {
  PlanSpec a, b, c;
  a.body = "**Files:** `src/new.cc` (new)\n";
  b.plan = "02";
  b.depends_on = "[01]";  // same wave: high
  c.plan = "03";
  c.wave = "2";
  c.depends_on = "[01]";
  write("01-PLAN.md", a);
  write("02-PLAN.md", b);
  write("03-PLAN.md", c);
  test::write_file(phase / "01-SUMMARY.md", "not a plan");
  auto rs = stage1_phase(test::real_world(), phase, {});
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].verdict(), Verdict::Approve) << rs[0].to_json().dump(2);
  EXPECT_EQ(rs[1].verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(rs[1], "wave_order").size(), 1u);
  EXPECT_EQ(rs[2].verdict(), Verdict::Approve) << rs[2].to_json().dump(2);
  for (const char* c2 :
       {"file_paths", "dependencies", "dependency_cycle", "wave_order", "file_overlap", "duplicate_id"})
    EXPECT_NE(find_check(rs[0], c2), nullptr) << c2;
}

TEST_F(PhaseOnDisk, ReviewPlanFileSeesSiblings) {
  PlanSpec a, b;
  b.plan = "02";
  b.wave = "2";
  b.depends_on = "[05]";
  write("01-PLAN.md", a);
  write("02-PLAN.md", b);
  auto alone = stage1_plan_file(test::real_world(), phase / "02-PLAN.md", std::nullopt, {});
  EXPECT_EQ(alone.verdict(), Verdict::Approve) << "without PHASE_DIR no cross-plan checks";
  auto in_phase = stage1_plan_file(test::real_world(), phase / "02-PLAN.md", phase, {});
  EXPECT_EQ(in_phase.verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(in_phase, "dependencies").size(), 1u);
}

TEST_F(PhaseOnDisk, BrokenSiblingDoesNotBreakThePhase) {
  PlanSpec a;
  write("01-PLAN.md", a);
  test::write_file(phase / "02-PLAN.md", "---\nphase: [\n---\n");
  std::string binary = "---\n";
  binary.push_back('\0');
  test::write_file(phase / "03-PLAN.md", binary);
  auto rs = stage1_phase(test::real_world(), phase, {});
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].verdict(), Verdict::Approve) << rs[0].to_json().dump(2);
  EXPECT_EQ(rs[1].verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(rs[1], "frontmatter").size(), 1u);
  EXPECT_EQ(rs[2].verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(rs[2], "file").size(), 1u);
  EXPECT_NE(rs[2].findings[0].issue.find("03-PLAN.md"), std::string::npos);
}

// `yolo execute` reads each plan once and reviews what it read: the same reviews as a
// fresh read of the folder, and the content it was given, not the file as it is later.
TEST_F(PhaseOnDisk, ReviewOfLoadedPlansEqualsReviewOfTheFolderAndUsesWhatWasRead) {
  PlanSpec a, b, c;
  a.body = "**Files:** `src/new.cc` (new)\n";
  b.plan = "02";
  b.depends_on = "[01]";  // same wave: high
  c.plan = "03";
  c.wave = "2";
  c.depends_on = "[01]";
  write("01-PLAN.md", a);
  write("02-PLAN.md", b);
  write("03-PLAN.md", c);
  test::write_file(phase / "04-PLAN.md", "---\nphase: [\n---\n");
  const World& w = test::real_world();
  std::vector<LoadedPlan> loaded;
  for (const auto& f : list_plan_files(w, phase)) loaded.push_back({f, load_plan(w, f)});
  loaded.push_back({phase / "05-PLAN.md", load_plan(w, phase / "05-PLAN.md")});  // unreadable: a `file` reject
  auto fresh = stage1_phase(w, phase, {});
  auto given = stage1_phase(w, phase, loaded, {});
  ASSERT_EQ(fresh.size(), 4u);
  ASSERT_EQ(given.size(), 5u);
  for (size_t i = 0; i < fresh.size(); ++i) EXPECT_EQ(given[i].to_json(), fresh[i].to_json()) << i;
  EXPECT_EQ(given[4].verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(given[4], "file").size(), 1u);
  // Plan 02 fixed on disk after it was read: the review is of the content read.
  b.depends_on = "[]";
  write("02-PLAN.md", b);
  auto again = stage1_phase(w, phase, loaded, {});
  EXPECT_EQ(again[1].verdict(), Verdict::Reject);
  EXPECT_EQ(by_check(again[1], "wave_order").size(), 1u);
  EXPECT_EQ(stage1_phase(w, phase, {})[1].verdict(), Verdict::Approve);
}

TEST_F(PhaseOnDisk, OversizePlanIsRefused) {
  PlanSpec a;
  a.body = std::string(2000, 'x') + "\n";
  write("01-PLAN.md", a);
  Stage1Options o;
  o.max_file_bytes = 1000;
  auto r = stage1_plan_file(test::real_world(), phase / "01-PLAN.md", std::nullopt, o);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
  ASSERT_EQ(by_check(r, "file").size(), 1u);
  EXPECT_NE(r.findings[0].issue.find("limit"), std::string::npos) << r.findings[0].issue;
}

TEST_F(PhaseOnDisk, FilePathsUseTheProjectRoot) {
  test::write_file(tmp / "src/real.cc", "x");
  PlanSpec a;
  a.body = "**Files:** `src/real.cc`, `src/ghost.cc`\n";
  write("01-PLAN.md", a);
  auto r = stage1_plan_file(test::real_world(), phase / "01-PLAN.md", phase, {});
  auto f = by_check(r, "file_paths");
  ASSERT_EQ(f.size(), 1u) << r.to_json().dump(2);
  EXPECT_EQ(f[0]->extra["path"], "src/ghost.cc");
  EXPECT_EQ(r.verdict(), Verdict::Conditional);
}

}  // namespace
}  // namespace yolo
