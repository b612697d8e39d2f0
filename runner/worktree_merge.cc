// The merges of `isolation: "worktree"`: each plan's gated commit merged into the project's
// checkout in plan order (worktree.h says how), and what git knows of a branch's base.
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/ports/git_port.h"
#include "runner/worktree.h"
#include "runner/worktree_text.h"

namespace yolo::runner {
namespace stdfs = std::filesystem;
using worktree_text::split_nul;
using worktree_text::trimmed;

std::string Worktrees::base_of(const std::string& branch) {
  GitRun g = git(root_, {"merge-base", "HEAD", "refs/heads/" + branch});
  return g.ok() ? trimmed(g.out) : std::string();
}

bool Worktrees::has_commits(const std::string& branch, const std::string& base) {
  GitRun g = git(root_, {"rev-list", "--count", base + "..refs/heads/" + branch});
  return g.ok() && trimmed(g.out) != "0" && !trimmed(g.out).empty();
}

std::optional<bool> Worktrees::merged(const std::string& commit) {
  GitRun g = git(root_, {"merge-base", "--is-ancestor", commit, "HEAD"});
  if (!g.ran) return std::nullopt;
  if (g.status == 0) return true;
  if (g.status == 1) return false;
  return std::nullopt;  // not a commit (128): unknown
}

bool Worktrees::abort_leftover_merge() {
  if (!git(root_, {"rev-parse", "--verify", "--quiet", "MERGE_HEAD"}).ok()) return false;
  git(root_, {"merge", "--abort"});
  return true;
}

std::vector<MergeResult> Worktrees::merge_all(const std::vector<std::pair<std::string, std::string>>& steps) {
  std::vector<MergeResult> out(steps.size());
  if (steps.empty()) return out;
  // The merges as plumbing (git >= 2.38): each merged tree is computed without touching the
  // checkout (a conflict leaves nothing to abort: that plan is skipped), each merge commit
  // made on the previous one, then the checkout and the branch move once, to the last
  // (`reset --keep`: refused, nothing changed, when local changes are in the way). No
  // autostash, no `maintenance --auto` child, one index update for the whole pass.
  std::string head_before = head();  // read again every pass: a person may commit meanwhile
  if (head_before.empty()) {
    for (auto& r : out) r.error = "git rev-parse HEAD failed in " + root_.string();
    return out;
  }
  std::string cur = head_before;
  for (size_t k = 0; k < steps.size(); ++k) {
    const auto& [commit, message] = steps[k];
    MergeResult& r = out[k];
    if (auto pre = premerged_.find(cur + '\n' + commit + '\n' + message); pre != premerged_.end()) {
      cur = pre->second;
      r.outcome = MergeOutcome::Merged;
      r.commit = cur;
      r.ahead = true;
      ++premerged_used_;
      continue;
    }
    GitRun t = git(root_, {"merge-tree", "--write-tree", "--name-only", "--no-messages", cur, commit});
    if (!(t.ran && (t.status == 0 || t.status == 1))) {
      if (k == 0 && t.ran && t.status == 129) {  // an older git: the porcelain merge, one by one
        for (size_t j = 0; j < steps.size(); ++j) out[j] = merge_porcelain(steps[j].first, steps[j].second);
        return out;
      }
      r.error = t.error.empty() ? trimmed(t.err) : t.error;
      continue;
    }
    auto lines = text::lines(t.out);
    std::string tree = lines.empty() ? std::string() : trimmed(std::string(lines.front()));
    if (t.status == 1) {
      r.outcome = MergeOutcome::Conflict;
      for (size_t j = 1; j < lines.size(); ++j) {
        std::string f = trimmed(std::string(lines[j]));
        if (!f.empty() && std::find(r.files.begin(), r.files.end(), f) == r.files.end()) r.files.push_back(f);
      }
      r.error = "merge conflict";
      continue;
    }
    GitRun c = git(root_, {"commit-tree", tree, "-p", cur, "-p", commit, "-m", message}, 60000, ident_env());
    if (!c.ok()) {
      r.error = c.error;
      continue;
    }
    cur = trimmed(c.out);
    r.outcome = MergeOutcome::Merged;
    r.commit = cur;
  }
  if (cur == head_before) return out;
  auto env = ident_env();
  env.push_back({"GIT_REFLOG_ACTION", "yolo merge"});
  GitRun k = git(root_, {"reset", "--quiet", "--keep", cur}, 120000, env);
  if (!k.ok()) {
    std::string why = trimmed(k.err.empty() ? k.error : k.err);
    for (auto& r : out)
      if (r.outcome == MergeOutcome::Merged) {
        r.outcome = MergeOutcome::Refused;
        r.commit.clear();
        r.error = why;
      }
  }
  return out;
}

void Worktrees::remember_merge(const std::string& onto, const std::string& commit, const std::string& message,
                               const std::string& result) {
  if (is_commit_hash(onto) && is_commit_hash(commit) && is_commit_hash(result))
    premerged_[onto + '\n' + commit + '\n' + message] = result;
}

SpawnSpec Worktrees::merge_tree_spec(const std::string& onto, const std::string& commit) const {
  return git_child_spec(root_, {"merge-tree", "--write-tree", "--name-only", "--no-messages", onto, commit}, 60000);
}

SpawnSpec Worktrees::commit_tree_spec(const std::string& tree, const std::string& onto, const std::string& commit,
                                      const std::string& message) const {
  return git_child_spec(root_, {"commit-tree", tree, "-p", onto, "-p", commit, "-m", message}, 60000, ident_env());
}

MergeResult Worktrees::merge_porcelain(const std::string& commit, const std::string& message) {
  MergeResult r;
  GitRun g =
      git(root_, {"-c", "maintenance.auto=false", "merge", "--no-ff", "--no-verify", "--quiet", "-m", message, commit},
          120000, ident_env());
  if (g.ok()) {
    r.outcome = MergeOutcome::Merged;
    r.commit = head();
    return r;
  }
  r.error = g.error.empty() ? trimmed(g.err) : g.error;
  GitRun u = git(root_, {"diff", "--name-only", "--diff-filter=U", "-z"});
  if (u.ok()) r.files = split_nul(u.out);
  bool in_merge = git(root_, {"rev-parse", "--verify", "--quiet", "MERGE_HEAD"}).ok();
  if (in_merge) git(root_, {"merge", "--abort"});
  if (!r.files.empty() || (g.ran && g.status == 1 && g.out.find("CONFLICT") != std::string::npos)) {
    r.outcome = MergeOutcome::Conflict;
    if (r.files.empty()) r.error = trimmed(g.out);
  } else {
    r.outcome = MergeOutcome::Refused;  // local changes in the way, no identity, a lock: nothing merged
    std::string all = trimmed(g.err + "\n" + g.out);
    if (!all.empty()) r.error = all;
  }
  return r;
}

namespace {
// The first line of a small file ("" when it cannot be read).
std::string first_line_of(const stdfs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::string s;
  std::getline(f, s);
  return s;
}
// The admin folder of a worktree (<common>/worktrees/NAME), from its .git file; "" when the
// folder holds no worktree.
stdfs::path admin_of(const stdfs::path& slot) {
  std::string gd = first_line_of(slot / ".git");
  if (gd.rfind("gitdir: ", 0) != 0) return {};
  stdfs::path admin = gd.substr(8);
  return admin.is_absolute() ? admin : (slot / admin).lexically_normal();
}
}  // namespace

SpawnSpec Worktrees::delete_branches_spec(const std::vector<std::pair<std::string, std::string>>& merged,
                                          const std::vector<stdfs::path>& slots) {
  std::map<std::string, std::string> tip;  // refs/heads/BRANCH -> its tip
  for (const auto& [b, c] : merged)
    if (!b.empty()) tip["refs/heads/" + b] = c;
  if (tip.empty()) return {};
  // The slots whose HEAD still names one of them (no plan took the slot since).
  std::set<std::string> seen, kept;
  std::vector<std::pair<stdfs::path, std::string>> checked_out;  // slot, the ref
  std::string lines;
  bool one_call = true;
  for (const auto& s : slots) {
    if (!seen.insert(s.string()).second) continue;
    stdfs::path admin = admin_of(s);
    if (admin.empty()) continue;  // no worktree there now: nothing checked out
    std::string head = first_line_of(admin / "HEAD");
    if (head.rfind("ref: ", 0) != 0) continue;  // detached already
    auto t = tip.find(head.substr(5));
    if (t == tip.end()) continue;  // on another branch: not ours to touch
    checked_out.push_back({s, t->first});
    if (admin.parent_path() == common_ / "worktrees" && is_commit_hash(t->second))
      lines += "update worktrees/" + admin.filename().string() + "/HEAD " + t->second + "\n";
    else
      one_call = false;  // not where this repository keeps its worktrees: one by one below
  }
  {
    std::lock_guard<std::mutex> g(notes_mu_);
    remove_stale_ref_lock(notes_);
  }
  if (!checked_out.empty()) {
    one_call = one_call && git(root_, {"update-ref", "--no-deref", "-m", "yolo: detach", "--stdin"}, 60000, {}, lines).ok();
    for (const auto& [s, ref] : checked_out) {
      if (one_call) break;
      detach(s);  // HEAD to the commit it names
      if (first_line_of(admin_of(s) / "HEAD").rfind("ref: ", 0) == 0)
        kept.insert(ref);  // still checked out: deleting it would leave the slot on no commit
    }
  }
  // A branch still checked out once the slots are detached is in a worktree that is none of
  // them (one a person added by hand, or the main checkout): kept. `git branch -D` refuses
  // it, and update-ref would delete it under that worktree, whose HEAD would then name no
  // commit; tidy() names it at the end of the run.
  auto keep_if_checked_out = [&](const stdfs::path& head_file) {
    std::string head = first_line_of(head_file);
    if (head.rfind("ref: ", 0) == 0 && tip.count(head.substr(5))) kept.insert(head.substr(5));
  };
  keep_if_checked_out(common_ / "HEAD");
  std::error_code ec;
  for (const auto& d : stdfs::directory_iterator(common_ / "worktrees", ec)) keep_if_checked_out(d.path() / "HEAD");
  std::string deletes;
  for (const auto& [ref, c] : tip)
    if (!kept.count(ref)) deletes += "delete " + ref + "\n";
  if (deletes.empty()) return {};
  ++started_;
  // packed-refs.lock held by another git (a detached `gc --auto`): waited for, as tidy() does.
  SpawnSpec spec = git_child_spec(
      root_, {"-c", "core.packedRefsTimeout=10000", "update-ref", "-m", "yolo: merged", "--stdin"}, 120000);
  spec.stdin_data = std::move(deletes);
  return spec;
}

}  // namespace yolo::runner
