// DispatchJobs (runner/dispatch_jobs.h), dispatch's submitting and waiting, driven alone
// through its DispatchHost, DispatchPlans and DispatchBack on a libuv loop, with a real git
// repository and a bare remote. The engine's submit, wait, cancel, submit_wave and wait_wave
// are stand-in scripts (real children, run by argv) that write each call to a file: what the
// engine was asked is read from there, not inferred from what yolo says.
#include "runner/dispatch_jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "dispatch_fake_run.h"

namespace yolo::runner::phase {
namespace {

using Clock = std::chrono::steady_clock;

// The return path, as the jobs see it: what it was handed.
struct FakeBack : DispatchBack {
  struct Fetch {
    size_t plan;
    long long wave;
    SpawnResult r;
    Clock::time_point at;
  };
  std::vector<Fetch> fetched;
  void fetch(size_t i, long long wave, SpawnResult r) override {
    fetched.push_back({i, wave, std::move(r), Clock::now()});
  }
  bool fetch_job_log(size_t, SpawnResult&, std::function<void(SpawnResult)>) override { return false; }
};

struct Jobs {
  DispatchFakeRun f;
  Config cfg;
  DispatchPlans plans;
  FakeBack back;
  std::vector<std::pair<size_t, json>> records;  // plans.record's calls, in order
  struct Failure {
    size_t plan;
    std::string error;
    Clock::time_point at;
  };
  std::vector<Failure> failures;
  std::vector<size_t> interrupts;
  std::unique_ptr<DispatchJobs> jobs;
  Clock::time_point started = Clock::now();

  explicit Jobs(size_t n) : f(entries(n)) {
    plans.branch_of = [this](size_t i) { return f.branch(i); };
    plans.record = [this](size_t i, json rec, bool) {
      f.runs[i].dispatch_rec = rec;  // as DispatchDriver keeps it
      records.push_back({i, std::move(rec)});
    };
    plans.fail = [this](size_t i, const std::string& error, const std::string&, const SpawnResult*, bool) {
      failures.push_back({i, error, Clock::now()});
    };
    // As DispatchDriver does: a job the record names as submitted is cancelled.
    plans.on_interrupt = [this](size_t i) {
      interrupts.push_back(i);
      const json& rec = f.runs[i].dispatch_rec;
      std::string why;
      if (dispatch::job_state(rec) == dispatch::JobState::Submitted && !str(rec, "handle").empty()) {
        EXPECT_TRUE(jobs->cancel(i, why)) << why;
      }
    };
    cfg.dispatch.remote = f.url;
    cfg.dispatch.submit.argv = {engine("submit").string(), "--plan-id", "{plan_id}", "--branch", "{branch}",
                                "--base", "{base_commit}"};
    cfg.dispatch.wait.argv = {engine("wait").string(), "{handle}"};
    cfg.dispatch.cancel.argv = {engine("cancel").string(), "{handle}"};
    jobs = std::make_unique<DispatchJobs>(DispatchEnv{cfg, test::real_world(), f.root, &f.loop, f.host, f.told, plans, f.url},
                                          back);
    f.bases[1] = test::git(f.root, {"rev-parse", "HEAD"});
  }
  ~Jobs() { jobs.reset(); }

