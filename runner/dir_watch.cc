#include "runner/dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

namespace yolo::runner {

namespace {
constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                           IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
}

DirWatch::DirWatch(uv_loop_t* loop, ChangeFn on_change, RescanFn on_rescan)
    : loop_(loop), on_change_(std::move(on_change)), on_rescan_(std::move(on_rescan)) {}

DirWatch::~DirWatch() { stop(); }

std::string DirWatch::start() {
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return std::string("inotify_init1: ") + std::strerror(errno);
  uv_poll_init(loop_, &poll_, fd_);
  poll_.data = this;
  uv_poll_start(&poll_, UV_READABLE, [](uv_poll_t* p, int status, int) {
    if (status == 0) static_cast<DirWatch*>(p->data)->on_readable();
  });
  polling_ = true;
  return {};
}

void DirWatch::stop() {
  if (polling_) {
    uv_poll_stop(&poll_);
    // The fd is closed once libuv has released the handle.
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
    polling_ = false;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  by_wd_.clear();
}

DirWatch::Added DirWatch::add_one(const std::filesystem::path& dir, bool recursive) {
  if (fd_ < 0) return Added::No;
  int wd = inotify_add_watch(fd_, dir.c_str(), kMask);
  // The folder a tree is asked for may itself be a symlink (a .yolo-planning linked from
  // elsewhere): that one link is followed, its events named under the path asked for. Links
  // inside the tree are never walked (add_tree skips them), so no loop can start here.
  std::error_code lec;
  if (wd < 0 && errno == ENOTDIR && recursive && std::filesystem::is_symlink(dir, lec))
    wd = inotify_add_watch(fd_, dir.c_str(), kMask & ~static_cast<uint32_t>(IN_DONT_FOLLOW));
  if (wd < 0) {
    int e = errno;
    if (e == ENOSPC || e == ENOMEM) return Added::Limit;  // the caller keeps it for later
    if (e != ENOENT && e != ENOTDIR && on_error) on_error(dir, std::error_code(e, std::generic_category()));
    return Added::No;
  }
  by_wd_[wd] = Entry{dir, recursive};
  return Added::Yes;
}

void DirWatch::add_single(const std::filesystem::path& dir) { add_one(dir, false); }

// The walk of one tree, best folders first: once the limit refuses a watch, every folder
// not reached yet is left out whole (its subtree with it), in the order it would have come.
void DirWatch::tree(const std::filesystem::path& top, std::vector<std::filesystem::path>& left) {
  using Key = std::tuple<int, size_t, std::string>;  // rank, depth below top, path
  std::map<Key, std::filesystem::path> todo;
  todo.emplace(Key{-1, 0, top.string()}, top);
  bool full = false;
  while (!todo.empty()) {
    auto node = todo.extract(todo.begin());
    const std::filesystem::path& dir = node.mapped();
    size_t depth = std::get<1>(node.key());
    if (full) {
      left.push_back(dir);
      continue;
    }
    Added a = add_one(dir, true);
    if (a == Added::Limit) {
      full = true;
      left.push_back(dir);
      continue;
    }
    if (a == Added::No) continue;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
      // Symlinks are not followed (a loop would never end); only real folders are walked.
      std::error_code ec2;
      if (it->is_symlink(ec2) || ec2 || !it->is_directory(ec2) || ec2) continue;
      if (skip_name && skip_name(it->path().filename().string())) continue;
      todo.emplace(Key{rank ? rank(it->path()) : 0, depth + 1, it->path().string()}, it->path());
    }
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory && on_error)
      on_error(dir, ec);
  }
}

void DirWatch::add_tree(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> left;
  tree(dir, left);
  if (left.empty()) return;
  std::vector<std::filesystem::path> all = unwatched_paths_;
  for (auto& p : left)
    if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(std::move(p));
  set_unwatched(std::move(all), {});
}

void DirWatch::set_unwatched(std::vector<std::filesystem::path> v,
                             const std::vector<std::filesystem::path>& recovered) {
  bool changed = v != unwatched_paths_;
  unwatched_paths_ = std::move(v);
  if ((changed || !recovered.empty()) && on_limit) on_limit(recovered);
}

// Each folder left out is tried again in the order it was left out; the first the limit
// still refuses ends the attempt (one failed system call when nothing has changed).
void DirWatch::retry_unwatched() {
  if (unwatched_paths_.empty() || fd_ < 0 || retrying_) return;
  retrying_ = true;
  std::vector<std::filesystem::path> pending = unwatched_paths_, left, recovered;
  size_t i = 0;
  for (; i < pending.size(); ++i) {
    std::vector<std::filesystem::path> below;
    tree(pending[i], below);
    if (below.empty() || below.front() != pending[i]) recovered.push_back(pending[i]);
    if (!below.empty()) {
      left.insert(left.end(), below.begin(), below.end());
      ++i;
      break;
    }
  }
  left.insert(left.end(), pending.begin() + static_cast<std::ptrdiff_t>(i), pending.end());
  retrying_ = false;
  set_unwatched(std::move(left), recovered);
}

void DirWatch::on_readable() {
  alignas(inotify_event) char buf[64 * 1024];
  bool any = false;
  while (fd_ >= 0) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      // Drained (EAGAIN). Folders the limit left out are tried again now: the limit may have
      // been raised, or a folder that went away freed its watch.
      if (any) retry_unwatched();
      return;
    }
    any = true;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        on_rescan_("inotify queue overflow: events were lost");
        continue;
      }
      auto it = by_wd_.find(ev->wd);
      if (it == by_wd_.end()) continue;
      if (ev->mask & IN_IGNORED) {  // the folder is gone (or unmounted)
        by_wd_.erase(it);
        continue;
      }
      Entry entry = it->second;
      if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        on_change_(Change{entry.path, true, true});
        continue;
      }
      if (ev->len == 0) continue;
      std::string name = ev->name;
      Change c{entry.path / name, (ev->mask & IN_ISDIR) != 0, (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0};
      if (c.is_dir && !c.gone && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && entry.recursive &&
          !(skip_name && skip_name(name)))
        add_tree(c.path);
      on_change_(c);
    }
  }
}

}  // namespace yolo::runner
