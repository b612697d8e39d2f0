// The watcher's core stepped one event at a time: a file tree in memory, a fixed clock, and
// the timers fired by the test. What `yolo watch` decides (debounce, lanes, rescans, which
// plans to review, when execute runs) is checked here without inotify, threads or children.
#include "protocol/watch/watch_core.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/run/execute_rules.h"
#include "protocol/review/review_loop.h"
#include "protocol/state/state.h"

namespace yolo::watch {
namespace {

namespace stdfs = std::filesystem;

const stdfs::path kRoot = "/repo";
const stdfs::path kPlanning = kRoot / ".yolo-planning";
const stdfs::path kPhase1 = kPlanning / "phases" / "01-core";
const stdfs::path kPhase2 = kPlanning / "phases" / "02-more";

std::string plan_text(const std::string& phase, const std::string& plan, const std::string& body = "Do it.") {
  return "---\nphase: \"" + phase + "\"\nplan: \"" + plan + "\"\ntitle: T" + plan +
         "\nwave: 1\ndepends_on: []\nmust_haves:\n  - it works\n---\n\n## Task 1: work\n" + body + "\n";
}

// The driver the runner is, in miniature: carries out the core's actions at once (a review
// batch stays "running" until the test ends it), and a settle timer the test advances.
struct Rig {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-27T10:00:00Z"};
  World w{disk, clock, nullptr};
  long long now = 0;
  std::optional<long long> settle_at, retry_at;
  std::vector<ReviewBatch> running;  // batches started and not ended, in start order
  std::vector<ReviewBatch> started;  // every batch ever started
  std::vector<json> said;            // the JSON lines
  int executes = 0, gate_requests = 0;
  bool defer_learning = false;  // Learn actions wait in `learns` (a worker thread still reading)
  std::vector<std::pair<stdfs::path, bool>> learns;
  std::unique_ptr<Core> core;

