// The one-node Slurm clusters of the dispatch tests (scripts/slurm-up), each in a folder and
// on a port of its own, so that a test run never meets another run's cluster, nor the one a
// person started with scripts/slurm-up (/var/tmp/yolo-slurm, port 6817).
//   shared_slurm(): the test run's cluster: $YOLO_TEST_SLURM_DIR (scripts/test gives each run
//     a folder), else <build folder>/slurm-test; started by the first test that needs it,
//     left running for the next ones (each test names its jobs with a run id of its own).
//   PrivateSlurm: a cluster of one test's own, in its temporary folder, stopped and removed at
//     the end: for the tests that stop the controller or drain the node.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

namespace yolo::test {

struct SlurmCluster {
  std::filesystem::path dir;
  bool up = false;
  std::string reason;  // slurm-up's line when it could not start
  std::string conf() const { return (dir / "etc" / "slurm.conf").string(); }
  std::vector<std::string> env() const { return {"SLURM_CONF=" + conf()}; }
};

inline std::string slurm_script(const std::string& name) { return (source_dir() / "scripts" / name).string(); }

// env: slurm-up's settings (YOLO_SLURM_MIN_JOB_AGE=...).
inline SlurmCluster start_slurm(const std::filesystem::path& dir, const std::vector<std::string>& env = {}) {
  SlurmCluster c;
  c.dir = dir;
  auto r = run_program({slurm_script("slurm-up"), "--no-install", "--dir", dir.string(), "--port", "auto"},
                       source_dir(), env);
  c.up = r.exit_code == 0;
  std::string why = r.err.empty() ? r.out : r.err;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
  c.reason = why;
  return c;
}

inline std::filesystem::path shared_slurm_dir() {
  const char* d = std::getenv("YOLO_TEST_SLURM_DIR");
  if (d && *d) return d;
  return std::filesystem::path(yolo_bin()).parent_path() / "slurm-test";
}

// Started (or found running) once per test process.
inline const SlurmCluster& shared_slurm() {
  static const SlurmCluster c = start_slurm(shared_slurm_dir());
  return c;
}

class PrivateSlurm {
 public:
  explicit PrivateSlurm(const std::filesystem::path& dir, const std::vector<std::string>& env = {})
      : c_(start_slurm(dir, env)) {}
  ~PrivateSlurm() { run_program({slurm_script("slurm-down"), "--dir", c_.dir.string(), "--purge"}, source_dir()); }
  PrivateSlurm(const PrivateSlurm&) = delete;
  PrivateSlurm& operator=(const PrivateSlurm&) = delete;
  const SlurmCluster& cluster() const { return c_; }

 private:
  SlurmCluster c_;
};

}  // namespace yolo::test
