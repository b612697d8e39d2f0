// Child processes, the careful way (ninja's subprocess, on libuv): argv only (never a
// shell), each child in its own process group (its own session), a timeout that sends
// SIGTERM to the whole group and SIGKILL after a grace period, stdout/stderr captured
// with a size cap that keeps the tail.
//
// Started by a Launch (runner/launch.h: a clone sharing our memory, so nothing of yolo's is
// copied, where libuv's uv_spawn forks, which costs a big watcher milliseconds per child; and
// not waited for until its exec, as glibc's posix_spawn is), with every signal at its default
// and none blocked, stdin /dev/null unless stdin_data is given, and no fd of ours but the pipes
// on 0-2. A chdir or exec that fails in the child is reported as SpawnFailed when it is
// reaped. Its exit is a pidfd polled on the caller's loop (a waitpid timer where the kernel
// has none), reaped under the supervisor's lock (child_keeper).
//
// Escaped descendants (setsid, double forks) and a kill -9 of yolo itself: runner/child_keeper.h.
// After the child has exited, the pipes are drained for at most drain_ms more, whatever
// still holds them.
//
// One runner: Process on a caller's loop (the watcher, execute's waves), and run_process, the
// same on a private loop, with what a caller may watch while it runs: each output line as it
// arrives (SpawnSpec::on_line), a periodic tick (live progress), and SIGINT/SIGTERM/SIGHUP
// stopping the child's group (an interactive command that must not leave its agent behind).
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "runner/child_keeper.h"

namespace yolo::runner {
struct Confinement;
}

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
  // Each line of the child's output as it arrives (without its '\n'; a last line without
  // one at the end; a line longer than 64 KiB in pieces), on the loop thread. The captured
  // out/err are the same either way.
  enum class Stream { Out, Err };
  std::function<void(Stream, std::string_view line)> on_line;
  // The sandbox the child runs in (runner/sandbox.h); null: none (yolo's own git, for one).
  // TMPDIR is pointed at its private temp folder.
  std::shared_ptr<Confinement> confinement;
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
  int interrupt_signal = 0;  // run_process with stop_on_signals: the signal that stopped it (outcome Cancelled)

  bool ran() const { return outcome == Outcome::Exited || outcome == Outcome::Signaled; }
  bool ok() const { return outcome == Outcome::Exited && exit_code == 0; }
  // "exited with status 3", "timed out after 30000 ms (process group killed)", "could not start: ..."
  std::string describe() const;
};

// What run_process's caller watches while the child runs.
struct RunOptions {
  // SIGINT/SIGTERM/SIGHUP while the child runs: its group is stopped (SIGTERM, then SIGKILL
  // after the grace), the outcome is Cancelled and interrupt_signal says which signal it was.
  bool stop_on_signals = false;
  // Called every tick_ms while the child runs, with the time since it started.
  long long tick_ms = 0;
  std::function<void(double elapsed_ms)> on_tick;
};

// Runs one child to completion on a private loop. Thread-compatible (one loop per call).
SpawnResult run_process(const SpawnSpec& spec, const RunOptions& opts = {});

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
  // The child's start time in clock ticks since boot (/proc/PID/stat field 22; with the pid it
  // names the process for good), 0 when unknown.
  unsigned long long start_ticks() const;

  struct Impl;

 private:
  explicit Process(Impl* impl) : impl_(impl) {}
  Impl* impl_;  // owned by the loop until its handles close
};

}  // namespace yolo::runner
