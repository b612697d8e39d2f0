// A plan's checks (runner/run_checks.h) stepped alone through their Host on a libuv loop,
// with real files, a real git repository and worktree, real confined children: the checks
// run one after another by argv in the plan's folder, unable to write it, and each outcome
// is recorded; an
// interrupt ends the plan after the check that was running; in a worktree what the executor
// left uncommitted is out of the checks' sight and comes back afterwards, and a check program
// runs as the checkout holds it; a plan without checks frees its slot only when its gates run
// in this process; the gates an executor asked for are opened and the requests removed.
#include "runner/run_checks.h"

#include <gtest/gtest.h>

#include "protocol/gates/gates.h"
#include "protocol/state/state.h"
#include "runner/child_keeper.h"
#include "runner/phase_parts.h"
#include "fake_teller.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

using test::TempDir;
namespace stdfs = std::filesystem;

using test::git;

const std::string kPlan = ".yolo-planning/phases/01-demo/01-01-PLAN.md";

std::string plan_with(const std::string& checks) {
  return "---\nphase: 1\nplan: 1\ntitle: Demo\nwave: 1\ndepends_on: []\nmust_haves:\n  truths: [\"it works\"]\n" +
         (checks.empty() ? std::string() : "  checks:\n" + checks) + "---\n\n# Plan 01-01: Demo\n";
}

// One plan of a run, as much of it as its checks reach through their Host.
struct FakeRun {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  Config cfg = config_from_json(json::object(), "config.json").config;
  CommandApprover approver{test::real_world()};
  uv_loop_t loop{};
  std::string phase_rel = ".yolo-planning/phases/01-demo";
  execution::PlanEntry entry;
  PlanRun run;
  test::FakeTeller told;
  std::vector<SpawnResult> done;  // done(0, r) calls
  bool interrupt_after_first = false, interrupted = false;
  int slot_frees = 0, held = 0;
  std::unique_ptr<PlanChecks> checks;

