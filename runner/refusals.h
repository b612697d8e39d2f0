// What the sandbox refused a confined child, by name.
//
// The seccomp filter of a confined child (runner/sandbox.cc) hands the calls that only an
// escape attempt makes (a new user, pid or mount namespace, setns, mount, chroot, TIOCSTI,
// pidfd_getfd, ...) to a supervisor instead of failing them silently: the kernel stops the
// calling thread, yolo's one supervisor thread reads what was asked (the call, its flags,
// the process), writes it down and answers EPERM. The caller of the child then names the
// refusal in the plan's or the review's finding. The calls stay refused if yolo is gone (the
// kernel answers ENOSYS once no supervisor holds the filter's descriptor), and a child that
// already runs under such a filter (yolo started inside yolo's sandbox) gets the silent
// filter instead (the kernel allows one supervisor per process).
//
// Calls a program makes to probe what the kernel offers (io_uring, userfaultfd, perf, the
// key rings) stay silent refusals: they are no attempt and would name innocent programs.
//
// Writes (an open for writing, a create, a remove, a rename, a link) are handed over too when
// the child's policy is known here (`sandbox::WriteView`): the supervisor lets each go on to
// the kernel, where Landlock and the read-only binds decide as before, and names those that
// the same policy refuses and that are attempts on what yolo guards (protocol/run/sandbox_policy.h).
// It decides nothing itself: a write it misjudged still gets what the kernel gives it.
//
// For a role the config allows UNIX sockets, connections (and sends to an address) are handed
// over as well (`sandbox::SocketView`): one to the person's own sockets (ssh-agent, tmux,
// screen, gpg-agent) or into a hidden folder is refused here, since Landlock cannot scope
// sockets by path, and named; every other one goes on to the kernel.
//
// The supervisor's thread answers the escape attempts itself; the writes and connections,
// whose judging walks the file system, go to workers, each answered by its deadline at the
// latest (judge_deadline()), so a path on a hung mount holds no other call.
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/run/sandbox_policy.h"

namespace yolo::runner {

// The refusals of one child and its descendants; written by the supervisor thread.
class RefusalLog {
 public:
  RefusalLog() = default;
  // With the child's policy: its refused writes are named as well.
  explicit RefusalLog(std::shared_ptr<const sandbox::WriteView> writes,
                      std::shared_ptr<const sandbox::SocketView> sockets = nullptr)
      : writes_(std::move(writes)), sockets_(std::move(sockets)) {}
  const sandbox::WriteView* writes() const { return writes_.get(); }
  // With a role allowed UNIX sockets: its connections to what no role may reach are refused
  // by the supervisor itself (Landlock cannot) and named.
  const sandbox::SocketView* sockets() const { return sockets_.get(); }
  void add(std::string what);
  // "unshare(CLONE_NEWUSER) by sh (pid 12)", in order, at most kKept (then "... and N more").
  std::vector<std::string> list() const;
  bool empty() const;
  static constexpr size_t kKept = 8;
  // A write or connection the supervisor let go on without judging it, its path's walk having
  // taken longer than judge_deadline() (a hung mount): "a write by git (pid 12)". Not a
  // refusal (the kernel still decided), but what went unnamed, at most kKept.
  void note_unjudged(std::string what);
  std::vector<std::string> unjudged() const;
  // The secret files the child sees as empty decoys (runner/sandbox.cc): an inotify descriptor
  // watching each decoy for IN_OPEN (the decoy set's, not this log's), and what each watch
  // stands for ("reading ~/.ssh/id_ed25519 by the reviewer"). The kernel queues an open as it
  // happens, at no cost to the child; list() and empty() read the queue first.
  void watch_decoys(int inotify_fd, std::vector<std::pair<int, std::string>> watches);
  // Reads the queue a last time and lets go of the descriptor (the set goes to the next child).
  void release_decoys();
  ~RefusalLog() = default;
  RefusalLog(const RefusalLog&) = delete;
  RefusalLog& operator=(const RefusalLog&) = delete;

 private:
  void drain_decoys() const;  // with mu_ held
  int decoy_fd_ = -1;
  std::vector<std::pair<int, std::string>> decoys_;
  std::shared_ptr<const sandbox::WriteView> writes_;
  std::shared_ptr<const sandbox::SocketView> sockets_;
  mutable std::mutex mu_;
  mutable std::vector<std::string> seen_;
  std::vector<std::string> unjudged_;
  mutable size_t more_ = 0;
};

// Whether this kernel hands refused calls to a supervisor (SECCOMP_RET_USER_NOTIF).
bool refusal_notes_available();
// Whether it also lets a handed-over call go on to the kernel (Linux 5.5 and later): writes
// are watched only then (a call the supervisor could not let go on would hang).
bool write_notes_available();

// How long a handed-over write or connection waits for its judgement before the supervisor
// lets it go on unjudged. Each is judged by a worker of its own (up to a few at once), so a
// path on a hung mount stalls only its own caller, and that caller only this long.
std::chrono::milliseconds judge_deadline();

// Takes one end of a socket pair whose other end a child sends its filter's descriptor on
// (SCM_RIGHTS), then answers and writes down what the filter hands over, into `log`, until
// the child and its descendants are gone. Owns `sock` from here on.
void watch_refusals(int sock, std::shared_ptr<RefusalLog> log);

// "the sandbox refused unshare(CLONE_NEWUSER) by sh (pid 12); setns by sh (pid 12)"; "" when none.
std::string describe_refusals(const RefusalLog* log);

}  // namespace yolo::runner
