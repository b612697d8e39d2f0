// The project at a glance (protocol/overview): which review record is each plan's.
#include "protocol/status/overview.h"

#include <gtest/gtest.h>

#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using test::TempDir;

struct Project {
  TempDir root;
  stdfs::path phase;
  Project() {
    test::copy_fixture("demo", root.path());
    phase = root / ".yolo-planning" / "phases" / "01-demo";
  }
  std::string plan(const std::string& name) const { return (phase / name).string(); }
  std::string rel(const std::string& name) const { return ".yolo-planning/phases/01-demo/" + name; }
  void record(const std::string& id, json rec) const {
    ASSERT_EQ(review_ledger::record(test::real_world(), root.path(), phase, id, std::move(rec)).error, "");
  }
};

json rec(const std::string& verdict, const std::string& path, const std::string& source = "reviewer") {
  json r = {{"hash", "h"}, {"verdict", verdict}, {"source", source}};
  if (!path.empty()) r["path"] = path;
  return r;
}

TEST(Overview, RecordsAreMatchedToPlansByTheirPathWithoutReadingThePlans) {
  Project p;
  p.record("01-01", rec("approve", p.rel("01-01-PLAN.md")));
  p.record("01-02", rec("reject", p.rel("01-02-PLAN.md"), "fallback"));
  // The record names the plan's file: its frontmatter is not read (a plan broken since its
  // review still shows its last review; the review itself re-runs when the watcher sees it).
  test::write_file(p.plan("01-02-PLAN.md"), "no frontmatter any more\n");
  auto o = project_overview(test::real_world(), p.root.path());
  const auto& ph = o["phases"][0];
  EXPECT_EQ(ph["plans"], 4);
  EXPECT_EQ(ph["reviewed"], 2);
  EXPECT_EQ(ph["approved"], 1);
  EXPECT_EQ(ph["rejected"], 1);
  EXPECT_EQ(ph["fallback"], 1);
  EXPECT_EQ(o["totals"]["reviewed"], 2);
}

TEST(Overview, ARecordWithoutAPathOrForAMovedPlanIsFoundByThePlansId) {
  Project p;
  p.record("01-01", rec("conditional", ""));                        // written without a path
  p.record("01-03", rec("approve", p.rel("03-old-name-PLAN.md")));  // the plan was renamed since
  auto o = project_overview(test::real_world(), p.root.path());
  const auto& ph = o["phases"][0];
  EXPECT_EQ(ph["reviewed"], 2);
  EXPECT_EQ(ph["conditional"], 1);
  EXPECT_EQ(ph["approved"], 1);
}

TEST(Overview, TwoRecordsNamingOneFileAreSettledByThePlansCurrentId) {
  Project p;
  // 01-04's file was re-numbered to plan 05 after its review: both records name the file;
  // the plan's id now says which one is its own.
  p.record("01-04", rec("reject", p.rel("01-04-PLAN.md")));
  p.record("01-05", rec("approve", p.rel("01-04-PLAN.md")));
  auto text = test::read_file(p.plan("01-04-PLAN.md"));
  auto at = text.find("plan: \"04\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "plan: \"05\"");
  test::write_file(p.plan("01-04-PLAN.md"), text);
  auto o = project_overview(test::real_world(), p.root.path());
  const auto& ph = o["phases"][0];
  EXPECT_EQ(ph["reviewed"], 1);
  EXPECT_EQ(ph["approved"], 1);
  EXPECT_EQ(ph["rejected"], 0);
}

TEST(Overview, APlanWithNoRecordIsNotReviewed) {
  Project p;
  p.record("01-01", rec("approve", p.rel("01-01-PLAN.md")));
  auto o = project_overview(test::real_world(), p.root.path());
  EXPECT_EQ(o["phases"][0]["reviewed"], 1);
  EXPECT_EQ(o["totals"]["plans"], 4);
}

}  // namespace
}  // namespace yolo

