// A run as dispatch's classes (runner/run_dispatch.h) reach it through DispatchHost, for their
// unit tests: a real git repository with one commit and a bare remote beside it, the plans'
// entries and what the run holds of them, the run core, the worktree slots and a libuv loop.
// What dispatch says goes to its FakeTeller (told); a test sets the rest of the host it
// watches or replaces before it makes the class under test.
#pragma once

#include <sys/stat.h>

#include "fake_teller.h"
#include "runner/dispatch_parts.h"
#include "test_support.h"

namespace yolo::runner::phase {

struct DispatchFakeRun {
  test::TempDir tmp;
  stdfs::path root = tmp / "repo", remote = tmp / "remote.git";
  std::string url = remote.string();
  uv_loop_t loop{};
  std::vector<PlanEntry> entries;
  PlanRuns runs;  // as the run holds them (runner/plan_run.h): host.hold and release count
  run::Core core;
  std::unique_ptr<Worktrees> trees;
  std::map<long long, std::string> bases;
  std::vector<execution::PlanUpdate> queued;  // host.queue's changes, in order
  int flushes = 0, schedules = 0;
  bool interrupted = false;  // host.interrupted's answer
  test::FakeTeller told;  // what the class under test says
  DispatchHost host;

  // The plans, all of wave 1 ({id, plan, title, wave, depends_on, path}).
  explicit DispatchFakeRun(std::vector<PlanEntry> plans) : entries(std::move(plans)) {
    uv_loop_init(&loop);
    stdfs::create_directories(root);
    test::git(root, {"init", "-q", "-b", "main"});
    test::write_file(root / "README.md", "demo\n");
    test::git(root, {"add", "README.md"});
    test::git(root, {"commit", "-qm", "base"});
    test::git(tmp.path(), {"init", "-q", "--bare", remote.string()});
    runs.reset(std::vector<PlanRun>(entries.size()));
    run::Settings s;
    s.isolated = true;
    core = run::Core(run::seeds(json::object(), entries, {}).plans, s);  // seeded as a fresh run's
    trees = std::make_unique<Worktrees>(root, "0123456789abcdef");
    std::string err;
    EXPECT_TRUE(trees->init(err)) << err;
    host.plans = [this] { return entries.size(); };
    host.entry = [this](size_t i) -> const PlanEntry& { return entries[i]; };
    host.plan = [this](size_t i) -> PlanRun& { return runs.of(i); };
    host.plan_at = [this](size_t i) { return runs.at(i); };
    host.core = [this]() -> run::Core& { return core; };
    host.trees = [this] { return trees.get(); };
    host.wave_bases = [this]() -> std::map<long long, std::string>& { return bases; };
    host.correlation_id = [] { return std::string("0123456789abcdef"); };
    host.phase_rel = [] { return std::string(".yolo-planning/phases/01-demo"); };
    host.interrupted = [this] { return interrupted; };
    host.stopping = [] { return false; };
    host.hold = [this](size_t i, std::unique_ptr<Process> p) { return runs.hold(i, std::move(p)); };
    host.release = [this](size_t i) { runs.release(i); };
    host.queue = [this](size_t, execution::PlanUpdate u) { queued.push_back(std::move(u)); };
    host.flush = [this] { ++flushes; };
    host.schedule = [this] { ++schedules; };
    host.plan_vars = [this](size_t i, long long) {
      return std::map<std::string, std::string>{{"plan_id", entries[i].id}};
    };
  }
  // The class under test goes first (its children are killed), then the plans' children.
  ~DispatchFakeRun() {
    runs.reset({});
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  DispatchFakeRun(const DispatchFakeRun&) = delete;
  DispatchFakeRun& operator=(const DispatchFakeRun&) = delete;

  // Plan i's branch for its record's attempt (as DispatchDriver names it).
  std::string branch(size_t i) const {
    int attempt = runs[i].dispatch_rec.is_object() ? runs[i].dispatch_rec.value("attempt", 1) : 1;
    return dispatch::branch_for_attempt(trees->branch_for(entries[i].id), attempt);
  }
  // An executable script at tmp/name.
  stdfs::path script(const std::string& name, const std::string& text) {
    stdfs::path p = tmp / name;
    test::write_file(p, text);
    ::chmod(p.c_str(), 0755);
    return p;
  }
};

}  // namespace yolo::runner::phase
