// One process per project for a role ("watch", "execute"). Two locks, both released by the
// kernel when the holder dies (no stale lock file to clean up after a kill -9):
//  - an abstract Unix socket named after the project root's device and inode: it survives
//    `rm -rf .yolo-planning && git checkout .yolo-planning` (the root folder stays the
//    same), and a second process learns the holder's pid from it (SO_PEERCRED);
//  - flock on .yolo-planning/.<role>.lock, which also holds for a process in another
//    network namespace (abstract sockets are per namespace); it holds the pid as text.
// Neither is ever held by a child: both descriptors are close-on-exec, and processes forked
// without an exec (the keeper) are forked before the lock is taken.
#pragma once
#include <filesystem>
#include <string>

namespace yolo::runner {

class InstanceLock {
 public:
  InstanceLock() = default;
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  // True when this process holds the lock now. Otherwise `error` says who holds it
  // ("another yolo execute (pid 123) is already running in /repo") or why it failed,
  // and `holder_pid` is the holder's pid when known.
  bool acquire(const std::filesystem::path& root, const std::string& role, std::string& error);
  int holder_pid() const { return holder_pid_; }
  void release();

 private:
  // How long acquire() waits for a lock whose holder has exited to be let go by the copies
  // of its descriptors that outlive it.
  static constexpr int kInheritedWaitMs = 3000;
  bool try_acquire(const std::filesystem::path& root, const std::string& role, std::string& error);
  int sock_ = -1;
  int file_fd_ = -1;
  int holder_pid_ = 0;
};

}  // namespace yolo::runner
