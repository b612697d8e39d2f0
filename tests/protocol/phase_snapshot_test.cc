// PhaseSnapshots (protocol/review/phase_snapshot.h): a review pass answers every plan's cross-plan
// checks from one load of its phase, with exactly the findings stage1_plan_file computes
// without it, and follows the plan under review when its content changes.
#include "protocol/review/phase_snapshot.h"

#include <gtest/gtest.h>

#include <set>

#include "protocol/review/stage1.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

std::string plan(const std::string& n, int wave, const std::string& deps = "[]",
                 const std::string& file = "src/a.txt") {
  return "---\nphase: \"01\"\nplan: \"" + n + "\"\ntitle: \"P" + n + "\"\nwave: " + std::to_string(wave) +
         "\ndepends_on: " + deps + "\nmust_haves:\n  - \"it works\"\n---\n\n## Task 1: Do it\n\n**Files:** `" + file +
         "`\n";
}

// Three plans of one phase: 01-02 (wave 2) depends on 01-01 (wave 1); 01-03 is in wave 2 too.
stdfs::path three_plans(const test::TempDir& d) {
  stdfs::path ph = d / ".yolo-planning/phases/01-x";
  test::write_file(ph / "01-01-PLAN.md", plan("01", 1));
  test::write_file(ph / "01-02-PLAN.md", plan("02", 2, "[\"01\"]", "src/b.txt"));
  test::write_file(ph / "01-03-PLAN.md", plan("03", 2, "[]", "src/c.txt"));
  return ph;
}

// Whether the review of plan `name` through the snapshot has a finding of `check`.
bool has_finding(PhaseSnapshots& snaps, const stdfs::path& ph, const std::string& name, const std::string& check) {
  Stage1Options with;
  with.snapshots = &snaps;
  for (const auto& f : stage1_plan_file(test::real_world(), ph / name, ph, with).findings)
    if (f.check == check) return true;
  return false;
}

// Every plan of the folder reviewed with and without the snapshot: the same review.
void expect_same(const stdfs::path& dir, PhaseSnapshots& snaps, const World& w = test::real_world()) {
  Stage1Options plain;
  Stage1Options with = plain;
  with.snapshots = &snaps;
  for (const auto& f : list_plan_files(w, dir)) {
    json a = stage1_plan_file(w, f, dir, plain).to_json();
    json b = stage1_plan_file(w, f, dir, with).to_json();
    EXPECT_EQ(a, b) << f;
  }
}

TEST(PhaseSnapshot, SameFindingsAsReviewPlanFileWithOneComputation) {
  test::TempDir d;
  stdfs::path ph = d / ".yolo-planning/phases/01-x";
  test::write_file(ph / "01-01-PLAN.md", plan("01", 1));
  test::write_file(ph / "01-02-PLAN.md", plan("02", 1));                           // same file, same wave
  test::write_file(ph / "01-03-PLAN.md", plan("03", 1, "[\"04\"]"));               // depends on a later wave
  test::write_file(ph / "01-04-PLAN.md", plan("04", 2, "[\"05\"]", "b"));          // cycle 04 -> 05 -> 04
  test::write_file(ph / "01-05-PLAN.md", plan("05", 3, "[\"04\", \"99\"]", "c"));  // and an unknown one
  test::write_file(ph / "01-06-PLAN.md", plan("05", 4, "[]", "d"));                // duplicate id 01-05
  test::write_file(ph / "01-07-PLAN.md", "---\nphase: [\n---\nbroken\n");          // frontmatter error
  PhaseSnapshots snaps;
  expect_same(ph, snaps);
  EXPECT_EQ(snaps.recomputes(), 2u);  // once for the phase, once for the broken plan as itself
}

