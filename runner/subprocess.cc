#include "runner/subprocess.h"

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

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

extern char** environ;

namespace yolo::runner {

// ---- Supervision of escaped descendants (see subprocess.h) ----
namespace {

struct Supervisor {
  std::mutex mu;  // held around uv_spawn and every sweep: no child of ours is unregistered
  bool enabled = false;
  bool keeper_started = false;
  std::string env_name;          // YOLO_PROC_<token>
  char keeper_needle[64] = {0};  // "YOLO_PROC_<token>=", for the keeper (no allocation there)
  char temp_dir[4096] = {0};
  bool temp_made = false;
  int keeper_pid = 0;
  int keeper_fd = -1;
  std::set<int> live_pids;  // children started by uv that have not been reaped by it
  std::set<unsigned long long> live_seqs;
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
  for (;;) {
    long n = ::syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(dbuf + off);
      off += d->d_reclen;
      if (!all_digits(d->d_name)) continue;
      int pid = 0;
      for (const char* p = d->d_name; *p; ++p) pid = pid * 10 + (*p - '0');
      if (pid == self) continue;
      char path[64];
      fmt_path(path, sizeof path, "/proc/", d->d_name, "/environ");
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      bool hit = env_fd_has(fd, needle, nlen);
      ::close(fd);
      if (hit && ::kill(pid, SIGKILL) == 0) ++killed;
    }
  }
  ::close(dfd);
  return killed;
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
  for (;;) {
    ssize_t n = ::read(rfd, &c, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  // Our parent is gone (exited or killed): whatever it started and left running goes too.
  size_t nlen = 0;
  while (needle[nlen]) ++nlen;
  for (int round = 0; round < 50; ++round) {
    if (keeper_sweep(needle, nlen) == 0) break;
    struct timespec ts {
      0, 20 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
  if (temp_dir[0]) {
    int dfd = ::open(temp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd >= 0) {
      char dbuf[8192];
      for (;;) {
        long n = ::syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
          auto* d = reinterpret_cast<LinuxDirent64*>(dbuf + off);
          off += d->d_reclen;
          if (d->d_name[0] == '.' && (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2]))) continue;
          ::unlinkat(dfd, d->d_name, 0);
        }
      }
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

std::string read_small(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// "S" and the fields after the command name of /proc/PID/stat; empty when gone.
std::vector<std::string> stat_fields(int pid) {
  std::string st = read_small("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = st.rfind(')');
  std::vector<std::string> out;
  if (paren == std::string::npos) return out;
  std::istringstream in(st.substr(paren + 1));
  std::string f;
  while (in >> f) out.push_back(f);
  return out;  // out[0] = state (field 3), out[1] = ppid, out[2] = pgrp, out[19] = starttime
}

std::vector<int> children_of(int pid) {
  std::vector<int> out;
  std::error_code ec;
  std::string base = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (const auto& t : std::filesystem::directory_iterator(base, ec)) {
    std::ifstream f(t.path() / "children");
    if (!f) continue;
    any = true;
    int c;
    while (f >> c) out.push_back(c);
  }
  if (any || ec) return out;
  // No children files (a kernel without CONFIG_PROC_CHILDREN): scan every process's parent.
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (!all_digits(name.c_str())) continue;
    auto f = stat_fields(std::stoi(name));
    if (f.size() > 1 && f[1] == std::to_string(pid)) out.push_back(std::stoi(name));
  }
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

void kill_tree(int pid, int depth = 0) {
  ::kill(pid, SIGSTOP);  // no more forks while we look at its children
  if (depth < 64)
    for (int c : children_of(pid)) kill_tree(c, depth + 1);
  ::kill(pid, SIGKILL);
}

// Ends the orphans (re-parented to us) of spawns that have ended and reaps the zombies among
// our children that uv does not wait for. Returns how many orphans were killed.
int sweep_orphans_locked() {
  Supervisor& s = sup();
  int self = static_cast<int>(::getpid());
  int killed = 0;
  for (int c : children_of(self)) {
    if (s.live_pids.count(c) || c == s.keeper_pid) continue;
    auto f = stat_fields(c);
    if (f.empty()) continue;
    if (f[0] == "Z" || f[0] == "X") {
      ::waitpid(c, nullptr, WNOHANG);
      continue;
    }
    unsigned long long seq = spawn_seq_of(c, s.env_name);
    if (seq == 0 || s.live_seqs.count(seq)) continue;  // not ours, or its spawn still runs
    kill_tree(c);
    ++killed;
  }
  return killed;
}

void sweep_orphans() {
  Supervisor& s = sup();
  if (!s.enabled) return;
  std::lock_guard<std::mutex> lock(s.mu);
  for (int round = 0; round < 10; ++round) {
    if (sweep_orphans_locked() == 0) break;
    struct timespec ts {
      0, 5 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
  sweep_orphans_locked();  // reap what died in the last round
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
  s.enabled = true;
}

bool supervising_children() { return sup().enabled; }

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

std::string SpawnResult::describe() const {
  switch (outcome) {
    case Outcome::Exited:
      return "exited with status " + std::to_string(exit_code);
    case Outcome::Signaled:
      return std::string("killed by signal ") + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
    case Outcome::TimedOut:
      return "timed out after " + std::to_string(static_cast<long long>(elapsed_ms)) + " ms (process group killed)";
    case Outcome::Cancelled:
      return "cancelled (process group stopped)";
    case Outcome::SpawnFailed:
      return "could not start: " + spawn_error;
  }
  return "unknown";
}

// Lifetime: an Impl lives until all of its libuv handles are closed; the Process
// object only holds a pointer and detaches on destruction.
struct Process::Impl {
  uv_loop_t* loop = nullptr;
  SpawnSpec spec;
  std::function<void(SpawnResult)> done;
  SpawnResult result;
  uv_process_t proc{};
  uv_pipe_t out_pipe{}, err_pipe{}, in_pipe{};
  uv_timer_t timer{}, grace{};
  uv_write_t write_req{};
  uint64_t start_ns = 0;
  int open_handles = 0;
  bool exited = false, out_eof = false, err_eof = false;
  bool stopping = false;  // timeout or cancel in progress
  bool finished = false;
  bool detached = false;  // the Process object is gone
  bool has_stdin = false;
  unsigned long long seq = 0;  // spawn number in the supervisor, 0 when not supervising

  void close_handle(uv_handle_t* h) {
    if (uv_is_closing(h)) return;
    uv_close(h, [](uv_handle_t* hh) {
      auto* self = static_cast<Impl*>(hh->data);
      // Freed here only when its Process is gone; otherwise ~Process frees it.
      if (--self->open_handles == 0 && self->detached) delete self;
    });
  }

  void signal_group(int sig) {
    if (result.pid > 0) ::kill(-result.pid, sig);
  }

  void stop(SpawnResult::Outcome why) {
    if (stopping || exited) return;
    stopping = true;
    result.outcome = why;
    signal_group(SIGTERM);
    uv_timer_start(
        &grace, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->signal_group(SIGKILL); },
        static_cast<uint64_t>(spec.kill_grace_ms > 0 ? spec.kill_grace_ms : 1), 0);
  }

  void maybe_finish() {
    if (finished || !exited || !out_eof || !err_eof) return;
    finished = true;
    result.elapsed_ms = static_cast<double>(uv_hrtime() - start_ns) / 1e6;
    if (result.out.size() > spec.output_cap) result.out.erase(0, result.out.size() - spec.output_cap);
    if (result.err.size() > spec.output_cap) result.err.erase(0, result.err.size() - spec.output_cap);
    uv_timer_stop(&timer);
    uv_timer_stop(&grace);
    close_handle(reinterpret_cast<uv_handle_t*>(&timer));
    close_handle(reinterpret_cast<uv_handle_t*>(&grace));
    close_handle(reinterpret_cast<uv_handle_t*>(&proc));
    if (!detached && done) {
      auto cb = std::move(done);
      cb(std::move(result));
    }
  }

  static void append_capped(std::string& buf, size_t& total, const char* data, size_t n, size_t cap) {
    total += n;
    buf.append(data, n);
    if (buf.size() > 2 * cap + 65536) buf.erase(0, buf.size() - cap);
  }

  static void on_alloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
    buf->base = new char[suggested];
    buf->len = suggested;
  }

  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
    auto* self = static_cast<Impl*>(s->data);
    bool is_out = s == reinterpret_cast<uv_stream_t*>(&self->out_pipe);
    if (n > 0) {
      if (is_out)
        append_capped(self->result.out, self->result.out_total, buf->base, static_cast<size_t>(n),
                      self->spec.output_cap);
      else
        append_capped(self->result.err, self->result.err_total, buf->base, static_cast<size_t>(n),
                      self->spec.output_cap);
    }
    delete[] buf->base;
    if (n < 0) {
      (is_out ? self->out_eof : self->err_eof) = true;
      self->close_handle(reinterpret_cast<uv_handle_t*>(s));
      self->maybe_finish();
    }
  }

  // The child is gone but something still holds its pipes: look for escaped orphans once
  // more, then stop reading.
  void drain_deadline() {
    sweep_orphans();
    result.drain_cut = true;
    for (uv_pipe_t* pp : {&out_pipe, &err_pipe}) {
      bool& eof = pp == &out_pipe ? out_eof : err_eof;
      if (eof) continue;
      eof = true;
      uv_read_stop(reinterpret_cast<uv_stream_t*>(pp));
      close_handle(reinterpret_cast<uv_handle_t*>(pp));
    }
    maybe_finish();
  }

  static void on_exit(uv_process_t* p, int64_t status, int term_signal) {
    auto* self = static_cast<Impl*>(p->data);
    self->exited = true;
    if (self->seq) {
      Supervisor& s = sup();
      std::lock_guard<std::mutex> lock(s.mu);
      s.live_pids.erase(self->result.pid);
      s.live_seqs.erase(self->seq);
    }
    if (self->result.outcome != SpawnResult::Outcome::TimedOut &&
        self->result.outcome != SpawnResult::Outcome::Cancelled) {
      if (term_signal) {
        self->result.outcome = SpawnResult::Outcome::Signaled;
      } else {
        self->result.outcome = SpawnResult::Outcome::Exited;
      }
    }
    self->result.exit_code = term_signal ? -1 : static_cast<int>(status);
    self->result.term_signal = term_signal;
    // Whatever the child left behind in its group (grandchildren holding our pipes)
    // does not outlive it.
    self->signal_group(SIGKILL);
    // And whatever escaped the group (setsid, a daemon) and was re-parented to us.
    if (self->seq) sweep_orphans();
    if (!self->out_eof || !self->err_eof) {
      uv_timer_stop(&self->grace);
      uv_timer_start(
          &self->grace, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->drain_deadline(); },
          static_cast<uint64_t>(self->spec.drain_ms > 0 ? self->spec.drain_ms : 1), 0);
    }
    self->maybe_finish();
  }
};

std::unique_ptr<Process> Process::start(uv_loop_t* loop, SpawnSpec spec, std::function<void(SpawnResult)> done) {
  auto* impl = new Impl;
  impl->loop = loop;
  impl->spec = std::move(spec);
  impl->done = std::move(done);
  impl->start_ns = uv_hrtime();
  std::unique_ptr<Process> handle(new Process(impl));

  auto fail = [&](const std::string& why) {
    impl->result.outcome = SpawnResult::Outcome::SpawnFailed;
    impl->result.spawn_error = why;
    impl->finished = true;
    // Report asynchronously, like every other outcome, from an idle-free timer.
    uv_timer_init(loop, &impl->timer);
    impl->timer.data = impl;
    impl->open_handles = 1;
    uv_timer_start(
        &impl->timer,
        [](uv_timer_t* t) {
          auto* self = static_cast<Impl*>(t->data);
          if (!self->detached && self->done) {
            auto cb = std::move(self->done);
            cb(std::move(self->result));
          }
          self->close_handle(reinterpret_cast<uv_handle_t*>(t));
        },
        0, 0);
    return std::move(handle);
  };

  if (impl->spec.argv.empty() || impl->spec.argv[0].empty()) return fail("empty command");

  // Environment: inherited, minus unset_env, then overrides.
  std::map<std::string, std::string> env;
  std::vector<std::string> order;
  const auto& unset = impl->spec.unset_env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (std::find(unset.begin(), unset.end(), k) != unset.end()) continue;
    if (!env.count(k)) order.push_back(k);
    env[k] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : impl->spec.env) {
    if (!env.count(k)) order.push_back(k);
    env[k] = v;
  }
  Supervisor& sv = sup();
  if (sv.enabled) {
    std::lock_guard<std::mutex> lock(sv.mu);
    start_keeper_locked();
    impl->seq = sv.next_seq++;
    if (!env.count(sv.env_name)) order.push_back(sv.env_name);
    env[sv.env_name] = std::to_string(impl->seq);
  }
  std::vector<std::string> env_strings;
  for (const auto& k : order) env_strings.push_back(k + "=" + env[k]);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = impl->spec.argv;
  std::vector<char*> args;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  uv_pipe_init(loop, &impl->out_pipe, 0);
  uv_pipe_init(loop, &impl->err_pipe, 0);
  impl->out_pipe.data = impl->err_pipe.data = impl;
  impl->has_stdin = !impl->spec.stdin_data.empty();
  if (impl->has_stdin) {
    uv_pipe_init(loop, &impl->in_pipe, 0);
    impl->in_pipe.data = impl;
  }
  uv_stdio_container_t stdio[3];
  if (impl->has_stdin) {
    stdio[0].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_READABLE_PIPE);
    stdio[0].data.stream = reinterpret_cast<uv_stream_t*>(&impl->in_pipe);
  } else {
    stdio[0].flags = UV_IGNORE;
  }
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&impl->out_pipe);
  stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&impl->err_pipe);

