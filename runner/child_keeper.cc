#include "runner/child_keeper.h"

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

namespace yolo::runner {

// ---- Supervision of escaped descendants (see subprocess.h) ----
namespace {

struct Supervisor {
  std::mutex mu;  // held around each spawn, each reap and every sweep: no child of ours is unregistered
  bool enabled = false;
  bool keeper_started = false;
  std::string env_name;          // YOLO_PROC_<token>
  char keeper_needle[64] = {0};  // "YOLO_PROC_<token>=", for the keeper (no allocation there)
  char temp_dir[4096] = {0};
  bool temp_made = false;
  int keeper_pid = 0;
  int keeper_fd = -1;
  std::set<int> live_pids;  // children started by subprocess.cc that it has not reaped yet
  std::set<unsigned long long> live_seqs;
  pid_t owner_pid = 0;       // the process that turned supervision on (not a forked copy)
  bool final_sweep = false;  // at exit: every orphan goes, with a number or without
  unsigned long long next_seq = 1;
};

Supervisor& sup() {
  static Supervisor* s = new Supervisor;  // never destroyed: used until exit
  return *s;
}

// The keeper: a forked copy of us that only waits for our death. Async-signal-safe calls
// only (we may have threads when it is forked): raw syscalls, fixed buffers, no allocation.
// getdents64 records: glibc's dirent64 has the kernel's layout (d_ino, d_off, d_reclen, d_type, d_name).
using LinuxDirent64 = struct dirent64;

bool all_digits(const char* p) {
  if (!*p) return false;
  for (; *p; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

// f(name) for each entry of the open folder dfd, read with getdents64 into buf (raw
// syscalls, no allocation: the keeper uses it too). "." and ".." are passed over.
template <size_t N, class F>
void each_entry(int dfd, char (&buf)[N], F f) {
  for (;;) {
    long n = ::syscall(SYS_getdents64, dfd, buf, N);
    if (n <= 0) return;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] == '.' && (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2]))) continue;
      f(static_cast<const char*>(d->d_name));
    }
  }
}

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

// A small file of /proc, read with plain syscalls (a stream per read was most of the cost of
// a spawn's record and of every exit's sweep). "" when it cannot be read.
std::string read_small(const std::string& path, bool* opened = nullptr) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (opened) *opened = fd >= 0;
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    // These files (stat, environ, children) fill the buffer as far as they go: a short read
    // is their end, and the read that would say so is one system call more per spawn and exit.
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  ::close(fd);
  return out;
}

// "S" and the fields after the command name of /proc/PID/stat; empty when gone.
std::vector<std::string> stat_fields(int pid) {
  std::string st = read_small("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = st.rfind(')');
  std::vector<std::string> out;
  if (paren == std::string::npos) return out;
  out.reserve(52);
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  for (size_t i = paren + 1; i < st.size();) {
    while (i < st.size() && space(st[i])) ++i;
    size_t b = i;
    while (i < st.size() && !space(st[i])) ++i;
    if (i > b) out.emplace_back(st, b, i - b);
  }
  return out;  // out[0] = state (field 3), out[1] = ppid, out[2] = pgrp, out[19] = starttime
}

// The pids in a /proc/PID/task/TID/children file ("1 2 3 ").
void parse_pids(const std::string& text, std::vector<int>& out) {
  int v = 0;
  bool in = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in = true;
    } else if (in) {
      out.push_back(v);
      v = 0;
      in = false;
    }
  }
  if (in) out.push_back(v);
}

std::vector<int> children_of(int pid) {
  std::vector<int> out;
  std::string base = "/proc/" + std::to_string(pid) + "/task";
  bool any = false, listed = false;
  int dfd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    listed = true;
    char dbuf[4096];
    each_entry(dfd, dbuf, [&](const char* name) {
      if (!all_digits(name)) return;
      bool opened = false;
      std::string text = read_small(base + "/" + name + "/children", &opened);
      if (!opened) return;
      any = true;
      parse_pids(text, out);
    });
    ::close(dfd);
  }
  if (any || !listed) return out;
  // No children files (a kernel without CONFIG_PROC_CHILDREN): scan every process's parent.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (!all_digits(name.c_str())) continue;
    auto f = stat_fields(std::stoi(name));
    if (f.size() > 1 && f[1] == std::to_string(pid)) out.push_back(std::stoi(name));
  }
  return out;
}

