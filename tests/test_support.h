// Helpers for tests: temp folders, running the real `yolo` binary, writing files.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::test {

namespace stdfs = std::filesystem;

// A fresh folder under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const stdfs::path& path() const { return path_; }
  stdfs::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  stdfs::path path_;
};

void write_file(const stdfs::path& p, const std::string& content);
std::string read_file(const stdfs::path& p);

// Every review record the runner left in <root>/.yolo-planning/.reviews/*.json, merged by
// plan id (read as plain JSON: the files themselves, not the code under test).
json review_records(const stdfs::path& root);

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  json json_out() const;                 // stdout parsed as one JSON document
  std::vector<json> json_lines() const;  // stdout parsed as JSON lines
};

// Runs the built yolo binary with args (argv, no shell) in cwd; stdin is /dev/null
// unless input is given. env entries "K=V" are added to the environment.
RunResult run_yolo(const std::vector<std::string>& args, const stdfs::path& cwd = stdfs::current_path(),
                   const std::vector<std::string>& env = {}, const std::string& input = {});
// Runs yolo as a person at a terminal does: in a new session whose controlling terminal is
// a fresh pseudo-terminal, which is also its stdin; `typed` is what the person types into
// it (default: "y" and Enter, the answer to `yolo approve`'s question). stdout and stderr
// stay pipes, as in run_yolo.
RunResult run_yolo_tty(const std::vector<std::string>& args, const stdfs::path& cwd = stdfs::current_path(),
                       const std::vector<std::string>& env = {}, const std::string& typed = "y\n");
// In a forked child before exec: a new session whose controlling terminal, and stdin, is a
// fresh pseudo-terminal (the person's terminal; nothing is typed: use --yes). The master
// stays open in the process. False when it fails.
bool become_terminal_session();
// Runs any program the same way.
RunResult run_program(const std::vector<std::string>& argv, const stdfs::path& cwd = stdfs::current_path(),
                      const std::vector<std::string>& env = {}, const std::string& input = {});

// git with a test identity in dir; expects it to succeed; its stdout without the trailing
// newline and blanks.
std::string git(const stdfs::path& dir, const std::vector<std::string>& args, const std::string& input = "");

// Copies a folder of fixtures/ into dest.
void copy_fixture(const std::string& name, const stdfs::path& dest);
stdfs::path source_dir();
stdfs::path corpus_dir();
std::string yolo_bin();
// The UTC time seconds_from_now from now, "YYYY-MM-DDTHH:MM:SSZ" (a FixedClock's reading).
std::string iso_in(long long seconds_from_now);

// The real disk and clock with a fixed test key and no signature check: for protocol tests
// that work on real files in a temp folder (most use a MemoryDisk instead).
const World& real_world();
// The fixed key of real_world().
const seal::Key& test_key();

}  // namespace yolo::test
