#include "runner/refusals.h"

#include "runner/refusal_calls.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
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
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
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

void RefusalLog::note_unjudged(std::string what) {
  std::lock_guard<std::mutex> g(mu_);
  if (unjudged_.size() < kKept) unjudged_.push_back(std::move(what));
}

std::vector<std::string> RefusalLog::unjudged() const {
  std::lock_guard<std::mutex> g(mu_);
  return unjudged_;
}

std::chrono::milliseconds judge_deadline() { return std::chrono::milliseconds(1000); }

void RefusalLog::watch_decoys(int inotify_fd, std::vector<std::pair<int, std::string>> watches) {
  std::lock_guard<std::mutex> g(mu_);
  decoy_fd_ = inotify_fd;
  decoys_ = std::move(watches);
}

void RefusalLog::release_decoys() {
  std::lock_guard<std::mutex> g(mu_);
  drain_decoys();
  decoy_fd_ = -1;
}

void RefusalLog::drain_decoys() const {
  if (decoy_fd_ < 0) return;
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = ::read(decoy_fd_, buf, sizeof buf);
    if (n <= 0) return;  // EAGAIN: nothing more queued
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      std::string what;
      if (ev->mask & IN_Q_OVERFLOW) {
        // More opens than the queue holds: which secret is lost, that one was read is not.
        const std::string& any = decoys_.empty() ? std::string() : decoys_.front().second;
        const auto by = any.find(" by the ");
        what = "reading a secret" + (by == std::string::npos ? std::string() : any.substr(by));
      } else if (ev->mask & IN_OPEN) {
        for (const auto& [wd, name] : decoys_)
          if (wd == ev->wd) what = name;
      }
      if (what.empty()) continue;
      bool known = false;
      for (const auto& s : seen_) known = known || s == what;
      if (known) continue;
      if (seen_.size() < kKept)
        seen_.push_back(std::move(what));
      else
        ++more_;
    }
  }
}

std::vector<std::string> RefusalLog::list() const {
  std::lock_guard<std::mutex> g(mu_);
  drain_decoys();
  std::vector<std::string> out = seen_;
  if (more_) out.push_back("... and " + std::to_string(more_) + " more");
  return out;
}

