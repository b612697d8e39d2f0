// Starting one child program without waiting for its exec (runner/subprocess.cc's spawner).
//
// glibc's posix_spawn is clone(CLONE_VM | CLONE_VFORK): the caller is suspended until the
// child has exec'd. On a machine whose cores are busy (executors running), the new child waits
// for a core, and the loop that started it waits with it: in a run of 800 plans on two cores,
// yolo's loop was suspended for a noticeable share of the run between starting a child and
// running again, time in which it could not react to the other executor's exit.
//
// A Launch clones with CLONE_VM and without CLONE_VFORK: nothing of yolo's memory is copied
// (as with posix_spawn) and the caller goes on at once. Until its exec, the child runs on a
// stack of its own in our address space and reads only what the Launch holds (program, argv,
// environment, cwd), which therefore stays unchanged until the child is reaped; it makes raw
// system calls only (no errno, no allocation, no lock). In the child: every signal back to
// its default disposition, a new session (its own process group, no controlling terminal),
// stdin (a pipe or /dev/null) and the given stdout/stderr on 0-2, the cwd, no other fd of
// ours, no signal blocked, then execve (a file without "#!" runs under /bin/sh, as execvp
// runs it). A failed chdir or exec ends the child with status 127 and leaves its errno in the
// Launch (exec_error), read once the child is reaped.
//
// Where the clone cannot be made this way (another architecture than x86-64 or arm64), the
// Launch uses posix_spawn, with the same child, and reports an exec failure at once.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

namespace yolo::runner {

struct Confinement;

class Launch {
 public:
  // argv[0] is the program as the caller names it; `program` the file to execute (resolved
  // in PATH by the caller). envp: the environment, "NAME=value" pointers, each into `owned`
  // (moved in: its strings keep their addresses) or into our own environment (whose strings
  // glibc never frees). cwd: empty to inherit. in_fd < 0: stdin is /dev/null. The fds must
  // stay open until start() returns.
  Launch(std::string program, std::vector<std::string> argv, std::vector<std::string> owned, std::vector<char*> envp,
         std::string cwd, int in_fd, int out_fd, int err_fd);
  // The sandbox the child enters just before its exec (runner/sandbox.h): its own mount
  // namespace with the read-only binds (cloned into it, with a user namespace unless root),
  // no_new_privs, the Landlock ruleset, then the seccomp program. `c` must live until the
  // child is reaped. Without it the child runs as yolo.
  void confine(const Confinement* c) { confinement_ = c; }
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // Starts the child: 0 with pid (and a pidfd when the kernel gives one with the clone, else
  // -1), or the errno of the failure (nothing was started).
  int start(pid_t& pid, int& pidfd);
  // The child's start time as /proc/PID/stat gives it (field 22: clock ticks since boot), from
  // CLOCK_BOOTTIME read just before and just after the clone (the kernel takes it in between):
  // when both fall in the same tick, that tick, with no read of /proc (whose stat file cost
  // execute's loop a visible share of its time); 0 when they straddle a tick (rarely: the caller
  // reads /proc then).
  unsigned long long start_ticks() const { return start_ticks_; }
  // Once the child is reaped: the errno of its failed chdir or exec, 0 when it exec'd.
  int exec_error() const { return exec_errno_.load(std::memory_order_acquire); }

  // What the child reads until its exec (pointers into this Launch); public for the clone's
  // entry function only.
  struct Plan {
    const char* program;
    char* const* argv;
    char* const* envp;
    char* const* sh_argv;  // /bin/sh PROGRAM ARGS..., for a file without "#!"
    const char* cwd;       // nullptr: inherit
    int in_fd, out_fd, err_fd;
    // The sandbox, as plain fields (the child calls no function of ours): ruleset_fd < 0 is none.
    int ruleset_fd;
    const void* seccomp;  // struct sock_fprog*
    bool user_ns;
    const char *uid_map, *gid_map;
    size_t uid_map_len, gid_map_len;
    const void* mounts;  // Confinement::Mount[n_mounts]
    size_t n_mounts;
    bool drop_caps;  // root: no capability survives the exec
    std::atomic<int>* exec_errno;
    // The filter that hands escape attempts to yolo's supervisor (runner/refusals.h): entered
    // instead of `seccomp` when notify_sock >= 0; its descriptor goes to yolo in notify_msg
    // (the child writes it at notify_fd). A process already under such a filter gets `seccomp`.
    int notify_sock;
    const void* notify_prog;  // struct sock_fprog*
    void* notify_msg;         // struct msghdr*
    int* notify_fd;
  };

 private:
  int start_child(pid_t& pid, int& pidfd);

  std::string program_, cwd_;
  std::vector<std::string> argv_, owned_;
  std::vector<char*> argv_p_, env_p_, sh_argv_p_;
  int in_fd_, out_fd_, err_fd_;
  const Confinement* confinement_ = nullptr;
  void* stack_ = nullptr;
  unsigned long long start_ticks_ = 0;
  Plan plan_{};
  std::atomic<int> exec_errno_{0};
  // The message the child sends its filter's descriptor in (SCM_RIGHTS, one byte of data).
  struct NotifyMsg;
  NotifyMsg* notify_ = nullptr;
};

}  // namespace yolo::runner
