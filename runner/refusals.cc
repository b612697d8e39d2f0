#include "runner/refusals.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>

namespace yolo::runner {

void RefusalLog::add(std::string what) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& s : seen_)
    if (s == what) return;
  if (seen_.size() < kKept)
    seen_.push_back(std::move(what));
  else
    ++more_;
}

std::vector<std::string> RefusalLog::list() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out = seen_;
  if (more_) out.push_back("... and " + std::to_string(more_) + " more");
  return out;
}

bool RefusalLog::empty() const {
  std::lock_guard<std::mutex> g(mu_);
  return seen_.empty();
}

std::string describe_refusals(const RefusalLog* log) {
  if (!log || log->empty()) return "";
  std::string s = "the sandbox refused ";
  bool first = true;
  for (const auto& r : log->list()) {
    if (!first) s += "; ";
    s += r;
    first = false;
  }
  return s;
}

bool refusal_notes_available() {
  static const bool yes = [] {
    unsigned action = SECCOMP_RET_USER_NOTIF;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
  }();
  return yes;
}

namespace {

std::string clone_flags(unsigned long long f) {
  static const std::pair<unsigned long long, const char*> names[] = {
      {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWNS, "CLONE_NEWNS"},         {CLONE_NEWPID, "CLONE_NEWPID"},
      {CLONE_NEWNET, "CLONE_NEWNET"},   {CLONE_NEWUTS, "CLONE_NEWUTS"},       {CLONE_NEWIPC, "CLONE_NEWIPC"},
      {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}};
  std::string s;
  for (const auto& [bit, name] : names)
    if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
  return s;
}

// What a process asked, as a person reads it. Only the calls the filter hands over.
std::string call_text(const seccomp_data& d) {
  const long nr = d.nr;
  const unsigned long long a0 = d.args[0], a1 = d.args[1];
  if (nr == SYS_unshare) return "unshare(" + clone_flags(a0) + ")";
  if (nr == SYS_clone) return "clone(" + clone_flags(a0) + ")";
  if (nr == SYS_ioctl) {
    const unsigned req = static_cast<unsigned>(a1);
    return std::string("ioctl(") + (req == TIOCSTI ? "TIOCSTI" : req == TIOCLINUX ? "TIOCLINUX" : "?") +
           ") on a terminal";
  }
  static const std::pair<long, const char*> names[] = {
      {SYS_setns, "setns"},           {SYS_mount, "mount"},           {SYS_umount2, "umount"},
      {SYS_pivot_root, "pivot_root"}, {SYS_chroot, "chroot"},         {SYS_bpf, "bpf"},
      {SYS_init_module, "init_module"}, {SYS_finit_module, "finit_module"}, {SYS_delete_module, "delete_module"},
      {SYS_kexec_load, "kexec_load"}, {SYS_reboot, "reboot"},         {SYS_swapon, "swapon"},
      {SYS_swapoff, "swapoff"},       {SYS_open_by_handle_at, "open_by_handle_at"},
      {SYS_open_tree, "open_tree"},   {SYS_move_mount, "move_mount"}, {SYS_fsopen, "fsopen"},
      {SYS_fsconfig, "fsconfig"},     {SYS_fsmount, "fsmount"},       {SYS_fspick, "fspick"},
      {SYS_pidfd_getfd, "pidfd_getfd"},
#ifdef SYS_mount_setattr
      {SYS_mount_setattr, "mount_setattr"},
#endif
#ifdef SYS_kexec_file_load
      {SYS_kexec_file_load, "kexec_file_load"},
#endif
  };
  for (const auto& [n, name] : names)
    if (n == nr) return name;
  return "system call " + std::to_string(nr);
}

// The process's name, as its own comm says (which it can set: only plain characters kept).
std::string process_text(unsigned pid) {
  std::string name;
  int fd = ::open(("/proc/" + std::to_string(pid) + "/comm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[32] = {0};
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    for (ssize_t k = 0; k < n && buf[k] != '\n'; ++k) {
      unsigned char c = static_cast<unsigned char>(buf[k]);
      name += (std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+') ? static_cast<char>(c) : '?';
    }
  }
  if (name.empty()) name = "?";
  return name + " (pid " + std::to_string(pid) + ")";
}

struct Watched {
  int fd;
  bool listener;  // else the socket the listener comes on
  std::shared_ptr<RefusalLog> log;
};

class Supervisor {
 public:
  static Supervisor& get() {
    static Supervisor* s = new Supervisor();  // never destroyed: its thread may outlive main()
    return *s;
  }
  bool add(int sock, std::shared_ptr<RefusalLog> log) {
    if (ep_ < 0) return false;
    return watch(Watched{sock, false, std::move(log)});
  }

 private:
  Supervisor() {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return;
    std::thread([this] { loop(); }).detach();
  }

  // Each watched descriptor is owned here (never only by the kernel's epoll data).
  bool watch(Watched w) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = watched_.insert(watched_.end(), std::move(w));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &*it;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, it->fd, &ev) == 0) return true;
    watched_.erase(it);
    return false;
  }

  void drop(Watched* w) {
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, w->fd, nullptr);
    ::close(w->fd);
    std::lock_guard<std::mutex> g(mu_);
    for (auto it = watched_.begin(); it != watched_.end(); ++it)
      if (&*it == w) {
        watched_.erase(it);
        break;
      }
  }

  // The child's filter descriptor, from its message; the socket is done with either way.
  void take_listener(Watched* w) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    ssize_t n = ::recvmsg(w->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    int listener = -1;
    if (n > 0)
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&listener, CMSG_DATA(c), sizeof(int));
    std::shared_ptr<RefusalLog> log = w->log;
    drop(w);
    if (listener < 0) return;  // the child ended before its filter, or runs under the silent one
    if (!watch(Watched{listener, true, std::move(log)}))
      ::close(listener);  // the calls it would hand over are then refused with ENOSYS
  }

  void answer(Watched* w) {
    seccomp_notif req;
    std::memset(&req, 0, sizeof req);
    if (::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return;  // the caller died meanwhile
    w->log->add(call_text(req.data) + " by " + process_text(req.pid));
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.error = -EPERM;
    ::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }

  void loop() {
    epoll_event evs[16];
    for (;;) {
      int n = ::epoll_wait(ep_, evs, 16, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      for (int k = 0; k < n; ++k) {
        auto* w = static_cast<Watched*>(evs[k].data.ptr);
        if (!w->listener) {
          take_listener(w);
        } else if (evs[k].events & EPOLLIN) {
          answer(w);
        } else if (evs[k].events & (EPOLLHUP | EPOLLERR)) {
          drop(w);  // no process under the filter is left
        }
      }
    }
  }

  int ep_ = -1;
  std::mutex mu_;
  std::list<Watched> watched_;
};

}  // namespace

void watch_refusals(int sock, std::shared_ptr<RefusalLog> log) {
  if (!Supervisor::get().add(sock, std::move(log))) ::close(sock);
}

}  // namespace yolo::runner