bool RefusalLog::empty() const {
  std::lock_guard<std::mutex> g(mu_);
  drain_decoys();
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

// A filter's descriptor, closed when neither the loop nor a pending judgement holds it.
struct Listener {
  explicit Listener(int f) : fd(f) {}
  ~Listener() { ::close(fd); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int fd;
};

struct Watched {
  int fd;
  bool listener;  // else the socket the listener comes on
  std::shared_ptr<RefusalLog> log;
  std::shared_ptr<Listener> owner;  // the listener's, shared with its pending judgements
};

// A handed-over call whose judging walks the file system (a write, a connection): done by a
// worker, so that a path on a hung mount holds only its own caller, and answered once, by the
// worker or, past the deadline, by the loop.
struct Job {
  std::shared_ptr<Listener> listener;
  std::shared_ptr<RefusalLog> log;
  seccomp_notif req;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<bool> answered{false};
};

// CONTINUE, or an error; only the first answer of a job is sent.
void answer_job(Job& job, int error) {
  if (job.answered.exchange(true)) return;
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof resp);
  resp.id = job.req.id;
  if (error)
    resp.error = error;
  else
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(job.listener->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

// Names what the child's policy refuses as an attempt and answers. What the caller's memory
// said is taken only while the call is still the one handed over (the caller cannot have been
// replaced by another process of the same pid meanwhile).
void judge(Job& job) {
  auto still_valid = [&] {
    unsigned long long id = job.req.id;
    return !job.answered.load() && ::ioctl(job.listener->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  };
  if (is_socket_call(job.req.data.nr)) {
    // The kernel would let this connection through: refused here, when it is an attempt.
    const sandbox::SocketView* view = job.log->sockets();
    std::string attempt = view ? connect_attempt(job.req, *view, still_valid) : std::string();
    const bool refuse = !attempt.empty();
    if (refuse) job.log->add(std::move(attempt));
    answer_job(job, refuse ? -EACCES : 0);
    return;
  }
  if (const sandbox::WriteView* view = job.log->writes())
    for (auto& a : write_attempts(job.req, *view, still_valid)) job.log->add(std::move(a));
  answer_job(job, 0);  // Landlock and the binds decide
}

class Supervisor {
 public:
  static Supervisor& get() {
    static Supervisor* s = new Supervisor();  // never destroyed: its thread may outlive main()
    return *s;
  }
  bool add(int sock, std::shared_ptr<RefusalLog> log) {
    if (ep_ < 0) return false;
    return watch(Watched{sock, false, std::move(log), nullptr});
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
    it->owner.reset();
    watched_.erase(it);
    return false;
  }

  void drop(Watched* w) {
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, w->fd, nullptr);
    if (!w->listener) ::close(w->fd);  // a listener closes with its last holder
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
    // If it cannot be watched, closing it refuses the calls it would hand over with ENOSYS.
    watch(Watched{listener, true, std::move(log), std::make_shared<Listener>(listener)});
  }

  void answer(Watched* w) {
    seccomp_notif req;
    std::memset(&req, 0, sizeof req);
    if (::ioctl(w->fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return;  // the caller died meanwhile
    if (is_write_call(req.data.nr) || is_socket_call(req.data.nr)) {
      auto job = std::make_shared<Job>();
      job->listener = w->owner;
      job->log = w->log;
      job->req = req;
      job->deadline = std::chrono::steady_clock::now() + judge_deadline();
      submit(std::move(job));
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

  // A worker takes the job; a new one starts while none is idle, up to kMaxWorkers (a worker
  // stuck on a hung mount stays stuck: the cap bounds how many threads that costs).
  void submit(std::shared_ptr<Job> job) {
    std::lock_guard<std::mutex> g(jobs_mu_);
    pending_.push_back(job);
    queue_.push_back(std::move(job));
    if (idle_ == 0 && workers_ < kMaxWorkers) {
      ++workers_;
      std::thread([this] { work(); }).detach();
    }
    jobs_cv_.notify_one();
  }

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> g(jobs_mu_);
        ++idle_;
        jobs_cv_.wait(g, [&] { return !queue_.empty(); });
        --idle_;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!job->answered.load()) judge(*job);
    }
  }

  // Answers (CONTINUE, unjudged) each job past its deadline, and says so in its log; returns
  // the milliseconds until the next deadline, -1 when none is pending.
  int expire() {
    std::vector<std::shared_ptr<Job>> late;
    int wait_ms = -1;
    {
      std::lock_guard<std::mutex> g(jobs_mu_);
      const auto now = std::chrono::steady_clock::now();
      for (auto it = pending_.begin(); it != pending_.end();) {
        if ((*it)->answered.load()) {
          it = pending_.erase(it);
        } else if ((*it)->deadline <= now) {
          late.push_back(*it);
          it = pending_.erase(it);
        } else {
          auto ms = std::chrono::duration_cast<std::chrono::milliseconds>((*it)->deadline - now).count() + 1;
          if (wait_ms < 0 || ms < wait_ms) wait_ms = static_cast<int>(ms);
          ++it;
        }
      }
    }
    for (auto& job : late) {
      if (job->answered.load()) continue;
      answer_job(*job, 0);
      job->log->note_unjudged(std::string(is_socket_call(job->req.data.nr) ? "a connection" : "a write") + " by " +
                              process_text(job->req.pid));
    }
    return wait_ms;
  }

  void loop() {
    epoll_event evs[16];
    for (;;) {
      int n = ::epoll_wait(ep_, evs, 16, expire());
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

  static constexpr int kMaxWorkers = 8;
  int ep_ = -1;
  std::mutex mu_;
  std::list<Watched> watched_;
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::list<std::shared_ptr<Job>> pending_;
  int idle_ = 0, workers_ = 0;
};

}  // namespace

void watch_refusals(int sock, std::shared_ptr<RefusalLog> log) {
  if (!Supervisor::get().add(sock, std::move(log))) ::close(sock);
}

}  // namespace yolo::runner