TEST(PhaseSnapshot, ThePlanUnderReviewIsReadFreshAndTakesItsPlace) {
  test::TempDir d;
  stdfs::path ph = d / ".yolo-planning/phases/01-x";
  test::write_file(ph / "01-01-PLAN.md", plan("01", 1));
  test::write_file(ph / "01-02-PLAN.md", plan("02", 2, "[\"01\"]", "b"));
  PhaseSnapshots snaps;
  expect_same(ph, snaps);
  size_t before = snaps.recomputes();
  // 01-01 is revised (as an architect would): it now clashes with nothing but waits for 02.
  test::write_file(ph / "01-01-PLAN.md", plan("01", 3, "[\"02\"]"));
  expect_same(ph, snaps);  // its own review sees the new content, and so does 02's
  EXPECT_GT(snaps.recomputes(), before);
  Stage1Options with;
  with.snapshots = &snaps;
  auto r = stage1_plan_file(test::real_world(), ph / "01-02-PLAN.md", ph, with);
  bool cycle = false;
  for (const auto& f : r.findings) cycle = cycle || f.check == "dependency_cycle";
  EXPECT_TRUE(cycle) << r.to_json().dump();
}

// Kept across passes (the watcher's fresh lane): a save that changes only a plan's text runs
// no checks again; one that changes what the checks read (files, waves, dependencies) does;
// a sibling said to have changed is read again, a plan that came or went lists the folder
// again; every answer is the one stage1_plan_file gives without the snapshot.
TEST(PhaseSnapshot, KeptAcrossPassesFollowsChangedPlansAndRechecksOnlyWhenTheirFactsChange) {
  test::TempDir d;
  stdfs::path ph = three_plans(d);
  PhaseSnapshots snaps;
  expect_same(ph, snaps);
  size_t n = snaps.recomputes();
  // The text of 01-01 changes (its title), nothing the checks read: no recompute.
  std::string t = plan("01", 1);
  t.replace(t.find("title: \"P01\""), 12, "title: \"New\"");
  test::write_file(ph / "01-01-PLAN.md", t);
  snaps.changed(test::real_world(), ph / "01-01-PLAN.md");
  expect_same(ph, snaps);
  EXPECT_EQ(snaps.recomputes(), n);
  // A sibling now touches 01-02's file in its wave: said changed, read again, checks rerun.
  test::write_file(ph / "01-03-PLAN.md", plan("03", 2, "[]", "src/b.txt"));
  snaps.changed(test::real_world(), ph / "01-03-PLAN.md");
  EXPECT_TRUE(has_finding(snaps, ph, "01-02-PLAN.md", "file_overlap"));
  EXPECT_GT(snaps.recomputes(), n);
  expect_same(ph, snaps);
  // A new plan, then a removed one: the folder is listed again.
  test::write_file(ph / "01-04-PLAN.md", plan("01", 3, "[]", "src/z.txt"));  // duplicate id 01-01
  snaps.changed(test::real_world(), ph / "01-04-PLAN.md");
  expect_same(ph, snaps);
  stdfs::remove(ph / "01-04-PLAN.md");
  snaps.changed(test::real_world(), ph / "01-04-PLAN.md");
  expect_same(ph, snaps);
}

// A phase prepared away from the snapshot (the watcher does it on a worker thread during a
// save's debounce) and adopted answers as a phase loaded on first use, its checks already
// run; a plan written after prepare() and reported with changed() is read again; a phase the
// snapshot holds already is not replaced.
TEST(PhaseSnapshot, APreparedPhaseAdoptedAnswersAsOneLoadedOnFirstUse) {
  test::TempDir d;
  stdfs::path ph = three_plans(d);
  auto prepared = PhaseSnapshots::prepare(test::real_world(), ph, Stage1Options{}.max_file_bytes);
  // Written after it was prepared: now it touches 01-02's file in the same wave.
  test::write_file(ph / "01-03-PLAN.md", plan("03", 2, "[]", "src/b.txt"));
  PhaseSnapshots snaps;
  EXPECT_FALSE(snaps.holds(ph));
  ASSERT_TRUE(snaps.adopt(ph, std::move(prepared)));
  EXPECT_TRUE(snaps.holds(ph));
  snaps.changed(test::real_world(), ph / "01-03-PLAN.md");
  EXPECT_TRUE(has_finding(snaps, ph, "01-02-PLAN.md", "file_overlap"))
      << "the plan written after prepare() was read again";
  expect_same(ph, snaps);
  // Held already: a later prepared copy is dropped, whatever it holds.
  test::write_file(ph / "01-01-PLAN.md", plan("01", 1, "[]", "src/z.txt"));
  EXPECT_FALSE(snaps.adopt(ph, PhaseSnapshots::prepare(test::real_world(), ph, Stage1Options{}.max_file_bytes)));
  snaps.changed(test::real_world(), ph / "01-01-PLAN.md");
  expect_same(ph, snaps);
}

