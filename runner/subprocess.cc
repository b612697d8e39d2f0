#include "runner/subprocess.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

extern char** environ;

namespace yolo::runner {

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
  std::string partial[2];      // on_line: the unterminated end of each stream

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

  // Hands complete lines of stream `which` to spec.on_line; at_end: the rest too.
  void emit_lines(int which, const char* data, size_t n, bool at_end) {
    if (!spec.on_line) return;
    constexpr size_t kMaxLine = 64 * 1024;
    auto stream = which == 0 ? SpawnSpec::Stream::Out : SpawnSpec::Stream::Err;
    std::string& buf = partial[which];
    if (n > 0) buf.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line = std::string_view(buf).substr(start, nl - start);
      for (; line.size() > kMaxLine; line.remove_prefix(kMaxLine)) spec.on_line(stream, line.substr(0, kMaxLine));
      spec.on_line(stream, line);
    }
    buf.erase(0, start);
    while (buf.size() > kMaxLine) {
      spec.on_line(stream, std::string_view(buf).substr(0, kMaxLine));
      buf.erase(0, kMaxLine);
    }
    if (at_end && !buf.empty()) {
      spec.on_line(stream, buf);
      buf.clear();
    }
  }

  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
    auto* self = static_cast<Impl*>(s->data);
    bool is_out = s == reinterpret_cast<uv_stream_t*>(&self->out_pipe);
    if (n > 0) self->emit_lines(is_out ? 0 : 1, buf->base, static_cast<size_t>(n), false);
    if (n < 0) self->emit_lines(is_out ? 0 : 1, nullptr, 0, true);
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
    keeper::sweep();
    result.drain_cut = true;
    for (uv_pipe_t* pp : {&out_pipe, &err_pipe}) {
      bool& eof = pp == &out_pipe ? out_eof : err_eof;
      if (eof) continue;
      eof = true;
      emit_lines(pp == &out_pipe ? 0 : 1, nullptr, 0, true);
      uv_read_stop(reinterpret_cast<uv_stream_t*>(pp));
      close_handle(reinterpret_cast<uv_handle_t*>(pp));
    }
    maybe_finish();
  }

  static void on_exit(uv_process_t* p, int64_t status, int term_signal) {
    auto* self = static_cast<Impl*>(p->data);
    self->exited = true;
    keeper::exited(self->seq, self->result.pid);
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
    if (self->seq) keeper::sweep();
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
  std::string seq_name;
  impl->seq = keeper::next_spawn(seq_name);
  if (impl->seq) {
    if (!env.count(seq_name)) order.push_back(seq_name);
    env[seq_name] = std::to_string(impl->seq);
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

  std::unique_lock<std::mutex> spawn_lock =
      keeper::spawn_lock(impl->seq);  // a sweep never sees our new child unregistered
  int rc = uv_spawn(loop, &impl->proc, &opts);
  if (rc == 0) keeper::spawned(impl->seq, impl->proc.pid);
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

SpawnResult run_process(const SpawnSpec& spec, const RunOptions& opts) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  SpawnResult out;
  struct Watch {
    Process* proc = nullptr;
    int signal = 0;
    uint64_t t0 = 0;
    const RunOptions* opts = nullptr;
  } w;
  w.t0 = uv_hrtime();
  w.opts = &opts;
  const int signums[3] = {SIGINT, SIGTERM, SIGHUP};
  uv_signal_t sigs[3];
  uv_timer_t tick;
  const bool ticking = opts.on_tick && opts.tick_ms > 0;
  {
    std::unique_ptr<Process> p;
    if (opts.stop_on_signals)
      for (int i = 0; i < 3; ++i) {
        uv_signal_init(&loop, &sigs[i]);
        sigs[i].data = &w;
        uv_signal_start(
            &sigs[i],
            [](uv_signal_t* h, int signum) {
              auto* ww = static_cast<Watch*>(h->data);
              if (ww->signal == 0) ww->signal = signum;
              if (ww->proc) ww->proc->cancel();
            },
            signums[i]);
      }
    if (ticking) {
      uv_timer_init(&loop, &tick);
      tick.data = &w;
      uv_timer_start(
          &tick,
          [](uv_timer_t* t) {
            auto* ww = static_cast<Watch*>(t->data);
            ww->opts->on_tick(static_cast<double>(uv_hrtime() - ww->t0) / 1e6);
          },
          static_cast<uint64_t>(opts.tick_ms), static_cast<uint64_t>(opts.tick_ms));
    }
    p = Process::start(&loop, spec, [&](SpawnResult r) {
      out = std::move(r);
      w.proc = nullptr;
      if (opts.stop_on_signals)
        for (auto& s : sigs) uv_close(reinterpret_cast<uv_handle_t*>(&s), nullptr);
      if (ticking) uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
      // Drop the Process while its state is still alive: once the loop has closed every
      // handle that state is freed, and ~Process must not touch it afterwards.
      p.reset();
    });
    w.proc = p.get();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // let closing handles finish
  uv_loop_close(&loop);
  out.interrupt_signal = w.signal;
  return out;
}

}  // namespace yolo::runner