// Dispatch's return path (runner/run_dispatch.h), a class of its own: the branches of ended
// jobs fetched in batches, checked out in worktree slots by children of the loop and handed
// to the run's checks; a job's own log brought back through the remote; the merges computed
// ahead while jobs still run; the merged branches (and their jobs' logs) deleted from the
// remote. It reaches the run through DispatchHost and the driver through DispatchPlans only.
//   dispatch_return.cc  the fetch, the checkout, the merge ahead, the remote's branches deleted
//   dispatch_logs.cc    a job's own log fetched from the remote when wait could not show it
#pragma once

#include "runner/dispatch_parts.h"

namespace yolo::runner::phase {

class DispatchReturn : public DispatchBack {
 public:
  explicit DispatchReturn(DispatchEnv env) : e_(env) {}
  DispatchReturn(const DispatchReturn&) = delete;
  DispatchReturn& operator=(const DispatchReturn&) = delete;

  // Plan i's job ended with its branch to gate (wait said done, or the branch is on the
  // remote): fetched with the batch, checked out, handed to the run's checks (r: wait's).
  void fetch(size_t i, long long wave, SpawnResult r) override;
  // The job's own log from the remote (refs/yolo-logs/BRANCH) when wait's output r holds
  // none: true when it is being fetched (r taken; `then` gets it back with the job's log
  // first in its stderr, and the fetched ref deleted); false: r is as it was.
  bool fetch_job_log(size_t i, SpawnResult& r, std::function<void(SpawnResult)> then) override;
  // The merges computed ahead while jobs run (Worktrees::remember_merge): the next step, and
  // a reset once the checkout moved.
  void premerge();
  void premerge_reset();
  // Merged plans' branches deleted from the remote: one push for the merge's batch, one for
  // their jobs' logs (every attempt's).
  void delete_merged(const std::vector<std::string>& branches);

 private:
  const PlanEntry& entry(size_t i) const { return e_.host.entry(i); }
  PlanRun& run_of(size_t i) { return e_.host.plan(i); }
  Worktrees* trees() const { return e_.host.trees(); }
  bool interrupted() const { return e_.host.interrupted(); }
  void release(size_t i) { e_.host.release(i); }
  void emit(const std::string& event, json data, Sym sym, const std::string& human) {
    e_.tell.emit(event, std::move(data), sym, human);
  }
  void fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r) {
    e_.plans.fail(i, error, fix, r, true);
  }

  void fetch_batch();
  void fetched_batch(SpawnResult fr, std::string heads);
  void fetched(size_t i, long long wave, const std::string& head, SpawnResult r);
  // A fetched branch's checkout in its slot, by children of the loop one after the other.
  struct Checkout {
    size_t plan;
    long long wave;
    std::string head;
    int slot;
    PlanWorktree w;
    std::vector<SpawnSpec> steps;
    size_t next = 0;
    SpawnResult r;
  };
  void checkout_step(std::shared_ptr<Checkout> c);
  void checked_out(size_t i, long long wave, const std::string& head, int slot, std::optional<PlanWorktree> w,
                   SpawnResult r);
  void premerge_step(size_t i, const std::string& onto, const std::string& commit, const std::string& message);

  DispatchEnv e_;
  std::set<std::string> logs_asked_;  // branches whose job's log was fetched
  // Plans whose job ended, fetched together by one `git fetch` child.
  struct FetchItem {
    size_t plan;
    long long wave;
    SpawnResult r;
  };
  std::vector<FetchItem> fetch_queue_, fetch_batch_;
  std::unique_ptr<Process> fetch_proc_;
  // A slot's full reset (remove, `worktree add`), held back while a fetch runs: a fetch reads
  // every worktree's refs and fails on a worktree half made or half removed beside it.
  std::vector<std::function<void()>> after_fetch_;
  // The merges computed ahead (Worktrees::remember_merge): while jobs still run, the gated
  // plans' merge steps in plan order, one git child at a time on the loop, so that the merge
  // once the wave's last plan is gated is one step, not one per plan.
  std::unique_ptr<Process> premerge_proc_;
  // Merged branches and their logs deleted from the remote: one push at a time (two deleting
  // pushes at once race for the remote's packed-refs.lock), the next when it ended.
  struct RemoteDelete {
    SpawnSpec spec;
    bool say_failure = false;  // the branches' push says when it fails; the logs' does not
  };
  void next_remote_delete();
  std::vector<RemoteDelete> remote_deletes_;
  std::unique_ptr<Process> remote_delete_proc_;
  std::string premerge_tip_;                            // the chain's tip (the checkout's HEAD when it started)
  std::set<size_t> premerge_done_;                      // plans whose step is in the chain
  int premerge_gen_ = 0;                                // a merge since: a step's answer is stale
  bool premerge_stuck_ = false;                         // a step conflicted or failed: merge_all does the rest
};

}  // namespace yolo::runner::phase
