// A plan's executor started here (runner/run_launch.h) through a fake Host on a libuv loop,
// with real files, a real git repository and worktree, a real confined stand-in executor:
// its argv, folder and environment as it sees them; a plan changed since its review (or since
// the run read it) is not started, and says why; a confinement that cannot be made fails the
// plan with no start; who runs it reaches the journal and the queued state change with its
// sealed sandbox record; a worktree plan runs in its slot from the reviewed content, the
// configured executor taken from the project root; the agent's tool calls reach the plan and
// the log; a killed run's executor that still lives is ended, a reused pid is left alone.
#include "runner/run_launch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "protocol/base/sha256.h"
#include "runner/child_keeper.h"
#include "fake_teller.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

using test::TempDir;

using test::git;

const std::string kPlan = ".yolo-planning/phases/01-demo/01-01-PLAN.md";
const std::string kPlanText = "---\nphase: 1\nplan: 1\ntitle: Demo\nwave: 1\n---\n\n# Plan 01-01: as reviewed\n";

// The stand-in executor: what it was given, where, with which environment; a tool call of
// Claude Code's stream; the plan as its folder holds it.
const std::string kExecutor =
    "#!/bin/sh\n"
    "echo \"argv:$*\"\n"
    "echo \"cwd:$(pwd)\"\n"
    "env | grep '^YOLO_' | sort\n"
    "echo '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\","
    "\"input\":{\"command\":\"git commit -m done\"}}]}}'\n"
    "echo \"plan:$(tail -n 1 \"$YOLO_PLAN_PATH\")\"\n";

// One plan of a run, as much of it as its start reaches through the Host.
struct FakeRun {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  Config cfg;
  uv_loop_t loop{};
  PhaseDir phase;
  std::string cid = "cid-launch-test";
  std::vector<std::string> check_programs;
  execution::PlanEntry entry;
  PlanRun run;
  bool isolated = false, journal_ok = true;
  int started = 0, held = 0;
  std::vector<std::pair<std::string, json>> journal;
  test::FakeTeller told;
  std::optional<execution::PlanUpdate> queued;
  std::vector<SpawnResult> done;
  std::unique_ptr<ExecutorStarter> starter;

