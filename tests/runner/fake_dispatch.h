// As much of a run as dispatch (runner/run_dispatch.h) reaches, for the unit tests of its
// classes: a real git repository with a bare remote, the worktree slots, the plans' records
// and the run core, a libuv loop, what dispatch says (test::FakeTeller), and a DispatchHost
// whose members over these are set (a test sets the rest: queue, flush, schedule, ...).
#pragma once
#include <uv.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fake_teller.h"
#include "runner/dispatch_parts.h"
#include "test_support.h"

namespace yolo::test {

struct FakeDispatchRun {
  using PlanEntry = runner::phase::PlanEntry;
  using PlanRun = runner::phase::PlanRun;

  TempDir tmp;
  stdfs::path root = tmp / "repo", remote = tmp / "remote.git";
  Config cfg;
  uv_loop_t loop{};
  std::vector<PlanEntry> entries;
  std::vector<PlanRun> runs;
  run::Core core;
  std::unique_ptr<runner::Worktrees> trees;
  std::map<long long, std::string> bases;
  FakeTeller told;
  runner::phase::DispatchHost host;

  // entries: the plans of the run (one record each in runs).
  explicit FakeDispatchRun(std::vector<PlanEntry> plans) : entries(std::move(plans)) {
    uv_loop_init(&loop);
    stdfs::create_directories(root);
    git(root, {"init", "-q", "-b", "main"});
    write_file(root / "README.md", "demo\n");
    git(root, {"add", "README.md"});
    git(root, {"commit", "-qm", "base"});
    git(tmp.path(), {"init", "-q", "--bare", remote.string()});
    runs.resize(entries.size());
    trees = std::make_unique<runner::Worktrees>(root, "0123456789abcdef");
    std::string err;
    EXPECT_TRUE(trees->init(err)) << err;
    host.plans = [this] { return entries.size(); };
    host.entry = [this](size_t i) -> const PlanEntry& { return entries[i]; };
    host.plan = [this](size_t i) -> PlanRun& { return runs[i]; };
    host.plan_at = [this](size_t i) -> const PlanRun* { return i < runs.size() ? &runs[i] : nullptr; };
    host.core = [this]() -> run::Core& { return core; };
    host.trees = [this] { return trees.get(); };
    host.wave_bases = [this]() -> std::map<long long, std::string>& { return bases; };
    host.interrupted = [] { return false; };
    host.stopping = [] { return false; };
    host.hold = [this](size_t i, std::unique_ptr<runner::Process> p) {
      runs[i].running = true;
      runs[i].proc = std::move(p);
      return runs[i].proc.get();
    };
    host.release = [this](size_t i) {
      runs[i].running = false;
      std::unique_ptr<runner::Process> p = std::move(runs[i].proc);
    };
  }
  // The test's dispatch object goes first (its own destructor), then the plans' children
  // and the loop.
  ~FakeDispatchRun() {
    runs.clear();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  FakeDispatchRun(const FakeDispatchRun&) = delete;
  FakeDispatchRun& operator=(const FakeDispatchRun&) = delete;
};

}  // namespace yolo::test
