// `yolo execute` with a `dispatch` block (docs/dispatch.md), a part of the Run
// (runner/phase_run_internal.h) with a class of its own: each plan a job of a cluster engine,
// submitted (one by one, or a wave as arrays), waited on, its branch fetched and checked out in
// a worktree slot, then handed back to the run for its checks and gates; merges computed ahead
// while jobs still run. It owns what only dispatch uses (the remote, the wave-level arrays and
// their pollers, the fetch queue, the merge chain) and reaches the run through Host only.
//   plan_dispatch.cc   the config, the records, a plan's start, its failure and Ctrl-C
//   dispatch_submit.cc submitting and waiting
//   dispatch_return.cc the fetch, the checkout, the merge ahead, the remote's branches deleted
//   dispatch_logs.cc   a job's own log fetched from the remote when wait could not show it
// The rules (submit or re-attach, which attempt, what wait's exit means, which plans share an
// array) are protocol/run/dispatch.h; every child is argv through runner/subprocess.
#pragma once

#include "protocol/run/dispatch.h"
#include "runner/phase_parts.h"

namespace yolo::runner::phase {

class DispatchDriver {
 public:
  // What dispatch needs of the run (phase::Run gives it; a unit test gives its own).
  struct Host {
    std::function<size_t()> plans;                                  // how many plans the phase has
    std::function<const PlanEntry&(size_t)> entry;                  // plan i as the run read it
    std::function<PlanRun&(size_t)> plan;                           // what the run holds of plan i
    std::function<const PlanRun*(size_t)> plan_at;                  // the same, nullptr when none yet
    std::function<run::Core&()> core;                               // the run core's records
    std::function<Worktrees*()> trees;                              // the worktree slots (nullptr: none)
    std::function<std::map<long long, std::string>&()> wave_bases;  // wave -> the commit it starts from
    std::function<std::string()> correlation_id;
    std::function<std::string()> phase_rel;  // ".yolo-planning/phases/01-demo"
    std::function<bool()> interrupted;       // Ctrl-C (or a signal) stopped the run
    std::function<bool()> stopping;
    // Plan i runs for the loop from now on, with its child p (nullptr: none of its own);
    // release: it no longer does.
    std::function<Process*(size_t, std::unique_ptr<Process>)> hold;
    std::function<void(size_t)> release;
    std::function<void(const std::string& event, json data, Sym sym, const std::string& human)> emit;
    std::function<void(const std::string& human, bool dim)> note;
    std::function<void(const std::string& type, const std::string& plan, json data)> log;
    std::function<void(size_t, execution::PlanUpdate)> queue;  // plan i's record changes (batched)
    std::function<void()> flush;                               // the queued changes written now
    std::function<void()> schedule;                            // the run core decides what is next
    std::function<std::map<std::string, std::string>(size_t, long long)> plan_vars;  // the templates' variables
    // The fetched branch's worktree as plan i's; false: err says why.
    std::function<bool(size_t, const PlanWorktree&, int slot, std::string& err)> adopt_worktree;
    std::function<void(size_t, SpawnResult)> run_checks;  // plan i's checks, then its gates
    std::function<std::string(const PlanEntry&, const json& worktree_record)> merge_message;
  };

  DispatchDriver(const Config& cfg, const World& world, const stdfs::path& root, uv_loop_t* loop, Host host)
      : cfg_(cfg), world_(world), root_(root), loop_(loop), host_(std::move(host)) {}
  DispatchDriver(const DispatchDriver&) = delete;
  DispatchDriver& operator=(const DispatchDriver&) = delete;

  int parallel() const {
    return cfg_.dispatch.max_parallel > 0 ? cfg_.dispatch.max_parallel : std::max(cfg_.max_parallel, 8);
  }
  // The config's dispatch errors as one message ("": none).
  std::string config_error() const;
  // Before step 2: the remote's URL, the records a stopped run left (doc: the state then).
  void init(const json& doc);
  // Plan i starts as the core decided (a submit, a re-attach, a look-up of an earlier attempt).
  void start(size_t i, long long wave, const dispatch::Start& s);
  // The wave-level form: the plans start() gathered for the wave, as arrays.
  void submit_waves(long long wave);
  // A plan failed in start()'s loop (the caller schedules once); cleared by asking.
  bool take_start_failed() { return std::exchange(start_failed_, false); }
  // Ctrl-C: each wave's poller is cancelled (its plans' jobs are cancelled when it ends).
  void cancel_pollers();
  // The merges computed ahead while jobs run (Worktrees::remember_merge): the next step, and
  // a reset once the checkout moved.
  void premerge();
  void premerge_reset();
  // Merged plans' branches deleted from the remote: one push for the merge's batch.
  void delete_merged(const std::vector<std::string>& branches);

 private:
  static constexpr size_t kNoPlan = dispatch::kNoPlan;  // an array's task not waited on here

