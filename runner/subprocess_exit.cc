// The child's end: its exit watched through a pidfd (or a waitpid timer), the timeout and
// cancel (SIGTERM to its group, SIGKILL after the grace), and the result handed to the caller
// once the exit and both pipes' ends are in. Apart from the output side (subprocess_output.cc).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/subprocess_impl.h"

namespace yolo::runner {

void Process::Impl::close_handle(uv_handle_t* h) {
  if (uv_is_closing(h)) return;
  uv_close(h, [](uv_handle_t* hh) {
    auto* self = static_cast<Impl*>(hh->data);
    // Freed here only when its Process is gone; otherwise ~Process frees it.
    if (--self->open_handles == 0 && self->detached) delete self;
  });
}

void Process::Impl::signal_group(int sig) {
  if (result.pid <= 0) return;
  // A child that has not made its session yet (the Launch does not wait for it) has no
  // group of that id: the signal goes to it alone, which holds it (blocked) until it has
  // put every disposition back to the default, and then ends it before its exec.
  if (::kill(-result.pid, sig) != 0 && errno == ESRCH) ::kill(result.pid, sig);
}

void Process::Impl::stop(SpawnResult::Outcome why) {
  if (stopping || exited) return;
  stopping = true;
  result.outcome = why;
  signal_group(SIGTERM);
  uv_timer_start(
      &grace, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->signal_group(SIGKILL); },
      static_cast<uint64_t>(spec.kill_grace_ms > 0 ? spec.kill_grace_ms : 1), 0);
}

void Process::Impl::maybe_finish() {
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

uv_handle_t* Process::Impl::exit_watch() {
  return pidfd >= 0 ? reinterpret_cast<uv_handle_t*>(&exit_poll) : reinterpret_cast<uv_handle_t*>(&exit_timer);
}

void Process::Impl::close_exit_watch() {
  if (uv_is_closing(exit_watch())) return;
  close_handle(exit_watch());
  // uv_close has taken the fd out of the loop's epoll set; the fd itself is ours to close.
  if (pidfd >= 0) ::close(pidfd);
}

// The pidfd is readable, or the fallback timer fired: collect the exit, if there is one.
void Process::Impl::check_exit() {
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

void Process::Impl::on_exit(int status) {
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

}  // namespace yolo::runner
