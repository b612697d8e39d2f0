// A real child process running in the background during a test (e.g. `yolo watch --json`),
// with its stdout read as JSON lines under deadlines.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/json.h"

namespace yolo::test {

class BgProcess {
 public:
  BgProcess(const std::vector<std::string>& argv, const std::filesystem::path& cwd);
  ~BgProcess();  // SIGKILLs the process if still running
  BgProcess(const BgProcess&) = delete;
  BgProcess& operator=(const BgProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Next stdout line parsed as JSON (non-JSON lines are kept in `other_lines`), or
  // nullopt when none arrives within timeout.
  std::optional<json> next_json(std::chrono::milliseconds timeout);
  // Reads lines until pred matches one (returned) or the timeout passes.
  std::optional<json> wait_for(const std::function<bool(const json&)>& pred, std::chrono::milliseconds timeout);
  // Every JSON line that arrives within `window`.
  std::vector<json> collect(std::chrono::milliseconds window);
  void signal(int sig);
  // Waits for exit; returns the exit status (or -1 on timeout).
  int wait_exit(std::chrono::milliseconds timeout);
  std::string stderr_text();
  std::vector<std::string> other_lines;
  std::vector<json> seen;  // every JSON line read so far

 private:
  bool read_line(std::string& line, std::chrono::steady_clock::time_point deadline);
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string buf_;
  int status_ = -1;
  bool exited_ = false;
};

}  // namespace yolo::test