  explicit Rig(bool drive = false, long long debounce = 20) {
    EXPECT_TRUE(disk.make_dirs(kPlanning / "phases").ok());
    CoreOptions o;
    o.root = kRoot;
    o.drive_asked = drive;
    o.debounce_ms = debounce;
    o.now_ms = [this] { return now; };
    core = std::make_unique<Core>(w, o);
  }
  void start() {
    core->start();
    drain();
  }
  void drain() {
    for (auto actions = core->take_actions(); !actions.empty(); actions = core->take_actions())
      for (auto& a : actions) {
        switch (a.kind) {
          case Action::Kind::ArmSettle:
            settle_at = now + a.ms;
            break;
          case Action::Kind::ArmRetry:
            retry_at = now + a.ms;
            break;
          case Action::Kind::Review:
            running.push_back(a.batch);
            started.push_back(a.batch);
            break;
          case Action::Kind::RunExecute:
            ++executes;
            break;
          case Action::Kind::RequestGate:
            ++gate_requests;
            break;
          case Action::Kind::Learn:
            if (defer_learning)
              learns.emplace_back(a.dir, a.plans_only);
            else
              core->phase_learnt(learn_phase(w, kRoot, a.dir, a.plans_only));
            break;
          case Action::Kind::Say:
            said.push_back(a.event);
            break;
          case Action::Kind::ReloadConfig:
          case Action::Kind::Warm:
            break;
        }
      }
  }
  // Time passes; a timer that falls due fires.
  void advance(long long ms) {
    now += ms;
    if (settle_at && *settle_at <= now) {
      settle_at.reset();
      core->settle();
      drain();
    }
    if (retry_at && *retry_at <= now) {
      retry_at.reset();
      core->retry_fired();
      drain();
    }
  }
  // The worker thread of the oldest Learn action finishes.
  void learn_one() {
    ASSERT_FALSE(learns.empty());
    auto [dir, plans_only] = learns.front();
    learns.erase(learns.begin());
    core->phase_learnt(learn_phase(w, kRoot, dir, plans_only));
    drain();
  }
  void event(const stdfs::path& p, bool gone = false) {
    core->path_changed(p, gone);
    drain();
  }
  // The batch of `lane` ends, having reviewed (and recorded) each plan as it is on disk now,
  // or as `as_of` says.
  void end_review(Lane lane, bool recorded = true, const std::map<stdfs::path, std::string>& as_of = {}) {
    auto it = std::find_if(running.begin(), running.end(), [&](const ReviewBatch& b) { return b.lane == lane; });
    ASSERT_NE(it, running.end()) << "no batch running in that lane";
    ReviewBatch b = *it;
    running.erase(it);
    std::vector<Core::Reviewed> rows;
    for (const auto& p : b.plans) {
      auto a = as_of.find(p);
      std::string hash = a != as_of.end() ? a->second : review::file_hash(w, p);
      rows.push_back({p, p.stem().string(), hash});
    }
    if (!recorded) core->unrecorded(rows);
    core->reviews_ended(lane, rows, recorded);
    drain();
  }
  // Every batch ends, and the ones they lead to, until nothing runs.
  void review_all() {
    while (!running.empty()) end_review(running.front().lane);
  }
  size_t count(const std::string& event) const {
    return std::count_if(said.begin(), said.end(), [&](const json& j) { return j.value("event", "") == event; });
  }
  std::string said_text() const {
    std::string s;
    for (const auto& j : said) s += j.dump() + "\n";
    return s;
  }
};

stdfs::path plan(const stdfs::path& phase, const std::string& n) { return phase / (n + "-PLAN.md"); }

// A project with three plans in phase 1 and two in phase 2, all reviewed as they are.
void reviewed_project(Rig& r) {
  for (const char* n : {"01", "02", "03"}) r.disk.put(plan(kPhase1, n), plan_text("01", n));
  for (const char* n : {"01", "02"}) r.disk.put(plan(kPhase2, n), plan_text("02", n));
  r.start();
  r.review_all();  // the backlog: nothing was reviewed before
  r.started.clear();
  r.said.clear();
}

TEST(WatchCore, AnEditorsSaveReviewsThePlanOnceAfterTheDebounce) {
  Rig r;
  reviewed_project(r);
  const auto p = plan(kPhase1, "02");
  // vim: a probe file, a swap file, the new content under a temp name, then a rename.
  r.disk.put(kPhase1 / "4913", "");
  r.event(kPhase1 / "4913");
  r.disk.remove(kPhase1 / "4913");
  r.event(kPhase1 / "4913", true);
  r.event(kPhase1 / ".02-PLAN.md.swp");
  EXPECT_FALSE(r.settle_at) << "noise arms nothing";
  r.disk.put(kPhase1 / "02-PLAN.md.tmp", plan_text("01", "02", "Do it better."));
  r.event(kPhase1 / "02-PLAN.md.tmp");
  r.disk.remove(kPhase1 / "02-PLAN.md.tmp");
  r.disk.put(p, plan_text("01", "02", "Do it better."));
  r.event(kPhase1 / "02-PLAN.md.tmp", true);
  r.event(p, true);  // the rename: the old file went...
  r.event(p);        // ...and the new one came
  r.advance(10);
  r.event(p);  // a last attribute change re-arms the debounce
  r.advance(15);
  EXPECT_TRUE(r.started.empty()) << "nothing is reviewed before the debounce has passed";
  r.advance(10);
  ASSERT_EQ(r.started.size(), 1u) << r.said_text();
  EXPECT_EQ(r.started[0].lane, Lane::Fresh);
  EXPECT_EQ(r.started[0].plans, std::vector<stdfs::path>{p});
  EXPECT_EQ(r.count("plan_changed"), 1u);
  r.review_all();
  r.advance(1000);
  EXPECT_EQ(r.started.size(), 1u) << "reviewed once";
}

TEST(WatchCore, ATouchWithoutAChangeOfContentReviewsNothing) {
  Rig r;
  reviewed_project(r);
  r.event(plan(kPhase1, "01"));
  r.event(plan(kPhase2, "02"));
  r.advance(100);
  EXPECT_TRUE(r.started.empty()) << r.said_text();
  EXPECT_EQ(r.count("plan_changed"), 0u);
  // The same bytes written again (an editor saving an unchanged buffer) are no change either.
  r.disk.put(plan(kPhase1, "01"), plan_text("01", "01"));
  r.event(plan(kPhase1, "01"));
  r.advance(100);
  EXPECT_TRUE(r.started.empty());
}

TEST(WatchCore, ACheckoutChangingManyPlansAtOnceIsOneBatchOfExactlyThose) {
  Rig r;
  reviewed_project(r);
  const std::vector<stdfs::path> changed{plan(kPhase1, "01"), plan(kPhase1, "03"), plan(kPhase2, "02")};
  for (const auto& p : changed) {
    r.disk.put(p, plan_text(p.parent_path() == kPhase1 ? "01" : "02", p.stem().string().substr(0, 2), "other branch"));
    r.event(p);
    r.advance(2);  // git writes them a few milliseconds apart: inside one debounce
  }
  r.event(plan(kPhase1, "02"));  // checked out, same content
  r.advance(50);
  ASSERT_EQ(r.started.size(), 1u) << r.said_text();
  auto got = r.started[0].plans;
  std::sort(got.begin(), got.end());
  auto want = changed;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(r.started[0].lane, Lane::Fresh);
}

TEST(WatchCore, AnOverflowRescansAndFindsExactlyThePlansThatChanged) {
  Rig r;
  reviewed_project(r);
  // Changes whose events the kernel dropped: one plan edited, one removed, one added.
  r.disk.put(plan(kPhase2, "01"), plan_text("02", "01", "edited unseen"));
  r.disk.remove(plan(kPhase1, "03"));
  r.disk.put(plan(kPhase2, "03"), plan_text("02", "03"));
  r.core->overflow("the kernel's event queue overflowed");
  r.drain();
  EXPECT_EQ(r.count("rescan"), 1u);
  ASSERT_TRUE(r.settle_at);
  r.advance(20);
  ASSERT_EQ(r.started.size(), 1u) << r.said_text();
  auto got = r.started[0].plans;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<stdfs::path>{plan(kPhase2, "01"), plan(kPhase2, "03")}));
  EXPECT_EQ(r.started[0].lane, Lane::Fresh) << "a few plans: what a person just did";
  EXPECT_FALSE(r.core->plan_hash(plan(kPhase1, "03"))) << "the removed plan is forgotten";
  r.review_all();
  r.advance(3000);  // a quiet spell
  // A flood: overflows less than 2 s apart wait longer each time, and one folded into a
  // waiting rescan is not said again.
  r.core->overflow("again");
  r.drain();
  r.advance(500);
  r.core->overflow("again");
  r.drain();
  ASSERT_TRUE(r.settle_at);
  EXPECT_EQ(*r.settle_at - r.now, 100);
  r.core->overflow("again");
  r.drain();
  EXPECT_EQ(*r.settle_at - r.now, 200);
  EXPECT_EQ(r.count("rescan"), 3u) << "the third overflow was folded into the waiting rescan";
  r.advance(200);
  EXPECT_EQ(r.started.size(), 1u) << "nothing changed: the rescan reviews nothing";
}