  static std::vector<PlanEntry> entries(size_t n) {
    std::vector<PlanEntry> v;
    for (size_t k = 1; k <= n; ++k) {
      std::string id = "01-0" + std::to_string(k);
      v.push_back({id, "0" + std::to_string(k), "plan " + id, 1, {}, id + "-PLAN.md"});
    }
    return v;
  }
  // The engine's command `name`: a script that writes "name ARGS" to tmp/calls, then runs
  // body (by default: nothing, exit 0).
  stdfs::path engine(const std::string& name, const std::string& body = "exit 0\n") {
    return f.script(name, "#!/bin/sh\nprintf '%s\\n' \"" + name + " $*\" >> '" + (f.tmp / "calls").string() + "'\n" +
                              body);
  }
  std::vector<std::string> calls() const {
    std::vector<std::string> v;
    std::istringstream in(stdfs::exists(f.tmp / "calls") ? test::read_file(f.tmp / "calls") : "");
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }
  // The loop until every child has ended (at most a minute).
  void run() {
    uv_timer_t dog{};
    uv_timer_init(&f.loop, &dog);
    uv_timer_start(&dog, [](uv_timer_t* t) { uv_stop(t->loop); }, 60000, 0);
    uv_unref(reinterpret_cast<uv_handle_t*>(&dog));
    uv_run(&f.loop, UV_RUN_DEFAULT);
    uv_close(reinterpret_cast<uv_handle_t*>(&dog), nullptr);
    uv_run(&f.loop, UV_RUN_NOWAIT);
  }
  std::vector<std::string> named(const std::string& event) const {
    std::vector<std::string> v;
    for (const auto& e : f.told.events)
      if (e.name == event) v.push_back(e.human);
    return v;
  }
  double seconds(Clock::time_point at) const { return std::chrono::duration<double>(at - started).count(); }
};

TEST(DispatchJobs, ASubmitWhoseOutputNamesTheJobRecordsItsHandleThenWaitsOnIt) {
  Jobs j(1);
  j.engine("submit", "echo 'sbatch: queued'\necho '{\"handle\": \"job-7\", \"url\": \"http://engine/7\"}'\n");
  j.engine("wait", "echo 'job-7 COMPLETED' >&2\nexit 0\n");
  j.jobs->begin_submit(0, 1, 1, false);
  j.run();
  const std::string branch = j.f.branch(0);
  EXPECT_EQ(j.calls(), (std::vector<std::string>{"submit --plan-id 01-01 --branch " + branch + " --base " + j.f.bases[1],
                                                 "wait job-7"}));
  ASSERT_EQ(j.records.size(), 2u);
  EXPECT_EQ(j.records[0].second["state"], "submitting") << "written before the engine hears of the job";
  EXPECT_EQ(j.records[1].second["state"], "submitted") << j.records[1].second.dump();
  EXPECT_EQ(j.records[1].second["handle"], "job-7");
  EXPECT_EQ(j.records[1].second["url"], "http://engine/7");
  EXPECT_EQ(j.records[1].second["base"], j.f.bases[1]);
  ASSERT_EQ(j.back.fetched.size(), 1u) << (j.failures.empty() ? "" : j.failures[0].error);
  EXPECT_EQ(j.back.fetched[0].plan, 0u);
  EXPECT_EQ(j.back.fetched[0].r.exit_code, 0);
  EXPECT_TRUE(j.failures.empty());
  EXPECT_EQ(j.named("plan_submitted"), std::vector<std::string>{"Plan 01-01: job job-7 submitted  http://engine/7"});
  EXPECT_EQ(test::git(j.f.remote, {"rev-parse", "refs/heads/yolo/" + j.f.trees->run_tag() + "/base"}), j.f.bases[1])
      << "the wave's base is on the remote for the job to clone";
  EXPECT_FALSE(j.f.runs[0].running);
}

TEST(DispatchJobs, AJobTheEngineSaysFailedOrCancelledFailsItsPlanWithTheEnginesWords) {
  Jobs j(2);
  j.engine("submit", "echo \"{\\\"handle\\\": \\\"job-$2\\\"}\"\n");
  j.engine("wait",
           "case $1 in\n"
           "  job-01-01) echo 'slurm: job 11 ended FAILED' >&2; echo 'run-job: the executor exited 3' >&2 ;;\n"
           "  job-01-02) echo 'slurm: job 12 ended CANCELLED by root' >&2 ;;\n"
           "esac\n"
           "exit 1\n");
  j.jobs->begin_submit(0, 1, 1, false);
  j.jobs->begin_submit(1, 1, 1, false);
  j.run();
  ASSERT_EQ(j.failures.size(), 2u);
  std::map<size_t, std::string> errors;
  for (const auto& fl : j.failures) errors[fl.plan] = fl.error;
  EXPECT_EQ(errors[0], "its job job-01-01 (branch " + j.f.branch(0) +
                           ") failed: slurm: job 11 ended FAILED; run-job: the executor exited 3");
  EXPECT_EQ(errors[1],
            "its job job-01-02 (branch " + j.f.branch(1) + ") failed: slurm: job 12 ended CANCELLED by root");
  for (size_t i : {0u, 1u}) EXPECT_EQ(j.f.runs[i].dispatch_rec["state"], "failed") << j.f.runs[i].dispatch_rec.dump();
  EXPECT_TRUE(j.back.fetched.empty());
  for (const auto& c : j.calls()) EXPECT_NE(c.rfind("cancel", 0), 0u) << "an ended job is not cancelled: " << c;
}

// The engine errors or does not answer: the adapter waits it out for dispatch's
// unreachable_timeout_ms (wait's exit 3), and a wait that outlives wait's timeout_ms is
// killed. Either way the job may be alive: it is cancelled, never read as gone (exit 2), and
// its branch, if it pushed one meanwhile, is gated.
TEST(DispatchJobs, AnEngineThatErrorsIsWaitedOutUntilTheConfigsDeadlineNeverReadAsGone) {
  Jobs j(2);
  j.cfg.raw = {{"dispatch", {{"unreachable_timeout_ms", 1000}}}};
  j.cfg.dispatch.wait.timeout_ms = 1500;
  j.engine("submit", "echo \"{\\\"handle\\\": \\\"job-$2\\\"}\"\n");
  // job-01-01: the engine refuses every call until the adapter's deadline; job-01-02: the
  // wait never returns. A wait without the deadline it is given says the engine forgot the job.
  j.engine("wait",
           "s=${YOLO_DISPATCH_UNREACHABLE_SECONDS:-}\n"
           "[ -n \"$s\" ] || { echo 'no deadline given' >&2; exit 2; }\n"
           "case $1 in\n"
           "  job-01-01) echo 'squeue: error: Unable to contact slurm controller' >&2; sleep \"$s\";\n"
           "             echo \"squeue: still no answer after $s s\" >&2; exit 3 ;;\n"
           "  *) exec sleep 30 ;;\n"
           "esac\n");
  const std::string pushed = j.f.branch(1);  // plan 2's job pushed its branch before it hung
  test::git(j.f.root, {"push", "-q", j.f.url, "HEAD:refs/heads/" + pushed});
  j.jobs->begin_submit(0, 1, 1, false);
  j.jobs->begin_submit(1, 1, 1, false);
  j.run();
  const auto calls = j.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "cancel job-01-01"), 1) << testing::PrintToString(calls);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "cancel job-01-02"), 1) << testing::PrintToString(calls);
  ASSERT_EQ(j.failures.size(), 1u);
  const auto& fl = j.failures[0];
  EXPECT_EQ(fl.plan, 0u);
  EXPECT_EQ(fl.error.rfind("yolo gave up waiting for its job job-01-01 (branch " + j.f.branch(0) +
                               ") (wait exited with status 3: squeue: error: Unable to contact slurm controller; "
                               "squeue: still no answer after 1 s)",
                           0),
            0u)
      << fl.error;
  EXPECT_NE(fl.error.find("the job was cancelled and its branch is not on the remote"), std::string::npos) << fl.error;
  EXPECT_EQ(fl.error.find("does not know"), std::string::npos) << fl.error;
  EXPECT_GE(j.seconds(fl.at), 1.0) << "waited out the engine's deadline";
  EXPECT_EQ(j.f.runs[0].dispatch_rec["state"], "cancelled") << j.f.runs[0].dispatch_rec.dump();
  ASSERT_EQ(j.back.fetched.size(), 1u) << "the branch the job pushed is gated";
  EXPECT_EQ(j.back.fetched[0].plan, 1u);
  EXPECT_GE(j.seconds(j.back.fetched[0].at), 1.5) << "waited until wait's timeout";
  EXPECT_LT(j.seconds(j.back.fetched[0].at), 15.0) << "not past it";
  EXPECT_EQ(j.named("plan_cancelled").size(), 2u);
}

