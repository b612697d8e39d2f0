// One plan's end (runner/run_conclude.h) driven alone through its Host, with real files: its
// executor's log written only when it printed something; its outcome decided from how its
// executor (or its job) ended, its checks, its SUMMARY and its sandbox's refusals, then the
// run core told, its record queued and its end said.
#include "runner/run_conclude.h"

#include <gtest/gtest.h>

#include "runner/agent_logs.h"
#include "runner/refusals.h"
#include "fake_teller.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

using test::TempDir;

// A run of one plan in the checkout (no worktree), as much of it as a plan's end reaches.
struct FakeRun {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  PhaseDir phase;
  std::vector<PlanEntry> entries;
  std::vector<PlanRun> runs;
  bool interrupted = false;
  int exited = 0, nexts = 0;
  std::vector<size_t> checks_run;
  std::vector<std::pair<size_t, execution::PlanEnd>> concluded;
  std::vector<std::pair<size_t, execution::PlanUpdate>> queued;
  test::FakeTeller told;
  std::unique_ptr<PlanConcluder> c;

  FakeRun() {
    phase.number = 1;
    phase.folder = "01-demo";
    phase.slug = "demo";
    phase.rel = ".yolo-planning/phases/01-demo";
    phase.abs = root / phase.rel;
    stdfs::create_directories(phase.abs);
    const std::string rel = phase.rel + "/01-01-PLAN.md";
    test::write_file(root / rel, "---\nphase: 01\nplan: 01\n---\n# Plan 01\n");
    entries.push_back({"01-01", "01", "plan 01", 1, {}, rel});
    runs.resize(1);
    runs[0].argv = {"executor", "--plan", rel};
    PlanConcluder::Host h;
    h.entry = [this](size_t i) -> const PlanEntry& { return entries[i]; };
    h.plan = [this](size_t i) -> PlanRun& { return runs[i]; };
    h.interrupted = [this] { return interrupted; };
    h.isolated = [] { return false; };
    h.exited = [this](size_t) { ++exited; };
    h.open_gates = [](size_t) {};
    h.drop = [](const PlanWorktree&) { ADD_FAILURE() << "no worktree to drop"; };
    h.run_checks = [this](size_t i, SpawnResult r) {
      checks_run.push_back(i);
      c->conclude(i, r);  // no checks: the plan ends at once
    };
    h.put_back = [](size_t, const stdfs::path&, slot_aside::Aside, const SpawnResult&) { ADD_FAILURE(); };
    h.gate = [](size_t, SpawnResult) { ADD_FAILURE() << "no worktree to gate"; };
    h.check_summary = [this](const PlanEntry& e, json& findings, const std::string* sp) {
      const stdfs::path p = root / *sp;
      if (!stdfs::exists(p)) return SummaryState::Missing;
      SummaryVerdict v = verify_summary(test::real_world(), p, root / e.path, root, SummaryMode::Off, nullptr);
      if (v.passed()) return SummaryState::Passed;
      findings = v.to_json().value("findings", json::array());
      return SummaryState::Failed;
    };
    h.concluded = [this](size_t i, const execution::PlanEnd& end, MergeState, const std::string&) {
      concluded.push_back({i, end});
    };
    h.queue = [this](size_t i, execution::PlanUpdate u) { queued.push_back({i, std::move(u)}); };
    h.cid = [] { return std::string("0123456789abcdef"); };
    h.next = [this] { ++nexts; };
    c = std::make_unique<PlanConcluder>(test::real_world(), root, phase, told, std::move(h));
  }

  std::string summary_rel() const { return summary_rel_for(test::real_world(), root, entries[0].path); }
  void write_summary() {
    test::write_file(root / summary_rel(), "---\nphase: 01\nplan: 01\nstatus: complete\n---\nDone.\n");
  }
  static SpawnResult exited_with(int code, std::string out = "", std::string err = "") {
    SpawnResult r;
    r.outcome = SpawnResult::Outcome::Exited;
    r.exit_code = code;
    r.out_total = out.size();
    r.err_total = err.size();
    r.out = std::move(out);
    r.err = std::move(err);
    return r;
  }
  // The plan's end as decided: exactly one.
  const execution::PlanEnd& end() const {
    EXPECT_EQ(concluded.size(), 1u);
    EXPECT_EQ(queued.size(), 1u);
    EXPECT_EQ(nexts, 1);
    return concluded.at(0).second;
  }
  const execution::PlanUpdate& update() const { return queued.at(0).second; }
  std::vector<stdfs::path> log_files() const {
    std::vector<stdfs::path> out;
    std::error_code ec;
    for (auto it = stdfs::recursive_directory_iterator(logs_dir(root), ec); !ec && it != stdfs::end(it); ++it)
      if (it->is_regular_file()) out.push_back(it->path());
    return out;
  }
};

bool has_check(const json& findings, const std::string& check) {
  for (const auto& f : findings)
    if (f.value("check", "") == check) return true;
  return false;
}

TEST(PlanConcluder, APassingSummaryCompletesThePlan) {
  FakeRun run;
  run.write_summary();
  run.c->executor_ended(0, FakeRun::exited_with(0));
  EXPECT_EQ(run.exited, 1);
  EXPECT_EQ(run.checks_run, std::vector<size_t>{0}) << "an executor that did well: its checks first";
  EXPECT_EQ(run.end().status, PlanStatus::Complete) << run.end().error;
  EXPECT_EQ(run.update().status, PlanStatus::Complete);
  const json* e = run.told.first("plan_end");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["status"], "complete");
  EXPECT_EQ((*e)["plan"], "01-01");
}

