// The supervisor's public calls (turning supervision on, the private temp folder, the calls
// around each spawn) and its exit: the last sweep and the keeper's release. The keeper process
// is in child_keeper_process.cc, the sweep of orphans in child_keeper_sweep.cc.
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

#include "runner/child_keeper_internal.h"

namespace yolo::runner {

using namespace keeper_detail;

// ---- Supervision of escaped descendants (see subprocess.h) ----
Supervisor& keeper_detail::sup() {
  static Supervisor* s = new Supervisor;  // never destroyed: used until exit
  return *s;
}

namespace {

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
  if (!s.own_ns) s.own_ns = mount_ns_of(static_cast<int>(::getpid()));
  // Cloned into its namespace: it is there now (0 if it has already ended).
  if (unsigned long long ns = mount_ns_of(pid); ns && ns != s.own_ns) s.ns_of_seq[seq] = ns;
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
    Supervisor& s = sup();
    s.live_pids.erase(pid);
    s.live_seqs.erase(seq);
    if (auto it = s.ns_of_seq.find(seq); it != s.ns_of_seq.end()) {
      if (s.ended_ns.size() >= 4096) s.ended_ns.erase(s.ended_ns.begin());  // inodes are not reused soon
      s.ended_ns.insert(it->second);
      s.ns_of_seq.erase(it);
    }
  }
  return true;
}

void sweep() { sweep_orphans(); }

}  // namespace keeper

}  // namespace yolo::runner
