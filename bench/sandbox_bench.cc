// What the sandbox costs a child's start: /bin/true started through run_process, plain and
// under each role's confinement (ruleset built per start, as yolo does), interleaved in one
// run so the machine's load falls on both sides. Then the cost of a write the supervisor
// watches: a shell making and removing kWrites files in its temp folder, plain and as a
// confined executor. Prints min/median/max and the difference of
// the medians (the goal: at most 2 ms).
//   sandbox_bench [ROUNDS [PHASE_DIR]]   (run in a project folder; PHASE_DIR: the executor's
//   phase folder, whose files are bound read-only one by one; default the project folder)
//   SANDBOX_BENCH_ONLY=executor|reviewer: that role's starts alone (to run under a profiler)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <vector>

#include "protocol/state/config.h"
#include "runner/sandbox.h"
#include "runner/subprocess.h"
#include "runner/world.h"

using namespace yolo;
using namespace yolo::runner;

namespace {

constexpr int kWrites = 200;
std::vector<double> prepare_ms;  // confine() alone, per start (SANDBOX_BENCH_ONLY)

double start_ms(const std::shared_ptr<Confinement>& c, bool prepare, sandbox::Role role,
                const std::filesystem::path& root, const std::filesystem::path& phase, bool writes = false) {
  auto t0 = std::chrono::steady_clock::now();
  SpawnSpec s;
  s.argv = {"/bin/true"};
  if (writes)
    s.argv = {"/bin/sh", "-c",
              "cd \"${TMPDIR:-/tmp}\" && i=0; while [ $i -lt " + std::to_string(kWrites) +
                  " ]; do : > \"w$i\"; i=$((i+1)); done; rm -f w*"};
  if (prepare) {
    SandboxRequest req;
    req.role = role;
    req.project_root = root;
    req.phase_dir = phase;  // every file in it bound read-only (no SUMMARY of its own: the worst case)
    auto p0 = std::chrono::steady_clock::now();
    auto r = confine(runner::world(), Config{}, req);
    prepare_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count());
    if (!r.ok()) {
      std::fprintf(stderr, "sandbox_bench: %s\n", r.error.c_str());
      std::exit(1);
    }
    s.confinement = r.confinement;
    if (writes) s.env = {{"TMPDIR", r.confinement->temp_dir.string()}};
  } else {
    s.confinement = c;
    if (writes) {
      static const std::string dir = [] {
        char t[] = "/tmp/sandbox-bench-XXXXXX";
        return std::string(::mkdtemp(t) ? t : "/nonexistent");
      }();
      s.env = {{"TMPDIR", dir}};
    }
  }
  SpawnResult res = run_process(s);
  if (!res.ok()) {
    std::fprintf(stderr, "sandbox_bench: /bin/true %s\n", res.describe().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void report(const char* name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-28s min %7.3f  median %7.3f  max %7.3f ms\n", name, v.front(), v[v.size() / 2], v.back());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  if (landlock_abi() <= 0) {
    std::printf("sandbox_bench: skipped (this kernel has no Landlock)\n");
    return 0;
  }
  auto root = std::filesystem::current_path();
  const std::filesystem::path phase = argc > 2 ? std::filesystem::absolute(argv[2]) : root;
  size_t files = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(phase, ec)) files += e.is_regular_file(ec);
  // The reviewer again where no secret file exists (a HOME of its own, no approval key): no
  // decoy to bind, so no mount namespace; the difference is what naming secret reads costs.
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  const char* key_env = std::getenv("YOLO_APPROVAL_KEY_FILE");
  const std::string key = key_env ? key_env : "";
  char bare[] = "/tmp/sandbox-bench-home-XXXXXX";
  const std::string bare_home = ::mkdtemp(bare) ? bare : "/nonexistent";
  auto without_secrets = [&](bool on) {
    if (on) {
      ::setenv("HOME", bare_home.c_str(), 1);
      ::setenv("YOLO_APPROVAL_KEY_FILE", (bare_home + "/no-key").c_str(), 1);
    } else {
      ::setenv("HOME", home.c_str(), 1);
      if (key_env) ::setenv("YOLO_APPROVAL_KEY_FILE", key.c_str(), 1);
      else ::unsetenv("YOLO_APPROVAL_KEY_FILE");
    }
  };
  // SANDBOX_BENCH_ONLY=executor (or reviewer): only that role's starts, for a profiler.
  if (const char* only = std::getenv("SANDBOX_BENCH_ONLY")) {
    const sandbox::Role role = std::string(only) == "reviewer" ? sandbox::Role::Reviewer : sandbox::Role::Executor;
    std::vector<double> v;
    for (int i = 0; i < rounds; ++i) v.push_back(start_ms(nullptr, true, role, root, phase));
    report(only, v);
    report("of which confine()", prepare_ms);
    return 0;
  }
  std::vector<double> plain, reviewer, reviewer_bare, executor, plain_w, executor_w;
  for (int i = 0; i < rounds; ++i) {
    plain.push_back(start_ms(nullptr, false, sandbox::Role::Shell, root, phase));
    reviewer.push_back(start_ms(nullptr, true, sandbox::Role::Reviewer, root, phase));
    without_secrets(true);
    reviewer_bare.push_back(start_ms(nullptr, true, sandbox::Role::Reviewer, root, phase));
    without_secrets(false);
    executor.push_back(start_ms(nullptr, true, sandbox::Role::Executor, root, phase));
  }
  // The writing rounds after the starts: files made and removed in quick succession slow down
  // every later file creation on ext4 for some seconds (its inode allocator skips inodes freed
  // recently), the temp folders of the starts included.
  for (int i = 0; i < rounds; i += 4) {
    plain_w.push_back(start_ms(nullptr, false, sandbox::Role::Shell, root, phase, true));
    executor_w.push_back(start_ms(nullptr, true, sandbox::Role::Executor, root, phase, true));
  }
  std::printf("sandbox_bench: %d rounds of /bin/true, interleaved, Landlock ABI %d, phase folder of %zu files\n",
              rounds, landlock_abi(), files);
  report("plain start (anchor)", plain);
  report("reviewer, confined", reviewer);
  report("reviewer, no secret file", reviewer_bare);
  report("executor in checkout, confined", executor);
  std::printf("median cost: reviewer %+.3f ms (%.2fx), executor %+.3f ms (%.2fx)\n", median(reviewer) - median(plain),
              median(reviewer) / median(plain), median(executor) - median(plain), median(executor) / median(plain));
  std::printf("the secrets' decoys (and the reviewer's mount namespace): %+.3f ms\n", median(reviewer) - median(reviewer_bare));
  report("plain, writing files", plain_w);
  report("executor, writing files", executor_w);
  const double per_write = ((median(executor_w) - median(plain_w)) - (median(executor) - median(plain))) / (2 * kWrites);
  std::printf("%d files made and removed: %+.3f ms beyond the start, %.1f us per watched write\n", kWrites,
              (median(executor_w) - median(plain_w)) - (median(executor) - median(plain)), per_write * 1000);
  ::rmdir(bare_home.c_str());
  return 0;
}
