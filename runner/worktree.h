// One git worktree and branch per plan (`isolation: "worktree"`): created from the
// commit the wave starts from, its branch diffed against that base for the scope fence,
// merged back into the project's checkout in plan order (the merge names the commit that
// passed the gates, never the branch, which an agent could move afterwards).
//
// Layout: branch  yolo/<run>/<plan>/work   (run: the first 8 characters of the correlation id)
//         folder  <git common dir>/yolo-worktrees/slot-N   (inside .git: never seen by
//                 `git status` of the project, never committed)
// The folders are a pool, one per plan running at once, so a large repository is checked
// out once per slot, not once per plan. A slot serves its next plan in one of two ways:
//  - full reset (the slot's first plan in this run, or anything unusual): `checkout -f -B`
//    to the plan's branch at the wave's base, then `clean -ffdx`: the same tree as a fresh
//    checkout. A slot a killed run left dirty always takes this way (what a slot holds is
//    known only to the run that scanned it).
//  - known state (the slot's previous plan in this run reached its gate): the gate's scan
//    (`git status`, untracked and ignored files included) and commit left the slot at a
//    known commit with a known list of changed paths; only those paths are put back to the
//    base (`git restore --source=BASE --staged --worktree`, cost proportional to the plan's
//    diff, not to the repository), untracked or ignored leftovers removed with `clean -ffdx`,
//    and the branch set with `update-ref` + `symbolic-ref`. Whatever a process that outlived
//    its plan writes into the slot after that scan is seen by the next plan's scan (reported
//    as uncommitted, never merged: the merge takes commits only) or by its scope fence.
// A slot is released when its plan's gates have run; the plan's branch is deleted once it
// is merged (kept when it failed).
// Every git call is a runner::run_git child (argv, no shell, timeout); paths go to git on
// stdin, NUL-separated, as literal pathspecs.
#pragma once
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/git.h"

namespace yolo::runner {

struct PlanWorktree {
  std::string plan_id;
  std::filesystem::path path;  // absolute
  std::string branch;          // yolo/<run>/<plan>/work
  std::string base;            // full commit id it was created from
  // How the slot was made ready: "paths" (known state: `restored` paths put back to the
  // base), "reset" (full reset of an existing slot) or "created" (`git worktree add`).
  std::string prepared;
  size_t restored = 0;
};

// One entry of `git status --porcelain -z`: XY and the path ('/'-separated, relative).
struct StatusEntry {
  char x = ' ', y = ' ';
  std::string path;
  bool untracked() const { return x == '?'; }
  bool ignored() const { return x == '!'; }
  bool staged() const { return x != ' ' && !untracked() && !ignored(); }
};

// A worktree scanned: the commit checked out and every path that differs from it.
struct Scan {
  std::string head;
  std::vector<StatusEntry> entries;
};

enum class MergeOutcome { Merged, Conflict, Refused };
struct MergeResult {
  MergeOutcome outcome = MergeOutcome::Refused;
  std::vector<std::string> files;  // Conflict: the conflicting paths
  std::string commit;              // Merged: the new HEAD
  std::string error;               // Refused (and Conflict): git's words
  bool ahead = false;              // Merged: the step was computed ahead (remember_merge)
};

class Worktrees {
 public:
  Worktrees(std::filesystem::path root, const std::string& correlation_id);

  // The project is a git work tree with a commit checked out; finds the common git folder
  // and whether git knows a committer (else yolo commits as "yolo"). false: err says why.
  bool init(std::string& err);

  const std::string& run_tag() const { return run_; }
  // "yolo/RUN/PLAN/work": the plan's branch, alone in its ref folder.
  std::string branch_for(const std::string& plan_id) const;

  // The full id of HEAD of dir (the project's checkout when empty); "" on failure.
  std::string head(const std::filesystem::path& dir = {});

