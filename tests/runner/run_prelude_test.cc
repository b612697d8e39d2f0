// The run's steps before the waves stepped alone on a copy of fixtures/demo, with a Host of the
// test's own: a missing executor refuses the run with how to fix it; a missing reviewer is
// said, or refuses the run when reviewer_required; an unknown phase is a usage error; the
// first phase not complete is chosen and its plans read; Stage 1 passing goes on, Stage 1
// rejecting a plan halts the run and records the halt; the review gate passes on Stage 1
// alone and marks its step, or halts on a rejected plan with that plan to edit next; step 2
// counts a passed SUMMARY done, says a failed one, counts none that appeared after the run
// began, and halts on a phase without plans. Its one entry, prepare(), runs the steps in
// order, the run's own among them through the Host, and ends at the first that halts: an
// unknown --plan, a dry run, what a stopped run left, a complete phase, the vision gate.
#include "runner/run_prelude.h"

#include <gtest/gtest.h>

#include <csignal>

#include "runner/child_keeper.h"
#include "fake_teller.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

struct Said {  // beside what the steps tell (test::FakeTeller)
  std::string next;
  int code = -1;
  execution::Result result = execution::Result::Complete;
  std::string message;
  json started;  // step 2: the phase's start as said
  std::vector<std::string> not_counted, summary_failed;
  std::vector<json> findings;  // of each failed SUMMARY said
  json written;  // step 2: the state as it wrote it
  std::string stamp;
  std::vector<std::string> calls;  // prepare(): the Host's members called, in order
  int stop_code = -1;               // the gates' stop
  execution::Result stop_result = execution::Result::Complete;
  std::string stop_message;
  bool step2_before_ready = false;  // the state had step 2 when the run's own steps ran
};

struct Project {
  test::TempDir dir;
  std::filesystem::path root = dir.path() / "repo";
  const World& w = test::real_world();
  Config cfg;
  ExecuteOptions o;
  Said said;
  test::FakeTeller told;
  StateWrites writes{w, root};
  CommandApprover approver{w};
  RunGates gates{w, root, cfg, writes, approver, told, gates_host()};
  int dry_run_code = 0, ready_code = -1;  // what the run's own steps return
  std::unique_ptr<RunPrelude> prelude;
  PhaseDir phase;

