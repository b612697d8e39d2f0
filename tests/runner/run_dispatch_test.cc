// Dispatch (runner/run_dispatch.h) stepped alone through its Host on a libuv loop, with a real
// git repository, a bare remote and a fake engine adapter (a script run by argv): a job whose
// wait says done has its branch fetched, checked out and handed to the run's checks; a submit
// the engine refuses and a job that failed fail their plan, with the record and the finding.
#include "runner/run_dispatch.h"

#include <gtest/gtest.h>

#include "dispatch_fake_run.h"

namespace yolo::runner::phase {
namespace {

// submit BRANCH BASE REMOTE OUTCOME: "done" runs the job at once (one commit on the plan's
// branch from the base, pushed); "refuse" fails. wait HANDLE: done for job-done, else failed.
const char* kAdapter = R"(#!/bin/sh
set -e
cmd=$1; shift
case "$cmd" in
  submit)
    branch=$1 base=$2 remote=$3 outcome=$4
    if [ "$outcome" = refuse ]; then echo "the engine refused the job" >&2; exit 1; fi
    if [ "$outcome" = done ]; then
      w=$(mktemp -d)
      git clone -q "$remote" "$w/job"
      cd "$w/job"
      git checkout -q -b "$branch" "$base"
      echo done > job.txt
      git add job.txt
      git -c user.name=job -c user.email=job@example.com commit -qm job
      git push -q origin "$branch"
      cd / && rm -rf "$w"
    fi
    echo "{\"handle\": \"job-$outcome\"}" ;;
  wait)
    if [ "$1" = job-done ]; then exit 0; fi
    echo "the job failed" >&2; exit 1 ;;
  cancel) exit 0 ;;
esac
)";

using test::git;

// A run of one plan, as much of it as dispatch reaches through its Host.
struct FakeRun {
  DispatchFakeRun f{{{"01-01", "01", "one", 1, {}, "01-01-PLAN.md"}}};
  std::string outcome;  // what the fake engine does with the job
  Config cfg;
  std::vector<SpawnResult> checks;      // run_checks(0, r) calls
  std::optional<PlanWorktree> adopted;  // adopt_worktree's worktree
  std::unique_ptr<DispatchDriver> d;

  explicit FakeRun(std::string what) : outcome(std::move(what)) {
    const std::string adapter = f.script("adapter", kAdapter).string();
    cfg.dispatch.submit.argv = {adapter, "submit", "{branch}", "{base_commit}", "{remote}", "{outcome}"};
    cfg.dispatch.wait.argv = {adapter, "wait", "{handle}"};
    cfg.dispatch.cancel.argv = {adapter, "cancel", "{handle}"};
    cfg.dispatch.remote = f.remote.string();
    DispatchDriver::Host h = f.host;
    h.plan_vars = [this](size_t, long long) { return std::map<std::string, std::string>{{"outcome", outcome}}; };
    h.adopt_worktree = [this](size_t, const PlanWorktree& w, int, std::string&) {
      adopted = w;
      return true;
    };
    h.run_checks = [this](size_t, SpawnResult r) { checks.push_back(std::move(r)); };
    h.merge_message = [](const PlanEntry& e, const json&) { return "merge " + e.id; };
    d = std::make_unique<DispatchDriver>(cfg, test::real_world(), f.root, &f.loop, f.told, std::move(h));
    d->init(json::object());
  }
  ~FakeRun() { d.reset(); }

  // Starts plan 0 (wave 1, attempt 1) and runs the loop until the plan is handed to its
  // checks or failed (at most 30 seconds: git clones and pushes).
  void start() {
    dispatch::Start s;
    s.attempt = 1;
    d->start(0, 1, s);
    struct Check {
      uv_timer_t t{};
      FakeRun* run;
      int left = 3000;
    } c{{}, this};
    uv_timer_init(&f.loop, &c.t);
    c.t.data = &c;
    uv_timer_start(
        &c.t,
        [](uv_timer_t* t) {
          auto* self = static_cast<Check*>(t->data);
          FakeRun* r = self->run;
          if (!r->checks.empty() || r->f.core.plan(0).status == PlanStatus::Failed || --self->left == 0)
            uv_timer_stop(t);
        },
        10, 10);
    uv_run(&f.loop, UV_RUN_DEFAULT);
    uv_close(reinterpret_cast<uv_handle_t*>(&c.t), nullptr);
    uv_run(&f.loop, UV_RUN_DEFAULT);
  }
  std::string on_remote(const std::string& branch) {
    auto r = test::run_program({"git", "rev-parse", "refs/heads/" + branch}, f.remote);
    return std::string(text::trim(r.out));
  }
};

