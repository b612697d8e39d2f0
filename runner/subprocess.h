// Child processes, the careful way (ninja's subprocess, on libuv): argv only (never a
// shell), each child in its own process group (its own session), a timeout that sends
// SIGTERM to the whole group and SIGKILL after a grace period, stdout/stderr captured
// with a size cap that keeps the tail.
//
// Escaped descendants. A child can leave processes outside its group (setsid, a daemon that
// double-forks) that hold our pipes open and outlive every timeout. With supervise_children()
// on (yolo's main does it), this process is a child subreaper (PR_SET_CHILD_SUBREAPER): such
// orphans are re-parented to us instead of init, so we can find them, as our own children,
// without scanning the whole system. Each child gets YOLO_PROC_<token>=<n> in its environment
// (inherited by its descendants), which says which spawn an orphan came from; when a spawn
// ends, the orphans carrying its number (or the number of any spawn that has ended) are killed
// with their descendants and reaped. A cgroup would catch even a descendant that clears its
// environment, but needs a writable, delegated cgroup v2 tree, which CI containers and many
// hosts do not give an unprivileged user; the subreaper needs nothing (Linux >= 3.4).
// After the child has exited, the pipes are drained for at most drain_ms more, whatever
// still holds them.
// If this process is killed (kill -9), a keeper process forked at the first spawn (it holds
// the read end of a pipe only we write) wakes on end-of-file, kills every process carrying
// this process's token and removes the private temp folder (prompt files): no agent runs on
// unbounded, no prompt is left in /tmp.
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace yolo::runner {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;      // empty: inherit
  // Names removed from the inherited environment (before `env` is applied), e.g. the
  // GIT_DIR / GIT_INDEX_FILE a git hook exports, which would point a `git -C OTHER` child
  // at the hook's repository.
  std::vector<std::string> unset_env;
  std::vector<std::pair<std::string, std::string>> env;  // added to / overriding the inherited environment
  std::string stdin_data;                                // written to the child's stdin, which is then closed
  long long timeout_ms = 30000;                          // <= 0: no timeout
  long long kill_grace_ms = 500;                         // SIGTERM -> SIGKILL
  size_t output_cap = 1 << 20;                           // bytes kept per stream (the tail)
  long long drain_ms = 2000;                             // after the child exited: how long its output may still arrive
};

struct SpawnResult {
  enum class Outcome { Exited, Signaled, TimedOut, Cancelled, SpawnFailed };
  Outcome outcome = Outcome::SpawnFailed;
  int exit_code = -1;                   // when Exited
  int term_signal = 0;                  // when Signaled / TimedOut / Cancelled
  std::string out, err;                 // the last output_cap bytes of each stream
  size_t out_total = 0, err_total = 0;  // bytes the child wrote
  bool out_truncated() const { return out_total > out.size(); }
  bool err_truncated() const { return err_total > err.size(); }
  bool drain_cut = false;   // a descendant still held the pipes drain_ms after the child exited
  std::string spawn_error;  // why it could not start
  double elapsed_ms = 0;
  int pid = 0;

  bool ran() const { return outcome == Outcome::Exited || outcome == Outcome::Signaled; }
  bool ok() const { return outcome == Outcome::Exited && exit_code == 0; }
  // "exited with status 3", "timed out after 30000 ms (process group killed)", "could not start: ..."
  std::string describe() const;
};

// Turns on the supervision of escaped descendants described at the top (subreaper, spawn
// tokens, keeper). Call once, early in main(), in a process that starts all of its children
// through this layer (it reaps zombie children it did not start).
void supervise_children();
bool supervising_children();

// A private folder (0700) for files handed to children, e.g. prompt files; when supervising,
// the keeper removes it even if this process is killed. Empty on failure.
std::filesystem::path private_temp_dir();

// The start time of a process in clock ticks since boot (/proc/PID/stat field 22), 0 when
// it does not exist: with the pid it names a process for good (pids are reused).
unsigned long long process_start_ticks(int pid);
// The process group of a live process, 0 when it does not exist.
int process_group_of(int pid);

// Runs one child to completion on a private loop. Thread-compatible (one loop per call).
SpawnResult run_process(const SpawnSpec& spec);

// A child running on a caller's loop; `done` is called exactly once, on the loop thread.
// Destroying a Process that is still running kills its group (SIGKILL) first.
class Process {
 public:
  static std::unique_ptr<Process> start(uv_loop_t* loop, SpawnSpec spec, std::function<void(SpawnResult)> done);
  ~Process();
  // SIGTERM to the group now, SIGKILL after the grace period; outcome Cancelled.
  void cancel();
  bool running() const;
  int pid() const;

  struct Impl;

 private:
  explicit Process(Impl* impl) : impl_(impl) {}
  Impl* impl_;  // owned by the loop until its handles close
};

}  // namespace yolo::runner