TEST(PlanConcluder, AMissingSummaryFailsThePlanNamingTheFile) {
  FakeRun run;
  run.c->executor_ended(0, FakeRun::exited_with(0));
  EXPECT_EQ(run.end().status, PlanStatus::Failed);
  EXPECT_NE(run.end().error.find(run.summary_rel()), std::string::npos) << run.end().error;
  const json* e = run.told.first("plan_end");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["status"], "failed");
  EXPECT_EQ((*e)["error"], run.end().error);
}

TEST(PlanConcluder, AFailedExecutorFailsThePlanWithWhy) {
  FakeRun run;
  run.write_summary();  // whatever it wrote: it failed
  run.c->executor_ended(0, FakeRun::exited_with(3, "", "the model said no\n"));
  EXPECT_TRUE(run.checks_run.empty()) << "no checks after a failed executor";
  EXPECT_EQ(run.end().status, PlanStatus::Failed);
  EXPECT_NE(run.end().error.find("status 3"), std::string::npos) << run.end().error;
  const json* e = run.told.first("plan_end");
  ASSERT_TRUE(e);
  EXPECT_NE((*e).value("stderr_tail", "").find("the model said no"), std::string::npos) << e->dump();
  EXPECT_TRUE(run.told.noted("the model said no"));
}

TEST(PlanConcluder, AnInterruptedPlanGoesBackToPending) {
  FakeRun run;
  run.write_summary();
  run.interrupted = true;
  run.c->executor_ended(0, FakeRun::exited_with(0));
  EXPECT_TRUE(run.checks_run.empty());
  EXPECT_EQ(run.end().status, PlanStatus::Pending);
  EXPECT_EQ(run.update().status, PlanStatus::Pending);
  const json* e = run.told.first("plan_end");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["status"], "pending");
}

TEST(PlanConcluder, AFailingCheckFailsThePlanWhateverItsSummarySays) {
  FakeRun run;
  run.write_summary();
  plan_checks::Outcome o;
  o.name = "unit tests";
  o.argv = {"make", "test"};
  o.ran = true;
  o.exit_code = 2;
  o.describe = "exited with status 2";
  run.runs[0].check_out.push_back(o);
  run.c->conclude(0, FakeRun::exited_with(0));
  EXPECT_EQ(run.end().status, PlanStatus::Failed);
  EXPECT_TRUE(has_check(run.end().findings, "checks")) << run.end().findings.dump();
  ASSERT_TRUE(run.update().set.contains("checks")) << run.update().set.dump();
  EXPECT_EQ(run.update().set["checks"][0]["passed"], false);
  EXPECT_TRUE(run.runs[0].check_out.empty()) << "the plan's check results are cleared for its next attempt";
}

TEST(PlanConcluder, ASandboxRefusalFailsThePlanWithASandboxFinding) {
  FakeRun run;
  run.write_summary();
  run.runs[0].refused = std::make_shared<RefusalLog>();
  run.runs[0].refused->add("unshare(CLONE_NEWUSER) by sh (pid 12)");
  run.c->conclude(0, FakeRun::exited_with(0));
  EXPECT_EQ(run.end().status, PlanStatus::Failed);
  EXPECT_TRUE(has_check(run.end().findings, "sandbox")) << run.end().findings.dump();
  EXPECT_NE(run.end().findings.dump().find("unshare(CLONE_NEWUSER)"), std::string::npos);
  const auto logs = run.told.log_types();
  EXPECT_NE(std::find(logs.begin(), logs.end(), "sandbox_refused"), logs.end());
  EXPECT_FALSE(run.runs[0].refused) << "taken once";
}

TEST(PlanConcluder, ADispatchedPlansJobErrorFailsIt) {
  FakeRun run;
  run.write_summary();
  run.runs[0].dispatch_error = "its job ended FAILED on the cluster";
  run.c->conclude(0, FakeRun::exited_with(0));
  EXPECT_EQ(run.end().status, PlanStatus::Failed);
  EXPECT_NE(run.end().error.find("its job ended FAILED on the cluster"), std::string::npos) << run.end().error;
  EXPECT_TRUE(run.runs[0].dispatch_error.empty()) << "cleared for its next attempt";
}

TEST(PlanConcluder, TheExecutorsLogIsWrittenOnlyWhenItPrintedSomething) {
  {
    FakeRun run;
    run.write_summary();
    run.c->executor_ended(0, FakeRun::exited_with(0));
    EXPECT_TRUE(run.log_files().empty()) << "a silent success leaves no log";
    for (const auto& n : run.told.notes) EXPECT_EQ(n.find("output: "), std::string::npos) << n;
  }
  FakeRun run;
  run.write_summary();
  run.c->executor_ended(0, FakeRun::exited_with(0, "I built it\n"));
  auto files = run.log_files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(test::read_file(files[0]).find("I built it"), std::string::npos);
  bool said = false;
  for (const auto& n : run.told.notes)
    if (n.rfind("output: ", 0) == 0 && n.find("yolo logs 01-01") != std::string::npos) said = true;
  EXPECT_TRUE(said);
  EXPECT_EQ(run.end().status, PlanStatus::Complete);
}

}  // namespace
}  // namespace yolo::runner::phase