// Prepared with nothing written since: no check runs again when it is used.
TEST(PhaseSnapshot, APreparedPhaseNeedsNoRecheckWhenNothingChanged) {
  test::TempDir d;
  stdfs::path ph = d / ".yolo-planning/phases/01-x";
  for (int i = 1; i <= 20; ++i) {
    std::string n = (i < 10 ? "0" : "") + std::to_string(i);
    test::write_file(ph / ("01-" + n + "-PLAN.md"), plan(n, 1 + i % 3, "[]", "src/f" + n + ".txt"));
  }
  PhaseSnapshots snaps;
  ASSERT_TRUE(snaps.adopt(ph, PhaseSnapshots::prepare(test::real_world(), ph, Stage1Options{}.max_file_bytes)));
  expect_same(ph, snaps);
  EXPECT_EQ(snaps.recomputes(), 0u);
}

TEST(PhaseSnapshot, KeepsAtMostMaxPlansDroppingTheLeastRecentlyUsedPhase) {
  test::TempDir d;
  stdfs::path a = d / ".yolo-planning/phases/01-a", b = d / ".yolo-planning/phases/02-b";
  for (const auto& ph : {a, b}) {
    test::write_file(ph / "01-01-PLAN.md", plan("01", 1));
    test::write_file(ph / "01-02-PLAN.md", plan("02", 1, "[]", "b"));
  }
  PhaseSnapshots snaps(nullptr, 3);
  expect_same(a, snaps);
  size_t n = snaps.recomputes();
  expect_same(b, snaps);  // a is dropped to keep b
  EXPECT_GT(snaps.recomputes(), n);
  n = snaps.recomputes();
  expect_same(a, snaps);  // loaded and checked again
  EXPECT_GT(snaps.recomputes(), n);
}

TEST(PhaseSnapshot, APlanOutsideTheFolderIsLeftToTheCaller) {
  test::TempDir d;
  stdfs::path ph = d / ".yolo-planning/phases/01-x";
  test::write_file(ph / "01-01-PLAN.md", plan("01", 1));
  test::write_file(d / "elsewhere/01-02-PLAN.md", plan("02", 1));
  PhaseSnapshots snaps;
  auto l = load_plan(test::real_world(), d / "elsewhere/01-02-PLAN.md");
  ASSERT_TRUE(l.plan);
  EXPECT_FALSE(snaps.cross_for(test::real_world(), ph, d / "elsewhere/01-02-PLAN.md", *l.plan, 1 << 20).has_value());
  Stage1Options plain, with;
  with.snapshots = &snaps;
  EXPECT_EQ(stage1_plan_file(test::real_world(), d / "elsewhere/01-02-PLAN.md", ph, plain).to_json(),
            stage1_plan_file(test::real_world(), d / "elsewhere/01-02-PLAN.md", ph, with).to_json());
}

TEST(PhaseSnapshot, EveryCorpusPhaseGivesTheSameReviews) {
  stdfs::path corpus = test::corpus_dir();
  if (!stdfs::exists(corpus)) GTEST_SKIP() << "no corpus at " << corpus;
  std::set<stdfs::path> dirs;
  for (auto it = stdfs::recursive_directory_iterator(corpus); it != stdfs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file() && is_plan_filename(it->path().filename().string()))
      dirs.insert(it->path().parent_path());
  ASSERT_FALSE(dirs.empty());
  // No key: the corpus is read-only, no store of cross-plan facts is written into it.
  seal::Key none{"", "no key"};
  World w{fs::real_disk(), system_clock(), &none, nullptr, nullptr};
  PhaseSnapshots snaps;
  for (const auto& dir : dirs) expect_same(dir, snaps, w);
}

}  // namespace
}  // namespace yolo