  FakeRun() {
    supervise_children();  // as yolo's main does: the children's temp folders in a private one
    ::signal(SIGPIPE, SIG_IGN);
    uv_loop_init(&loop);
    stdfs::create_directories(root);
    git(root, {"init", "-q", "-b", "main"});
    test::write_file(root / kPlan, kPlanText);
    test::write_file(root / ".yolo-planning/ROADMAP.md", "# Roadmap\n");
    git(root, {"add", "-A"});
    git(root, {"commit", "-qm", "base"});
    test::write_file(root / "exec.sh", kExecutor);  // not committed: only the checkout has it
    stdfs::permissions(root / "exec.sh", stdfs::perms::owner_all, stdfs::perm_options::add);
    cfg = config_from_json({{"executor",
                             {{"command",
                               {"./exec.sh", "{plan_id}", "{wave}", "{summary_path}", "{worktree}", "{branch}",
                                "{correlation_id}"}}}}},
                           "config.json")
              .config;
    phase.number = 1;
    phase.folder = "01-demo";
    phase.slug = "demo";
    phase.abs = root / ".yolo-planning/phases/01-demo";
    phase.rel = ".yolo-planning/phases/01-demo";
    entry.id = "01-01";
    entry.path = kPlan;
    entry.plan = kPlan;
    entry.title = "Demo";
    entry.wave = 1;
    run.load_hash = sha256_hex(kPlanText);
    queued = execution::started("2026-01-01T00:00:00Z");
    ExecutorStarter::Host h;
    h.entry = [this](size_t) -> const execution::PlanEntry& { return entry; };
    h.plan = [this](size_t) -> PlanRun& { return run; };
    h.isolated = [this] { return isolated; };
    h.started = [this](size_t) { ++started; };
    h.hold = [this](size_t, std::unique_ptr<Process> p) {
      ++held;
      run.proc = std::move(p);
      return run.proc.get();
    };
    h.running = [] { return size_t(1); };
    h.done = [this](size_t, SpawnResult r) { done.push_back(std::move(r)); };
    h.journal = [this](const std::string& id, const json& rec) {
      journal.emplace_back(id, rec);
      return journal_ok;
    };
    h.queued = [this](size_t) { return queued ? &*queued : nullptr; };
    starter = std::make_unique<ExecutorStarter>(test::real_world(), root, cfg, &loop, phase, cid, check_programs, told,
                                                std::move(h));
  }
  ~FakeRun() {
    starter.reset();
    run.proc.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  void run_loop() {
    while (done.empty() && uv_run(&loop, UV_RUN_ONCE) != 0) {
    }
  }
  // Its worktree: a slot of the repository on a branch of its own, whose plan differs.
  void make_slot() {
    stdfs::path slot = tmp / "slots" / "0";
    git(root, {"worktree", "add", "-q", "-b", "yolo/run/01-01/work", slot.string(), "main"});
    test::write_file(slot / kPlan, "---\n# rewritten on the branch\n");
    PlanWorktree w;
    w.plan_id = "01-01";
    w.path = slot;
    w.branch = "yolo/run/01-01/work";
    w.base = "0123456789abcdef0123";
    w.prepared = "created";
    run.worktree = w;
    isolated = true;
  }
};

bool has_line(const std::string& out, const std::string& line) {
  return ("\n" + out).find("\n" + line + "\n") != std::string::npos;
}

TEST(RunLaunch, TheExecutorSeesItsArgvFolderAndEnvironmentInTheCheckout) {
  FakeRun f;
  auto s = f.starter->start(0, 2, kPlanText);
  ASSERT_TRUE(s.error.empty()) << s.error;
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  const std::string& out = f.done[0].out;
  EXPECT_EQ(f.done[0].exit_code, 0) << out << f.done[0].err;
  const std::string summary = ".yolo-planning/phases/01-demo/01-01-SUMMARY.md";
  EXPECT_TRUE(has_line(out, "argv:01-01 2 " + summary + " " + f.root.string() + "  cid-launch-test")) << out;
  EXPECT_TRUE(has_line(out, "cwd:" + f.root.string())) << out;
  for (const std::string& kv : std::vector<std::string>{"YOLO_CORRELATION_ID=cid-launch-test", "YOLO_PLAN_ID=01-01", "YOLO_PHASE_DIR=" + f.phase.rel,
        "YOLO_PLAN_PATH=" + kPlan, "YOLO_WAVE=2", "YOLO_SUMMARY_PATH=" + summary, "YOLO_WORKTREE=" + f.root.string(),
        "YOLO_GATE_REQUESTS=" + f.run.gate_requests.string()})
    EXPECT_TRUE(has_line(out, kv)) << kv << "\n" << out;
  EXPECT_FALSE(f.run.gate_requests.empty());
  EXPECT_EQ(f.run.argv.at(0), "./exec.sh");  // in the checkout, as the config names it
  EXPECT_EQ(f.started, 1);
  EXPECT_EQ(f.held, 1);
  EXPECT_FALSE(f.run.sandbox.is_null());
  // Its start, for people and the log.
  const json* ev = f.told.first("plan_start");
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ((*ev)["plan"], "01-01");
  EXPECT_EQ((*ev)["wave"], 2);
  EXPECT_EQ((*ev)["running"], 1);
  EXPECT_FALSE(ev->contains("worktree"));
  ASSERT_FALSE(f.told.logs.empty());
  EXPECT_EQ(f.told.logs[0].type, "plan_start");
}

TEST(RunLaunch, WhoRunsItReachesTheJournalAndTheQueuedChangeWithItsSealedSandbox) {
  FakeRun f;
  auto s = f.starter->start(0, 1, kPlanText);
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_EQ(f.journal.size(), 1u);
  const json& rec = f.journal[0].second;
  EXPECT_EQ(f.journal[0].first, "01-01");
  const int pid = rec.value("pid", 0);
  EXPECT_GT(pid, 0);
  EXPECT_EQ(rec.value("pgid", 0), pid);
  EXPECT_EQ(rec.value("start_ticks", 0ULL), f.run.proc->start_ticks());
  EXPECT_GT(rec.value("start_ticks", 0ULL), 0ULL);
  EXPECT_EQ(rec.value("boot_id", std::string()), boot_id());
  EXPECT_EQ(s.executor, rec);
  EXPECT_TRUE(s.journaled);
  EXPECT_EQ((*f.told.first("plan_start"))["pid"], pid);
  ASSERT_TRUE(f.queued);
  EXPECT_EQ(f.queued->set["executor"], rec);
  EXPECT_EQ(f.queued->set["sandbox"], f.run.sandbox);
  EXPECT_TRUE(f.queued->set["sandbox_seal"].is_string() || f.queued->set["sandbox_seal"].is_object())
      << f.queued->set["sandbox_seal"].dump();
  f.run_loop();
  // A journal that cannot be written is said, so the run writes the state at once.
  FakeRun g;
  g.journal_ok = false;
  EXPECT_FALSE(g.starter->start(0, 1, kPlanText).journaled);
  g.run_loop();
}

TEST(RunLaunch, APlanChangedSinceItsReviewOrItsReadingIsNotStartedAndSaysWhy) {
  FakeRun f;
  auto same = f.starter->reviewed({0});
  EXPECT_TRUE(same.changed.empty());
  EXPECT_EQ(same.bytes[0], kPlanText);
  test::write_file(f.root / kPlan, kPlanText + "rewritten\n");
  auto r = f.starter->reviewed({0});
  ASSERT_EQ(r.changed.size(), 1u);
  EXPECT_EQ(r.changed[0].first, 0u);
  EXPECT_NE(r.changed[0].second.find("changed after this run read it (" + kPlan + ")"), std::string::npos)
      << r.changed[0].second;
  // With a review record, the record decides: its content is the one that runs.
  ASSERT_TRUE(review_ledger::record(test::real_world(), f.root, f.phase.abs, "01-01",
                                    {{"hash", sha256_hex(kPlanText + "rewritten\n")}, {"verdict", "approve"}})
                  .ok());
  EXPECT_TRUE(f.starter->reviewed({0}).changed.empty());
  test::write_file(f.root / kPlan, kPlanText);  // what the run read, but not what was reviewed
  r = f.starter->reviewed({0});
  ASSERT_EQ(r.changed.size(), 1u);
  EXPECT_NE(r.changed[0].second.find("changed after it was reviewed (" + kPlan + ")"), std::string::npos)
      << r.changed[0].second;
  EXPECT_EQ(f.started, 0);  // nothing of it starts
}

TEST(RunLaunch, AConfinementThatCannotBeMadeFailsThePlanWithNoStart) {
  FakeRun f;
  // A slot without the .git file naming its git folder: its objects have no folder of their own.
  PlanWorktree w;
  w.plan_id = "01-01";
  w.path = f.tmp / "not-a-slot";
  w.branch = "yolo/run/01-01/work";
  stdfs::create_directories(w.path / ".yolo-planning/phases/01-demo");
  f.run.worktree = w;
  f.isolated = true;
  auto s = f.starter->start(0, 1, kPlanText);
  EXPECT_NE(s.error.find("has no .git file"), std::string::npos) << s.error;
  EXPECT_TRUE(s.executor.is_null());
  EXPECT_EQ(f.started, 0);
  EXPECT_EQ(f.held, 0);
  EXPECT_TRUE(f.journal.empty());
  EXPECT_EQ(f.told.first("plan_start"), nullptr);
  EXPECT_TRUE(f.run.sandbox.is_null());
}

TEST(RunLaunch, AWorktreePlanRunsInItsSlotFromTheReviewedContent) {
  FakeRun f;
  f.make_slot();
  const stdfs::path slot = f.run.worktree->path;
  auto s = f.starter->start(0, 1, kPlanText);
  ASSERT_TRUE(s.error.empty()) << s.error;
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  const std::string& out = f.done[0].out;
  EXPECT_EQ(f.done[0].exit_code, 0) << out << f.done[0].err;
  EXPECT_EQ(test::read_file(slot / kPlan), kPlanText);  // the reviewed plan put back
  EXPECT_TRUE(has_line(out, "plan:# Plan 01-01: as reviewed")) << out;
  EXPECT_TRUE(has_line(out, "cwd:" + slot.string())) << out;
  EXPECT_TRUE(has_line(out, "YOLO_WORKTREE=" + slot.string())) << out;
  EXPECT_NE(out.find("argv:01-01 1 .yolo-planning/phases/01-demo/01-01-SUMMARY.md " + slot.string() +
                     " yolo/run/01-01/work cid-launch-test"),
            std::string::npos)
      << out;
  EXPECT_EQ(f.run.argv.at(0), (f.root / "./exec.sh").string());  // the checkout's executor, not the branch's
  const json* ev = f.told.first("plan_start");
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ((*ev)["worktree"], slot.string());
  EXPECT_EQ((*ev)["branch"], "yolo/run/01-01/work");
  EXPECT_EQ((*ev)["worktree_prepared"], "created");
  ASSERT_FALSE(f.told.notes.empty());
  EXPECT_EQ(f.told.notes.back(),
            "worktree " + slot.string() + " on branch yolo/run/01-01/work from 0123456789ab (new checkout)");
}

TEST(RunLaunch, TheAgentsToolCallsReachThePlanAndTheLog) {
  FakeRun f;
  ASSERT_TRUE(f.starter->start(0, 1, kPlanText).error.empty());
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(f.run.tool, "Bash: git commit -m done");
  bool logged = false;
  for (const auto& l : f.told.logs)
    if (l.type == "agent_tool")
      logged = l.data.value("tool", "") == "Bash: git commit -m done" && l.data.value("agent", "") == "executor" &&
               l.data.value("plan_id", "") == "01-01";
  EXPECT_TRUE(logged);
}

// A child of its own session (as every executor is), reaped by a thread once it ends.
struct Sleeper {
  int pid = -1;
  std::thread reaper;
  Sleeper() {
    pid = ::fork();
    if (pid == 0) {
      ::setsid();
      ::execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    reaper = std::thread([p = pid] { ::waitpid(p, nullptr, 0); });
  }
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    reaper.join();
  }
  unsigned long long ticks() const {
    for (int k = 0; k < 100; ++k)
      if (auto t = process_start_ticks(pid)) return t;
    return 0;
  }
};

TEST(RunLaunch, AKilledRunsLiveExecutorIsEndedAndAReusedPidIsLeftAlone) {
  FakeRun f;
  Sleeper left, other;
  const unsigned long long left_ticks = left.ticks(), other_ticks = other.ticks();
  ASSERT_GT(left_ticks, 0ULL);
  ASSERT_GT(other_ticks, 0ULL);
  json doc = {{"plans",
               {{{"id", "01-01"}, {"status", "running"}, {"executor", executor_record(left.pid, left_ticks)}},
                // The pid now names another process (its start time differs): not the executor.
                {{"id", "01-02"}, {"status", "running"}, {"executor", executor_record(other.pid, other_ticks + 1)}}}}};
  f.starter->end_leftovers(doc);
  EXPECT_EQ(process_start_ticks(left.pid), 0ULL);  // ended
  EXPECT_EQ(process_start_ticks(other.pid), other_ticks);  // still runs
  ASSERT_EQ(f.told.events.size(), 1u);
  EXPECT_EQ(f.told.events[0].name, "leftover_executor");
  EXPECT_EQ(f.told.events[0].data["plan"], "01-01");
  EXPECT_EQ(f.told.events[0].data["pid"], left.pid);
}

}  // namespace
}  // namespace yolo::runner::phase