TEST(DispatchDriver, AJobWhoseWaitSaysDoneIsFetchedCheckedOutAndHandedToTheChecks) {
  FakeRun run("done");
  run.start();
  ASSERT_EQ(run.checks.size(), 1u) << "the run's checks were not asked for";
  EXPECT_EQ(run.checks[0].exit_code, 0);
  EXPECT_EQ(run.f.core.plan(0).handle, "job-done");
  const std::string branch = run.f.trees->branch_for("01-01");
  ASSERT_TRUE(run.adopted);
  EXPECT_EQ(run.adopted->branch, branch);
  EXPECT_EQ(run.adopted->base, run.f.bases[1]) << "the job's base: the wave's";
  EXPECT_EQ(run.f.trees->head(run.adopted->path), run.on_remote(branch)) << "the slot holds the job's commit";
  EXPECT_TRUE(stdfs::exists(run.adopted->path / "job.txt"));
  ASSERT_FALSE(run.f.queued.empty());
  EXPECT_EQ(run.f.queued.back().set["dispatch"]["state"], "done") << run.f.queued.back().set.dump();
  EXPECT_EQ(run.f.queued.back().set["dispatch"]["handle"], "job-done");
  EXPECT_EQ(run.f.schedules, 0) << "nothing failed";
  for (const char* e : {"plan_start", "plan_submitted", "plan_fetched"}) EXPECT_TRUE(run.f.told.has(e)) << e;
}

TEST(DispatchDriver, ASubmitTheEngineRefusesFailsThePlan) {
  FakeRun run("refuse");
  run.start();
  EXPECT_TRUE(run.checks.empty());
  EXPECT_EQ(run.f.core.plan(0).status, PlanStatus::Failed);
  ASSERT_FALSE(run.f.queued.empty());
  const auto& u = run.f.queued.back();
  EXPECT_EQ(u.status, PlanStatus::Failed);
  EXPECT_NE(u.error.find("the engine refused the job"), std::string::npos) << u.error;
  EXPECT_EQ(u.set["dispatch"]["state"], "submitting") << "no handle: the next execute submits the same attempt";
  ASSERT_TRUE(u.findings.is_array() && u.findings.size() == 1) << u.findings.dump();
  EXPECT_EQ(u.findings[0]["branch"], run.f.trees->branch_for("01-01")) << u.findings.dump();
  EXPECT_EQ(run.f.schedules, 1) << "the run decides what is next";
}

TEST(DispatchDriver, AJobThatFailedFailsThePlanWithItsHandle) {
  FakeRun run("fail");
  run.start();
  EXPECT_TRUE(run.checks.empty());
  EXPECT_EQ(run.f.core.plan(0).status, PlanStatus::Failed);
  ASSERT_FALSE(run.f.queued.empty());
  const auto& u = run.f.queued.back();
  EXPECT_NE(u.error.find("its job job-fail"), std::string::npos) << u.error;
  EXPECT_NE(u.error.find("the job failed"), std::string::npos) << u.error;
  EXPECT_EQ(u.set["dispatch"]["state"], "failed") << u.set.dump();
  ASSERT_TRUE(u.findings.is_array() && u.findings.size() == 1) << u.findings.dump();
  EXPECT_EQ(u.findings[0]["handle"], "job-fail") << u.findings.dump();
  EXPECT_EQ(run.f.schedules, 1);
}

}  // namespace
}  // namespace yolo::runner::phase
