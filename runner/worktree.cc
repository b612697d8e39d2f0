#include "runner/worktree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <sstream>
#include <fstream>
#include <system_error>

#include "protocol/ports/git_port.h"
#include "protocol/base/text.h"
#include "runner/worktree_text.h"

namespace yolo::runner {
namespace stdfs = std::filesystem;
using worktree_text::split_nul;
using worktree_text::trimmed;

namespace {

std::string read_small_text(const stdfs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::string s;
  std::getline(f, s, '\0');
  return s;
}

}  // namespace

std::string ref_safe(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += ok ? c : '-';
  }
  if (out.empty()) out = "plan";
  return out;
}

Worktrees::Worktrees(stdfs::path root, const std::string& correlation_id) : root_(std::move(root)) {
  run_ = ref_safe(correlation_id.substr(0, 8));
}

bool Worktrees::init(std::string& err) {
  GitRun g = git(root_, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
  if (!g.ok()) {
    err = "isolation \"worktree\" needs a git repository at " + root_.string() + " (" + g.error + ")";
    return false;
  }
  common_ = trimmed(g.out);
  if (head().empty()) {
    err = "isolation \"worktree\" needs a commit checked out in " + root_.string() + " (git rev-parse HEAD failed)";
    return false;
  }
  // A committer git knows (user.name/user.email or the environment), else yolo's own.
  GitRun id = git(root_, {"var", "GIT_COMMITTER_IDENT"});
  own_ident_ = !id.ok();
  prune_removed_slots();
  return true;
}

// A slot folder may be removed by hand at any time; git still lists it as a worktree with its
// branch checked out there, and refuses to move or delete that branch. Each registration
// names its folder (worktrees/<name>/gitdir holds "<folder>/.git"): one that names a missing
// slot folder is pruned before any slot is used.
void Worktrees::prune_removed_slots() {
  std::error_code ec;
  for (const auto& e : stdfs::directory_iterator(common_ / "worktrees", ec)) {
    std::string gitdir = read_small_text(e.path() / "gitdir");
    while (!gitdir.empty() && (gitdir.back() == '\n' || gitdir.back() == '\r')) gitdir.pop_back();
    if (gitdir.empty()) continue;
    stdfs::path folder = stdfs::path(gitdir).parent_path();
    if (folder.parent_path().filename() != "yolo-worktrees") continue;  // only ours
    std::error_code e2;
    if (!stdfs::exists(folder, e2)) {
      git(root_, {"worktree", "prune"});
      return;
    }
  }
}

// What `git worktree prune` would prune: a registration (worktrees/NAME) whose gitdir file
// is missing or names a .git that is gone. Read from the files, no git child.
bool Worktrees::registration_of_missing_folder() const {
  std::error_code ec;
  for (const auto& e : stdfs::directory_iterator(common_ / "worktrees", ec)) {
    std::string gitdir = read_small_text(e.path() / "gitdir");
    while (!gitdir.empty() && (gitdir.back() == '\n' || gitdir.back() == '\r')) gitdir.pop_back();
    stdfs::path g = gitdir.empty() ? stdfs::path() : e.path() / gitdir;  // an absolute gitdir stays as it is
    std::error_code e2;
    if (gitdir.empty() || !stdfs::exists(g, e2)) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> Worktrees::ident_env() const {
  if (!own_ident_) return {};
  return {{"GIT_AUTHOR_NAME", "yolo"},
          {"GIT_AUTHOR_EMAIL", "yolo@localhost.invalid"},
          {"GIT_COMMITTER_NAME", "yolo"},
          {"GIT_COMMITTER_EMAIL", "yolo@localhost.invalid"}};
}

GitRun Worktrees::git(const stdfs::path& dir, const std::vector<std::string>& args, long long timeout_ms,
                      const std::vector<std::pair<std::string, std::string>>& env, std::string stdin_data) {
  ++started_;
  GitRun g = run_git(dir, args, timeout_ms, env, stdin_data);
  if (!g.ok() && remove_stale_lock_of(g.err)) {
    ++started_;
    g = run_git(dir, args, timeout_ms, env, std::move(stdin_data));
  }
  return g;
}

bool Worktrees::remove_stale_lock_of(const std::string& git_err) {
  // "Unable to create '<path>.lock': File exists." A git killed while it held a lock (a
  // kill -9 of yolo mid-wave; git itself dying of SIGPIPE on the dead run's pipe) leaves the
  // file, and every later git that needs the same ref or slot fails on it. Only locks in
  // what yolo owns are taken away: its branches (refs/heads/yolo/), their reflogs and its
  // slots' admin folders; and only once no git could still be holding it (git holds such a
  // lock for milliseconds, and this run is the only execute: its instance lock says so).
  static const std::string kHead = "Unable to create '", kTail = ".lock': File exists";
  size_t at = git_err.find(kHead);
  if (at == std::string::npos || common_.empty()) return false;
  at += kHead.size();
  size_t end = git_err.find(kTail, at);
  if (end == std::string::npos) return false;
  const stdfs::path lock = git_err.substr(at, end - at) + ".lock";
  const std::string rel = lock.lexically_relative(common_).generic_string();
  auto under = [&](const char* prefix) { return rel.rfind(prefix, 0) == 0; };
  if (rel.empty() || rel.find("..") != std::string::npos ||
      !(under("refs/heads/yolo/") || under("logs/refs/heads/yolo/") || under("worktrees/slot-")))
    return false;
  constexpr int kStaleSecs = 2;
  for (int waited_ms = 0;; waited_ms += 100) {  // a lock just made waits out its holder's time
    struct stat st {};
    if (::lstat(lock.c_str(), &st) != 0) return errno == ENOENT;  // gone meanwhile: try again
    if (!S_ISREG(st.st_mode)) return false;
    const long long age = static_cast<long long>(::time(nullptr)) - static_cast<long long>(st.st_mtime);
    if (age >= kStaleSecs) {
      if (::unlink(lock.c_str()) != 0) return false;
      std::lock_guard<std::mutex> g(notes_mu_);
      notes_.push_back("removed " + lock.string() + ", " + std::to_string(age) + " s old, left by a git that was killed");
      return true;
    }
    if (waited_ms >= (kStaleSecs + 1) * 1000) return false;
    ::usleep(100 * 1000);
  }
}

// Each plan's branch in a folder of its own (refs/heads/yolo/RUN/PLAN/): git writes a ref
// through a lock file beside it, so the folder is what an executor's sandbox must let it
// write, and it then holds no other plan's branch.
std::string Worktrees::branch_for(const std::string& plan_id) const {
  return "yolo/" + run_ + "/" + ref_safe(plan_id) + "/work";
}

stdfs::path Worktrees::slot_path(int slot) const {
  return common_ / "yolo-worktrees" / ("slot-" + std::to_string(slot));
}

std::string Worktrees::head(const stdfs::path& dir) {
  GitRun g = git(dir.empty() ? root_ : dir, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"});
  return g.ok() ? trimmed(g.out) : std::string();
}

void Worktrees::remove(const stdfs::path& p, const std::string& branch) {
  std::error_code ec;
  if (stdfs::exists(p, ec)) git(root_, {"worktree", "remove", "--force", "--force", p.string()});
  if (stdfs::exists(p, ec)) {
    stdfs::remove_all(p, ec);
    git(root_, {"worktree", "prune"});
  } else if (registration_of_missing_folder()) {
    // A slot folder removed by hand (`rm -rf`) stays registered, its branch "checked out"
    // there, and git refuses to move that branch (`-B`) until the registration is pruned.
    git(root_, {"worktree", "prune"});
  }
  if (!branch.empty()) git(root_, {"branch", "-D", "--quiet", branch});
}

void Worktrees::delete_branch(const std::string& branch, const stdfs::path& slot) {
  if (branch.empty()) return;
  {
    std::lock_guard<std::mutex> g(notes_mu_);
    remove_stale_ref_lock(notes_);
  }
  GitRun g = git(root_, {"branch", "-D", "--quiet", branch});
  if (g.ok() || g.err.find("not found") != std::string::npos) return;
  std::error_code ec;
  if (!slot.empty() && stdfs::exists(slot, ec)) detach(slot);
  git(root_, {"branch", "-D", "--quiet", branch});
}

std::optional<PlanWorktree> Worktrees::create(const std::string& plan_id, const std::string& base, int slot,
                                              std::string& err, const std::string& branch) {
  PlanWorktree w{plan_id, slot_path(slot), branch.empty() ? branch_for(plan_id) : branch, base, "", 0};
  std::error_code ec;
  if (stdfs::exists(w.path / ".git", ec)) {
    if (switch_known(w, err)) {
      ++fast_;
      w.prepared = "paths";
      return w;
    }
    ++full_;
    w.prepared = "reset";
    // The slot as a fresh checkout of base on the plan's branch: tracked files reset (only
    // those that differ are written), everything untracked or ignored removed.
    GitRun c = git(w.path, {"checkout", "--quiet", "--force", "--ignore-other-worktrees", "-B", w.branch, base});
    if (c.ok() && git(w.path, {"clean", "-q", "-f", "-f", "-d", "-x"}).ok()) return w;
  } else {
    ++full_;
  }
  w.prepared = "created";
  known_.erase(w.path.string());
  remove(w.path, "");  // missing, or broken (a lock left by a killed git): made again
  stdfs::create_directories(w.path.parent_path(), ec);
  GitRun g = git(root_, {"worktree", "add", "--quiet", "--force", "-B", w.branch, w.path.string(), base});
  if (!g.ok()) {
    err = "git worktree add for plan " + plan_id + " failed: " + (g.error.empty() ? g.err : g.error);
    return std::nullopt;
  }
  return w;
}

std::vector<SpawnSpec> Worktrees::switch_steps(const std::string& plan_id, const std::string& commit, int slot,
                                               const std::string& branch, PlanWorktree& w, std::string& err) {
  w = PlanWorktree{plan_id, slot_path(slot), branch, commit, "reset", 0};
  std::error_code ec;
  // The slot's last gate (this run) found nothing in it but its commit: no file untracked,
  // ignored or changed. `checkout -f` alone then leaves the fetched commit's tree and nothing
  // else, as the clean would; what anything wrote there since is the next gate's scan's.
  auto k = known_.find(w.path.string());
  const bool spotless = k != known_.end() && !k->second.leftovers && k->second.tracked.empty();
  known_.erase(w.path.string());
  if (!stdfs::exists(w.path / ".git", ec)) {
    // A slot is added here, by the caller's thread, never by a child beside others: `worktree
    // add` writes the new worktree's HEAD and commondir in place, and a git running meanwhile
    // that reads every worktree's refs (a fetch's connectivity check, `branch`, another
    // `worktree add`) fails on the half-written files. Without a checkout it is quick; the
    // checkout below fills it.
    w.prepared = "created";
    remove(w.path, "");  // missing, or broken: made again
    stdfs::create_directories(w.path.parent_path(), ec);
    GitRun g = git(root_, {"worktree", "add", "--quiet", "--force", "--no-checkout", "--detach", w.path.string(), commit});
    if (!g.ok()) {
      err = "git worktree add for plan " + plan_id + " failed: " + (g.error.empty() ? g.err : g.error);
      return {};
    }
  }
  std::vector<SpawnSpec> steps = {
      git_child_spec(w.path, {"checkout", "--quiet", "--force", "--ignore-other-worktrees", "-B", w.branch, commit}, 120000)};
  if (w.prepared == "created") {  // a folder just made holds nothing to clean
    ++full_;
  } else if (spotless) {
    ++fast_;
  } else {
    ++full_;
    steps.push_back(git_child_spec(w.path, {"clean", "-q", "-f", "-f", "-d", "-x"}, 120000));
  }
  started_ += static_cast<int>(steps.size());
  return steps;
}

bool Worktrees::switch_known(PlanWorktree& w, std::string& err) {
  auto it = known_.find(w.path.string());
  if (it == known_.end()) return false;
  Known k = std::move(it->second);
  known_.erase(it);  // used once: a failure below leaves the slot to the full reset
  // The paths that differ from the new base: the previous plan's diff when it started from
  // the same base (a wave's plans), else git's (a later wave: that diff plus the merges).
  std::vector<std::string> paths;
  if (k.base == w.base) {
    paths = std::move(k.changed);
  } else {
    GitRun d = git(w.path, {"diff", "--name-only", "--no-renames", "-z", k.tip, w.base, "--"});
    if (!d.ok()) return false;
    paths = split_nul(d.out);
  }
  for (auto& t : k.tracked)
    if (std::find(paths.begin(), paths.end(), t) == paths.end()) paths.push_back(std::move(t));
  w.restored = paths.size();
  if (!paths.empty()) {
    std::string list;
    for (const auto& p : paths) list += p + '\0';
    GitRun r = git(w.path,
                   {"--literal-pathspecs", "restore", "--quiet", "--source=" + w.base, "--staged", "--worktree",
                    "--pathspec-from-file=-", "--pathspec-file-nul"},
                   120000, {}, std::move(list));
    if (!r.ok()) return false;
  }
  if (k.leftovers && !git(w.path, {"clean", "-q", "-f", "-f", "-d", "-x"}).ok()) return false;
  std::string why = "yolo: plan " + w.plan_id + " from " + w.base;
  if (!git(w.path, {"update-ref", "-m", why, "refs/heads/" + w.branch, w.base}).ok()) return false;
  if (!git(w.path, {"symbolic-ref", "-m", why, "HEAD", "refs/heads/" + w.branch}).ok()) return false;
  (void)err;
  return true;
}

void Worktrees::remember(const PlanWorktree& w, const std::string& tip, const std::vector<std::string>& changed,
                         const std::vector<StatusEntry>& left) {
  Known k;
  k.tip = tip;
  k.base = w.base;
  k.changed = changed;
  for (const auto& e : left) {
    if (e.untracked() || e.ignored())
      k.leftovers = true;
    else
      k.tracked.push_back(e.path);
  }
  known_[w.path.string()] = std::move(k);
}

bool Worktrees::remove_stale_ref_lock(std::vector<std::string>& notes) {
  // git takes .git/packed-refs.lock to rewrite packed-refs (a branch deletion does); a git
  // killed meanwhile leaves it, and every later deletion waits for git's lock timeout, then
  // fails. A lock older than any git's hold of it is such a leftover.
  constexpr int kStaleSecs = 10;
  const stdfs::path lock = common_ / "packed-refs.lock";
  struct stat st {};
  if (::lstat(lock.c_str(), &st) != 0) return false;
  const long long age = static_cast<long long>(::time(nullptr)) - static_cast<long long>(st.st_mtime);
  if (age < kStaleSecs) return false;
  if (::unlink(lock.c_str()) != 0) {
    notes.push_back("could not remove " + lock.string() + " (" + std::strerror(errno) + ", " + std::to_string(age) +
                    " s old, left by a git that was killed): remove it, then `git branch -D` the yolo/ branches");
    return false;
  }
  notes.push_back("removed " + lock.string() + ", " + std::to_string(age) + " s old, left by a git that was killed");
  return true;
}

std::vector<std::string> Worktrees::tidy(std::vector<std::string>& notes) {
  std::vector<std::string> left;
  {
    std::lock_guard<std::mutex> g(notes_mu_);
    notes.insert(notes.end(), notes_.begin(), notes_.end());
    notes_.clear();
  }
  remove_stale_ref_lock(notes);
  // Every slot with a branch checked out is detached: a slot a killed run left on a plan's
  // branch keeps that branch from being deleted (git refuses to delete a checked-out branch).
  for (const auto& slot : slots_on_plan_branches()) detach(slot.second);
  // Then every yolo/ branch already in HEAD (merged: nothing of it would be lost). A failed
  // plan's branch is not merged and stays, to show what it changed.
  auto merged = [&] {
    GitRun g = git(root_, {"for-each-ref", "--format=%(refname:short)", "--merged", "HEAD", "refs/heads/yolo/"});
    std::vector<std::string> out;
    std::istringstream in(g.out);
    for (std::string l; std::getline(in, l);)  // a run's dispatch base (yolo/<run>/base) is not a plan's
      if (!l.empty() && !(l.size() > 5 && l.compare(l.size() - 5, 5, "/base") == 0)) out.push_back(l);
    return out;
  };
  std::vector<std::string> branches = merged();
  if (branches.empty()) return left;
  // Another git may hold packed-refs.lock now (one this run started that is still about,
  // a detached `gc --auto`/`pack-refs` a fetch or commit of the run left running): git waits
  // up to 10 s for it, not its default second, so the deletion comes after it, not beside it.
  std::vector<std::string> args = {"-c", "core.packedRefsTimeout=10000", "branch", "-D", "--quiet"};
  args.insert(args.end(), branches.begin(), branches.end());
  GitRun d = git(root_, args);
  if (d.ok()) return left;
  std::string why = trimmed(d.err.empty() ? d.error : d.err);
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  for (const auto& b : merged()) left.push_back(b);
  if (!left.empty())
    notes.push_back("could not delete " + std::to_string(left.size()) + " merged branch(es) (" +
                    text::join_some(left, 5) + "): " + why + "; delete them with `git branch -D " + left.front() +
                    (left.size() > 1 ? " ...`" : "`"));
  return left;
}

void Worktrees::detach(const stdfs::path& slot) {
  // HEAD to the commit it names, nothing else touched (no scan of the tree).
  git(slot, {"update-ref", "--no-deref", "-m", "yolo: detach", "HEAD", "HEAD"});
}


std::map<std::string, stdfs::path> Worktrees::slots_on_plan_branches() {
  std::map<std::string, stdfs::path> out;
  GitRun list = git(root_, {"worktree", "list", "--porcelain"});
  if (!list.ok()) return out;
  std::string path;
  std::istringstream in(list.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("worktree ", 0) == 0) path = line.substr(9);
    if (line.rfind("branch refs/heads/yolo/", 0) == 0 && !path.empty() &&
        stdfs::path(path).parent_path().filename() == "yolo-worktrees") {
      std::error_code ec;
      if (stdfs::exists(path, ec)) out[line.substr(std::string("branch refs/heads/").size())] = path;
    }
  }
  return out;
}


}  // namespace yolo::runner