// The children of this process that a sweep looks at: an orphan is re-parented to a
// subreaper's first live thread, its leader while we run, so the leader's children file
// lists every orphan (reading every thread's, on each exit, was half of the sweep's system
// calls); where there is no such file, children_of.
std::vector<int> own_children(int self) {
  std::vector<int> out;
  bool opened = false;
  std::string text =
      read_small("/proc/" + std::to_string(self) + "/task/" + std::to_string(self) + "/children", &opened);
  if (!opened) return children_of(self);
  parse_pids(text, out);
  return out;
}

// The spawn number an orphan carries in its environment, 0 when none of ours.
unsigned long long spawn_seq_of(int pid, const std::string& env_name) {
  std::string env = read_small("/proc/" + std::to_string(pid) + "/environ");
  std::string key = env_name + "=";
  size_t at = 0;
  while (at < env.size()) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (env.compare(at, key.size(), key) == 0) {
      try {
        return std::stoull(env.substr(at + key.size(), end - at - key.size()));
      } catch (...) {
        return 0;
      }
    }
    at = end + 1;
  }
  return 0;
}

// The whole tree under pid, however deep: each process is stopped before its children are
// looked at (no more forks meanwhile), then all are killed.
void kill_tree(int pid) {
  std::vector<int> todo{pid}, stopped;
  std::set<int> seen;
  while (!todo.empty()) {
    int p = todo.back();
    todo.pop_back();
    if (!seen.insert(p).second) continue;
    ::kill(p, SIGSTOP);
    stopped.push_back(p);
    for (int c : children_of(p)) todo.push_back(c);
  }
  for (int p : stopped) ::kill(p, SIGKILL);
}

// Ends the orphans (re-parented to us) of spawns that have ended and reaps the zombies among
// our children that subprocess.cc does not wait for. Returns how many orphans were killed.
int sweep_orphans_locked() {
  Supervisor& s = sup();
  int self = static_cast<int>(s.owner_pid);  // sweeps run in the process that turned supervision on
  int killed = 0;
  for (int c : own_children(self)) {
    if (s.live_pids.count(c) || c == s.keeper_pid) continue;
    auto f = stat_fields(c);
    if (f.empty()) continue;
    if (f[0] == "Z" || f[0] == "X") {
      ::waitpid(c, nullptr, WNOHANG);
      continue;
    }
    unsigned long long seq = spawn_seq_of(c, s.env_name);
    // Ours, and its spawn still runs: it stays. An orphan without a number cleared its
    // environment (env -i): it came from one of our spawns (only they are re-parented to us),
    // but from which is unknown (an engine-less dispatch job is one, on purpose): it stays
    // while we run, and goes at our exit (sweep_at_exit).
    if (seq == 0 ? !s.final_sweep : s.live_seqs.count(seq) != 0) continue;
    kill_tree(c);
    ++killed;
  }
  return killed;
}

// At an exit that swept: the keeper has nothing left to do but remove the temp folder; it is
// told so and reaped here, never left to whoever inherits it (a parent that does not reap,
// where keepers piled up as zombies), nor left sweeping /proc after we are gone.
void release_keeper_locked() {
  Supervisor& s = sup();
  if (s.keeper_pid <= 0 || s.keeper_fd < 0) return;
  char c = 'x';
  ssize_t n;
  do n = ::write(s.keeper_fd, &c, 1);
  while (n < 0 && errno == EINTR);
  ::close(s.keeper_fd);
  s.keeper_fd = -1;
  pid_t r;
  do r = ::waitpid(s.keeper_pid, nullptr, 0);
  while (r < 0 && errno == EINTR);
  s.keeper_pid = 0;
}

