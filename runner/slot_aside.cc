#include "runner/slot_aside.h"

#include <algorithm>

#include "runner/git.h"
#include "runner/slot_objects.h"
#include "runner/worktree_text.h"

namespace yolo::runner::slot_aside {

namespace stdfs = std::filesystem;
using worktree_text::split_nul;
using worktree_text::trimmed;

namespace {

bool kept(const std::vector<std::string>& keep, const std::string& path) {
  return std::find(keep.begin(), keep.end(), path) != keep.end();
}

// "--", ".", then each kept path excluded, taken literally.
std::vector<std::string> all_but(const std::vector<std::string>& keep) {
  std::vector<std::string> v = {"--", "."};
  for (const auto& k : keep) v.push_back(":(exclude,literal)" + k);
  return v;
}

bool ran(const GitRun& g, std::string& err) {
  if (g.ok() && !g.truncated) return true;
  err = g.truncated ? "git's answer was too long (the slot holds too many files beyond its commit)" : g.error;
  return false;
}

GitRun git(const stdfs::path& slot, std::vector<std::string> args, const std::vector<std::string>& tail = {},
           const std::vector<std::pair<std::string, std::string>>& env = {}) {
  args.insert(args.end(), tail.begin(), tail.end());
  return run_git(slot, args, 120000, env);
}

}  // namespace

bool put_aside(const stdfs::path& slot, const std::vector<std::string>& keep, Aside& aside, std::string& err) {
  aside = Aside{};
  const stdfs::path gitdir = slot_objects::git_folder(slot);
  if (gitdir.empty()) {
    err = "the slot has no git folder";
    return false;
  }
  std::error_code ec;
  const stdfs::path held = gitdir / "yolo-aside";
  stdfs::remove_all(held, ec);
  if (!stdfs::create_directories(held, ec) || ec) {
    err = "cannot make " + held.string() + ": " + ec.message();
    return false;
  }
  aside.held = held;
  // The executor could write the slot's index: an entry marked assume-unchanged or
  // skip-worktree, or one holding the status of a changed file beside HEAD's blob, hides that
  // change from status, add and checkout alike. So the index is kept aside and made anew
  // from HEAD (status then hashes each file once to learn its status).
  const stdfs::path index = gitdir / "index";
  if (stdfs::exists(index, ec)) {
    stdfs::copy_file(index, held / "index", stdfs::copy_options::overwrite_existing, ec);
    if (ec) {
      err = "cannot keep the slot's index: " + ec.message();
      return false;
    }
    aside.index_copy = held / "index";
  }
  if (!ran(git(slot, {"read-tree", "HEAD"}), err)) return false;
  // Untracked .gitignore files next: one the executor made would hide what it names from
  // status, `add -A` and `clean` (a tracked one is put back to HEAD's with the rest).
  GitRun ignores = git(slot, {"ls-files", "-z", "--others", "--", ":(glob)**/.gitignore"});
  if (!ran(ignores, err)) return false;
  for (const auto& f : split_nul(ignores.out)) {
    if (kept(keep, f)) continue;
    const stdfs::path to = held / std::to_string(aside.ignore_files.size());
    stdfs::rename(slot / f, to, ec);
    if (ec) {
      err = "cannot move " + f + " aside: " + ec.message();
      return false;
    }
    aside.ignore_files.push_back(f);
  }
  GitRun status = git(slot, {"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"});
  if (!ran(status, err)) return false;
  bool dirty = false;
  for (const auto& line : split_nul(status.out)) {
    if (line.size() <= 3 || kept(keep, line.substr(3))) continue;
    dirty = true;
    // An untracked folder with a repository of its own is listed as the folder (git does not
    // look inside): `add` would record a link to it and `clean` would leave it, so it waits
    // in `held` as it is.
    std::string path = line.substr(3);
    if (line.compare(0, 3, "?? ") == 0 && path.size() > 1 && path.back() == '/' &&
        stdfs::exists(slot / path / ".git", ec)) {
      path.pop_back();
      const stdfs::path to = held / ("nested-" + std::to_string(aside.nested.size()));
      stdfs::rename(slot / path, to, ec);
      if (ec) {
        err = "cannot move " + path + " aside: " + ec.message();
        return false;
      }
      aside.nested.push_back(path);
    }
  }
  if (!dirty) return true;
  // The slot's files beyond HEAD as one tree, made through an index of yolo's own (a copy of
  // the one just refreshed, so unchanged files are not hashed again).
  const stdfs::path work = held / "work-index";
  stdfs::copy_file(index, work, stdfs::copy_options::overwrite_existing, ec);
  if (ec) {
    err = "cannot copy the slot's index: " + ec.message();
    return false;
  }
  const std::vector<std::pair<std::string, std::string>> own = {{"GIT_INDEX_FILE", work.string()}};
  if (!ran(git(slot, {"add", "-A"}, all_but(keep), own), err)) return false;
  GitRun tree = git(slot, {"write-tree"}, {}, own);
  if (!ran(tree, err)) return false;
  aside.tree = trimmed(tree.out);
  // The slot back to its commit, but for the kept paths and what the ignore rules of that
  // commit ignore.
  if (!ran(git(slot, {"checkout", "-q", "-f"}, all_but(keep)), err)) return false;
  return ran(git(slot, {"clean", "-f", "-d", "-q"}, all_but(keep)), err);
}

bool put_back(const stdfs::path& slot, const Aside& aside, std::string& err) {
  std::error_code ec;
  bool ok = true;
  if (!aside.tree.empty()) {
    const std::vector<std::pair<std::string, std::string>> own = {
        {"GIT_INDEX_FILE", (aside.held / "back-index").string()}};
    // HEAD to the tree in the work tree alone: what the checks saw was HEAD.
    ok = ran(git(slot, {"read-tree", "HEAD"}, {}, own), err);
    if (ok) git(slot, {"update-index", "-q", "--refresh"}, {}, own);  // the files' status, so they count as HEAD's
    ok = ok && ran(git(slot, {"read-tree", "-m", "-u", "HEAD", aside.tree}, {}, own), err);
  }
  if (ok && !aside.index_copy.empty()) {
    stdfs::copy_file(aside.index_copy, slot_objects::git_folder(slot) / "index", stdfs::copy_options::overwrite_existing,
                     ec);
    if (ec) {
      ok = false;
      err = "cannot put the slot's index back: " + ec.message();
    }
  }
  for (size_t k = 0; k < aside.nested.size(); ++k) {
    const stdfs::path to = slot / aside.nested[k];
    stdfs::create_directories(to.parent_path(), ec);
    stdfs::rename(aside.held / ("nested-" + std::to_string(k)), to, ec);
    if (ec && ok) {
      ok = false;
      err = "cannot put " + aside.nested[k] + " back: " + ec.message();
    }
  }
  for (size_t k = 0; k < aside.ignore_files.size(); ++k) {
    const stdfs::path to = slot / aside.ignore_files[k];
    stdfs::create_directories(to.parent_path(), ec);
    stdfs::rename(aside.held / std::to_string(k), to, ec);
    if (ec && ok) {
      ok = false;
      err = "cannot put " + aside.ignore_files[k] + " back: " + ec.message();
    }
  }
  if (!ok) {
    if (!aside.tree.empty()) err += " (the slot's files beyond its commit are tree " + aside.tree + ")";
    return false;
  }
  stdfs::remove_all(aside.held, ec);
  return true;
}

}  // namespace yolo::runner::slot_aside