  // patch: over the demo's config (its agents are not copied: their programs are missing).
  explicit Project(const json& patch = json::object()) {
    // As yolo's command start does: a reviewer that closes its stdin early fails a write, it
    // does not end this process; and the children's temp folders are in a private folder (else
    // the sandbox hides all of the system's temp folder, and the fixtures with it when the
    // checkout lies there).
    ::signal(SIGPIPE, SIG_IGN);
    supervise_children();
    test::copy_fixture("demo", root);
    json c = json::parse(test::read_file(root / ".yolo-planning" / "config.json"));
    c.merge_patch(patch);
    cfg = config_from_json(c, "config.json").config;
    o.json = true;  // events, not lines for people: the test reads them through its Teller
    prelude = std::make_unique<RunPrelude>(w, root, cfg, o, told, gates, host());
  }
  RunGates::Host gates_host() {
    RunGates::Host h;
    h.stop = [this](int code, execution::Result r, const std::string& m) {
      said.stop_code = code;
      said.stop_result = r;
      said.stop_message = m;
    };
    h.set_halted = [](const std::string&) {};
    h.next_step = [this](std::string next) { said.next = std::move(next); };
    return h;
  }
  RunPrelude::Host host() {
    RunPrelude::Host h;
    h.next_step = [this](std::string next) { said.next = std::move(next); };
    h.finish = [this](int code, execution::Result r, const std::string& m) {
      said.calls.push_back("finish");
      said.code = code;
      said.result = r;
      said.message = m;
      return code;
    };
    h.stopped = [this] {
      said.calls.push_back("stopped");
      return said.stop_code;
    };
    h.plans_read = [this](std::vector<PlanRun> runs, std::vector<std::string>) {
      said.calls.push_back("plans_read:" + std::to_string(runs.size()));
    };
    h.dry_run = [this] {
      said.calls.push_back("dry_run");
      return dry_run_code;
    };
    h.ready = [this](const json&) {
      said.calls.push_back("ready");
      said.step2_before_ready = execution::has_step(state(), "step_2");
      return ready_code;
    };
    h.already_complete = [this](size_t plans) { said.calls.push_back("already_complete:" + std::to_string(plans)); };
    h.phase_start = [this](size_t plans, long long waves, bool resumed, size_t done, bool was_running) {
      said.calls.push_back("phase_start");
      said.started = {
          {"plans", plans}, {"waves", waves}, {"resumed", resumed}, {"done", done}, {"was_running", was_running}};
    };
    h.summary_not_counted = [this](const std::string& plan) { said.not_counted.push_back(plan); };
    h.summary_failed = [this](const std::string& plan, const json& findings) {
      said.summary_failed.push_back(plan);
      said.findings.push_back(findings);
    };
    h.state_written = [this](json doc, std::string stamp) {
      said.calls.push_back("state_written");
      said.written = std::move(doc);
      said.stamp = std::move(stamp);
    };
    return h;
  }
  // The event log's lines as "type:status".
  std::vector<std::string> logged() const {
    std::vector<std::string> v;
    for (const auto& l : told.logs) v.push_back(l.type + ":" + json_field::str(l.data, "status"));
    return v;
  }
  // The phase chosen and its plans read, with a running run in the state (as step 2 leaves it).
  RunPrelude::Plans read() {
    EXPECT_EQ(prelude->choose_phase(state::load(w, root), phase), -1) << said.message;
    EXPECT_TRUE(state::update(w, root, [](json& d) {
                  d = {{"status", "running"}, {"phase", 1}, {"phase_dir", ".yolo-planning/phases/01-demo"}};
                  return true;
                }).written);
    return prelude->load_plans(phase);
  }
  void rewrite(const std::string& plan, const std::string& from, const std::string& to) {
    auto p = root / ".yolo-planning/phases/01-demo" / plan;
    std::string s = test::read_file(p);
    size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    test::write_file(p, s.replace(at, from.size(), to));
  }
  json state() { return state::load(w, root).doc; }
  // The phase chosen and its plans read, the state as the test left it (step 2 prepares it).
  std::vector<PlanEntry> entries() {
    EXPECT_EQ(prelude->choose_phase(state::load(w, root), phase), -1) << said.message;
    return prelude->load_plans(phase).entries;
  }
  // Plan e's SUMMARY, where the SUMMARY gate looks for it; body: after the frontmatter.
  void summary(const PlanEntry& e, const std::string& body = kSummaryBody) {
    test::write_file(root / summary_rel_for(w, root, e.path),
                     "---\nphase: \"01\"\nplan: \"" + e.plan +
                         "\"\ntitle: \"t\"\nstatus: complete\ncompleted: 2026-11-28\ntasks_completed: 1\n"
                         "tasks_total: 1\ncommit_hashes:\n  - \"abc1234\"\ndeviations: 0\n---\n\n" +
                         body);
  }
  static constexpr const char* kSummaryBody =
      "## What Was Built\n\nThe greeting.\n\n## Files Modified\n\n- `greeting/text.txt`\n\n## Deviations\n\nNone.\n";
  // A stand-in agent of fixtures/agents, named by its absolute path in the source tree (the
  // test's cwd is not the project's, as yolo's is).
  static std::string agent(const std::string& name) {
    return (test::source_dir() / "fixtures" / "agents" / name).string();
  }
  void reviewer(const std::vector<std::string>& argv) {
    cfg.reviewer =
        config_from_json({{"reviewer", {{"command", argv}, {"timeout_ms", 20000}}}}, "config.json").config.reviewer;
  }
};

// The demo's agents are not in the copy: its executor's program is missing.
TEST(RunPrelude, AMissingExecutorIsRefusedWithHowToFixIt) {
  Project p(json{{"review_gate", "never"}});  // the reviewer would be refused first
  EXPECT_EQ(p.prelude->check_agents(), kExecHalted);
  EXPECT_EQ(p.said.result, execution::Result::Error);
  EXPECT_NE(p.said.message.find("executor program 'agents/executor-ok' not found"), std::string::npos)
      << p.said.message;
  EXPECT_NE(p.said.next.find("correct `executor`"), std::string::npos) << p.said.next;
}