TEST(WatchCore, TheBacklogFoundAtStartNeverHoldsBackAFreshSave) {
  Rig r;
  for (const char* n : {"01", "02", "03", "04"}) r.disk.put(plan(kPhase1, n), plan_text("01", n));
  r.core->configure(/*agents=*/true);  // each backlog batch is one plan (an agent call)
  r.start();
  EXPECT_EQ(r.count("backlog"), 1u) << r.said_text();
  EXPECT_EQ(r.count("plan_changed"), 0u) << "the backlog is said in one line";
  ASSERT_EQ(r.running.size(), 1u);
  EXPECT_EQ(r.running[0].lane, Lane::Backlog);
  EXPECT_EQ(r.running[0].plans.size(), 1u);
  // The person saves plan 04 (still queued in the backlog): it moves to the fresh lane and
  // starts now, beside the backlog batch.
  const auto p4 = plan(kPhase1, "04");
  r.disk.put(p4, plan_text("01", "04", "edited"));
  r.event(p4);
  r.advance(20);
  ASSERT_EQ(r.running.size(), 2u) << r.said_text();
  EXPECT_EQ(r.running[1].lane, Lane::Fresh);
  EXPECT_EQ(r.running[1].plans, std::vector<stdfs::path>{p4});
  r.review_all();
  // Each plan was reviewed once: 01..03 in the backlog, 04 fresh only.
  std::map<stdfs::path, int> times;
  for (const auto& b : r.started)
    for (const auto& p : b.plans) ++times[p];
  EXPECT_EQ(times.size(), 4u);
  for (const auto& [p, n] : times) EXPECT_EQ(n, 1) << p;
  EXPECT_EQ(r.count("backlog_done"), 1u);
}

