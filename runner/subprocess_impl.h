// Process::Impl, the state of one child on the loop, shared by the files that carry it:
// subprocess.cc (spawning it), subprocess_output.cc (its pipes: output capped and split into
// lines) and subprocess_exit.cc (its exit, timeout, cancel and the closing of its handles).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>

#include "runner/launch.h"
#include "runner/subprocess.h"

namespace yolo::runner {

// Lifetime: an Impl lives until all of its libuv handles are closed; the Process
// object only holds a pointer and detaches on destruction.
struct Process::Impl {
  uv_loop_t* loop = nullptr;
  SpawnSpec spec;
  std::function<void(SpawnResult)> done;
  SpawnResult result;
  // The child's exit: a pidfd (readable once it has exited) polled on the loop, or, where the
  // kernel has no pidfd_open, a timer asking waitpid every few milliseconds.
  int pidfd = -1;
  uv_poll_t exit_poll{};
  uv_timer_t exit_timer{};
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
  unsigned long long seq = 0;          // spawn number in the supervisor, 0 when not supervising
  std::unique_ptr<Launch> launch;      // what the child reads until its exec: kept until it is reaped
  unsigned long long start_ticks = 0;  // from the Launch (0: read /proc when asked)
  std::string partial[2];              // on_line: the unterminated end of each stream

  void close_handle(uv_handle_t* h);
  void signal_group(int sig);
  void stop(SpawnResult::Outcome why);
  void maybe_finish();
  static void append_capped(std::string& buf, size_t& total, const char* data, size_t n, size_t cap);
  static void on_alloc(uv_handle_t*, size_t, uv_buf_t* buf);
  void emit_lines(int which, const char* data, size_t n, bool at_end);
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  void drain_deadline();
  uv_handle_t* exit_watch();
  void close_exit_watch();
  void check_exit();
  void on_exit(int status);
};

}  // namespace yolo::runner
