// GitPort (protocol/ports/git_port.h) answered by the real `git`: every question is one child
// started with runner::run_process (argv, no shell, own process group, timeout), as
// `git -C ROOT ...` with prompts and optional locks disabled and without the variables that
// tie git to another repository (git_hook_env(): a hook exports them). Only strings that pass
// is_commit_hash() are ever placed on a git command line.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "protocol/ports/git_port.h"
#include "runner/subprocess.h"

namespace yolo::runner {

class GitCli : public GitPort {
 public:
  explicit GitCli(std::filesystem::path root, long long timeout_ms = 10000);

  // `git rev-parse --is-inside-work-tree` (answered once, then cached).
  bool is_repo() override;
  // The root is a work tree: another git child there said so (a `git status` that named its
  // HEAD); is_repo() then starts none.
  void work_tree_known() { is_repo_ = true; }
  // `git rev-parse --verify --quiet HASH^{commit}`; true only when the answer is a commit
  // whose id starts with HASH (so a branch or tag that happens to be spelled in hex
  // does not count).
  std::optional<bool> commit_exists(const std::string& hash) override;
  // `git diff-tree -r --root -m --no-commit-id --name-only --no-renames --relative -z ID`.
  std::optional<std::vector<std::string>> files_touched(const std::string& hash) override;
  std::string last_error() const override { return last_error_; }
  // Two children for all hashes: `git cat-file --batch-check` (HASH^{commit} per line)
  // and `git diff-tree --stdin ...` over the commits found. Later questions about these
  // hashes are answered from memory; a failed prefetch just leaves them to be asked one
  // by one.
  void prefetch(const std::vector<std::string>& hashes) override;
  // A range for the next prefetch (base and tip: full commit ids): the paths that differ
  // between the two trees (the scope fence's list) are then asked of the same `diff-tree
  // --stdin` child as the SUMMARY's commits, on its last line (`TIP BASE`), both ids checked
  // to be commits by the same `cat-file`. range_files() answers once that was done; nullopt:
  // not asked (no prefetch ran, or its answer had not the expected shape): ask git itself.
  void want_range(const std::string& base, const std::string& tip);
  std::optional<std::vector<std::string>> range_files(const std::string& base, const std::string& tip) const;

  // How many git children this object has started (tests use it to prove nothing ran).
  int processes_started() const { return started_; }

 private:
  struct Answer {
    bool ran = false;  // exited (any status)
    int status = -1;
    std::string out, err;
  };
  Answer git(const std::vector<std::string>& args, size_t output_cap = 1 << 20, std::string stdin_data = {});

  std::filesystem::path root_;
  long long timeout_ms_;
  std::optional<bool> is_repo_;
  std::map<std::string, std::string> full_ids_;            // hash as given -> full id
  std::map<std::string, bool> known_missing_;              // hash as given -> not a commit (prefetched)
  std::map<std::string, std::vector<std::string>> files_;  // full id -> files (prefetched)
  std::pair<std::string, std::string> want_range_;          // base, tip for the next prefetch
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> ranges_;  // (base, tip) -> paths
  std::string last_error_;
  int started_ = 0;
};

// The variables that tie a git command to one repository, which git exports to hooks
// (GIT_INDEX_FILE, GIT_PREFIX, and GIT_DIR / GIT_WORK_TREE with --git-dir, worktrees or a
// hook run by a tool): GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_PREFIX, GIT_COMMON_DIR,
// GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_IMPLICIT_WORK_TREE,
// GIT_SHALLOW_FILE, GIT_GRAFT_FILE (the location part of `git rev-parse --local-env-vars`).
// Every git child of the runner is started without them (SpawnSpec::unset_env), so
// `git -C ROOT` always means ROOT, also when yolo runs inside a hook of another repository.
const std::vector<std::string>& git_hook_env();

// The `-c KEY=VALUE` settings every git child of yolo's runs with, so that none runs a
// program the repository's config names (hooks, fsmonitor, filters, textconv, merge drivers,
// external diff, pager, editor, askpass, credential helpers, ssh, gpg). KEY=VALUE strings;
// the attribute drivers are read from the repository's config once per process.
std::vector<std::string> safe_git_config(const std::filesystem::path& root);

// One `git -C DIR ARGS...` child as GitCli starts them (argv, no shell, own process group,
// timeout, prompts and optional locks off, git_hook_env() removed), for the commands that
// change a repository (worktrees, commits, merges: runner/worktree.h).
struct GitRun {
  bool ran = false;  // exited (any status)
  int status = -1;
  std::string out, err;
  std::string error;       // why it did not run ("git merge timed out after ...")
  bool truncated = false;  // out was cut at the cap (4 MiB): not all of git's answer
  bool ok() const { return ran && status == 0; }
};
// stdin_data: written to git's stdin (e.g. --pathspec-from-file=-), which is then closed.
// keep_hooks_path: core.hooksPath is not overridden, so that git answers where the
// repository's hooks are (`yolo hooks`); only for questions that run no hook.
GitRun run_git(const std::filesystem::path& dir, const std::vector<std::string>& args, long long timeout_ms = 60000,
               const std::vector<std::pair<std::string, std::string>>& env = {}, std::string stdin_data = {},
               bool keep_hooks_path = false);

// The child run_git starts, to be started on an event loop instead (Process::start): the
// same argv, settings and environment, no stdin.
SpawnSpec git_child_spec(const std::filesystem::path& dir, const std::vector<std::string>& args, long long timeout_ms,
                         const std::vector<std::pair<std::string, std::string>>& env = {});

// The top folder of the git work tree holding dir (`git rev-parse --show-toplevel`);
// nullopt outside a repository or without git.
std::optional<std::filesystem::path> git_toplevel(const std::filesystem::path& dir, long long timeout_ms = 10000);

}  // namespace yolo::runner