// A save in a phase the background learning has not reached yet is a fresh review at once;
// the rest of that phase is the backlog, found when its learning ends, and the saved plan is
// not reviewed a second time there.
TEST(WatchCore, ASaveInAPhaseNotLearntYetIsFreshAndItsSiblingsAreTheBacklog) {
  Rig r;
  r.defer_learning = true;
  for (const char* n : {"01", "02"}) r.disk.put(plan(kPhase1, n), plan_text("01", n));
  for (const char* n : {"01", "02", "03"}) r.disk.put(plan(kPhase2, n), plan_text("02", n));
  r.start();
  EXPECT_EQ(r.core->plans_listed(), 5u);
  ASSERT_EQ(r.learns.size(), 1u) << "one phase at a time";
  EXPECT_EQ(r.learns[0].first, kPhase1);
  const auto p = plan(kPhase2, "02");
  r.disk.put(p, plan_text("02", "02", "edited"));
  r.event(p);
  r.advance(20);
  ASSERT_EQ(r.started.size(), 1u) << r.said_text();
  EXPECT_EQ(r.started[0].lane, Lane::Fresh);
  EXPECT_EQ(r.started[0].plans, std::vector<stdfs::path>{p});
  EXPECT_EQ(r.count("plan_changed"), 1u);
  // The learning waits while the fresh lane runs; then goes on, the edited phase first.
  r.learn_one();  // phase 1 (its worker was already reading)
  EXPECT_TRUE(r.learns.empty()) << "paused behind the save's review";
  r.end_review(Lane::Fresh);
  ASSERT_EQ(r.learns.size(), 1u);
  EXPECT_EQ(r.learns[0].first, kPhase2);
  EXPECT_TRUE(r.learns[0].second) << "its ledger was loaded by the save: only its plans are left";
  r.learn_one();
  EXPECT_EQ(r.count("phases_learnt"), 1u);
  EXPECT_EQ(r.count("backlog"), 1u);
  r.review_all();
  std::map<stdfs::path, int> times;
  for (const auto& b : r.started)
    for (const auto& q : b.plans) ++times[q];
  EXPECT_EQ(times.size(), 5u) << r.said_text();
  for (const auto& [q, n] : times) EXPECT_EQ(n, 1) << q;
}

