#include "runner/slot_objects.h"

#include <cstdio>

#include "runner/git.h"
#include "runner/subprocess.h"

namespace yolo::runner::slot_objects {

namespace stdfs = std::filesystem;

stdfs::path git_folder(const stdfs::path& slot) {
  stdfs::path gitdir;
  if (FILE* f = std::fopen((slot / ".git").c_str(), "r")) {
    char line[4096] = {0};
    if (std::fgets(line, sizeof line, f)) {
      std::string s(line);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      if (s.rfind("gitdir: ", 0) == 0) gitdir = s.substr(8);
    }
    std::fclose(f);
  }
  if (gitdir.empty()) return {};
  if (gitdir.is_relative()) gitdir = slot / gitdir;
  std::error_code ec;
  auto c = stdfs::weakly_canonical(gitdir, ec);
  return ec ? gitdir.lexically_normal() : c;
}

namespace {

bool holds_a_file(const stdfs::path& dir) {
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_directory(ec)) return true;
  return false;
}

std::string why(const SpawnResult& r, const char* what) {
  if (r.outcome != SpawnResult::Outcome::Exited) return std::string("git ") + what + " " + r.describe();
  std::string e = r.err;
  while (!e.empty() && (e.back() == '\n' || e.back() == '\r')) e.pop_back();
  if (auto nl = e.find('\n'); nl != std::string::npos) e = e.substr(0, nl);
  return std::string("git ") + what + ": " + (e.empty() ? r.describe() : e);
}

}  // namespace

stdfs::path folder(const stdfs::path& slot) {
  auto g = git_folder(slot);
  return g.empty() ? g : g / "objects";
}

std::vector<std::pair<std::string, std::string>> env(const stdfs::path& slot) {
  auto g = git_folder(slot);
  if (g.empty()) return {};
  // A slot's git folder is `<common>/worktrees/<name>`.
  return {{"GIT_OBJECT_DIRECTORY", (g / "objects").string()},
          {"GIT_ALTERNATE_OBJECT_DIRECTORIES", (g.parent_path().parent_path() / "objects").string()}};
}

bool prepare(const stdfs::path& slot, std::string& err) {
  auto f = folder(slot);
  if (f.empty()) {
    err = "the slot " + slot.string() + " has no .git file naming its git folder";
    return false;
  }
  std::error_code ec;
  stdfs::remove_all(f, ec);
  if (!ec) stdfs::create_directories(f / "pack", ec);
  if (!ec) stdfs::create_directories(f / "info", ec);
  if (ec) {
    err = "cannot make the executor's object folder " + f.string() + ": " + ec.message();
    return false;
  }
  return true;
}

bool take_in(const stdfs::path& root, const stdfs::path& slot, std::string& err) {
  auto f = folder(slot);
  std::error_code ec;
  if (f.empty() || !stdfs::is_directory(stdfs::symlink_status(f, ec))) return true;  // nothing of the executor's
  // Only what lies in the folder itself is taken: a list of other folders it wrote is not read.
  // (A link in its place is removed, never followed: the executor made it.)
  if (!stdfs::is_directory(stdfs::symlink_status(f / "info", ec))) stdfs::remove(f / "info", ec);
  for (const char* list : {"info/alternates", "info/http-alternates"}) stdfs::remove(f / list, ec);
  if (!holds_a_file(f)) return true;
  const std::vector<std::pair<std::string, std::string>> own{{"GIT_OBJECT_DIRECTORY", f.string()}};
  SpawnSpec list = git_child_spec(root, {"cat-file", "--batch-all-objects", "--batch-check=%(objectname)"}, 120000, own);
  list.output_cap = size_t(256) << 20;
  SpawnResult ids = run_process(list);
  if (!ids.ok()) {
    err = "the executor's git objects cannot be listed (" + why(ids, "cat-file") + ")";
    return false;
  }
  if (ids.out.find_first_not_of(" \n") == std::string::npos) return true;
  SpawnSpec pack = git_child_spec(root, {"pack-objects", "--stdout", "--quiet"}, 600000, own);
  pack.stdin_data = std::move(ids.out);
  pack.output_cap = size_t(4) << 30;
  SpawnResult packed = run_process(pack);
  if (!packed.ok() || packed.out_truncated()) {
    err = "the executor's git objects cannot be packed (" + why(packed, "pack-objects") + ")";
    return false;
  }
  // Into the repository's own object folder, each object hashed from its bytes.
  SpawnSpec index = git_child_spec(root, {"index-pack", "--stdin", "--strict"}, 600000);
  index.stdin_data = std::move(packed.out);
  SpawnResult indexed = run_process(index);
  if (!indexed.ok()) {
    err = "the executor's git objects are broken (" + why(indexed, "index-pack") + ")";
    return false;
  }
  stdfs::remove_all(f, ec);
  stdfs::create_directories(f, ec);
  return true;
}

}  // namespace yolo::runner::slot_objects