  explicit FakeRun(const std::string& plan) {
    supervise_children();  // as yolo's main does: the children's temp folders in a private one
    uv_loop_init(&loop);
    stdfs::create_directories(root);
    git(root, {"init", "-q", "-b", "main"});
    test::write_file(root / kPlan, plan);
    test::write_file(root / ".yolo-planning/ROADMAP.md", "# Roadmap\n");
    git(root, {"add", "-A"});
    git(root, {"commit", "-qm", "base"});
    entry.id = "01-01";
    entry.path = kPlan;
    entry.plan = kPlan;
    entry.wave = 1;
    PlanChecks::Host h;
    h.plan = [this](size_t) -> PlanRun& { return run; };
    h.entry = [this](size_t) -> const execution::PlanEntry& { return entry; };
    h.interrupted = [this] { return interrupted; };
    h.stopping = [] { return false; };
    h.slot_free = [this](size_t) { ++slot_frees; };
    h.hold = [this](size_t, std::unique_ptr<Process> p) {
      ++held;
      run.proc = std::move(p);
    };
    h.release = [this](size_t) {
      std::unique_ptr<Process> p = std::move(run.proc);
      if (interrupt_after_first) interrupted = true;
    };
    h.done = [this](size_t, SpawnResult r) { done.push_back(std::move(r)); };
    h.vars = [this](size_t) { return std::map<std::string, std::string>{{"plan_id", entry.id}}; };
    h.env = [](size_t) { return std::vector<std::pair<std::string, std::string>>{}; };
    checks =
        std::make_unique<PlanChecks>(test::real_world(), root, cfg, approver, &loop, phase_rel, told, std::move(h));
  }
  ~FakeRun() {
    checks.reset();
    run.proc.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  SpawnResult executor_ok() {
    SpawnResult r;
    r.outcome = SpawnResult::Outcome::Exited;
    r.exit_code = 0;
    r.out = "the executor's output";
    return r;
  }
  // The events told, each with its check's (or gate's) name: "check_start:one".
  std::vector<std::string> events() const {
    std::vector<std::string> v;
    for (const auto& e : told.events)
      v.push_back(e.name + (e.data.contains("check") ? ":" + e.data["check"].get<std::string>() : std::string()) +
                  (e.data.contains("name") ? ":" + e.data["name"].get<std::string>() : std::string()));
    return v;
  }
  // Until done is called (or the loop has nothing left).
  void run_loop() {
    while (done.empty() && uv_run(&loop, UV_RUN_ONCE) != 0) {
    }
  }
};

TEST(RunChecks, RunOneAfterAnotherConfinedInThePlansFolderAndEachOutcomeIsRecorded) {
  FakeRun f(plan_with("    - {argv: [\"sh\", \"-c\", \"echo first {plan_id}; echo broke >&2; exit 3\"], name: one}\n"
                      "    - {argv: [\"sh\", \"-c\", \"pwd; touch written 2>/dev/null; test ! -e written\"], name: two}\n"));
  f.checks->run(0, f.executor_ok(), f.root, /*in_worktree=*/false, /*isolated=*/false);
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(f.done[0].out, "the executor's output");  // what the outcome goes on with
  ASSERT_EQ(f.run.check_out.size(), 2u);
  EXPECT_EQ(f.run.check_out[0].name, "one");
  EXPECT_FALSE(f.run.check_out[0].passed());
  EXPECT_EQ(f.run.check_out[0].exit_code, 3);
  EXPECT_NE(f.run.check_out[0].output_tail.find("first 01-01"), std::string::npos);  // {plan_id} expanded
  EXPECT_NE(f.run.check_out[0].output_tail.find("broke"), std::string::npos);
  // The second ran after the first ended, in the plan's folder, and could not write there.
  EXPECT_TRUE(f.run.check_out[1].passed()) << f.run.check_out[1].describe << f.run.check_out[1].output_tail;
  EXPECT_NE(f.run.check_out[1].output_tail.find(f.root.string()), std::string::npos) << f.run.check_out[1].output_tail;
  EXPECT_FALSE(stdfs::exists(f.root / "written"));
  EXPECT_EQ(f.events(), (std::vector<std::string>{"check_start:one", "check_end:one", "check_start:two", "check_end:two"}));
  EXPECT_TRUE(f.told.noted("broke"));  // a failure's tail, for people
  EXPECT_EQ(f.held, 2);
  EXPECT_TRUE(f.run.check_errors.empty());
  EXPECT_EQ(plan_checks::findings(f.run.check_out, f.run.check_errors).size(), 1u);
}

TEST(RunChecks, AnInterruptEndsThePlanAfterTheCheckThatWasRunning) {
  FakeRun f(plan_with("    - {argv: [\"sh\", \"-c\", \"true\"], name: one}\n"
                      "    - {argv: [\"sh\", \"-c\", \"touch ran-two\"], name: two}\n"));
  f.interrupt_after_first = true;
  f.checks->run(0, f.executor_ok(), f.root, false, false);
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(f.run.check_out.size(), 1u);
  EXPECT_FALSE(stdfs::exists(f.root / "ran-two"));
}

TEST(RunChecks, AMalformedEntryIsAnErrorAndAPlanWithoutChecksFreesItsSlotOnlyWhenItsGatesRunHere) {
  {
    FakeRun f(plan_with("    - 42\n"));
    f.checks->run(0, f.executor_ok(), f.root, false, /*isolated=*/false);
    f.run_loop();
    ASSERT_EQ(f.done.size(), 1u);
    EXPECT_EQ(f.run.check_errors.size(), 1u);
    EXPECT_EQ(f.slot_frees, 1);  // no check to run: the next plan may start meanwhile
  }
  {
    FakeRun f(plan_with(""));
    f.checks->run(0, f.executor_ok(), f.root, false, /*isolated=*/true);
    f.run_loop();
    ASSERT_EQ(f.done.size(), 1u);
    EXPECT_EQ(f.slot_frees, 0);  // its gates run in its worktree later, which holds the slot
    EXPECT_EQ(f.held, 0);
  }
}

TEST(RunChecks, InAWorktreeTheExecutorsLeftoversAreOutOfSightAndComeBackAndTheCheckoutsProgramRuns) {
  FakeRun f(plan_with("    - {argv: [\"checks/verify.sh\"], name: verify}\n"));
  // The checkout's check program, and a slot on a branch of the plan like a run makes one.
  test::write_file(f.root / "checks/verify.sh",
                   "#!/bin/sh\nif [ -e stray.txt ]; then echo sees-stray; exit 1; fi\necho checkout-copy\n");
  ::chmod((f.root / "checks/verify.sh").c_str(), 0755);
  git(f.root, {"add", "-A"});
  git(f.root, {"commit", "-qm", "check"});
  const stdfs::path slot = f.root / ".git/yolo-worktrees/slot-0";
  git(f.root, {"worktree", "add", "-q", "-b", "yolo/01-01", slot.string()});
  // The executor rewrote the program on its branch (committed), and left a stray file.
  test::write_file(slot / "checks/verify.sh", "#!/bin/sh\necho slot-copy\n");
  git(slot, {"commit", "-qam", "the executor's own check"});
  test::write_file(slot / "stray.txt", "left\n");
  f.checks->run(0, f.executor_ok(), slot, /*in_worktree=*/true, /*isolated=*/true);
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  ASSERT_EQ(f.run.check_out.size(), 1u);
  EXPECT_TRUE(f.run.check_out[0].passed()) << f.run.check_out[0].describe << ": " << f.run.check_out[0].output_tail;
  EXPECT_NE(f.run.check_out[0].output_tail.find("checkout-copy"), std::string::npos) << f.run.check_out[0].output_tail;
  EXPECT_FALSE(stdfs::exists(slot / "stray.txt"));  // aside while the checks ran
  ASSERT_TRUE(f.run.aside.has_value());
  // The run puts it back before the gates (Run::conclude): then done again.
  slot_aside::Aside a = std::move(*f.run.aside);
  f.run.aside.reset();
  f.checks->put_back(0, slot, std::move(a), f.executor_ok());
  f.done.clear();
  f.run_loop();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(test::read_file(slot / "stray.txt"), "left\n");
  EXPECT_EQ(test::read_file(slot / "checks/verify.sh"), "#!/bin/sh\necho slot-copy\n");
  EXPECT_TRUE(f.run.check_errors.empty());
}

TEST(RunChecks, TheGatesAnExecutorAskedForAreOpenedAndItsRequestsRemoved) {
  FakeRun f(plan_with(""));
  ASSERT_TRUE(state::update(test::real_world(), f.root, [](json& d) {
                d = {{"status", "running"}, {"plans", json::array()}};
                return true;
              }).written);
  const stdfs::path req = f.tmp / "requests";
  test::write_file(req / "1.json", json({{"gate_type", "vision"}, {"plan_path", ".yolo-planning/ROADMAP.md"},
                                         {"reason", "the executor asks"}}).dump());
  test::write_file(req / "2.json", "{\"gate_type\": \"no such gate\"}");
  f.run.gate_requests = req;
  f.checks->open_requested_gates(0);
  EXPECT_FALSE(stdfs::exists(req));
  EXPECT_TRUE(f.run.gate_requests.empty());
  ASSERT_EQ(f.told.notes.size(), 1u);
  EXPECT_NE(f.told.notes[0].find("is not one (2.json)"), std::string::npos) << f.told.notes[0];
  const json doc = state::load(test::real_world(), f.root).doc;
  ASSERT_TRUE(doc.contains("gates")) << doc.dump();
  bool open = false;
  for (const auto& g : doc["gates"])
    open = open || (g.value("gate_type", "") == "vision" && gates::has_status(g, gates::GateStatus::Open));
  EXPECT_TRUE(open) << doc.dump();
}

}  // namespace
}  // namespace yolo::runner::phase
