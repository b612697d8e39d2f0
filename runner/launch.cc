#include "runner/launch.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "runner/refusals.h"
#include "runner/sandbox.h"

#if defined(__x86_64__) || defined(__aarch64__)
#define YOLO_LAUNCH_CLONE 1
#endif

namespace yolo::runner {

namespace {

#ifdef YOLO_LAUNCH_CLONE

// Raw system calls for the child: glibc's wrappers set errno, which is the thread-local
// variable of the thread that cloned us (we share its memory and its TLS pointer).
[[gnu::always_inline]] inline long raw(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
#if defined(__x86_64__)
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return ret;
#else
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
#endif
}

// Writes one of the child's own /proc files (its user namespace's maps): 0 or -errno.
[[gnu::always_inline]] inline long write_proc(const char* path, const char* data, size_t n) {
  long fd = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fd;
  long w = raw(SYS_write, fd, reinterpret_cast<long>(data), static_cast<long>(n));
  raw(SYS_close, fd);
  return w < 0 ? w : (static_cast<size_t>(w) == n ? 0 : -EIO);
}

// The child, until its exec. No sanitizer instruments it: its stack is not one the sanitizers
// know, and their shadow memory is shared with the parent, which goes on meanwhile.
[[noreturn]] __attribute__((no_sanitize("address", "undefined"))) int child_main(void* arg) {
  const Launch::Plan* p = static_cast<const Launch::Plan*>(arg);
  // Every signal at its default (what is ignored in yolo, SIGPIPE, is not in its children).
  // The kernel's sigaction: handler, flags, restorer, mask; all zero is SIG_DFL.
  unsigned long dfl[4] = {0, 0, 0, 0};
  for (long sig = 1; sig <= 64; ++sig) raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(dfl), 0, 8);
  raw(SYS_setsid);
  // stdin (a pipe, or /dev/null: already on 0 when our own 0 was closed), stdout, stderr on
  // 0-2, the cwd, then no fd of ours but 0-2 (those without close-on-exec too; a kernel
  // without close_range (< 5.9): one by one), no signal blocked, the exec. The first call
  // that fails ends it, its errno kept.
  long r = 0;
  int in = p->in_fd;
  if (in < 0) in = static_cast<int>(r = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/dev/null"), O_RDONLY));
  if (r >= 0 && in != 0) r = raw(SYS_dup3, in, 0, 0);
  if (r >= 0) r = raw(SYS_dup3, p->out_fd, 1, 0);
  if (r >= 0) r = raw(SYS_dup3, p->err_fd, 2, 0);
  if (r >= 0 && p->cwd) r = raw(SYS_chdir, reinterpret_cast<long>(p->cwd));
  // The sandbox, last before the exec (the ruleset's fd is still open here): the read-only
  // binds in the mount namespace the child was cloned into (its user namespace's maps first),
  // no_new_privs, Landlock, then the seccomp filter, which allows none of these again.
  if (r >= 0 && p->ruleset_fd >= 0) {
    if (p->user_ns) {
      r = write_proc("/proc/self/setgroups", "deny", 4);
      if (r >= 0) r = write_proc("/proc/self/uid_map", p->uid_map, p->uid_map_len);
      if (r >= 0) r = write_proc("/proc/self/gid_map", p->gid_map, p->gid_map_len);
    }
    const auto* mounts = static_cast<const Confinement::Mount*>(p->mounts);
    if (r >= 0 && p->n_mounts) r = raw(SYS_mount, 0, reinterpret_cast<long>("/"), 0, MS_REC | MS_PRIVATE, 0);
    for (size_t k = 0; r >= 0 && k < p->n_mounts; ++k) {
      const long path = reinterpret_cast<long>(mounts[k].path);
      if (mounts[k].hold_fd >= 0) {
        r = raw(SYS_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r >= 0) {
          const long fd = r;
          r = raw(SYS_dup3, fd, mounts[k].hold_fd, O_CLOEXEC);
          raw(SYS_close, fd);
        }
      }
      if (r >= 0 && mounts[k].src) {
        const long m = raw(SYS_mount, reinterpret_cast<long>(mounts[k].src), path, 0, MS_BIND, 0);
        if (!mounts[k].optional) r = m;
        continue;
      }
      if (r >= 0) r = raw(SYS_mount, path, path, 0, MS_BIND | MS_REC, 0);
      if (r >= 0) r = raw(SYS_mount, 0, path, 0, static_cast<long>(MS_REMOUNT | MS_BIND | mounts[k].flags), 0);
    }
    // As root: the bounding set emptied, so the exec grants no capability (no CAP_SYS_PTRACE
    // past Landlock's tracing rule, no CAP_DAC_OVERRIDE past the file modes). Capabilities
    // past the kernel's last answer EINVAL, which ends nothing.
    if (r >= 0 && p->drop_caps) {
      raw(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
      for (long cap = 0; cap < 64; ++cap) raw(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0);
    }
    if (r >= 0) r = raw(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (r >= 0) r = raw(SYS_landlock_restrict_self, p->ruleset_fd, 0);
    if (r >= 0 && p->notify_sock >= 0) {
      long l = raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                   reinterpret_cast<long>(p->notify_prog));
      if (l >= 0) {
        // Sent or not, the filter stays: with no supervisor holding its descriptor, the kernel
        // answers the calls it would hand over with ENOSYS (still refused, only not named).
        *p->notify_fd = static_cast<int>(l);
        raw(SYS_sendmsg, p->notify_sock, reinterpret_cast<long>(p->notify_msg), MSG_NOSIGNAL);
        raw(SYS_close, l);
        r = 0;
      } else if (l == -EBUSY) {  // a supervisor already holds a filter above ours
        r = raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, reinterpret_cast<long>(p->seccomp));
      } else {
        r = l;
      }
    } else if (r >= 0) {
      r = raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, reinterpret_cast<long>(p->seccomp));
    }
  }
  if (r >= 0) {
    if (raw(SYS_close_range, 3, ~0UL, 0) < 0)
      for (long fd = 3; fd < 65536; ++fd) raw(SYS_close, fd);
    unsigned long none = 0;
    raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&none), 0, 8);
    r = raw(SYS_execve, reinterpret_cast<long>(p->program), reinterpret_cast<long>(p->argv),
            reinterpret_cast<long>(p->envp));
    if (r == -ENOEXEC)
      r = raw(SYS_execve, reinterpret_cast<long>("/bin/sh"), reinterpret_cast<long>(p->sh_argv),
              reinterpret_cast<long>(p->envp));
  }
  p->exec_errno->store(static_cast<int>(-r), std::memory_order_release);
  for (;;) raw(SYS_exit_group, 127);
}