TEST(DispatchJobs, CtrlCDuringASubmitCancelsTheJobOnceTheSubmitReturns) {
  Jobs j(1);
  j.engine("submit", "sleep 0.5\necho '{\"handle\": \"job-9\"}'\n");
  j.jobs->begin_submit(0, 1, 1, false);
  ASSERT_TRUE(j.f.runs[0].running) << "the submit runs";
  j.f.interrupted = true;  // Ctrl-C while it does
  j.run();
  EXPECT_EQ(j.interrupts, std::vector<size_t>{0});
  EXPECT_EQ(j.f.runs[0].dispatch_rec["handle"], "job-9") << j.f.runs[0].dispatch_rec.dump();
  const auto calls = j.calls();
  ASSERT_EQ(calls.size(), 2u) << testing::PrintToString(calls);
  EXPECT_EQ(calls[1], "cancel job-9") << "the job the submit started is cancelled, not waited on";
  EXPECT_TRUE(j.failures.empty());
  EXPECT_TRUE(j.back.fetched.empty());
}

TEST(DispatchJobs, AWaveOfTwoPlansIsOneSubmitWaveAndOneWaitWave) {
  Jobs j(2);
  j.cfg.dispatch.submit_wave.argv = {j.engine("submit-wave", "cp \"$2\" '" + (j.f.tmp / "tasks").string() +
                                                                  "'\n"
                                                                  "echo '{\"handle\": \"arr-5\", \"tasks\": "
                                                                  "[\"arr-5_0\", \"arr-5_1\"]}'\n")
                                         .string(),
                                     "--tasks", "{tasks}", "--wave", "{wave}", "--wave-key", "{wave_key}"};
  j.cfg.dispatch.wait_wave.argv = {j.engine("wait-wave",
                                            "echo 'task 1 status Pending (Priority)'\n"
                                            "echo 'task 0 log cloned the remote'\n"
                                            "echo 'task 0 done'\n"
                                            "echo 'task 1 failed the executor exited 3'\n")
                                       .string(),
                                   "{handle}"};
  j.jobs->gather(0, 1, 1);
  j.jobs->gather(1, 1, 1);
  EXPECT_TRUE(j.f.runs[0].running && j.f.runs[1].running) << "running while gathered";
  j.jobs->submit_waves(1);
  j.run();
  const auto calls = j.calls();
  ASSERT_EQ(calls.size(), 2u) << testing::PrintToString(calls);
  const std::string key = str(j.f.runs[0].dispatch_rec, "wave_key");
  EXPECT_EQ(key.size(), 12u) << j.f.runs[0].dispatch_rec.dump();
  EXPECT_EQ(calls[0].rfind("submit-wave --tasks ", 0), 0u) << calls[0];
  EXPECT_NE(calls[0].find(" --wave 1 --wave-key " + key), std::string::npos) << calls[0];
  EXPECT_EQ(calls[1], "wait-wave arr-5");
  // The task file: each plan's submit arguments from its first option on, in the array's order.
  const auto task = [&](size_t i) {
    return "6" + std::string(1, '\0') + "--plan-id" + '\0' + j.f.entries[i].id + '\0' + "--branch" + '\0' +
           j.f.branch(i) + '\0' + "--base" + '\0' + j.f.bases[1] + '\0';
  };
  EXPECT_EQ(test::read_file(j.f.tmp / "tasks"), task(0) + task(1));
  for (size_t i : {0u, 1u}) {
    const json& rec = j.f.runs[i].dispatch_rec;
    EXPECT_EQ(rec["handle"], "arr-5_" + std::to_string(i)) << rec.dump();
    EXPECT_EQ(rec["wave_handle"], "arr-5") << rec.dump();
    EXPECT_EQ(rec["wave_index"], i) << rec.dump();
    EXPECT_EQ(str(rec, "wave_key"), key);
  }
  ASSERT_EQ(j.back.fetched.size(), 1u);
  EXPECT_EQ(j.back.fetched[0].plan, 0u);
  EXPECT_EQ(j.back.fetched[0].r.exit_code, 0);
  EXPECT_NE(j.back.fetched[0].r.err.find("  | cloned the remote\n"), std::string::npos) << j.back.fetched[0].r.err;
  ASSERT_EQ(j.failures.size(), 1u);
  EXPECT_EQ(j.failures[0].plan, 1u);
  EXPECT_EQ(j.failures[0].error, "its job arr-5_1 (branch " + j.f.branch(1) +
                                     ") failed: status: Pending (Priority); the executor exited 3");
  EXPECT_EQ(j.named("wave_submitted"), std::vector<std::string>{"Wave 1: 2 plans as one job arr-5 submitted"});
  EXPECT_EQ(j.named("plan_job_status"), std::vector<std::string>{"Plan 01-02: job arr-5_1 · Pending (Priority)"});
}