  // The plan's worktree: pool slot `slot` switched to branch_for(plan) (created or reset) at
  // base, with nothing else in it. A slot that is missing or broken (a killed git left a lock)
  // is made again with `git worktree add`.
  // branch: the slot's branch (empty: branch_for(plan_id)); a dispatched plan's attempt N > 1
  // gets its job's branch name, so its merge names a branch that exists on the remote.
  std::optional<PlanWorktree> create(const std::string& plan_id, const std::string& base, int slot, std::string& err,
                                     const std::string& branch = "");
  std::filesystem::path slot_path(int slot) const;
  // The children that switch pool slot `slot` to `branch` at `commit` (a dispatched plan's
  // fetched branch: checkout -f -B, then clean; no clean for a slot just added, nor for one
  // whose last gate in this run found nothing in it but its commit: remember() with nothing
  // left), for the caller to start one after the other off its loop; w is the worktree they
  // make. Children of several slots may run at once. A
  // slot that has no checkout yet is added first, here (`git worktree add --no-checkout`):
  // call it while no fetch of this repository runs (checkouts in other slots may). Empty,
  // with err, when that fails.
  std::vector<SpawnSpec> switch_steps(const std::string& plan_id, const std::string& commit, int slot,
                                      const std::string& branch, PlanWorktree& w, std::string& err);

  // Files changed between base and commit ('/'-separated, relative): the plan's commits.
  std::optional<std::vector<std::string>> changed_files(const PlanWorktree& w, const std::string& commit,
                                                        std::string& err);
  // Every path of the worktree that differs from its HEAD: modified, staged, untracked and
  // ignored (a folder matching an ignore pattern is one entry), and the commit checked out.
  // One `git status`: the one scan of the whole tree a plan costs.
  std::optional<Scan> scan(const PlanWorktree& w, std::string& err);
  // Commits these paths of the worktree (added when new) on top of head, its branch's tip
  // (dirty: whether they have changes; false commits nothing). Returns the new tip (head
  // when nothing was committed), "" on failure. only: other changes are staged, so the
  // commit names the paths (`git commit --only`); else the commit is made from the index
  // without a scan of the tree (update-index, write-tree, commit-tree, update-ref).
  std::string commit_paths(const PlanWorktree& w, const std::string& head, const std::vector<std::string>& paths,
                           bool dirty, bool only, const std::string& message, std::string& err);
  // After a plan's gate: its slot holds commit tip (index and files), plus the entries of
  // left (what the gate's scan found and did not commit); changed: the paths that differ
  // between the plan's base and tip. The next plan in the slot (this run) starts from that.
  void remember(const PlanWorktree& w, const std::string& tip, const std::vector<std::string>& changed,
                const std::vector<StatusEntry>& left);
  // The slot's state is unknown (a failed step): its next plan gets the full reset.
  void forget(const std::filesystem::path& slot) { known_.erase(slot.string()); }
  // How many git children this object has started (the benchmark and tests count them).
  int processes_started() const { return started_; }
  // How many plans got a slot by the known-state way and by the full reset.
  int fast_switches() const { return fast_; }
  int full_resets() const { return full_; }

  // The slots of the pool that have a plan's branch checked out (branch -> slot folder):
  // what a killed run left, its plans' work still in them. One `git worktree list`.
  std::map<std::string, std::filesystem::path> slots_on_plan_branches();
  // The commit a plan's branch was made from: where it meets the project's HEAD (the base
  // is an ancestor of HEAD, merges since or not). "" when git cannot tell.
  std::string base_of(const std::string& branch);
  // Whether the branch has commits of its own past base.
  bool has_commits(const std::string& branch, const std::string& base);
  // Whether commit is already in the project's HEAD (a merge done before a kill -9).
  std::optional<bool> merged(const std::string& commit);
  // A merge left half-done in the project's checkout (MERGE_HEAD): aborted. true if one was.
  bool abort_leftover_merge();
  // Merge commits of these (commit, message) steps, in order, into the project's checkout,
  // which moves once at the end; a step that conflicts is skipped and names the files
  // (nothing of it is merged); when the checkout cannot move (local changes in the way)
  // every step is Refused and nothing changed. One result per step.
  std::vector<MergeResult> merge_all(const std::vector<std::pair<std::string, std::string>>& steps);
  // A merge step computed ahead of merge_all, off the event loop, while other plans still ran:
  // commit `commit` merged onto `onto` with `message` gave merge commit `result`. merge_all
  // takes it instead of starting git again when its pass reaches that same step (the same
  // commit onto the same tip with the same message); any other step runs as before.
  void remember_merge(const std::string& onto, const std::string& commit, const std::string& message,
                      const std::string& result);
  void forget_merges() { premerged_.clear(); }
  // The children of such a step (merge-tree, then commit-tree), for Process::start.
  SpawnSpec merge_tree_spec(const std::string& onto, const std::string& commit) const;
  SpawnSpec commit_tree_spec(const std::string& tree, const std::string& onto, const std::string& commit,
                             const std::string& message) const;
  // How many merge steps merge_all took from remember_merge (tests and benchmarks).
  int premerged_steps() const { return premerged_used_; }

