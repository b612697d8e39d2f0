#include "bg_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

extern char** environ;

namespace yolo::test {

BgProcess::BgProcess(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) || ::pipe2(err_p, O_CLOEXEC)) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_p[1]);
  ::close(err_p[1]);
  if (rc != 0) throw std::runtime_error("spawn failed");
  out_fd_ = out_p[0];
  err_fd_ = err_p[0];
  ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

BgProcess::~BgProcess() {
  if (!exited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

bool BgProcess::read_line(std::string& line, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || out_fd_ < 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return false;
    }
    char tmp[8192];
    ssize_t n = ::read(out_fd_, tmp, sizeof tmp);
    if (n <= 0) {
      ::close(out_fd_);
      out_fd_ = -1;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
  }
}

std::optional<json> BgProcess::next_json(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  while (read_line(line, deadline)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      other_lines.push_back(line);
      continue;
    }
    seen.push_back(j);
    return j;
  }
  return std::nullopt;
}

std::optional<json> BgProcess::wait_for(const std::function<bool(const json&)>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto j = next_json(left);
    if (!j) return std::nullopt;
    if (pred(*j)) return j;
  }
}

std::vector<json> BgProcess::collect(std::chrono::milliseconds window) {
  std::vector<json> out;
  auto deadline = std::chrono::steady_clock::now() + window;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto j = next_json(left);
    if (!j) break;
    out.push_back(*j);
  }
  return out;
}

void BgProcess::signal(int sig) {
  if (!exited_) ::kill(pid_, sig);
}

int BgProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (exited_) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

std::string BgProcess::stderr_text() {
  std::string s;
  char tmp[4096];
  while (err_fd_ >= 0) {
    ssize_t n = ::read(err_fd_, tmp, sizeof tmp);
    if (n <= 0) break;
    s.append(tmp, static_cast<size_t>(n));
  }
  return s;
}

}  // namespace yolo::test