// At exit nothing of ours runs on: every orphan left goes, whatever its environment says
// (an escaped descendant that cleared it, or one that double-forked after the last sweep).
// No spawn, no keeper: then no descendant of ours exists and the sweep (a /proc walk) is
// skipped, which keeps the exit of `yolo --version`, `status` or Stage 1 cheap.
void sweep_at_exit() {
  Supervisor& s = sup();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.enabled || s.owner_pid != ::getpid() || !s.keeper_started) return;
  s.live_seqs.clear();
  s.live_pids.clear();
  s.final_sweep = true;
  // Until a round finds none left: an orphan that forked while we looked is taken in the next
  // round. Bounded (about 20 s), so a kernel that never lets a process die cannot hang us.
  for (int round = 0; round < 4000 && sweep_orphans_locked() > 0; ++round) {
    struct timespec ts {
      0, 5 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
  release_keeper_locked();
}

void sweep_orphans() {
  Supervisor& s = sup();
  if (!s.enabled) return;
  std::lock_guard<std::mutex> lock(s.mu);
  bool killed = false;
  for (int round = 0; round < 10; ++round) {
    if (sweep_orphans_locked() == 0) break;
    killed = true;
    struct timespec ts {
      0, 5 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
  // Reap what died in the last round; a sweep that found nothing has nothing to reap (the
  // usual case, after every child's exit: a second /proc walk was half the sweep's cost).
  if (killed) sweep_orphans_locked();
}

}  // namespace

void supervise_children() {
  Supervisor& s = sup();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.enabled) return;
  unsigned char rnd[8] = {0};
  if (::getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) {
    auto t = uv_hrtime() ^ static_cast<uint64_t>(::getpid());
    std::memcpy(rnd, &t, sizeof rnd);
  }
  static const char* hex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : rnd) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  s.env_name = "YOLO_PROC_" + token;
  std::snprintf(s.keeper_needle, sizeof s.keeper_needle, "%s=", s.env_name.c_str());
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::snprintf(s.temp_dir, sizeof s.temp_dir, "%s/yolo-%d-%s", tmp.c_str(), static_cast<int>(::getpid()),
                token.c_str());
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  s.owner_pid = ::getpid();
  std::atexit(sweep_at_exit);
  s.enabled = true;
}

bool supervising_children() { return sup().enabled; }

int exit_without_freeing(int code) {
#if defined(__SANITIZE_ADDRESS__)
  return code;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return code;
#endif
#endif
  std::fflush(nullptr);
  sweep_at_exit();  // what the atexit handler would do: _Exit runs none
  std::_Exit(code);
}

void start_keeper() {
  std::lock_guard<std::mutex> lock(sup().mu);
  start_keeper_locked();
}

std::filesystem::path private_temp_dir() {
  Supervisor& s = sup();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.enabled) {
    std::error_code ec;
    auto t = std::filesystem::temp_directory_path(ec);
    return ec ? std::filesystem::path("/tmp") : t;
  }
  start_keeper_locked();
  if (!s.temp_made) {
    if (::mkdir(s.temp_dir, 0700) != 0 && errno != EEXIST) return {};
    s.temp_made = true;
  }
  return s.temp_dir;
}

unsigned long long process_start_ticks(int pid) {
  if (pid <= 0) return 0;
  auto f = stat_fields(pid);
  if (f.size() < 20) return 0;
  try {
    return std::stoull(f[19]);
  } catch (...) {
    return 0;
  }
}

int process_group_of(int pid) {
  if (pid <= 0) return 0;
  pid_t g = ::getpgid(pid);
  return g < 0 ? 0 : static_cast<int>(g);
}

// ---- what Process (subprocess.cc) asks of the supervisor ----

namespace keeper {

unsigned long long next_spawn(std::string& env_name) {
  Supervisor& s = sup();
  if (!s.enabled) return 0;
  std::lock_guard<std::mutex> lock(s.mu);
  start_keeper_locked();
  env_name = s.env_name;
  return s.next_seq++;
}

std::unique_lock<std::mutex> spawn_lock(unsigned long long seq) {
  std::unique_lock<std::mutex> lock(sup().mu, std::defer_lock);
  if (seq) lock.lock();
  return lock;
}

void spawned(unsigned long long seq, int pid) {
  if (!seq) return;
  Supervisor& s = sup();
  s.live_pids.insert(pid);
  s.live_seqs.insert(seq);
}

bool reap(unsigned long long seq, int pid, int* status) {
  std::unique_lock<std::mutex> lock(sup().mu, std::defer_lock);
  if (seq) lock.lock();
  pid_t r;
  do r = ::waitpid(pid, status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  // r < 0 (ECHILD): nobody else reaps our children, so it cannot happen; reported as an
  // exit with an unknown status rather than waited for for ever.
  if (r < 0) *status = 0xff00;  // as if exited with status 255
  if (seq) {
    sup().live_pids.erase(pid);
    sup().live_seqs.erase(seq);
  }
  return true;
}

void sweep() { sweep_orphans(); }

}  // namespace keeper

}  // namespace yolo::runner
