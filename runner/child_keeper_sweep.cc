// The subreaper's sweep: finding, among our children, the orphans re-parented to us whose spawn
// has ended (their environment carries its number), killing each with its whole tree, and
// reaping stray zombies. Apart from the keeper process because it runs in yolo itself, under
// the supervisor's lock, reading /proc with ordinary (allocating) code.
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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

unsigned long long mount_ns_of(int pid) {
  struct stat st {};
  const std::string link = "/proc/" + std::to_string(pid) + "/ns/mnt";
  return ::stat(link.c_str(), &st) == 0 ? static_cast<unsigned long long>(st.st_ino) : 0;
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
    // but from which its number cannot tell (an engine-less dispatch job is one, on purpose).
    // In the mount namespace of a confined spawn that ended, it is that spawn's and goes now;
    // else it stays while we run, and goes at our exit (sweep_at_exit).
    if (seq == 0 ? !s.final_sweep && !(!s.ended_ns.empty() && s.ended_ns.count(mount_ns_of(c)))
                 : s.live_seqs.count(seq) != 0)
      continue;
    kill_tree(c);
    ++killed;
  }
  return killed;
}

}  // namespace yolo::runner::keeper_detail
