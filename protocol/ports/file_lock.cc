#include "protocol/ports/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace yolo::fs {

FileLock::FileLock(const std::filesystem::path& p, Wait wait) {
  fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = p.string() + ": cannot open lock file: " + std::strerror(errno);
    return;
  }
  int op = LOCK_EX | (wait == Wait::DontWait ? LOCK_NB : 0);
  while (::flock(fd_, op) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && wait == Wait::DontWait) {
      busy_ = true;
      return;
    }
    error_ = p.string() + ": cannot lock: " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return;
  }
  held_ = true;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace yolo::fs
