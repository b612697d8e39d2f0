// The keeper: a forked copy of us that only waits for our death, then kills every process
// carrying our spawn token and removes the private temp folder. Apart from the rest of the
// supervisor because everything here runs in a forked child where only async-signal-safe
// calls are allowed: raw syscalls, fixed buffers, no allocation.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "runner/child_keeper_internal.h"

namespace yolo::runner::keeper_detail {

bool all_digits(const char* p) {
  if (!*p) return false;
  for (; *p; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

namespace {

// Does the NUL-separated environment in `fd` hold an entry starting with `needle`?
bool env_fd_has(int fd, const char* needle, size_t nlen) {
  char buf[8192];
  long pos = 0;  // position in needle at the start of an entry; -1: not matching
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c == '\0') {
        pos = 0;
        continue;
      }
      if (pos < 0) continue;
      if (c == needle[pos]) {
        if (static_cast<size_t>(++pos) == nlen) return true;
      } else {
        pos = -1;
      }
    }
  }
}

void fmt_path(char* out, size_t cap, const char* a, const char* b, const char* c) {
  size_t n = 0;
  for (const char* parts[3] = {a, b, c}; const char* p : parts)
    for (; p && *p && n + 1 < cap; ++p) out[n++] = *p;
  out[n] = 0;
}

void close_all_but(int keep) {
  if (keep > 3 && ::syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u) != 0)
    for (int fd = 3; fd < keep; ++fd) ::close(fd);
  if (::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) != 0)
    for (int fd = keep + 1; fd < 65536; ++fd) ::close(fd);
}

// Kills every process but us whose environment carries `needle`; returns how many.
int keeper_sweep(const char* needle, size_t nlen) {
  int self = static_cast<int>(::getpid());
  int dfd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return 0;
  int killed = 0;
  char dbuf[16384];
  each_entry(dfd, dbuf, [&](const char* name) {
    if (!all_digits(name)) return;
    int pid = 0;
    for (const char* p = name; *p; ++p) pid = pid * 10 + (*p - '0');
    if (pid == self) return;
    char path[64];
    fmt_path(path, sizeof path, "/proc/", name, "/environ");
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    bool hit = env_fd_has(fd, needle, nlen);
    ::close(fd);
    if (hit && ::kill(pid, SIGKILL) == 0) ++killed;
  });
  ::close(dfd);
  return killed;
}

// Empties the folder dfd: files, and folders (each children's sandbox temp folder, and what
// its agent made there) to a bounded depth; links are removed, never followed.
void remove_tree_at(int dfd, int depth) {
  char dbuf[4096];
  each_entry(dfd, dbuf, [&](const char* name) {
    if (::unlinkat(dfd, name, 0) == 0 || depth >= 12) return;
    int sub = ::openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (sub < 0) return;
    remove_tree_at(sub, depth + 1);
    ::close(sub);
    ::unlinkat(dfd, name, AT_REMOVEDIR);
  });
}

[[noreturn]] void keeper_main(int rfd, const char* needle, const char* temp_dir) {
  ::setsid();  // no terminal signal or group kill aimed at yolo reaches the keeper
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &ign, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Hold nothing of ours open (a pipe a test or a caller waits on).
  int nullfd = ::open("/dev/null", O_RDWR);
  if (nullfd >= 0)
    for (int fd = 0; fd < 3; ++fd)
      if (fd != rfd) ::dup2(nullfd, fd);
  close_all_but(rfd);
  if (::chdir("/") != 0) {
    // keeps the folder it was started in busy; nothing else changes
  }
  ::prctl(PR_SET_NAME, "yolo-keeper", 0, 0, 0);
  char c;
  bool swept = false;  // a byte: our parent has swept itself at its exit and waits for us
  for (;;) {
    ssize_t n = ::read(rfd, &c, 1);
    if (n == 1) swept = true;
    if (n >= 0 || errno != EINTR) break;
  }
  // Our parent is gone (killed): whatever it started and left running goes too.
  size_t nlen = 0;
  while (needle[nlen]) ++nlen;
  for (int round = 0; !swept && round < 50; ++round) {
    if (keeper_sweep(needle, nlen) == 0) break;
    struct timespec ts {
      0, 20 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
  if (temp_dir[0]) {
    int dfd = ::open(temp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd >= 0) {
      remove_tree_at(dfd, 0);
      ::close(dfd);
      ::rmdir(temp_dir);
    }
  }
  _exit(0);
}

}  // namespace

// Under sup().mu.
void start_keeper_locked() {
  Supervisor& s = sup();
  if (!s.enabled || s.keeper_started) return;
  s.keeper_started = true;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = ::fork();
  if (pid == 0) keeper_main(fds[0], s.keeper_needle, s.temp_dir);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  s.keeper_pid = pid;
  s.keeper_fd = fds[1];  // never written; closed by our death
}

}  // namespace yolo::runner::keeper_detail
