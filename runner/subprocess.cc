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
#include "runner/subprocess_impl.h"
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
