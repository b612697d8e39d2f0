#include "runner/dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

bool DirWatch::add_one(const std::filesystem::path& dir, bool recursive) {
  if (fd_ < 0) return false;
  int wd = inotify_add_watch(fd_, dir.c_str(), kMask);
  // The folder a tree is asked for may itself be a symlink (a .yolo-planning linked from
  // elsewhere): that one link is followed, its events named under the path asked for. Links
  // inside the tree are never walked (add_tree skips them), so no loop can start here.
  std::error_code lec;
  if (wd < 0 && errno == ENOTDIR && recursive && std::filesystem::is_symlink(dir, lec))
    wd = inotify_add_watch(fd_, dir.c_str(), kMask & ~static_cast<uint32_t>(IN_DONT_FOLLOW));
  if (wd < 0) {
    int e = errno;
    if (e == ENOSPC || e == ENOMEM)
      on_rescan_("inotify watch limit reached at " + dir.string() +
                 " (raise fs.inotify.max_user_watches); changes below it may be missed");
    else if (e != ENOENT && e != ENOTDIR && on_error)
      on_error(dir, std::error_code(e, std::generic_category()));
    return false;
  }
  by_wd_[wd] = Entry{dir, recursive};
  return true;
}

void DirWatch::add_single(const std::filesystem::path& dir) { add_one(dir, false); }

void DirWatch::add_tree(const std::filesystem::path& dir) {
  if (!add_one(dir, true)) return;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    // Symlinks are not followed (a loop would never end); only real folders are walked.
    std::error_code ec2;
    if (it->is_symlink(ec2) || ec2 || !it->is_directory(ec2) || ec2) continue;
    if (skip_name && skip_name(it->path().filename().string())) continue;
    add_tree(it->path());
  }
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory && on_error)
    on_error(dir, ec);
}

void DirWatch::on_readable() {
  alignas(inotify_event) char buf[64 * 1024];
  while (fd_ >= 0) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;  // EAGAIN: drained
    }
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