TEST(RunPrelude, AMissingReviewerIsSaidWhileTheGateRunsOrRefusedWhenRequired) {
  const json present = {{"command", {"true"}}};
  Project warned({{"executor", present}, {"review_gate", "always"}, {"reviewer_required", false}});
  EXPECT_EQ(warned.prelude->check_agents(), -1);
  EXPECT_TRUE(warned.told.has("agent_missing", "role", "reviewer"));
  EXPECT_TRUE(warned.told.has("agent_missing", "role", "architect"));
  EXPECT_EQ(warned.said.code, -1);

  Project quiet({{"executor", present}, {"review_gate", "never"}, {"reviewer_required", true}});
  EXPECT_EQ(quiet.prelude->check_agents(), -1);
  EXPECT_TRUE(quiet.told.names().empty()) << "no review gate: its agents do not matter";

  Project refused({{"executor", present}, {"review_gate", "always"}, {"reviewer_required", true}});
  EXPECT_EQ(refused.prelude->check_agents(), kExecHalted);
  EXPECT_NE(refused.said.message.find("reviewer_required is true"), std::string::npos) << refused.said.message;
  EXPECT_NE(refused.said.next.find("correct `reviewer`"), std::string::npos);
}

TEST(RunPrelude, AnUnknownPhaseIsAUsageErrorAndTheFirstNotCompleteIsChosen) {
  Project p;
  p.o.phase = "07";
  EXPECT_EQ(p.prelude->choose_phase(state::load(p.w, p.root), p.phase), kExecUsage);
  EXPECT_NE(p.said.message.find("no phase '07'"), std::string::npos) << p.said.message;

  p.o.phase.clear();
  auto plans = p.read();
  EXPECT_EQ(p.phase.folder, "01-demo");
  ASSERT_EQ(plans.entries.size(), 4u);
  EXPECT_EQ(plans.runs.size(), 4u);
  EXPECT_EQ(plans.entries[1].id, "01-02");
  EXPECT_EQ(plans.entries[1].path, ".yolo-planning/phases/01-demo/01-02-PLAN.md");
  EXPECT_EQ(plans.entries[1].depends_on, std::vector<std::string>{"01"});
  EXPECT_TRUE(plans.runs[1].load_hash.has_value());
  EXPECT_EQ(p.prelude->loaded().size(), 4u);
}

TEST(RunPrelude, Stage1PassingGoesOnAndDropsThePlansAsRead) {
  Project p;
  p.read();
  p.prelude->start_stage1(p.phase);
  EXPECT_EQ(p.prelude->precheck(p.phase), -1) << p.said.message;
  EXPECT_FALSE(p.prelude->stage1_pending());
  EXPECT_TRUE(p.prelude->loaded().empty());
  ASSERT_TRUE(p.told.has("precheck"));
  EXPECT_EQ(p.told.last("precheck")["plans"], 4);
  EXPECT_EQ(p.state()["status"], "running");
}

TEST(RunPrelude, Stage1RejectingAPlanHaltsTheRunAndRecordsTheHalt) {
  Project p;
  p.rewrite("01-02-PLAN.md", "must_haves:", "not_must_haves:");
  p.read();
  p.prelude->start_stage1(p.phase);
  EXPECT_EQ(p.prelude->precheck(p.phase), kExecHalted);
  EXPECT_EQ(p.said.result, execution::Result::Halted);
  EXPECT_NE(p.said.message.find("1 plan(s) rejected by the structural pre-check"), std::string::npos) << p.said.message;
  EXPECT_TRUE(p.told.has("precheck", "plan", "01-02"));
  EXPECT_TRUE(p.told.has("precheck", "verdict", "reject"));
  EXPECT_EQ(p.state()["status"], "halted");
  EXPECT_EQ(p.logged(), std::vector<std::string>{"phase_end:halted"});
}

TEST(RunPrelude, TheReviewGatePassesOnStage1AloneAndMarksItsStep) {
  Project p({{"reviewer", nullptr}, {"architect", nullptr}, {"reviewer_required", false}});
  auto plans = p.read();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), -1) << p.said.message;
  ASSERT_TRUE(p.told.has("review_gate"));
  EXPECT_EQ(p.told.last("review_gate")["status"], "passed");
  EXPECT_TRUE(execution::has_step(p.state(), "step_2b"));
  EXPECT_EQ(p.said.code, -1);

  // Passed for exactly these contents: not reviewed again.
  p.said = {};
  p.told.clear();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), -1);
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"review_gate"});
  EXPECT_EQ(p.told.last("review_gate")["cached"], true);
}