  std::string cwd = impl->spec.cwd.string();
  uv_process_options_t opts{};
  opts.file = args[0];
  opts.args = args.data();
  opts.env = envp.data();
  opts.cwd = cwd.empty() ? nullptr : cwd.c_str();
  opts.flags = UV_PROCESS_DETACHED;  // setsid(): own session and process group
  opts.stdio_count = 3;
  opts.stdio = stdio;
  opts.exit_cb = Impl::on_exit;
  impl->proc.data = impl;

  std::unique_lock<std::mutex> spawn_lock(sv.mu, std::defer_lock);
  if (impl->seq) spawn_lock.lock();  // a sweep never sees our new child unregistered
  int rc = uv_spawn(loop, &impl->proc, &opts);
  if (rc == 0 && impl->seq) {
    sv.live_pids.insert(impl->proc.pid);
    sv.live_seqs.insert(impl->seq);
  }
  if (spawn_lock.owns_lock()) spawn_lock.unlock();
  if (rc != 0) {
    // uv_spawn leaves the process handle initialised even on failure: close it with the pipes.
    impl->open_handles = impl->has_stdin ? 4 : 3;
    impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->proc));
    impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->out_pipe));
    impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->err_pipe));
    if (impl->has_stdin) impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->in_pipe));
    // A fresh holder reports the failure; the old impl, now owned by no Process,
    // frees itself when its handles have closed.
    impl->detached = true;
    auto* report = new Impl;
    report->loop = loop;
    report->done = std::move(impl->done);
    handle->impl_ = report;
    impl = report;
    std::string why = std::string(uv_strerror(rc)) + ": " + argv_copy[0];
    return fail(why);
  }
  impl->result.pid = impl->proc.pid;
  impl->open_handles = impl->has_stdin ? 6 : 5;  // proc, out, err, timer, grace (+ in)
  uv_timer_init(loop, &impl->timer);
  uv_timer_init(loop, &impl->grace);
  impl->timer.data = impl->grace.data = impl;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&impl->out_pipe), Impl::on_alloc, Impl::on_read);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&impl->err_pipe), Impl::on_alloc, Impl::on_read);
  if (impl->has_stdin) {
    uv_buf_t buf = uv_buf_init(impl->spec.stdin_data.data(), static_cast<unsigned>(impl->spec.stdin_data.size()));
    impl->write_req.data = impl;
    uv_write(&impl->write_req, reinterpret_cast<uv_stream_t*>(&impl->in_pipe), &buf, 1, [](uv_write_t* req, int) {
      auto* self = static_cast<Impl*>(req->data);
      self->close_handle(reinterpret_cast<uv_handle_t*>(&self->in_pipe));
    });
  }
  if (impl->spec.timeout_ms > 0)
    uv_timer_start(
        &impl->timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->stop(SpawnResult::Outcome::TimedOut); },
        static_cast<uint64_t>(impl->spec.timeout_ms), 0);
  return handle;
}

Process::~Process() {
  if (!impl_) return;
  impl_->detached = true;
  if (!impl_->finished && impl_->result.pid > 0 && !impl_->exited) impl_->signal_group(SIGKILL);
  if (impl_->open_handles == 0) delete impl_;  // all closed already: nobody else will free it
  impl_ = nullptr;
}

void Process::cancel() {
  if (impl_ && !impl_->finished) impl_->stop(SpawnResult::Outcome::Cancelled);
}

bool Process::running() const { return impl_ && !impl_->finished; }
int Process::pid() const { return impl_ ? impl_->result.pid : 0; }

SpawnResult run_process(const SpawnSpec& spec) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  SpawnResult out;
  {
    auto p = Process::start(&loop, spec, [&](SpawnResult r) { out = std::move(r); });
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // let closing handles finish
  uv_loop_close(&loop);
  return out;
}

}  // namespace yolo::runner