// Child stacks, reused: a stack is in use from the clone until the child is reaped.
constexpr size_t kGuard = 4096, kStack = 64 * 1024;
std::mutex stacks_mu;
std::vector<void*> free_stacks;

void* take_stack() {
  {
    std::lock_guard<std::mutex> g(stacks_mu);
    if (!free_stacks.empty()) {
      void* s = free_stacks.back();
      free_stacks.pop_back();
      return s;
    }
  }
  void* m = ::mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  ::mprotect(m, kGuard, PROT_NONE);  // an overflow faults instead of writing into a neighbour
  return m;
}

void give_stack(void* s) {
  if (!s) return;
  std::lock_guard<std::mutex> g(stacks_mu);
  if (free_stacks.size() < 16)
    free_stacks.push_back(s);
  else
    ::munmap(s, kGuard + kStack);
}

#endif  // YOLO_LAUNCH_CLONE

// posix_spawn with the same child (and a synchronous exec error).
int spawn_with_posix_spawn(const Launch::Plan& p, pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  if (int rc = posix_spawn_file_actions_init(&fa)) return rc;
  if (int rc = posix_spawnattr_init(&at)) {
    posix_spawn_file_actions_destroy(&fa);
    return rc;
  }
  int rc = p.in_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, p.in_fd, 0)
                        : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, p.out_fd, 1);
  if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, p.err_fd, 2);
  if (!rc && p.cwd) rc = posix_spawn_file_actions_addchdir_np(&fa, p.cwd);
  if (!rc) rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  // All bits set, not sigfillset, which leaves out glibc's two reserved real-time signals.
  sigset_t all, none;
  std::memset(&all, 0xff, sizeof all);
  sigemptyset(&none);
  if (!rc) rc = posix_spawnattr_setsigdefault(&at, &all);
  if (!rc) rc = posix_spawnattr_setsigmask(&at, &none);
  if (!rc)
    rc = posix_spawnattr_setflags(
        &at, static_cast<short>(POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK));
  if (!rc) rc = posix_spawn(&pid, p.program, &fa, &at, p.argv, p.envp);
  if (rc == ENOEXEC) rc = posix_spawn(&pid, "/bin/sh", &fa, &at, p.sh_argv, p.envp);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

}  // namespace

Launch::Launch(std::string program, std::vector<std::string> argv, std::vector<std::string> owned,
               std::vector<char*> envp, std::string cwd, int in_fd, int out_fd, int err_fd)
    : program_(std::move(program)),
      cwd_(std::move(cwd)),
      argv_(std::move(argv)),
      owned_(std::move(owned)),
      env_p_(std::move(envp)),
      in_fd_(in_fd),
      out_fd_(out_fd),
      err_fd_(err_fd) {
  for (auto& a : argv_) argv_p_.push_back(a.data());
  argv_p_.push_back(nullptr);
  if (env_p_.empty() || env_p_.back() != nullptr) env_p_.push_back(nullptr);
  sh_argv_p_.push_back(const_cast<char*>("/bin/sh"));
  sh_argv_p_.push_back(program_.data());
  for (size_t i = 1; i < argv_.size(); ++i) sh_argv_p_.push_back(argv_[i].data());
  sh_argv_p_.push_back(nullptr);
}