TEST(RunPrelude, TheReviewGateHaltsOnARejectedPlanWithThatPlanToEditNext) {
  Project p({{"reviewer", nullptr}, {"architect", nullptr}, {"reviewer_required", false}});
  p.rewrite("01-03-PLAN.md", "must_haves:", "not_must_haves:");
  auto plans = p.read();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), kExecHalted);
  EXPECT_EQ(p.said.result, execution::Result::Halted);
  EXPECT_EQ(p.told.last("review_gate")["status"], "rejected");
  EXPECT_EQ(p.said.next, "edit .yolo-planning/phases/01-demo/01-03-PLAN.md, then `yolo execute`");
  EXPECT_EQ(p.state()["status"], "halted");
  EXPECT_FALSE(execution::has_step(p.state(), "step_2b"));
  EXPECT_EQ(p.logged(), std::vector<std::string>{"phase_end:halted"});
}

// A stand-in reviewer (fixtures/agents), a real child: its approval passes the gate, its
// rejection (no architect to revise the plans) halts the run with the plans to edit next.
TEST(RunPrelude, AReviewerThatApprovesPassesTheGate) {
  Project p(json{{"architect", nullptr}});
  p.reviewer({p.agent("reviewer-approve"), "{plan_path}"});
  auto plans = p.read();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), -1) << p.said.message;
  json gate = p.told.last("review_gate");
  EXPECT_EQ(gate["status"], "passed");
  EXPECT_EQ(gate["verdict"], "approve") << gate.dump(1);
  ASSERT_EQ(gate["review"].size(), 4u) << gate.dump(1);
  EXPECT_EQ(gate["review"][0]["source"], "reviewer");
  EXPECT_TRUE(execution::has_step(p.state(), "step_2b"));
}

TEST(RunPrelude, AReviewerThatRejectsHaltsTheRunWithThePlansToEditNext) {
  Project p(json{{"architect", nullptr}});
  p.reviewer({p.agent("reviewer-reject-until-marker"), "{plan_path}", "{cycle}"});
  auto plans = p.read();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), kExecHalted);
  json gate = p.told.last("review_gate");
  EXPECT_EQ(gate["status"], "rejected");
  ASSERT_EQ(gate["review"].size(), 4u);
  EXPECT_EQ(gate["review"][0]["source"], "reviewer") << gate.dump(1);  // it ran, and rejected
  EXPECT_EQ(p.said.next, "edit .yolo-planning/phases/01-demo/01-01-PLAN.md (and 3 more), then `yolo execute`");
  EXPECT_EQ(p.said.message, "Halted: the review gate rejected the phase (see `yolo status`)");
  EXPECT_EQ(p.state()["status"], "halted");
}

TEST(RunPrelude, TheReviewGateNeverRunsWhenTheConfigSaysNever) {
  Project p(json{{"review_gate", "never"}});
  auto plans = p.read();
  EXPECT_EQ(p.prelude->review_gate(p.phase, plans.entries, "cid-1"), -1);
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"review_gate"});
  EXPECT_EQ(p.told.last("review_gate")["status"], "skipped");
  EXPECT_FALSE(execution::has_step(p.state(), "step_2b"));
}

// Step 2 with no executor: a SUMMARY that passes the gate (structural, as the config says)
// counts its plan done, one that fails it is said with its findings, and the state holds the
// run: its new correlation id, the passed plan complete, the failed one failed.
TEST(RunPrelude, Step2CountsAPassedSummaryDoneAndSaysAFailedOne) {
  Project p({{"executor", nullptr}, {"summary_checks", "structural"}});
  auto entries = p.entries();
  ASSERT_EQ(entries.size(), 4u);
  p.summary(entries[0]);
  p.summary(entries[1], "## What Was Built\n\nHalf of it.\n");  // no Files Modified
  std::string cid;
  EXPECT_EQ(p.prelude->step2(p.phase, entries, "cid-new", cid), -1) << p.said.message;
  EXPECT_EQ(entries[0].summary, SummaryState::Passed);
  EXPECT_EQ(entries[1].summary, SummaryState::Failed);
  EXPECT_EQ(entries[2].summary, SummaryState::Missing);
  EXPECT_EQ(cid, "cid-new");
  EXPECT_EQ(p.said.started["plans"], 4);
  EXPECT_EQ(p.said.started["done"], 1);
  EXPECT_EQ(p.said.started["resumed"], false);
  EXPECT_EQ(p.said.summary_failed, std::vector<std::string>{"01-02"});
  ASSERT_EQ(p.said.findings.size(), 1u);
  EXPECT_FALSE(p.said.findings[0].empty()) << "its findings are said";
  EXPECT_EQ(p.said.code, -1);
  json st = p.state();
  EXPECT_EQ(p.said.written, st) << "the state as written is handed to the run";
  EXPECT_FALSE(p.said.stamp.empty());
  EXPECT_EQ(st["correlation_id"], "cid-new");
  EXPECT_EQ(st["plans"][0]["status"], "complete");
  EXPECT_EQ(st["plans"][1]["status"], "failed");
  EXPECT_EQ(st["plans"][2]["status"], "pending");
  EXPECT_TRUE(execution::has_step(st, "step_2"));
}

