#include "runner/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

#include "runner/launch.h"
#include "runner/sandbox.h"

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

namespace {

int errno_or(int fallback) { return errno != 0 ? errno : fallback; }

// The pipes of one child. Every fd is close-on-exec and above 0-2 (a caller whose stdio is
// closed gets low fds from pipe2, the child's dup2 onto 0-2 must not overwrite another end,
// and libuv refuses to own fds 0-2): in the child only the dup2'ed copies survive exec.
struct ChildPipes {
  int in_r = -1, in_w = -1, out_r = -1, out_w = -1, err_r = -1, err_w = -1;
  pid_t pid = 0;

  // fd itself, or a close-on-exec copy of it at 3 or above (-1 with errno if that fails).
  static int above_stdio(int fd) {
    if (fd < 0 || fd > 2) return fd;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int saved = errno;
    ::close(fd);
    errno = saved;
    return moved;
  }
  static bool make(int& r, int& w) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    for (int& fd : fds) fd = above_stdio(fd);
    r = fds[0];
    w = fds[1];
    if (r >= 0 && w >= 0) return true;
    int saved = errno;
    close_fd(r);
    close_fd(w);
    errno = saved;
    return false;
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  // False with errno set, nothing left open.
  bool open(bool with_stdin) {
    errno = 0;
    if (make(out_r, out_w) && make(err_r, err_w) && (!with_stdin || make(in_r, in_w))) return true;
    int saved = errno_or(EMFILE);
    close_child_ends();
    close_our_ends();
    errno = saved;
    return false;
  }
  void close_child_ends() {
    close_fd(in_r);
    close_fd(out_w);
    close_fd(err_w);
  }
  void close_our_ends() {
    close_fd(in_w);
    close_fd(out_r);
    close_fd(err_r);
  }
};

// What execvp would run: `name` itself when it holds a '/', else the first executable file
// of that name in the PATH of the child's environment (where execvp, and uv_spawn before us,
// looked; glibc's default when it has none). Relative entries are relative to the child's
// cwd. 0, or ENOENT, or EACCES when only something not executable was found.
int resolve_program(const std::string& name, const std::string* path_env, const std::filesystem::path& cwd,
                    std::string& out) {
  if (name.find('/') != std::string::npos) {
    out = name;
    return 0;
  }
  std::string path = path_env ? *path_env : "/bin:/usr/bin";
  bool denied = false;
  size_t at = 0;
  for (;;) {
    size_t colon = path.find(':', at);
    std::string dir = path.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    std::string candidate = dir.empty() ? name : dir + "/" + name;
    std::string here = candidate[0] == '/' || cwd.empty() ? candidate : (cwd / candidate).string();
    struct stat st {};
    if (::stat(here.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode) && ::access(here.c_str(), X_OK) == 0) {
        out = candidate;
        return 0;
      }
      denied = true;
    } else if (errno == EACCES) {
      denied = true;
    }
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  return denied ? EACCES : ENOENT;
}

}  // namespace

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

  void close_handle(uv_handle_t* h) {
    if (uv_is_closing(h)) return;
    uv_close(h, [](uv_handle_t* hh) {
      auto* self = static_cast<Impl*>(hh->data);
      // Freed here only when its Process is gone; otherwise ~Process frees it.
      if (--self->open_handles == 0 && self->detached) delete self;
    });
  }

  void signal_group(int sig) {
    if (result.pid <= 0) return;
    // A child that has not made its session yet (the Launch does not wait for it) has no
    // group of that id: the signal goes to it alone, which holds it (blocked) until it has
    // put every disposition back to the default, and then ends it before its exec.
    if (::kill(-result.pid, sig) != 0 && errno == ESRCH) ::kill(result.pid, sig);
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
    close_exit_watch();
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

  // One buffer per thread for every read: libuv calls alloc, read(2) and on_read in one go,
  // and on_read copies what it got before any callback runs (a fresh 64 KiB per read was an
  // allocation and page faults per executor output event).
  static void on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
    static thread_local char space[64 * 1024];
    buf->base = space;
    buf->len = sizeof space;
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
    if (n > 0) {  // copied first: on_line's callbacks may run a loop of their own on this thread
      if (is_out)
        append_capped(self->result.out, self->result.out_total, buf->base, static_cast<size_t>(n),
                      self->spec.output_cap);
      else
        append_capped(self->result.err, self->result.err_total, buf->base, static_cast<size_t>(n),
                      self->spec.output_cap);
    }
    if (n > 0) self->emit_lines(is_out ? 0 : 1, buf->base, static_cast<size_t>(n), false);
    if (n < 0) self->emit_lines(is_out ? 0 : 1, nullptr, 0, true);
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

  uv_handle_t* exit_watch() {
    return pidfd >= 0 ? reinterpret_cast<uv_handle_t*>(&exit_poll) : reinterpret_cast<uv_handle_t*>(&exit_timer);
  }

  void close_exit_watch() {
    if (uv_is_closing(exit_watch())) return;
    close_handle(exit_watch());
    // uv_close has taken the fd out of the loop's epoll set; the fd itself is ours to close.
    if (pidfd >= 0) ::close(pidfd);
  }

  // The pidfd is readable, or the fallback timer fired: collect the exit, if there is one.
  void check_exit() {
    if (exited) return;
    // Has it exited? Asked without reaping (WNOWAIT): while the child is an unreaped zombie
    // its pid, and so its group's id, cannot be given to another process.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(result.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0)
      return;  // still running (a timer tick)
    // Whatever the child left behind in its group (grandchildren holding our pipes) does
    // not outlive it.
    signal_group(SIGKILL);
    int status = 0;
    if (!keeper::reap(seq, result.pid, &status)) return;
    on_exit(status);
  }

  void on_exit(int status) {
    exited = true;
    if (pidfd >= 0)
      uv_poll_stop(&exit_poll);
    else
      uv_timer_stop(&exit_timer);
    int term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (result.outcome != SpawnResult::Outcome::TimedOut && result.outcome != SpawnResult::Outcome::Cancelled)
      result.outcome = term_signal ? SpawnResult::Outcome::Signaled : SpawnResult::Outcome::Exited;
    result.exit_code = term_signal ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.term_signal = term_signal;
    // Its chdir or exec failed (the child ended with 127): it never started.
    if (launch && launch->exec_error() != 0 && result.outcome == SpawnResult::Outcome::Exited) {
      result.outcome = SpawnResult::Outcome::SpawnFailed;
      result.exit_code = -1;
      result.spawn_error = std::string(uv_strerror(uv_translate_sys_error(launch->exec_error()))) + ": " + spec.argv[0];
    }
    launch.reset();
    if (!out_eof || !err_eof) {
      uv_timer_stop(&grace);
      uv_timer_start(
          &grace, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->drain_deadline(); },
          static_cast<uint64_t>(spec.drain_ms > 0 ? spec.drain_ms : 1), 0);
    }
    const bool sweep = seq != 0;
    maybe_finish();  // the caller hears of the exit first (execute starts its next plan in it)
    // And whatever escaped the group (setsid, a daemon) and was re-parented to us. (Only a
    // local: the callback may have dropped the Process; this Impl lives until its handles
    // have closed, later in the loop, but nothing of it is needed here.)
    if (sweep) keeper::sweep();
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

  // Environment: inherited, minus unset_env, then overrides. Each name once, where it first
  // appears, with the last value given; the inherited entries are pointed at, not copied (a
  // map of copies of the whole environment was a third of a spawn's own time).
  const auto& unset = impl->spec.unset_env;
  std::vector<char*> envp;
  std::vector<std::string_view> names;  // envp[k]'s name (a few dozen: a scan, no hashing or allocation)
  envp.reserve(64);
  names.reserve(64);
  std::string_view path_value;
  bool has_path = false;
  auto put = [&](std::string_view name, char* entry) {
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == name) {
        envp[k] = entry;
        return;
      }
    names.push_back(name);
    envp.push_back(entry);
  };
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view k = kv.substr(0, eq);
    if (std::find(unset.begin(), unset.end(), k) != unset.end()) continue;
    put(k, *e);
  }
  std::string seq_name;
  impl->seq = keeper::next_spawn(seq_name);
  // The overrides' "NAME=value" strings: reserved up front, so that envp's pointers into
  // them stay valid.
  std::vector<std::string> env_strings;
  env_strings.reserve(impl->spec.env.size() + 2);
  for (const auto& [k, v] : impl->spec.env) {
    env_strings.push_back(k + "=" + v);
    put(std::string_view(env_strings.back()).substr(0, k.size()), env_strings.back().data());
  }
  if (const auto& c = impl->spec.confinement; c && !c->temp_dir.empty()) {
    env_strings.push_back("TMPDIR=" + c->temp_dir.string());
    put(std::string_view(env_strings.back()).substr(0, 6), env_strings.back().data());
  }
  if (impl->seq) {
    env_strings.push_back(seq_name + "=" + std::to_string(impl->seq));
    put(std::string_view(env_strings.back()).substr(0, seq_name.size()), env_strings.back().data());
  }
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == "PATH") {
      has_path = true;
      path_value = std::string_view(envp[k]).substr(5);
    }
  std::vector<std::string> argv_copy = impl->spec.argv;

  impl->has_stdin = !impl->spec.stdin_data.empty();
  // Pipes: the child's ends become its 0-2, ours go to the loop.
  ChildPipes pipes;
  if (!pipes.open(impl->has_stdin))
    return fail(std::string(uv_strerror(uv_translate_sys_error(errno))) + ": " + argv_copy[0]);
  std::string program;
  const std::string path_env(path_value);
  int err = resolve_program(argv_copy[0], has_path ? &path_env : nullptr, impl->spec.cwd, program);
  pid_t pid = 0;
  int pidfd = -1;
  if (err == 0) {
    // What the child reads until its exec is the Launch's, kept until the child is reaped.
    impl->launch =
        std::make_unique<Launch>(std::move(program), std::move(argv_copy), std::move(env_strings), std::move(envp),
                                 impl->spec.cwd.string(), pipes.in_r, pipes.out_w, pipes.err_w);
    if (const auto& c = impl->spec.confinement; c && !c->off()) impl->launch->confine(c.get());
    std::unique_lock<std::mutex> spawn_lock =
        keeper::spawn_lock(impl->seq);  // a sweep never sees our new child unregistered
    err = impl->launch->start(pid, pidfd);
    if (err == 0) keeper::spawned(impl->seq, pid);
    impl->start_ticks = impl->launch->start_ticks();
  }
  pipes.close_child_ends();  // the child has its own copy of our fd table
  if (err != 0) {
    impl->launch.reset();
    pipes.close_our_ends();
    return fail(std::string(uv_strerror(uv_translate_sys_error(err))) + ": " + impl->spec.argv[0]);
  }
  impl->result.pid = pid;
  // The exit, as an event of the loop: pidfd_open (Linux >= 5.3; the pid cannot name another
  // process before we reap it). Without it, a timer asks waitpid.
  impl->pidfd = ChildPipes::above_stdio(pidfd >= 0 ? pidfd : static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (impl->pidfd >= 0 && uv_poll_init(loop, &impl->exit_poll, impl->pidfd) != 0) {
    ::close(impl->pidfd);
    impl->pidfd = -1;
  }
  if (impl->pidfd >= 0) {
    impl->exit_poll.data = impl;
    uv_poll_start(&impl->exit_poll, UV_READABLE,
                  [](uv_poll_t* h, int, int) { static_cast<Impl*>(h->data)->check_exit(); });
  } else {
    uv_timer_init(loop, &impl->exit_timer);
    impl->exit_timer.data = impl;
    uv_timer_start(
        &impl->exit_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->check_exit(); }, 5, 5);
  }
  uv_pipe_init(loop, &impl->out_pipe, 0);
  uv_pipe_init(loop, &impl->err_pipe, 0);
  if (impl->has_stdin) uv_pipe_init(loop, &impl->in_pipe, 0);
  impl->out_pipe.data = impl->err_pipe.data = impl->in_pipe.data = impl;
  impl->open_handles = impl->has_stdin ? 6 : 5;  // exit watch, out, err, timer, grace (+ in)
  // uv_pipe_open makes our ends non-blocking (the child's ends stay blocking). A pipe it
  // refuses reads as closed at once (no output) and is not written.
  if (uv_pipe_open(&impl->out_pipe, pipes.out_r) == 0) pipes.out_r = -1;
  if (uv_pipe_open(&impl->err_pipe, pipes.err_r) == 0) pipes.err_r = -1;
  if (impl->has_stdin && uv_pipe_open(&impl->in_pipe, pipes.in_w) == 0) pipes.in_w = -1;
  if (pipes.out_r >= 0) impl->out_eof = true;
  if (pipes.err_r >= 0) impl->err_eof = true;
  bool stdin_ok = impl->has_stdin && pipes.in_w < 0;
  pipes.close_our_ends();  // only those not handed to the loop
  if (impl->out_eof) impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->out_pipe));
  if (impl->err_eof) impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->err_pipe));
  if (impl->has_stdin && !stdin_ok) impl->close_handle(reinterpret_cast<uv_handle_t*>(&impl->in_pipe));
  uv_timer_init(loop, &impl->timer);
  uv_timer_init(loop, &impl->grace);
  impl->timer.data = impl->grace.data = impl;
  if (!impl->out_eof) uv_read_start(reinterpret_cast<uv_stream_t*>(&impl->out_pipe), Impl::on_alloc, Impl::on_read);
  if (!impl->err_eof) uv_read_start(reinterpret_cast<uv_stream_t*>(&impl->err_pipe), Impl::on_alloc, Impl::on_read);
  if (stdin_ok) {
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
unsigned long long Process::start_ticks() const {
  if (!impl_ || impl_->result.pid <= 0) return 0;
  return impl_->start_ticks != 0 ? impl_->start_ticks : process_start_ticks(impl_->result.pid);
}

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