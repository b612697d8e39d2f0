// One git worktree and branch per plan (issue 17, `isolation: "worktree"`): created from the
// commit the wave starts from, its branch diffed against that base for the scope fence,
// merged back into the project's checkout in plan order (the merge names the commit that
// passed the gates, never the branch, which an agent could move afterwards).
//
// Layout: branch  yolo/<run>/<plan>   (run: the first 8 characters of the correlation id)
//         folder  <git common dir>/yolo-worktrees/slot-N   (inside .git: never seen by
//                 `git status` of the project, never committed)
// The folders are a pool, one per plan running at once: a plan gets a free slot, switched to
// its new branch at the wave's base (`checkout -f -B`, then `clean -fdx`: the same tree as a
// fresh checkout, but only the files that differ are written), so a large repository is
// checked out once per slot, not once per plan. A slot is released when its plan's gates
// have run; the plan's branch is deleted once it is merged (kept when it failed).
// Every git call is a runner::run_git child (argv, no shell, timeout).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yolo::runner {

struct PlanWorktree {
  std::string plan_id;
  std::filesystem::path path;  // absolute
  std::string branch;          // yolo/<run>/<plan>
  std::string base;            // full commit id it was created from
};

enum class MergeOutcome { Merged, Conflict, Refused };
struct MergeResult {
  MergeOutcome outcome = MergeOutcome::Refused;
  std::vector<std::string> files;  // Conflict: the conflicting paths
  std::string commit;              // Merged: the new HEAD
  std::string error;               // Refused (and Conflict): git's words
};

class Worktrees {
 public:
  Worktrees(std::filesystem::path root, const std::string& correlation_id);

  // The project is a git work tree with a commit checked out; finds the common git folder
  // and whether git knows a committer (else yolo commits as "yolo"). false: err says why.
  bool init(std::string& err);

  const std::string& run_tag() const { return run_; }
  std::string branch_for(const std::string& plan_id) const;

  // The full id of HEAD of dir (the project's checkout when empty); "" on failure.
  std::string head(const std::filesystem::path& dir = {});

  // The plan's worktree: pool slot `slot` switched to branch_for(plan) (created or reset) at
  // base, with nothing else in it. A slot that is missing or broken (a killed git left a lock)
  // is made again with `git worktree add`.
  std::optional<PlanWorktree> create(const std::string& plan_id, const std::string& base, int slot, std::string& err);
  std::filesystem::path slot_path(int slot) const;

  // Files changed between base and commit ('/'-separated, relative): the plan's commits.
  std::optional<std::vector<std::string>> changed_files(const PlanWorktree& w, const std::string& commit,
                                                        std::string& err);
  // Paths with uncommitted changes or untracked in the worktree (`git status --porcelain`).
  std::optional<std::vector<std::string>> uncommitted(const PlanWorktree& w, std::string& err);
  // Commits these paths of the worktree (added when new) on its branch (dirty: whether
  // they have changes; false commits nothing). Returns the branch tip, "" on failure.
  // only: other changes are in the worktree, so the commit names the paths.
  std::string commit_paths(const PlanWorktree& w, const std::vector<std::string>& paths, bool dirty, bool only,
                           const std::string& message, std::string& err);

  // Whether commit is already in the project's HEAD (a merge done before a kill -9).
  std::optional<bool> merged(const std::string& commit);
  // A merge left half-done in the project's checkout (MERGE_HEAD): aborted. true if one was.
  bool abort_leftover_merge();
  // Merge commits of these (commit, message) steps, in order, into the project's checkout,
  // which moves once at the end; a step that conflicts is skipped and names the files
  // (nothing of it is merged); when the checkout cannot move (local changes in the way)
  // every step is Refused and nothing changed. One result per step.
  std::vector<MergeResult> merge_all(const std::vector<std::pair<std::string, std::string>>& steps);

  // Deletes a merged plan's branch; when it is still checked out in its slot (no plan took
  // the slot since), the slot is detached first. A branch already gone is fine.
  void delete_branch(const std::string& branch, const std::filesystem::path& slot);
  // The merged plans' branches in one child, after detaching the slots that may hold them.
  void delete_branches(const std::vector<std::string>& branches, const std::vector<std::filesystem::path>& slots);
  // Removes a worktree folder (registered or not) and the branch (either may be gone).
  void remove(const std::filesystem::path& path, const std::string& branch);

 private:
  std::vector<std::pair<std::string, std::string>> ident_env() const;
  // git < 2.38: `git merge --no-ff`, aborted on a conflict.
  MergeResult merge_porcelain(const std::string& commit, const std::string& message);

  std::filesystem::path root_;
  std::string run_;
  std::filesystem::path common_;  // absolute git common dir
  bool own_ident_ = false;
};

// A plan id as one ref component and folder name: [A-Za-z0-9._-] kept, the rest '-'.
std::string ref_safe(const std::string& s);

}  // namespace yolo::runner