struct Launch::NotifyMsg {
  char byte = 0;
  iovec iov{};
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  int* fd = nullptr;
  NotifyMsg() {
    iov.iov_base = &byte;
    iov.iov_len = 1;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    fd = reinterpret_cast<int*>(CMSG_DATA(c));
  }
};

Launch::~Launch() {
#ifdef YOLO_LAUNCH_CLONE
  give_stack(stack_);
#endif
  delete notify_;
}

namespace {

// CLOCK_BOOTTIME in the clock ticks of /proc/PID/stat (USER_HZ).
unsigned long long boot_ticks() {
  static const long hz = ::sysconf(_SC_CLK_TCK);
  struct timespec ts {};
  if (hz <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return 0;
  return static_cast<unsigned long long>(ts.tv_sec) * static_cast<unsigned long long>(hz) +
         static_cast<unsigned long long>(ts.tv_nsec) / (1000000000ULL / static_cast<unsigned long long>(hz));
}

}  // namespace

int Launch::start(pid_t& pid, int& pidfd) {
  pid = 0;
  pidfd = -1;
  start_ticks_ = 0;
  const unsigned long long before = boot_ticks();
  int rc = start_child(pid, pidfd);
  const unsigned long long after = boot_ticks();
  if (rc == 0 && before != 0 && before == after) start_ticks_ = before;
  return rc;
}

int Launch::start_child(pid_t& pid, int& pidfd) {
  // The plan lives in the Launch too: the child reads it after start() has returned.
  plan_ = Plan{program_.c_str(), argv_p_.data(), env_p_.data(), sh_argv_p_.data(), cwd_.empty() ? nullptr : cwd_.c_str(),
               in_fd_,           out_fd_,        err_fd_,       -1,                nullptr,
               false,            nullptr,        nullptr,       0,                 0,
               nullptr,          0,              false,         &exec_errno_,  -1,
               nullptr,          nullptr,        nullptr};
  if (const Confinement* c = confinement_) {
    plan_.ruleset_fd = c->ruleset_fd;
    plan_.seccomp = &c->prog;
    plan_.user_ns = c->user_ns;
    plan_.uid_map = c->uid_map.c_str();
    plan_.uid_map_len = c->uid_map.size();
    plan_.gid_map = c->gid_map.c_str();
    plan_.gid_map_len = c->gid_map.size();
    plan_.mounts = c->mounts.data();
    plan_.n_mounts = c->mounts.size();
    plan_.drop_caps = c->drop_caps;
  }
  Plan* plan = &plan_;
#ifdef YOLO_LAUNCH_CLONE
  // The socket the child's filter descriptor comes back on (above 0-2, where the child puts
  // its pipes), when the kernel can hand refused calls over.
  int sv[2] = {-1, -1};
  if (const Confinement* c = confinement_; c && c->refusals && c->notify_prog.len &&
                                           ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
    if (sv[1] < 3) {
      int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 3);
      ::close(sv[1]);
      sv[1] = moved;
    }
    if (sv[1] < 0) {
      ::close(sv[0]);
      sv[0] = -1;
    } else {
      if (!notify_) notify_ = new NotifyMsg();
      plan_.notify_sock = sv[1];
      plan_.notify_prog = &c->notify_prog;
      plan_.notify_msg = &notify_->msg;
      plan_.notify_fd = notify_->fd;
    }
  }
  auto hand_over = [&](bool started) {
    if (sv[1] >= 0) ::close(sv[1]);  // the child has its own copy (until its exec)
    if (sv[0] < 0) return;
    if (started)
      watch_refusals(sv[0], confinement_->refusals);
    else
      ::close(sv[0]);
  };
  if (!stack_) stack_ = take_stack();
  if (stack_) {
    // All signals blocked while cloning: no handler of ours ever runs in the child (it puts
    // every disposition back to the default before unblocking them).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    char* top = static_cast<char*>(stack_) + kGuard + kStack;
    int fd = -1;
    // A confined child with read-only binds starts in namespaces of its own (unshare cannot
    // make a user namespace for a process that shares our memory; clone can).
    int ns = 0;
    if (confinement_ && !confinement_->mounts.empty()) ns = CLONE_NEWNS | (confinement_->user_ns ? CLONE_NEWUSER : 0);
    pid_t c = ::clone(child_main, top, CLONE_VM | CLONE_PIDFD | ns | SIGCHLD, plan, &fd);
    if (c < 0 && errno == EINVAL) c = ::clone(child_main, top, CLONE_VM | ns | SIGCHLD, plan);  // no CLONE_PIDFD (< 5.2)
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    hand_over(c >= 0);
    if (c < 0) return e;
    pid = c;
    pidfd = fd;
    return 0;
  }
  hand_over(false);
#endif
  if (confinement_) return ENOSYS;  // posix_spawn cannot enter a sandbox before the exec
  return spawn_with_posix_spawn(*plan, pid);
}

}  // namespace yolo::runner
