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
#pragma once
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
  explicit RefusalLog(std::shared_ptr<const sandbox::WriteView> writes) : writes_(std::move(writes)) {}
  const sandbox::WriteView* writes() const { return writes_.get(); }
  void add(std::string what);
  // "unshare(CLONE_NEWUSER) by sh (pid 12)", in order, at most kKept (then "... and N more").
  std::vector<std::string> list() const;
  bool empty() const;
  static constexpr size_t kKept = 8;

 private:
  std::shared_ptr<const sandbox::WriteView> writes_;
  mutable std::mutex mu_;
  std::vector<std::string> seen_;
  size_t more_ = 0;
};

// Whether this kernel hands refused calls to a supervisor (SECCOMP_RET_USER_NOTIF).
bool refusal_notes_available();
// Whether it also lets a handed-over call go on to the kernel (Linux 5.5 and later): writes
// are watched only then (a call the supervisor could not let go on would hang).
bool write_notes_available();

// Takes one end of a socket pair whose other end a child sends its filter's descriptor on
// (SCM_RIGHTS), then answers and writes down what the filter hands over, into `log`, until
// the child and its descendants are gone. Owns `sock` from here on.
void watch_refusals(int sock, std::shared_ptr<RefusalLog> log);

// "the sandbox refused unshare(CLONE_NEWUSER) by sh (pid 12); setns by sh (pid 12)"; "" when none.
std::string describe_refusals(const RefusalLog* log);

}  // namespace yolo::runner