TEST(WatchCore, AnEditDuringItsOwnReviewIsReviewedAgainOnlyIfItsContentStillDiffers) {
  Rig r;
  reviewed_project(r);
  const auto p = plan(kPhase1, "01");
  const std::string v1 = plan_text("01", "01", "v1"), v2 = plan_text("01", "01", "v2");
  r.disk.put(p, v1);
  r.event(p);
  r.advance(20);
  ASSERT_EQ(r.running.size(), 1u);
  const std::string h1 = review::file_hash(r.w, p);
  // Saved again while its review runs: queued behind it, never two reviews of it at once.
  r.disk.put(p, v2);
  r.event(p);
  r.advance(20);
  EXPECT_EQ(r.running.size(), 1u) << "not reviewed twice at once";
  r.end_review(Lane::Fresh, true, {{p, h1}});  // the review read v1
  ASSERT_EQ(r.running.size(), 1u) << "v2 is reviewed once the v1 review has ended";
  EXPECT_EQ(r.running[0].plans, std::vector<stdfs::path>{p});
  r.review_all();
  EXPECT_EQ(r.started.size(), 2u);

  // Edited, then put back while its review runs: the review that ends covers what is on
  // disk, so the queued entry is dropped, not reviewed a second time.
  r.started.clear();
  const std::string v3 = plan_text("01", "01", "v3");
  r.disk.put(p, v1);
  r.event(p);
  r.advance(20);
  ASSERT_EQ(r.running.size(), 1u);
  r.disk.put(p, v3);
  r.event(p);
  r.advance(20);
  r.disk.put(p, v1);
  r.event(p);
  r.advance(20);
  EXPECT_EQ(r.running.size(), 1u);
  r.end_review(Lane::Fresh);  // it read v1, what is on disk now
  EXPECT_TRUE(r.running.empty()) << r.said_text();
  EXPECT_EQ(r.started.size(), 1u);
}

TEST(WatchCore, ARemovedPlanLeavesTheQueueAndItsSiblingsAreNotReviewed) {
  Rig r;
  reviewed_project(r);
  const auto p = plan(kPhase1, "02");
  r.disk.put(p, plan_text("01", "02", "edited"));
  r.event(p);
  r.disk.remove(p);
  r.event(p, true);
  r.advance(20);
  EXPECT_TRUE(r.started.empty()) << r.said_text();
}

// The state as `yolo execute` leaves it paused at the vision gate, and as a person's approval
// changes it.
void write_state(Rig& r, const std::string& status, bool approved) {
  json d = {
      {"status", status},
      {"phase", 1},
      {"phase_dir", ".yolo-planning/phases/01-core"},
      {"approval", {{"plan_path", ".yolo-planning/ROADMAP.md"}, {"gate_type", "vision"}, {"approved", approved}}}};
  if (approved) d["approval"]["approved_by"] = "ann";
  ASSERT_EQ(r.disk.write_atomic(state::state_path(kRoot), d.dump()).error, "");
}

TEST(WatchCore, AnApprovalLandingResumesExecute) {
  Rig r(/*drive=*/true);
  reviewed_project(r);
  EXPECT_EQ(r.executes, 1) << "driving: execute runs at start";
  write_state(r, "awaiting_approval", false);
  r.core->execute_ended(true, execution::kExitPaused);
  r.drain();
  EXPECT_EQ(r.executes, 1) << "paused at the gate: nothing to run until it is resolved";
  EXPECT_EQ(r.count("execute_done"), 1u);
  // Its own write of the state comes back as an event: not news.
  r.event(state::state_path(kRoot));
  r.advance(20);
  EXPECT_EQ(r.executes, 1) << r.said_text();
  // The person approves.
  write_state(r, "running", true);
  r.event(state::state_path(kRoot));
  r.advance(20);
  EXPECT_EQ(r.executes, 2) << r.said_text();
  EXPECT_GE(r.count("approved") + r.count("approval_not_counted"), 1u);

  // An approval that landed while execute was pausing (read together with execute's own
  // write): execute runs again at once, and only once for that state.
  write_state(r, "running", false);
  r.core->execute_ended(true, execution::kExitPaused);
  r.drain();
  EXPECT_EQ(r.executes, 3) << r.said_text();
  r.core->execute_ended(true, execution::kExitPaused);
  r.drain();
  EXPECT_EQ(r.executes, 3) << "the same state does not loop";
}

