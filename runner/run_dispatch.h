// `yolo execute` with a `dispatch` block (docs/dispatch.md), a part of the Run
// (runner/phase_run_internal.h) with classes of its own: each plan a job of a cluster engine,
// submitted (one by one, or a wave as arrays), waited on, its branch fetched and checked out in
// a worktree slot, then handed back to the run for its checks and gates; merges computed ahead
// while jobs still run. Three classes, each reaching the run through DispatchHost only
// (runner/dispatch_parts.h):
//   DispatchDriver  (this file; plan_dispatch.cc) what the run calls: the config, the remote,
//                   the records, a plan's start (a submit, a re-attach, the look-up of an
//                   earlier attempt's branch), its failure and Ctrl-C; it owns the two below
//                   and gives them the plans' records through DispatchPlans
//   DispatchJobs    (runner/dispatch_jobs.h; dispatch_submit.cc, dispatch_wait.cc) submitting
//                   and polling jobs and arrays, cancelling, what a wait's exit means
//   DispatchReturn  (runner/dispatch_return.h; dispatch_return.cc, dispatch_logs.cc) the fetch,
//                   the checkout off the loop, the job's log through the remote, the merge
//                   ahead, the remote's branches deleted
// The rules (submit or re-attach, which attempt, what wait's exit means, which plans share an
// array) are protocol/run/dispatch.h; every child is argv through runner/subprocess.
#pragma once

#include "runner/dispatch_jobs.h"
#include "runner/dispatch_parts.h"
#include "runner/dispatch_return.h"

namespace yolo::runner::phase {

class DispatchDriver {
 public:
  using Host = DispatchHost;  // what dispatch needs of the run (runner/dispatch_parts.h)

  DispatchDriver(const Config& cfg, const World& world, const stdfs::path& root, uv_loop_t* loop, Teller& tell,
                 Host host);
  DispatchDriver(const DispatchDriver&) = delete;
  DispatchDriver& operator=(const DispatchDriver&) = delete;

  int parallel() const { return jobs_.parallel(); }
  // The config's dispatch errors as one message ("": none).
  std::string config_error() const;
  // Before step 2: the remote's URL, the records a stopped run left (doc: the state then).
  void init(const json& doc);
  // Plan i starts as the core decided (a submit, a re-attach, a look-up of an earlier attempt).
  void start(size_t i, long long wave, const dispatch::Start& s);
  // The wave-level form: the plans start() gathered for the wave, as arrays.
  void submit_waves(long long wave) { jobs_.submit_waves(wave); }
  // A plan failed in start()'s loop (the caller schedules once); cleared by asking.
  bool take_start_failed() { return std::exchange(start_failed_, false); }
  // Ctrl-C: each wave's poller is cancelled (its plans' jobs are cancelled when it ends).
  void cancel_pollers() { jobs_.cancel_pollers(); }
  // The merges computed ahead while jobs run (Worktrees::remember_merge): the next step, and
  // a reset once the checkout moved.
  void premerge() { back_.premerge(); }
  void premerge_reset() { back_.premerge_reset(); }
  // Merged plans' branches deleted from the remote: one push for the merge's batch.
  void delete_merged(const std::vector<std::string>& branches) { back_.delete_merged(branches); }

 private:
  const PlanEntry& entry(size_t i) const { return host_.entry(i); }
  PlanRun& run_of(size_t i) { return host_.plan(i); }
  const PlanRun* run_at(size_t i) const { return host_.plan_at(i); }
  run::Core& core() { return host_.core(); }
  Worktrees* trees() const { return host_.trees(); }
  std::map<long long, std::string>& wave_base() const { return host_.wave_bases(); }
  bool interrupted() const { return host_.interrupted(); }
  void emit(const std::string& event, json data, Sym sym, const std::string& human) {
    tell_.emit(event, std::move(data), sym, human);
  }
  void note(const std::string& human, bool dim = false) { tell_.note(human, dim); }
  void queue_plan(size_t i, execution::PlanUpdate u) { host_.queue(i, std::move(u)); }
  DispatchEnv env() { return {cfg_, world_, root_, loop_, host_, tell_, plans_, url_}; }

  // What the two parts reach of the plans (DispatchPlans).
  std::string branch_of(size_t i) const;
  void record(size_t i, json rec, bool flush);
  // reschedule false: called from start() (the caller schedules once its loop is done).
  void fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r, bool reschedule = true);
  void on_interrupt(size_t i);
  void look_up_previous(size_t i, long long wave, int attempt, int previous);

  const Config& cfg_;
  const World& world_;
  const stdfs::path& root_;
  uv_loop_t* loop_;
  Teller& tell_;
  Host host_;
  std::string url_;             // the remote as the jobs see it (a URL or path)
  bool start_failed_ = false;   // a plan failed in start()'s loop
  DispatchPlans plans_;         // this driver's methods, for its parts
  DispatchReturn back_{env()};  // the return path
  DispatchJobs jobs_{env(), back_};
};

}  // namespace yolo::runner::phase
