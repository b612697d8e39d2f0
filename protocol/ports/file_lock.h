// The one exclusive lock file helper (the state's .lock, the watcher's .watch.lock).
#pragma once
#include <filesystem>
#include <string>

namespace yolo::fs {

// An exclusive flock(2) on a file (created, mode 0644, when missing), held for the object's
// lifetime (closing the file releases it). Block waits for it; DontWait gives up at once
// when another process holds it (busy()), keeping the file open so the caller can read
// what its holder wrote there.
class FileLock {
 public:
  enum class Wait { Block, DontWait };
  explicit FileLock(const std::filesystem::path& p, Wait wait = Wait::Block);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return held_; }
  bool busy() const { return busy_; }                  // DontWait: another process holds it
  const std::string& error() const { return error_; }  // names the file; empty when held or busy
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool held_ = false, busy_ = false;
  std::string error_;
};

}  // namespace yolo::fs
