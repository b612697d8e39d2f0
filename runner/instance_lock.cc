#include "runner/instance_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace yolo::runner {

namespace {

// "\0yolo-<role>-<dev>-<ino>": abstract namespace, no file, gone with the process.
socklen_t abstract_name(sockaddr_un& a, const struct stat& st, const std::string& role) {
  std::memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  std::string name = "yolo-" + role + "-" + std::to_string(static_cast<unsigned long long>(st.st_dev)) + "-" +
                     std::to_string(static_cast<unsigned long long>(st.st_ino));
  size_t n = std::min(name.size(), sizeof a.sun_path - 2);
  std::memcpy(a.sun_path + 1, name.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// The pid of the process listening on the abstract name, 0 when unknown.
int listener_pid(const sockaddr_un& a, socklen_t len) {
  int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c < 0) return 0;
  int pid = 0;
  if (::connect(c, reinterpret_cast<const sockaddr*>(&a), len) == 0) {
    ucred cred{};
    socklen_t cl = sizeof cred;
    if (::getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) pid = cred.pid;
  }
  ::close(c);
  return pid;
}

// Is pid a live process (not a zombie, which holds no descriptor)? Unknown (0) counts as live.
bool holder_alive(int pid) {
  if (pid <= 0) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string st;
  std::getline(f, st);
  size_t paren = st.rfind(')');
  if (paren == std::string::npos || paren + 2 >= st.size()) return !st.empty() || ::kill(pid, 0) == 0;
  char state = st[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string who(const std::string& role, int pid, const std::filesystem::path& root) {
  return "another yolo " + role + " (pid " + (pid > 0 ? std::to_string(pid) : std::string("unknown")) +
         ") is already " + (role == "watch" ? "watching " : "running in ") + root.string();
}

}  // namespace

InstanceLock::~InstanceLock() { release(); }

void InstanceLock::release() {
  if (sock_ >= 0) ::close(sock_);
  if (file_fd_ >= 0) ::close(file_fd_);
  sock_ = file_fd_ = -1;
}

bool InstanceLock::acquire(const std::filesystem::path& root, const std::string& role, std::string& error) {
  // The process that took the lock is the one named; when it has exited and the lock still
  // holds, a copy of its descriptors outlives it (a process forked from it that has not yet
  // closed them, or its descendants): that copy goes soon, so this waits a while for it
  // instead of refusing in the name of a process that no longer exists.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kInheritedWaitMs);
  for (;;) {
    if (try_acquire(root, role, error)) return true;
    if (holder_pid_ <= 0 || holder_alive(holder_pid_)) return false;
    if (std::chrono::steady_clock::now() >= until) {
      error = "the " + role + " lock of " + root.string() + " is still held, by a process that inherited it from pid " +
              std::to_string(holder_pid_) + ", which has exited (`fuser -v " +
              (root / ".yolo-planning" / ("." + role + ".lock")).string() + "` names it)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool InstanceLock::try_acquire(const std::filesystem::path& root, const std::string& role, std::string& error) {
  release();
  holder_pid_ = 0;
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    error = root.string() + ": " + std::strerror(errno);
    return false;
  }
  sockaddr_un a{};
  socklen_t len = abstract_name(a, st, role);
  sock_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock_ >= 0) {
    if (::bind(sock_, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
      int e = errno;
      ::close(sock_);
      sock_ = -1;
      if (e == EADDRINUSE) {
        holder_pid_ = listener_pid(a, len);
        error = who(role, holder_pid_, root);
        return false;
      }
      // Other errors (no AF_UNIX in a sandbox): the file lock below still holds.
    } else {
      ::listen(sock_, 8);  // never accepted: connecting only tells who holds the name
    }
  }
  auto p = root / ".yolo-planning" / ("." + role + ".lock");
  file_fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (file_fd_ < 0) {
    error = p.string() + ": " + std::strerror(errno);
    release();
    return false;
  }
  if (::flock(file_fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    ssize_t n = ::pread(file_fd_, buf, sizeof buf - 1, 0);
    holder_pid_ = n > 0 ? std::atoi(buf) : 0;
    error = who(role, holder_pid_, root);
    release();
    return false;
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(file_fd_, 0) != 0 || ::pwrite(file_fd_, pid.data(), pid.size(), 0) < 0) {
    // not fatal: the lock is what matters
  }
  return true;
}

}  // namespace yolo::runner