TEST(WatchCore, ASummaryAppearingRunsExecuteForTheNextWave) {
  Rig r(/*drive=*/true);
  reviewed_project(r);
  r.core->execute_ended(true, execution::kExitWaitingSummary);
  r.drain();
  EXPECT_EQ(r.executes, 1);
  const auto s = kPhase1 / "01-SUMMARY.md";
  r.disk.put(s, "---\nphase: \"01\"\nplan: \"01\"\n---\ndone\n");
  r.event(s);
  r.advance(20);
  EXPECT_EQ(r.executes, 2) << r.said_text();
  EXPECT_EQ(r.count("summary_changed"), 1u);
  EXPECT_TRUE(r.started.empty()) << "a SUMMARY is not a plan to review";
  // A SUMMARY written while execute runs queues one more run behind it, not a second child.
  r.disk.put(s, "---\nphase: \"01\"\nplan: \"01\"\n---\ndone, really\n");
  r.event(s);
  r.advance(20);
  EXPECT_EQ(r.executes, 2);
  r.core->execute_ended(true, execution::kExitWaitingSummary);
  r.drain();
  EXPECT_EQ(r.executes, 3);
  // Touched, not changed: nothing runs.
  r.core->execute_ended(true, execution::kExitWaitingSummary);
  r.drain();
  r.event(s);
  r.advance(20);
  EXPECT_EQ(r.executes, 3);
}

TEST(WatchCore, APlainWatchNeverRunsExecuteAndARoadmapAsksForTheGate) {
  Rig r;
  reviewed_project(r);
  r.disk.put(kPlanning / "ROADMAP.md", "# Vision\n");
  r.event(kPlanning / "ROADMAP.md");
  r.disk.put(kPhase1 / "01-SUMMARY.md", "done");
  r.event(kPhase1 / "01-SUMMARY.md");
  r.advance(20);
  EXPECT_EQ(r.gate_requests, 1);
  EXPECT_EQ(r.executes, 0);
  EXPECT_EQ(r.count("roadmap_changed"), 1u);
}

TEST(WatchCore, AReviewNotRecordedIsRetriedAfterAPause) {
  Rig r;
  reviewed_project(r);
  const auto p = plan(kPhase1, "03");
  r.disk.put(p, plan_text("01", "03", "edited"));
  r.event(p);
  r.advance(20);
  r.end_review(Lane::Fresh, /*recorded=*/false);
  EXPECT_EQ(r.count("record_retry"), 1u);
  ASSERT_TRUE(r.retry_at);
  EXPECT_EQ(*r.retry_at - r.now, 5000);
  r.advance(5000);
  ASSERT_EQ(r.running.size(), 1u);
  EXPECT_EQ(r.running[0].plans, std::vector<stdfs::path>{p});
}

// Mid-rebase the plans are half applied: nothing is reviewed until git is done, then one
// rescan reviews exactly what the operation changed.
TEST(WatchCore, WhileGitIsBusyNothingIsReviewedThenOneRescan) {
  Rig r;
  reviewed_project(r);
  const auto p1 = plan(kPhase1, "01"), p2 = plan(kPhase2, "02");
  r.disk.put(p1, plan_text("01", "01", "rebased"));
  r.event(p1);
  r.now += 20;
  r.settle_at.reset();
  r.core->settle("a rebase");
  r.drain();
  EXPECT_EQ(r.count("git_busy"), 1u);
  ASSERT_TRUE(r.settle_at);
  EXPECT_EQ(*r.settle_at - r.now, 200) << "polled: .git is not watched";
  r.disk.put(p2, plan_text("02", "02", "rebased"));  // its event is not needed: the rescan finds it
  r.now += 200;
  r.settle_at.reset();
  r.core->settle("a rebase");
  r.drain();
  EXPECT_EQ(r.count("git_busy"), 1u) << "said once";
  EXPECT_TRUE(r.started.empty());
  r.advance(200);  // git is done
  EXPECT_EQ(r.count("git_done"), 1u);
  ASSERT_EQ(r.started.size(), 1u) << r.said_text();
  auto got = r.started[0].plans;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<stdfs::path>{p1, p2}));
}

}  // namespace
}  // namespace yolo::watch