// A `status: ...` line of wait's stderr (a pending reason): shown when it changes, kept in the
// plan's record for `yolo status`.
TEST(DispatchJobs, WhatTheEngineSaysOfAWaitingJobIsShownOnceEachTimeItChanges) {
  Jobs j(1);
  j.engine("submit", "echo '{\"handle\": \"job-3\"}'\n");
  j.engine("wait",
           "echo 'status: Pending (Resources)' >&2\n"
           "sleep 0.2\n"
           "echo 'status: Pending (Resources)' >&2\n"
           "echo 'status:   Running on node-4  ' >&2\n"
           "echo 'job-3 COMPLETED' >&2\n");
  j.jobs->begin_submit(0, 1, 1, false);
  j.run();
  EXPECT_EQ(j.named("plan_job_status"), (std::vector<std::string>{"Plan 01-01: job job-3 · Pending (Resources)",
                                                                   "Plan 01-01: job job-3 · Running on node-4"}));
  std::vector<std::string> kept;
  for (const auto& [i, rec] : j.records)
    if (rec.contains("engine_status")) kept.push_back(rec["engine_status"]);
  EXPECT_EQ(kept, (std::vector<std::string>{"Pending (Resources)", "Running on node-4"}));
  ASSERT_EQ(j.back.fetched.size(), 1u);
}

}  // namespace
}  // namespace yolo::runner::phase