namespace yolo {
namespace {
// Many phases are counted on several threads (a cold status): every row is each phase's own,
// in folder order, whatever thread computed it.
TEST(Overview, ManyPhasesComputedOnSeveralThreadsKeepTheirOwnRowsInOrder) {
  TempDir root;
  test::copy_fixture("demo", root.path());
  const stdfs::path phases = root / ".yolo-planning" / "phases";
  const stdfs::path demo = phases / "01-demo";
  const int kPhases = 40;  // more than the threads' minimum share on any machine
  for (int ph = 2; ph <= kPhases; ++ph) {
    char name[32];
    std::snprintf(name, sizeof name, "%02d-copy", ph);
    stdfs::create_directories(phases / name);
    // Phase N holds N % 4 + 1 of the demo's plans, and N % 3 of them are approved.
    int plans = ph % 4 + 1;
    int i = 0;
    for (const auto& e : stdfs::directory_iterator(demo)) {
      if (!is_plan_filename(e.path().filename().string()) || i >= plans) continue;
      stdfs::copy_file(e.path(), phases / name / e.path().filename());
      if (i < ph % 3) {
        ASSERT_EQ(review_ledger::record(test::real_world(), root.path(), phases / name, "p" + std::to_string(i),
                                        rec("approve", ".yolo-planning/phases/" + std::string(name) + "/" +
                                                           e.path().filename().string()))
                      .error,
                  "");
      }
      ++i;
    }
  }
  auto o = project_overview(test::real_world(), root.path());
  ASSERT_EQ(o["phases"].size(), static_cast<size_t>(kPhases));
  long long approved = 0;
  for (int ph = 2; ph <= kPhases; ++ph) {
    const auto& row = o["phases"][ph - 1];
    char name[32];
    std::snprintf(name, sizeof name, "%02d-copy", ph);
    EXPECT_EQ(row["folder"], name);
    EXPECT_EQ(row["plans"], std::min(ph % 4 + 1, 4)) << name;
    EXPECT_EQ(row["approved"], std::min(ph % 3, ph % 4 + 1)) << name;
    approved += std::min(ph % 3, ph % 4 + 1);
  }
  EXPECT_EQ(o["totals"]["approved"], approved);
  EXPECT_EQ(o["totals"]["phases"], kPhases);
  // The same answer again, from the cache or computed again.
  EXPECT_EQ(project_overview(test::real_world(), root.path())["phases"], o["phases"]);
}
// Without --all, a status shows the phases with work left (and the run's phase), at most a
// fixed number of rows; the totals still count every phase, and what was left out is said.
TEST(Overview, TheBoundedOverviewKeepsThePhasesWithWorkLeftAndSaysWhatItLeftOut) {
  json o = {{"phases", json::array()}, {"totals", {{"phases", 100}}}};
  for (int i = 1; i <= 100; ++i) {
    char folder[16];
    std::snprintf(folder, sizeof folder, "%03d-p", i);
    long long plans = 4, summaries = i <= 60 ? 4 : 1;  // 1-60 complete, 61-100 with work left
    o["phases"].push_back({{"folder", folder}, {"plans", plans}, {"summaries", summaries}});
  }
  json b = bounded_overview(o, "005-p", 30);
  ASSERT_EQ(b["phases"].size(), 30u);
  EXPECT_EQ(b["phases"][0]["folder"], "005-p") << "the run's phase, complete or not";
  EXPECT_EQ(b["phases"][1]["folder"], "061-p") << "then the phases with work left, in folder order";
  EXPECT_EQ(b["phases"][29]["folder"], "089-p");
  EXPECT_EQ(b["phases_omitted"]["complete"], 59);
  EXPECT_EQ(b["phases_omitted"]["more"], 11);
  EXPECT_NE(b["phases_omitted"]["hint"].get<std::string>().find("--all"), std::string::npos);
  EXPECT_EQ(b["totals"], o["totals"]) << "the totals count every phase";
  // Every row fits: nothing changes, nothing is added.
  EXPECT_EQ(bounded_overview(o, "005-p", 100), o);
  // A run's phase that is not a folder (or no run): only the phases with work left.
  json none = bounded_overview(o, "", 50);
  EXPECT_EQ(none["phases"].size(), 40u);
  EXPECT_EQ(none["phases_omitted"]["complete"], 60);
  EXPECT_EQ(none["phases_omitted"]["more"], 0);
}

}  // namespace
}  // namespace yolo
