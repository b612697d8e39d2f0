// `yolo execute` with `isolation: "worktree"` (and dispatch, whose plans come back as
// worktrees), a part of the Run (runner/phase_run_internal.h) with a class of its own: the
// pool of worktree slots a run starts with, each plan's worktree made ready from its wave's
// base or adopted again after a kill -9, the plan's gates in it on a worker thread, and the
// merge back in plan order with the merged branches deleted.
//   run_worktrees.cc        the slots, what a killed run left, a plan's worktree made ready or adopted
//   plan_gate.cc            the gates in the worktree, on a worker thread (gate)
//   run_worktrees_merge.cc  merging back the plans the core names, the merged branches deleted
// It owns what only worktree isolation uses (the slots, the waves' bases, the slots' git, the
// slots a killed run left, the branch deletions in flight) and reaches the run through Host
// only; what it says goes to its Teller (runner/run_teller.h). What the state records and
// what a merge means for a plan are protocol/run/execution.h.
#pragma once

#include "runner/phase_parts.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

class WorktreeDriver {
 public:
  // What worktree isolation needs of the run (phase::Run gives it; a unit test gives its own).
  struct Host {
    std::function<size_t()> plans;                             // how many plans the phase has
    std::function<const PlanEntry&(size_t)> entry;             // plan i as the run read it
    std::function<PlanRun&(size_t)> plan;                      // what the run holds of plan i
    std::function<run::Core&()> core;                          // the run core's records (slots, merges)
    std::function<void(size_t, execution::PlanUpdate)> queue;  // plan i's record changes (batched)
    std::function<void()> flush;                               // the queued changes written now
    std::function<void(std::string)> next_step;                // the person's next step
    // Plan i's gates answered (its PlanRun's gated): the run concludes it with r.
    std::function<void(size_t, SpawnResult)> gated;
    // Plan i, finished by a killed run (resume_finished), ends now as its executor would have.
    std::function<void(size_t, SpawnResult)> resumed;
    // The plans of one merge are in the checkout (their branches, before the local deletion).
    std::function<void(const std::vector<std::string>& branches)> merged;
  };
  // How init stops the run (the caller's finish).
  struct Stop {
    int code;
    execution::Result result;
    std::string message;
  };

  WorktreeDriver(const World& world, const stdfs::path& root, const Config& cfg, uv_loop_t* loop, Teller& tell,
                 Host host)
      : world_(world), root_(root), cfg_(cfg), loop_(loop), tell_(tell), host_(std::move(host)) {}
  WorktreeDriver(const WorktreeDriver&) = delete;
  WorktreeDriver& operator=(const WorktreeDriver&) = delete;

  // Before step 2: git checks, then what a killed run left (doc: the state then): plans that
  // passed their gates but were not merged are merged (never twice), leftover folders removed.
  // fresh_cid: the run's correlation id when the state names none. A Stop halts the run.
  std::optional<Stop> init(const json& doc, const std::string& phase_rel, const std::string& fresh_cid,
                           SummaryMode mode);
  Worktrees* trees() { return trees_.get(); }
  std::map<long long, std::string>& wave_bases() { return wave_base_; }  // wave -> its worktrees' base

  // Plan i's worktree made ready from its wave's base in a free slot; false: err says why.
  bool prepare(size_t i, long long wave, std::string& err);
  // A killed run's slot still on plan i's branch, holding work its executor finished (its
  // commits on the branch, a SUMMARY that passes its gate): adopted as plan i's worktree,
  // so the plan is gated, not run again: said, started in the run core, and queued for
  // start_resumed. false: the plan runs as usual (its slot reset).
  bool resume_finished(size_t i);
  // Plan i runs (or is gated) in w: the plan as this run read it is placed there (never
  // through a symlink), and the worktree is recorded. false: err says why.
  bool adopt(size_t i, const PlanWorktree& w, int slot, std::string& err);
  // The plans resume_finished took up end from the loop as an executor that ended does, never
  // inside the caller's schedule(): all at once, once the caller's starts are done.
  void start_resumed();
  // The loop's handles: open once the loop is, close before it ends.
  void open();
  void close();
  // Plan i's slot and branch go: what its executor committed could not be taken in.
  void drop(const PlanWorktree& w);

  // The plan's gates in its worktree (SUMMARY gate, scope fence; runner/plan_gate.h) on a
  // worker thread of the loop; then Host::gated(i, r), with their answer in plan(i).gated.
  void gate(size_t i, SpawnResult r);
  // Merges the plans the core's Merge names, in its order (plan order), and tells the core
  // how each went. A conflict fails its plan.
  void merge(const std::vector<size_t>& plans);
  static std::string merge_message(const PlanEntry& e, const json& wt);
  // At the run's end, once: what killed runs left goes; what cannot go is said.
  void tidy();

 private:
  // A plan's merge result into its record (merged / conflict with a finding / refused);
  // false on a conflict or refusal (findings and error say why).
  bool apply_merge(const json& wt, const MergeResult& m, json& record, std::string& error, json& findings);
  // A gated plan that a killed run left unmerged: merged now (or found merged). A Stop halts.
  std::optional<Stop> merge_left(size_t i, const json& wt);
  // The merged plans' local branches (branch, tip) deleted by a child of the loop.
  void delete_merged_branches(std::vector<std::pair<std::string, std::string>> merged,
                              const std::vector<stdfs::path>& slots);
  bool dispatched() const { return cfg_.dispatch.configured(); }

  const World& world_;
  stdfs::path root_;
  const Config& cfg_;
  uv_loop_t* loop_;
  Teller& tell_;  // what it says: events, notes, the event log
  Host host_;
  SummaryMode mode_ = SummaryMode::Strict;
  std::unique_ptr<Worktrees> trees_;
  bool tidied_ = false;
  std::map<long long, std::string> wave_base_;               // wave -> the commit its worktrees start from
  std::map<std::string, std::unique_ptr<GitCli>> slot_git_;  // the SUMMARY gate's git, per slot
  std::map<std::string, stdfs::path> left_on_branch_;        // branch -> slot, as the killed run left them
  std::vector<size_t> resumed_;                              // plans to gate without running (resume_timer_)
  uv_timer_t resume_timer_{};
  std::unique_ptr<Process> branch_delete_proc_;
  std::vector<SpawnSpec> branch_deletes_;  // batches waiting for it
};

}  // namespace yolo::runner::phase
