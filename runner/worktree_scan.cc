// What a plan left in its worktree: the files it changed, the scan of the tree at its gate
// (tracked, untracked and ignored) and the commit of what it left, made by yolo.
#include <optional>
#include <string>
#include <vector>

#include "protocol/ports/git_port.h"
#include "runner/worktree.h"
#include "runner/worktree_text.h"

namespace yolo::runner {
namespace stdfs = std::filesystem;
using worktree_text::split_nul;
using worktree_text::trimmed;

std::optional<std::vector<std::string>> Worktrees::changed_files(const PlanWorktree& w, const std::string& commit,
                                                                 std::string& err) {
  GitRun g = git(w.path, {"diff", "--name-only", "--no-renames", "-z", w.base, commit, "--"});
  if (!g.ok()) {
    err = g.error;
    return std::nullopt;
  }
  return split_nul(g.out);
}

std::optional<Scan> Worktrees::scan(const PlanWorktree& w, std::string& err) {
  // Porcelain v2 with the branch header: the commit checked out comes with the scan.
  GitRun g = git(w.path, {"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=matching",
                          "--no-renames"});
  if (!g.ok() || g.truncated) {  // a cut list is no scan: the slot's next plan gets the full reset
    err = g.truncated ? "git status listed more than 4 MiB of paths in " + w.path.string() : g.error;
    return std::nullopt;
  }
  Scan out;
  auto recs = split_nul(g.out);
  // "1 XY sub mH mI mW hH hI path", "2 XY ... score path" + a record with the old path,
  // "u XY sub m1 m2 m3 mW h1 h2 h3 path", "? path", "! path", "# branch.oid ID".
  auto after_fields = [](const std::string& r, int n) -> std::string {
    size_t from = 0;
    for (int k = 0; k < n; ++k) {
      size_t sp = r.find(' ', from);
      if (sp == std::string::npos) return {};
      from = sp + 1;
    }
    return r.substr(from);
  };
  for (size_t k = 0; k < recs.size(); ++k) {
    const std::string& r = recs[k];
    if (r.size() < 3) continue;
    if (r.rfind("# branch.oid ", 0) == 0) {
      std::string id = r.substr(13);
      if (is_commit_hash(id)) out.head = id;
      continue;
    }
    char kind = r[0];
    if (kind == '?' || kind == '!') {
      out.entries.push_back(StatusEntry{kind, kind, r.substr(2)});
      continue;
    }
    int fields = kind == '1' ? 8 : kind == '2' ? 9 : kind == 'u' ? 10 : 0;
    if (fields == 0) continue;
    std::string path = after_fields(r, fields);
    if (!path.empty()) out.entries.push_back(StatusEntry{r[2] == '.' ? ' ' : r[2], r[3] == '.' ? ' ' : r[3], path});
    if (kind == '2') ++k;  // the old path of a rename
  }
  if (out.head.empty()) {
    err = "git status named no commit checked out in " + w.path.string();
    return std::nullopt;
  }
  return out;
}

std::string Worktrees::commit_paths(const PlanWorktree& w, const std::string& head,
                                    const std::vector<std::string>& paths, bool dirty, bool only,
                                    const std::string& message, std::string& err) {
  if (!dirty || paths.empty()) return head;
  if (!is_commit_hash(head)) {
    err = "no commit checked out in " + w.path.string();
    return {};
  }
  if (!only) {
    // Nothing else is staged: the commit is the index with these paths added. No hook, no
    // `maintenance --auto`, no scan of the tree (the gate's scan was the one).
    std::vector<std::string> add = {"update-index", "--add", "--remove", "--"};
    add.insert(add.end(), paths.begin(), paths.end());
    GitRun a = git(w.path, add);
    if (!a.ok()) {
      err = a.error;
      return {};
    }
    GitRun t = git(w.path, {"write-tree"});
    std::string tree = trimmed(t.out);
    if (!t.ok() || !is_commit_hash(tree)) {
      err = t.error.empty() ? "git write-tree printed no tree" : t.error;
      return {};
    }
    GitRun c = git(w.path, {"commit-tree", tree, "-p", head, "-m", message}, 60000, ident_env());
    std::string id = trimmed(c.out);
    if (!c.ok() || !is_commit_hash(id)) {
      err = c.error.empty() ? "git commit-tree printed no commit" : c.error;
      return {};
    }
    // Moves the branch only if it still is at head (an agent's process may not race it).
    GitRun u = git(w.path, {"update-ref", "-m", message, "HEAD", id, head});
    if (!u.ok()) {
      err = u.error;
      return {};
    }
    return id;
  }
  std::vector<std::string> add = {"add", "--"};
  add.insert(add.end(), paths.begin(), paths.end());
  GitRun a = git(w.path, add);
  if (!a.ok()) {
    err = a.error;
    return {};
  }
  // "[branch 40-hex-id] subject" (core.abbrev=no): the new tip without another child.
  // Only these paths: other changes are staged (git builds a temporary index).
  std::vector<std::string> c = {
      "-c", "maintenance.auto=false", "-c", "core.abbrev=no", "commit", "--no-verify", "--no-status", "-m", message,
      "--"};
  c.insert(c.end(), paths.begin(), paths.end());
  GitRun cm = git(w.path, c, 60000, ident_env());
  if (!cm.ok()) {
    err = cm.error;
    return {};
  }
  auto first = text::lines(cm.out);
  if (!first.empty()) {
    std::string l(first.front());
    size_t close = l.find(']');
    size_t sp = l.rfind(' ', close);
    if (l.rfind("[", 0) == 0 && close != std::string::npos && sp != std::string::npos && sp < close) {
      std::string id = l.substr(sp + 1, close - sp - 1);
      if (id.size() == 40 && is_commit_hash(id)) return id;
    }
  }
  std::string tip = this->head(w.path);
  if (tip.empty()) err = "git rev-parse HEAD failed in " + w.path.string();
  return tip;
}

}  // namespace yolo::runner
