// DispatchReturn (runner/dispatch_return.h), dispatch's return path, driven alone through its
// DispatchHost and DispatchPlans on a libuv loop, with a real git repository and a bare
// remote: a job's log pushed as refs/yolo-logs/BRANCH comes back into wait's output and its
// fetched ref is deleted once read; a merged plan's branch goes from the remote with every
// attempt's log, another plan's log stays.
#include "runner/dispatch_return.h"

#include <gtest/gtest.h>

#include "dispatch_fake_run.h"

namespace yolo::runner::phase {
namespace {

using test::git;

// Two plans of wave 1, as much of a run as the return path reaches.
struct FakeReturn {
  DispatchFakeRun run{{{"01-01", "01", "01", 1, {}, ""}, {"01-02", "02", "02", 1, {}, ""}}};
  const stdfs::path& root = run.root;
  const std::string& url = run.url;
  uv_loop_t& loop = run.loop;
  PlanRuns& runs = run.runs;
  Config cfg;
  std::vector<std::string> failed;
  DispatchPlans plans;
  std::unique_ptr<DispatchReturn> back;

  FakeReturn() {
    plans.branch_of = [this](size_t i) { return branch(i, runs[i].dispatch_rec.value("attempt", 1)); };
    plans.record = [](size_t, json, bool) {};
    plans.fail = [this](size_t, const std::string& error, const std::string&, const SpawnResult*, bool) {
      failed.push_back(error);
    };
    plans.on_interrupt = [](size_t) {};
    back = std::make_unique<DispatchReturn>(DispatchEnv{cfg, test::real_world(), root, &loop, run.host, run.told, plans, url});
  }
  ~FakeReturn() { back.reset(); }
  std::string branch(size_t i, int attempt) const {
    return dispatch::branch_for_attempt(run.trees->branch_for(run.entries[i].id), attempt);
  }
  // A commit holding `log` (as run-job pushes it) at refs/yolo-logs/BRANCH on the remote.
  void push_log(const std::string& branch, const std::string& text) {
    std::string blob = git(root, {"hash-object", "-w", "--stdin"}, text);
    std::string tree = git(root, {"mktree"}, "100644 blob " + blob + "\tlog\n");
    std::string commit = git(root, {"commit-tree", tree, "-m", "log"});
    git(root, {"push", "-q", url, commit + ":refs/yolo-logs/" + branch});
  }
  std::string remote_refs() { return git(run.remote, {"for-each-ref", "--format=%(refname)"}); }
};

TEST(DispatchReturn, AJobsLogComesBackThroughTheRemoteAndItsFetchedRefIsDeletedOnceRead) {
  FakeReturn f;
  f.runs[0].dispatch_rec = {{"attempt", 1}, {"handle", "job-1"}};
  f.push_log(f.branch(0, 1), "cloned\nthe executor exited 3\n");
  SpawnResult r;
  r.outcome = SpawnResult::Outcome::Exited;
  r.exit_code = 1;
  r.err = "wait: job-1 FAILED\n";
  std::optional<SpawnResult> back;
  ASSERT_TRUE(f.back->fetch_job_log(0, r, [&](SpawnResult got) { back = std::move(got); }));
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ASSERT_TRUE(back) << "the caller was not handed wait's output back";
  EXPECT_NE(back->err.find("--- the job's log (refs/yolo-logs/" + f.branch(0, 1) + " on the remote " + f.url),
            std::string::npos)
      << back->err;
  EXPECT_NE(back->err.find("  | the executor exited 3\n"), std::string::npos) << back->err;
  EXPECT_LT(back->err.find("  | cloned"), back->err.find("wait: job-1 FAILED")) << "the job's log first";
  EXPECT_EQ(back->exit_code, 1);
  EXPECT_EQ(git(f.root, {"for-each-ref", "refs/yolo-dispatch-logs/"}), "") << "the fetched ref stays after it was read";
  EXPECT_FALSE(f.runs[0].running) << "the plan is released";
  // Asked once per job; wait's output that shows the job's log already is not asked.
  SpawnResult again = *back;
  EXPECT_FALSE(f.back->fetch_job_log(0, again, [](SpawnResult) {}));
  f.runs[1].dispatch_rec = {{"attempt", 1}};
  SpawnResult shown;
  shown.err = "  | the job's own line\n";
  EXPECT_FALSE(f.back->fetch_job_log(1, shown, [](SpawnResult) {}));
}

TEST(DispatchReturn, AMergedBranchGoesFromTheRemoteWithEveryAttemptsLogAndNoOtherPlans) {
  FakeReturn f;
  f.runs[0].dispatch_rec = {{"attempt", 2}};  // attempt 1 failed, attempt 2 merged
  f.runs[1].dispatch_rec = {{"attempt", 1}};  // failed, not merged
  const std::string head = git(f.root, {"rev-parse", "HEAD"});
  git(f.root, {"push", "-q", f.url, head + ":refs/heads/" + f.branch(0, 2)});
  f.push_log(f.branch(0, 1), "attempt 1\n");
  f.push_log(f.branch(0, 2), "attempt 2\n");
  f.push_log(f.branch(1, 1), "the other plan\n");
  f.back->delete_merged({f.branch(0, 2)});
  uv_run(&f.loop, UV_RUN_DEFAULT);
  EXPECT_EQ(f.remote_refs(), "refs/yolo-logs/" + f.branch(1, 1));
  EXPECT_TRUE(f.run.told.notes.empty()) << f.run.told.notes.front();
}

}  // namespace
}  // namespace yolo::runner::phase
