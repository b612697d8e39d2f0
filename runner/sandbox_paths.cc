// The paths of a confinement: their canonical form, and what a child may read beside the
// hidden ones (runner/sandbox_internal.h).
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "runner/sandbox_internal.h"

namespace yolo::runner::sandbox_detail {

namespace stdfs = std::filesystem;

namespace {

// What the kernel calls the file an open descriptor refers to; "" when /proc cannot say.
std::string named_by_kernel(int fd) {
  char link[40];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[PATH_MAX];
  ssize_t n = ::readlink(link, buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf || buf[0] != '/') return {};
  std::string s(buf, static_cast<size_t>(n));
  if (s.size() > 10 && s.compare(s.size() - 10, 10, " (deleted)") == 0) return {};
  return s;
}

bool beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/' && path != "/";
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

struct Listed {
  std::string dir;
  struct timespec mtime;
};

// Whether a folder still holds what it held when it was listed (its modification time moves
// when an entry is made, removed or renamed in it).
bool unchanged(const Listed& l) {
  struct stat st {};
  return ::stat(l.dir.c_str(), &st) == 0 && st.st_mtim.tv_sec == l.mtime.tv_sec && st.st_mtim.tv_nsec == l.mtime.tv_nsec;
}

// Read and execute everything beneath `dir` except the hidden paths beneath it: each entry
// of a folder that holds a hidden path is granted on its own (a symbolic link is not: what it
// names is reached, and judged, where it lies).
// listed: each folder it lists, with its modification time before the listing.
int collect_all_except(const std::string& dir, const std::vector<std::string>& hidden, std::vector<ReadRule>& out,
                       std::vector<Listed>& listed, int depth) {
  if (depth > 64) return ELOOP;
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) == 0) listed.push_back({dir, ds.st_mtim});
  DIR* d = ::opendir(dir.c_str());
  if (!d) return errno == ENOENT || errno == EACCES ? 0 : errno;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  for (const auto& n : names) {
    std::string path = dir == "/" ? "/" + n : dir + "/" + n;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (std::find(hidden.begin(), hidden.end(), path) != hidden.end()) continue;
    bool holds_hidden = std::any_of(hidden.begin(), hidden.end(), [&](const std::string& h) { return beneath(h, path); });
    if (holds_hidden) {
      if (int e = collect_all_except(path, hidden, out, listed, depth + 1)) return e;
      continue;
    }
    out.push_back({path, S_ISDIR(st.st_mode)});
  }
  return 0;
}

// The longest part of the path that exists, resolved by the kernel (one open, one readlink of
// its descriptor, whatever its depth); the rest appended as written, then made lexically
// normal.
std::string resolved_by_kernel(const std::string& p) {
  std::error_code ec;
  std::string given = p;
  while (given.size() > 1 && given.back() == '/') given.pop_back();
  stdfs::path head = given[0] == '/' ? stdfs::path(given) : stdfs::absolute(given, ec);
  if (ec) return p;
  stdfs::path tail;
  for (;;) {
    int fd = ::open(head.c_str(), O_PATH | O_CLOEXEC);
    if (fd >= 0) {
      std::string real = named_by_kernel(fd);
      ::close(fd);
      if (real.empty()) break;
      return (tail.empty() ? stdfs::path(real) : stdfs::path(real) / tail).lexically_normal().string();
    }
    if (errno != ENOENT && errno != ENOTDIR) return p;
    if (head == head.root_path()) return p;
    tail = tail.empty() ? head.filename() : head.filename() / tail;
    head = head.parent_path();
  }
  auto c = stdfs::weakly_canonical(p, ec);  // without /proc
  return ec ? p : c.lexically_normal().string();
}

// An absolute path without ".", ".." or an empty component: its folder's canonical form
// and its own name make its canonical form, unless its name is a symbolic link.
bool plain_absolute(const std::string& p) {
  if (p.size() < 2 || p[0] != '/' || p.back() == '/') return false;
  for (size_t i = 1, start = 1; i <= p.size(); ++i)
    if (i == p.size() || p[i] == '/') {
      const size_t n = i - start;
      if (n == 0 || (n == 1 && p[start] == '.') || (n == 2 && p[start] == '.' && p[start + 1] == '.')) return false;
      start = i + 1;
    }
  return true;
}

thread_local CanonicalScope* scope_now = nullptr;

}  // namespace

CanonicalScope::CanonicalScope() : outer_(scope_now) { scope_now = this; }
CanonicalScope::~CanonicalScope() { scope_now = outer_; }

// Within a scope (one confinement's making), each folder is resolved once: a path is its
// folder's canonical form and its name, after one lstat that tells it is no link. The policy
// of one start names about a hundred paths in a handful of folders, each several times.
std::string canonical(const std::string& p) {
  if (p.empty()) return p;
  CanonicalScope* s = scope_now;
  if (!s || !plain_absolute(p)) return resolved_by_kernel(p);
  if (auto it = s->known_.find(p); it != s->known_.end()) return it->second;
  const size_t slash = p.rfind('/');
  const std::string dir = slash == 0 ? std::string("/") : canonical(p.substr(0, slash));
  struct stat st {};
  std::string real;
  if (::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    real = resolved_by_kernel(p);
  else if (dir.empty() || dir[0] != '/')
    real = resolved_by_kernel(p);
  else
    real = (dir == "/" ? "" : dir) + p.substr(slash);
  return s->known_[p] = real;
}

// Listed once per process and kept while the folders listed are unchanged: every child of a
// run has the same secrets, and listing the folders that hold them was most of a confined
// start; a folder made since beside a hidden path (a project made in /tmp, a new folder at
// the top of the home) makes the next start list them again. Paths, not descriptors: a
// process under a low descriptor limit keeps its descriptors for its work.
int read_rules(const std::vector<std::string>& hidden, std::shared_ptr<const std::vector<ReadRule>>& out) {
  struct Entry {
    std::shared_ptr<const std::vector<ReadRule>> rules;  // a caller's copy outlives a listing again
    std::vector<Listed> listed;
  };
  static std::mutex mu;
  static std::map<std::string, Entry> cache;
  std::string key;
  for (const auto& h : hidden) key += h + '\n';
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key);
      it != cache.end() && std::all_of(it->second.listed.begin(), it->second.listed.end(), unchanged)) {
    out = it->second.rules;
    return 0;
  }
  std::vector<ReadRule> rules;
  Entry e;
  if (int err = collect_all_except("/", hidden, rules, e.listed, 0)) return err;
  e.rules = std::make_shared<const std::vector<ReadRule>>(std::move(rules));
  out = e.rules;
  cache[key] = std::move(e);
  return 0;
}

}  // namespace yolo::runner::sandbox_detail