// The config's summary_checks reach the gate: strict checks the commits the SUMMARY names,
// and this copy has none (it is no git repository).
TEST(RunPrelude, Step2ChecksSummariesAsTheConfigSays) {
  Project p({{"executor", nullptr}, {"summary_checks", "strict"}});
  auto entries = p.entries();
  p.summary(entries[0]);
  std::string cid;
  EXPECT_EQ(p.prelude->step2(p.phase, entries, "cid-new", cid), -1) << p.said.message;
  EXPECT_EQ(entries[0].summary, SummaryState::Failed);
  EXPECT_EQ(p.said.summary_failed, std::vector<std::string>{"01-01"});
}

// A SUMMARY that appears, written by no executor of its plan, after the run began: not
// counted (the plan runs), said; the run resumes with its own correlation id.
TEST(RunPrelude, Step2DoesNotCountASummaryThatAppearedAfterTheRunBegan) {
  Project p({{"executor", {{"command", {"true"}}}}, {"summary_checks", "structural"}});
  auto entries = p.entries();
  std::string cid;
  EXPECT_EQ(p.prelude->step2(p.phase, entries, "cid-first", cid), -1) << p.said.message;
  EXPECT_EQ(p.said.started["resumed"], false);
  p.summary(entries[0]);
  EXPECT_EQ(p.prelude->step2(p.phase, entries, "cid-second", cid), -1) << p.said.message;
  EXPECT_EQ(cid, "cid-first");
  EXPECT_EQ(p.said.started["resumed"], true);
  EXPECT_EQ(p.said.not_counted, std::vector<std::string>{"01-01"});
  EXPECT_EQ(entries[0].summary, SummaryState::Missing);
  EXPECT_TRUE(p.said.summary_failed.empty()) << "an executor writes it again";
  EXPECT_EQ(p.state()["plans"][0]["status"], "pending");
}

// A phase folder without plans: the run halts, naming it.
TEST(RunPrelude, Step2HaltsOnAPhaseWithoutPlans) {
  Project p;
  auto phases = list_phases(p.root);
  ASSERT_FALSE(phases.empty());
  p.phase = phases.front();
  for (const auto& f : list_plan_files(p.w, p.phase.abs)) std::filesystem::remove(f);
  std::vector<PlanEntry> entries = p.prelude->load_plans(p.phase).entries;
  ASSERT_TRUE(entries.empty());
  std::string cid;
  EXPECT_EQ(p.prelude->step2(p.phase, entries, "cid-new", cid), kExecHalted);
  EXPECT_EQ(p.said.result, execution::Result::Halted);
  EXPECT_EQ(p.said.message, "no plans in .yolo-planning/phases/01-demo");
  EXPECT_EQ(p.said.started["plans"], 0);
}

// ---- prepare(): the steps in order, and where it stops -------------------------------------

// The config of a run that gets as far as the vision gate: an executor whose program exists, no
// review gate, SUMMARY files checked for their structure only.
const json kRuns = {{"executor", {{"command", {"true"}}}}, {"review_gate", "never"}, {"summary_checks", "structural"}};

TEST(RunPrelude, PrepareRunsTheStepsInOrderAndPausesAtTheVisionGate) {
  Project p(kRuns);
  std::vector<PlanEntry> entries;
  std::string cid;
  EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecPaused) << p.said.message;
  EXPECT_EQ(p.said.calls,
            (std::vector<std::string>{"plans_read:4", "ready", "state_written", "phase_start", "finish"}));
  EXPECT_FALSE(p.said.step2_before_ready) << "the run's own steps come before step 2";
  EXPECT_EQ(p.told.names(), (std::vector<std::string>{"precheck", "review_gate", "gate_requested", "gate_paused"}));
  EXPECT_EQ(p.told.last("gate_requested")["gate_type"], "vision");
  EXPECT_EQ(p.said.result, execution::Result::Paused);
  EXPECT_EQ(p.said.message, "Paused at the vision gate: after `yolo approve`, run `yolo execute` again");
  EXPECT_NE(p.said.next.find("yolo approve "), std::string::npos) << p.said.next;
  EXPECT_EQ(p.phase.folder, "01-demo");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[3].id, "01-04");
  EXPECT_FALSE(p.prelude->fresh_cid().empty());
  EXPECT_EQ(cid, p.prelude->fresh_cid()) << "a new run gets the fresh correlation id";
  EXPECT_FALSE(p.prelude->stage1_pending());
  EXPECT_TRUE(p.prelude->loaded().empty()) << "the plans as read are dropped after Stage 1";
  json st = p.state();
  EXPECT_TRUE(execution::has_step(st, "step_2"));
  EXPECT_EQ(st["correlation_id"], cid);
}