  // The run as Host gives it, under the names the methods use.
  const PlanEntry& entry(size_t i) const { return host_.entry(i); }
  PlanRun& run_of(size_t i) { return host_.plan(i); }
  const PlanRun* run_at(size_t i) const { return host_.plan_at(i); }
  run::Core& core() { return host_.core(); }
  Worktrees* trees() const { return host_.trees(); }
  std::map<long long, std::string>& wave_base() const { return host_.wave_bases(); }
  bool interrupted() const { return host_.interrupted(); }
  Process* hold(size_t i, std::unique_ptr<Process> p) { return host_.hold(i, std::move(p)); }
  void release(size_t i) { host_.release(i); }
  void emit(const std::string& event, json data, Sym sym, const std::string& human) {
    host_.emit(event, std::move(data), sym, human);
  }
  void note(const std::string& human, bool dim = false) { host_.note(human, dim); }
  void queue_plan(size_t i, execution::PlanUpdate u) { host_.queue(i, std::move(u)); }

  // ---- plan_dispatch.cc ----
  std::string branch_of(size_t i) const;
  std::map<std::string, std::string> vars_of(size_t i, long long wave) const;
  SpawnSpec adapter_spec(const std::vector<std::string>& argv, long long timeout_ms) const;
  bool branch_on_remote(const std::string& branch);
  // Runs `cancel` for the plan's job now; false when it failed (why in `why`).
  bool cancel(size_t i, std::string& why);
  // A wave's poller ended with tasks unreported: one cancel of the wave, one remote lookup.
  void give_up_wave(long long wave, const std::string& handle, const std::vector<size_t>& plans,
                    const std::vector<bool>& reported);
  void engine_status(size_t i, std::string status);
  void record(size_t i, json rec, bool flush);
  void reattach_arrays(long long wave);  // re-attached plans: one wait_wave per array
  void look_up_previous(size_t i, long long wave, int attempt, int previous);
  // reschedule false: called from start() (the caller schedules once its loop is done).
  void fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r, bool reschedule = true);
  void on_interrupt(size_t i);
  std::vector<std::string> resources(size_t i) const {
    const PlanRun* r = run_at(i);
    return r ? r->dispatch_res : std::vector<std::string>();
  }

  // ---- dispatch_submit.cc ----
  void submit_array(long long wave, const std::vector<size_t>& plans, const std::string& key);
  void wait_array(long long wave, const std::vector<size_t>& plans, const std::string& key, const std::string& handle);
  void begin_submit(size_t i, long long wave, int attempt, bool reschedule);
  void submit(size_t i, long long wave, int attempt);
  void wait(size_t i, long long wave);
  void waited(size_t i, long long wave, SpawnResult r);
  // ---- dispatch_logs.cc ----
  // The job's own log from the remote (refs/yolo-logs/BRANCH) when wait's output holds none:
  // true when it is being fetched (r taken; waited() again once it is in r's stderr).
  bool fetch_job_log(size_t i, long long wave, SpawnResult& r);

  // ---- dispatch_return.cc ----
  // The branch fetched and gated (wait said done, or the branch was found on the remote).
  void fetch(size_t i, long long wave, SpawnResult r);
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

  const Config& cfg_;
  const World& world_;
  const stdfs::path& root_;
  uv_loop_t* loop_;
  Host host_;

  std::string url_;                                    // the remote as the jobs see it (a URL or path)
  std::set<long long> pushed_;                         // waves whose base is on the remote
  bool start_failed_ = false;                          // a plan failed in start()'s loop
  std::map<size_t, std::string> cancelled_with_wave_;  // plan -> its task handle, cancelled with its wave
  std::optional<std::set<std::string>> remote_heads_;  // the run's branches on the remote, while set
  std::set<std::string> logs_asked_;                   // branches whose job's log was fetched
  // The wave-level form (dispatch.submit_wave/wait_wave): plans gathered while start_plans
  // starts them, submitted as arrays once it has, each array waited on by one process.
  std::map<long long, std::vector<std::pair<size_t, int>>> wave_pending_;  // wave -> (plan, attempt) to submit
  std::map<long long, std::vector<size_t>> wave_reattach_;                 // wave -> plans re-attached, to wait on
  std::map<std::string, std::unique_ptr<Process>> wave_submit_procs_;      // array key -> its submit_wave
  std::map<std::string, std::unique_ptr<Process>> wave_wait_procs_;        // array key -> its wait_wave
  // The return path: plans whose job ended, fetched together by one `git fetch` child.
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
  std::vector<std::unique_ptr<Process>> delete_procs_;  // merged branches deleted from the remote
  std::string premerge_tip_;                            // the chain's tip (the checkout's HEAD when it started)
  std::set<size_t> premerge_done_;                      // plans whose step is in the chain
  int premerge_gen_ = 0;                                // a merge since: a step's answer is stale
  bool premerge_stuck_ = false;                         // a step conflicted or failed: merge_all does the rest
};

}  // namespace yolo::runner::phase
