#include "runner/refusals.h"

#include "runner/refusal_calls.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

bool write_notes_available() {
  static const bool yes = [] {
    if (!refusal_notes_available()) return false;
    utsname u{};
    int major = 0, minor = 0;
    if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
    return major > 5 || (major == 5 && minor >= 5);
  }();
  return yes;
}

namespace {

using namespace refusal_calls;

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
    if (is_write_call(req.data.nr)) {
      judge_write(w, req);
      seccomp_notif_resp go;
      std::memset(&go, 0, sizeof go);
      go.id = req.id;
      go.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_SEND, &go);
      return;
    }
    int error = -EPERM;
    if (req.data.nr == SYS_clone3) {
      // Refused either way (libc falls back to clone); named when it asks for a namespace.
      error = -ENOSYS;
      unsigned long long flags = 0;
      iovec local{&flags, sizeof flags}, remote{reinterpret_cast<void*>(req.data.args[0]), sizeof flags};
      unsigned long long id = req.id;
      if (::process_vm_readv(static_cast<pid_t>(req.pid), &local, 1, &remote, 1, 0) == sizeof flags &&
          ::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 && !clone_flags(flags).empty())
        w->log->add("clone3(" + clone_flags(flags) + ") by " + process_text(req.pid));
    } else {
      w->log->add(call_text(req.data) + " by " + process_text(req.pid));
    }
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.error = error;
    ::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }

  // Names a write the child's policy refuses as an attempt. What the caller's memory said is
  // taken only while the call is still the one handed over (the caller cannot have been
  // replaced by another process of the same pid meanwhile).
  void judge_write(Watched* w, const seccomp_notif& req) {
    const sandbox::WriteView* view = w->log->writes();
    if (!view) return;
    auto still_valid = [&] {
      unsigned long long id = req.id;
      return ::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
    };
    for (auto& attempt : write_attempts(req, *view, still_valid)) w->log->add(std::move(attempt));
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