  // Deletes a merged plan's branch; when it is still checked out in its slot (no plan took
  // the slot since), the slot is detached first. A branch already gone is fine.
  void delete_branch(const std::string& branch, const std::filesystem::path& slot);
  // The merged plans' branches (branch, its tip), deleted by one child the caller starts off
  // its loop: `git update-ref --stdin`, one `delete` line each, one transaction. The slots
  // that still have one of them checked out are detached first, here, on the caller's thread
  // and in one `update-ref --stdin` of their HEADs (`worktrees/NAME/HEAD`): a slot the next
  // plan takes must never be detached after it. A branch whose slot could not be detached is
  // left (tidy() deletes it at the end of the run); so is one checked out in a worktree that
  // is no slot (by hand: tidy() names it). Empty argv: nothing to delete.
  SpawnSpec delete_branches_spec(const std::vector<std::pair<std::string, std::string>>& merged,
                                 const std::vector<std::filesystem::path>& slots);
  // At the end of a run: a stale .git/packed-refs.lock (left by a killed git) removed, every
  // slot's branch detached, every yolo/ branch already merged into HEAD deleted. Returns the
  // merged branches that could not be deleted; `notes` says what was done and what was not.
  std::vector<std::string> tidy(std::vector<std::string>& notes);
  // Removes .git/packed-refs.lock when it is older than any git's hold of it; true if removed.
  bool remove_stale_ref_lock(std::vector<std::string>& notes);
  // A slot's HEAD detached at the commit it names (its branch can then be deleted); the
  // index and files are not touched.
  void detach(const std::filesystem::path& slot);
  // Removes a worktree folder (registered or not) and the branch (either may be gone).
  void remove(const std::filesystem::path& path, const std::string& branch);

 private:
  std::vector<std::pair<std::string, std::string>> ident_env() const;
  void prune_removed_slots();
  bool registration_of_missing_folder() const;
  // A lock git could not take (named in its stderr) that a killed git left in yolo's own
  // refs or slots: removed once it is older than any live holder's; true to run git again.
  bool remove_stale_lock_of(const std::string& git_err);
  GitRun git(const std::filesystem::path& dir, const std::vector<std::string>& args, long long timeout_ms = 60000,
             const std::vector<std::pair<std::string, std::string>>& env = {}, std::string stdin_data = {});
  // The known-state way of create(); false: the slot needs the full reset.
  bool switch_known(PlanWorktree& w, std::string& err);
  // git < 2.38: `git merge --no-ff`, aborted on a conflict.
  MergeResult merge_porcelain(const std::string& commit, const std::string& message);

  std::filesystem::path root_;
  std::string run_;
  std::filesystem::path common_;  // absolute git common dir
  bool own_ident_ = false;
  struct Known {
    std::string tip, base;
    std::vector<std::string> changed;  // base..tip
    std::vector<std::string> tracked;  // left modified or staged
    bool leftovers = false;            // untracked or ignored entries left
  };
  std::map<std::string, Known> known_;  // slot path -> its state after its last plan's gate (this run)
  // started_ and notes_ are also written by the git helpers a plan's gate calls on a worker
  // thread (scan, changed_files, commit_paths, head); the rest is the caller's thread's.
  std::atomic<int> started_{0};
  int fast_ = 0, full_ = 0, premerged_used_ = 0;
  std::map<std::string, std::string> premerged_;  // onto, commit, message -> merge commit
  std::vector<std::string> notes_;  // what deletions along the run did about a stale lock, for tidy()
  std::mutex notes_mu_;             // guards notes_
};

// A plan id as one ref component and folder name: [A-Za-z0-9._-] kept, the rest '-'.
std::string ref_safe(const std::string& s);

}  // namespace yolo::runner