TEST(RunPrelude, PrepareGoesOnOnceTheVisionGatePasses) {
  json c = kRuns;
  c["approvers"] = {{"vision", "skip"}};
  Project p(c);
  std::vector<PlanEntry> entries;
  std::string cid;
  EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), -1) << p.said.message;
  EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "ready", "state_written", "phase_start"}));
  ASSERT_FALSE(p.told.names().empty());
  EXPECT_EQ(p.told.names().back(), "gate_passed");
  EXPECT_EQ(p.said.code, -1);
}

// Each stop ends prepare() there: nothing after it runs.
TEST(RunPrelude, PrepareStopsAtAnUnknownPlanADryRunOrTheRunsOwnSteps) {
  {
    Project p(kRuns);
    p.o.only_plan = "01-09";
    std::vector<PlanEntry> entries;
    std::string cid;
    EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecUsage);
    EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "finish"}));
    EXPECT_NE(p.said.message.find("01-09"), std::string::npos) << p.said.message;
    EXPECT_FALSE(p.said.next.empty());
    EXPECT_FALSE(std::filesystem::exists(state::state_path(p.root))) << "nothing written";
  }
  {
    Project p(kRuns);
    p.o.dry_run = true;
    p.dry_run_code = 7;
    std::vector<PlanEntry> entries;
    std::string cid;
    EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), 7);
    EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "dry_run"}));
    EXPECT_EQ(p.prelude->loaded().size(), 4u) << "the dry run reads the plans as read";
    EXPECT_TRUE(p.told.names().empty());
  }
  {
    Project p(kRuns);
    p.ready_code = kExecHalted;
    std::vector<PlanEntry> entries;
    std::string cid;
    EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecHalted);
    EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "ready"}));
    EXPECT_FALSE(p.prelude->stage1_pending()) << "Stage 1 starts after the run's own steps";
    EXPECT_FALSE(std::filesystem::exists(state::state_path(p.root))) << "step 2 did not run";
  }
  {
    Project p(json{{"review_gate", "never"}});  // the demo's executor is missing: refused
    std::vector<PlanEntry> entries;
    std::string cid;
    EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecHalted);
    EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "finish"}));
  }
}

// Every plan of the phase asked for has a SUMMARY that passes: said, the run complete, no gate.
TEST(RunPrelude, PrepareEndsAPhaseAlreadyComplete) {
  Project p({{"executor", nullptr}, {"review_gate", "never"}, {"summary_checks", "structural"}});
  p.o.phase = "1";
  for (const auto& e : p.entries()) p.summary(e);
  p.said = {};
  std::vector<PlanEntry> entries;
  std::string cid;
  EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecComplete) << p.said.message;
  EXPECT_EQ(p.said.calls, (std::vector<std::string>{"plans_read:4", "ready", "state_written", "phase_start",
                                                    "already_complete:4", "finish"}));
  EXPECT_EQ(p.said.result, execution::Result::Complete);
  EXPECT_FALSE(p.told.has("gate_requested"));
}

// The vision gate cannot open (no roadmap): it stops the run, which ends as the gate said.
TEST(RunPrelude, PrepareEndsAsTheVisionGateStoppedTheRun) {
  Project p(kRuns);
  std::filesystem::remove(p.root / kRoadmap);
  std::vector<PlanEntry> entries;
  std::string cid;
  EXPECT_EQ(p.prelude->prepare(state::load(p.w, p.root), p.phase, entries, cid), kExecHalted);
  ASSERT_FALSE(p.said.calls.empty());
  EXPECT_EQ(p.said.calls.back(), "stopped");
  EXPECT_EQ(p.said.stop_result, execution::Result::Halted);
  EXPECT_TRUE(p.told.has("gate_error", "gate_type", "vision"));
}

}  // namespace
}  // namespace yolo::runner::phase
