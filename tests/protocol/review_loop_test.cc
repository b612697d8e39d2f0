#include "protocol/review/review_loop.h"

#include <gtest/gtest.h>

#include <functional>

#include "test_support.h"

namespace yolo::review {
namespace {

using test::TempDir;
using test::write_file;

const char* kGoodPlan =
    "---\nphase: \"01\"\nplan: \"01\"\ntitle: \"Core\"\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"it works\"\n---\n\n"
    "## Tasks\n\n### Task 1: Do it\n\nText.\n";
const char* kNoMustHaves =
    "---\nphase: \"01\"\nplan: \"02\"\ntitle: \"Bad\"\nwave: 1\ndepends_on: []\n---\n\n### Task 1: x\n";

std::string plan_with_id(const std::string& plan) {
  std::string s = kGoodPlan;
  s.replace(s.find("plan: \"01\""), 10, "plan: \"" + plan + "\"");
  return s;
}

// A reviewer whose answers are scripted per call.
struct FakeReviewer : ReviewerPort {
  bool is_configured = true;
  std::function<AgentRun(const ReviewerRequest&)> answer;
  std::vector<ReviewerRequest> calls;
  bool configured() const override { return is_configured; }
  AgentRun review(const ReviewerRequest& req) override {
    calls.push_back(req);
    return answer(req);
  }
};

struct FakeArchitect : ArchitectPort {
  bool is_configured = true;
  std::function<AgentRun(const ArchitectRequest&)> act;
  std::vector<ArchitectRequest> calls;
  bool configured() const override { return is_configured; }
  AgentRun revise(const ArchitectRequest& req) override {
    calls.push_back(req);
    return act(req);
  }
};

struct RecordingObserver : LoopObserver {
  std::vector<std::string> log;
  void plan_start(const PlanTarget&, const std::string& id, int max) override {
    log.push_back("plan_start " + id + " " + std::to_string(max));
  }
  void cycle_start(const PlanLoopResult&, int c) override { log.push_back("cycle_start " + std::to_string(c)); }
  void cycle_done(const PlanLoopResult&, const CycleResult& c) override {
    log.push_back("cycle_done " + std::to_string(c.cycle) + " " + to_string(c.verdict));
  }
  void loop_start(const PlanLoopResult&) override { log.push_back("loop_start"); }
  void architect_done(const PlanLoopResult&, const ArchitectAttempt& a) override {
    log.push_back(std::string("architect ") + (a.changed ? "changed" : "unchanged"));
  }
  void plan_end(const PlanLoopResult& r) override { log.push_back("plan_end " + std::string(to_string(r.verdict))); }
};

AgentRun ran(const std::string& out) {
  AgentRun r;
  r.status = AgentRun::Status::Ran;
  r.output = out;
  return r;
}

AgentRun unavailable(const std::string& why) {
  AgentRun r;
  r.status = AgentRun::Status::Unavailable;
  r.reason = why;
  return r;
}

AgentRun append_to_plan(const ArchitectRequest& req, const std::string& text) {
  std::string s = test::read_file(req.plan_path);
  write_file(req.plan_path, s + text);
  return ran("");
}

const char* kRejectHigh =
    "VERDICT: reject\nFINDINGS:\n"
    "- [id:f-1] [severity:high] issue: broken | suggestion: fix\n"
    "- [id:f-2] [severity:medium] issue: vague\n"
    "- [id:f-3] [severity:low] issue: typo\n";

struct LoopTest : ::testing::Test {
  TempDir dir;
  std::filesystem::path phase = dir / ".yolo-planning/phases/01-core";
  std::filesystem::path plan = phase / "01-01-PLAN.md";
  FakeReviewer reviewer;
  FakeArchitect architect;
  RecordingObserver obs;
  LoopOptions opts;
  void SetUp() override {
    std::filesystem::create_directories(dir / ".yolo-planning");
    write_file(plan, kGoodPlan);
    opts.max_cycles = 3;
    architect.act = [](const ArchitectRequest& r) { return append_to_plan(r, "\nrevised\n"); };
  }
  PlanLoopResult run() {
    return run_plan_loop(test::real_world(), PlanTarget{plan, phase, ""}, opts, reviewer, architect, obs);
  }
};

TEST_F(LoopTest, ApproveFirstCycle) {
  reviewer.answer = [](const ReviewerRequest&) { return ran("VERDICT: approve\nFINDINGS:\n"); };
  auto r = run();
  EXPECT_EQ(r.plan_id, "01-01");
  EXPECT_EQ(r.verdict, Verdict::Approve);
  ASSERT_EQ(r.cycles.size(), 1u);
  EXPECT_EQ(r.last().source, Source::Reviewer);
  EXPECT_EQ(r.hash, file_hash(test::real_world(), plan));
  EXPECT_EQ(r.hash.size(), 64u);
  EXPECT_TRUE(architect.calls.empty());
  EXPECT_FALSE(r.loop_entered);
  EXPECT_EQ(r.review_loop_entry(), json::parse(R"({"cycle":1,"max":3,"status":"passed",
      "findings_per_cycle":[{"verdict":"approve","finding_count":0,"high":0}]})"));
  ASSERT_EQ(reviewer.calls.size(), 1u);
  EXPECT_EQ(reviewer.calls[0].cycle, 1);
  EXPECT_NE(reviewer.calls[0].prompt.find(plan.string()), std::string::npos);
  EXPECT_NE(reviewer.calls[0].prompt.find("VERDICT: approve|reject|conditional"), std::string::npos);
  EXPECT_EQ(obs.log, (std::vector<std::string>{"plan_start 01-01 3", "cycle_start 1", "cycle_done 1 approve",
                                               "plan_end approve"}));
}

TEST_F(LoopTest, RejectThenRevisedThenApprovedInCycle2) {
  reviewer.answer = [&](const ReviewerRequest&) {
    if (test::read_file(plan).find("FIXED") != std::string::npos) return ran("VERDICT: approve\n");
    return ran(kRejectHigh);
  };
  architect.act = [](const ArchitectRequest& r) { return append_to_plan(r, "\nFIXED\n"); };
  std::string before = file_hash(test::real_world(), plan);
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Approve);
  ASSERT_EQ(r.cycles.size(), 2u);
  EXPECT_TRUE(r.loop_entered);
  EXPECT_EQ(r.cycles[0].hash, before);
  EXPECT_NE(r.cycles[1].hash, before);
  EXPECT_EQ(r.hash, file_hash(test::real_world(), plan));
  ASSERT_EQ(architect.calls.size(), 1u);
  // Delta: high and medium, new; the low finding is not sent.
  ASSERT_EQ(architect.calls[0].delta.size(), 2u);
  EXPECT_EQ(architect.calls[0].delta[0].id, "f-1");
  EXPECT_EQ(architect.calls[0].delta[1].id, "f-2");
  EXPECT_EQ(architect.calls[0].open_findings.size(), 3u);
  EXPECT_NE(architect.calls[0].prompt.find("f-1"), std::string::npos);
  // The re-review sees the previous findings.
  ASSERT_EQ(reviewer.calls.size(), 2u);
  EXPECT_EQ(reviewer.calls[1].cycle, 2);
  EXPECT_EQ(reviewer.calls[1].previous_findings.size(), 3u);
  EXPECT_NE(reviewer.calls[1].prompt.find("CYCLE: 2/3"), std::string::npos);
  json e = r.review_loop_entry();
  EXPECT_EQ(e["status"], "passed");
  EXPECT_EQ(e["cycle"], 2);
  EXPECT_EQ(e["findings_per_cycle"][0], json::parse(R"({"verdict":"reject","finding_count":3,"high":1})"));
  EXPECT_EQ(r.review_loop_entry(false)["status"], "running");
  EXPECT_EQ(obs.log, (std::vector<std::string>{"plan_start 01-01 3", "cycle_start 1", "cycle_done 1 reject",
                                               "loop_start", "architect changed", "cycle_start 2",
                                               "cycle_done 2 approve", "plan_end approve"}));
}

// Once a high finding is escalated (high in 2+ cycles) the plan can never be
// approved, so the architect is not called again (before, it was called once more with
// "Findings to fix: (none)").
TEST_F(LoopTest, EscalationStopsTheLoopWithoutAnotherArchitectCall) {
  reviewer.answer = [](const ReviewerRequest&) { return ran(kRejectHigh); };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.cycles.size(), 2u);
  EXPECT_EQ(architect.calls.size(), 1u);
  EXPECT_FALSE(architect.calls[0].delta.empty());
  EXPECT_TRUE(r.cycles[0].escalated.empty());
  EXPECT_EQ(r.cycles[1].escalated, std::vector<std::string>{"f-1"});
  EXPECT_NE(r.stop_reason.find("escalated"), std::string::npos) << r.stop_reason;
  EXPECT_EQ(r.review_loop_entry()["status"], "failed");
  EXPECT_EQ(r.review_loop_entry()["cycle"], 2);
  // Accumulated: de-duplicated by id.
  EXPECT_EQ(r.accumulated().size(), 3u);
}

TEST_F(LoopTest, EscalatedHighFindingIsNeverApproved) {
  int n = 0;
  reviewer.answer = [&](const ReviewerRequest&) {
    ++n;
    if (n == 1) return ran("VERDICT: reject\n- [id:f-1] [severity:high] issue: broken\n");
    if (n == 2) return ran("VERDICT: approve\n- [id:f-1] [severity:high] [status:persistent] issue: broken\n");
    return ran("VERDICT: conditional\n- [id:f-9] [severity:low] issue: nit\n");
  };
  auto r = run();
  ASSERT_EQ(r.cycles.size(), 2u);
  EXPECT_EQ(r.cycles[1].reviewer_verdict, Verdict::Approve);
  EXPECT_EQ(r.cycles[1].verdict, Verdict::Reject);
  EXPECT_EQ(r.cycles[1].escalated, std::vector<std::string>{"f-1"});
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(architect.calls.size(), 1u);
  EXPECT_EQ(r.cycles[1].to_json()["reviewer_verdict"], "approve");
}

// A reject whose findings are all low (or unchanged medium) leaves the architect nothing new
// to fix: it is not called with an empty list.
TEST_F(LoopTest, NoDeltaFindingsNoArchitectCall) {
  reviewer.answer = [](const ReviewerRequest&) {
    return ran("VERDICT: reject\n- [id:f-7] [severity:low] issue: nit\n");
  };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(r.cycles.size(), 1u);
  EXPECT_TRUE(architect.calls.empty());
  EXPECT_NE(r.stop_reason.find("no new or changed"), std::string::npos) << r.stop_reason;
}

// reviewer_required: a reviewer that cannot run rejects instead of falling back.
TEST_F(LoopTest, ReviewerRequiredRejectsInsteadOfFallingBack) {
  reviewer.answer = [](const ReviewerRequest&) { return unavailable("reviewer could not start: no such file"); };
  opts.reviewer_required = true;
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(r.cycles[0].source, Source::Fallback);
  EXPECT_NE(r.cycles[0].reason.find("reviewer_required"), std::string::npos);
}

TEST_F(LoopTest, ArchitectLeavingThePlanUnchangedStopsTheLoop) {
  reviewer.answer = [](const ReviewerRequest&) { return ran(kRejectHigh); };
  architect.act = [](const ArchitectRequest&) { return ran("nothing to do"); };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(r.cycles.size(), 1u);
  ASSERT_EQ(r.architect.size(), 1u);
  EXPECT_TRUE(r.architect[0].ran);
  EXPECT_FALSE(r.architect[0].changed);
  EXPECT_NE(r.stop_reason.find("unchanged"), std::string::npos);
  EXPECT_EQ(reviewer.calls.size(), 1u);
}

TEST_F(LoopTest, ArchitectFailureOrAbsenceStopsTheLoop) {
  reviewer.answer = [](const ReviewerRequest&) { return ran(kRejectHigh); };
  architect.act = [](const ArchitectRequest&) { return unavailable("architect exited with status 2"); };
  auto r = run();
  EXPECT_EQ(r.cycles.size(), 1u);
  EXPECT_NE(r.stop_reason.find("status 2"), std::string::npos);

  architect.calls.clear();
  architect.is_configured = false;
  auto r2 = run();
  EXPECT_EQ(r2.cycles.size(), 1u);
  EXPECT_TRUE(architect.calls.empty());
  EXPECT_NE(r2.stop_reason.find("no architect"), std::string::npos);
  EXPECT_EQ(r2.review_loop_entry()["status"], "failed");
}

TEST_F(LoopTest, ReviewerUnavailableFallsBackToStage1) {
  reviewer.answer = [](const ReviewerRequest&) { return unavailable("reviewer timed out after 300 ms"); };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Approve);
  EXPECT_EQ(r.last().source, Source::Fallback);
  EXPECT_EQ(r.last().reason, "reviewer timed out after 300 ms");

  // A conditional Stage 1 (too many tasks) gives a conditional verdict with its findings.
  std::string many = kGoodPlan;
  for (int i = 2; i <= 7; ++i) many += "\n### Task " + std::to_string(i) + ": more\n";
  write_file(plan, many);
  auto c = run();
  EXPECT_EQ(c.verdict, Verdict::Conditional);
  ASSERT_FALSE(c.last().findings.empty());
  EXPECT_EQ(c.last().findings[0].id.rfind("s1-task_count-", 0), 0u);
}

TEST_F(LoopTest, NoReviewerConfiguredIsTheFallbackPath) {
  reviewer.is_configured = false;
  auto r = run();
  EXPECT_TRUE(reviewer.calls.empty());
  EXPECT_EQ(r.last().source, Source::Fallback);
  EXPECT_NE(r.last().reason.find("no reviewer"), std::string::npos);
  EXPECT_EQ(r.verdict, Verdict::Approve);
}

TEST_F(LoopTest, ParseFailureFailsClosedWithoutRevising) {
  std::string garbage;
  for (int i = 1; i <= 30; ++i) garbage += "line " + std::to_string(i) + "\n";
  garbage += "VERDICT: perhaps\n";
  reviewer.answer = [&](const ReviewerRequest&) { return ran(garbage); };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(r.last().source, Source::ParseFailure);
  EXPECT_TRUE(architect.calls.empty());
  EXPECT_EQ(r.cycles.size(), 1u);
  EXPECT_NE(r.last().reason.find("perhaps"), std::string::npos);
  auto tail = r.last().output_tail;
  EXPECT_EQ(tail.find("line 11\n"), std::string::npos);
  EXPECT_EQ(tail.rfind("line 12\n", 0), 0u);
  EXPECT_NE(tail.find("VERDICT: perhaps"), std::string::npos);
}

TEST_F(LoopTest, UnparsedFindingLinesBecomeLowFindings) {
  reviewer.answer = [](const ReviewerRequest&) {
    return ran(
        "VERDICT: conditional\nFINDINGS:\n- [id:a] [severity:medium] issue: ok\n- [id:b] [severity:zzz] issue: bad\n");
  };
  auto r = run();
  EXPECT_EQ(r.verdict, Verdict::Conditional);
  ASSERT_EQ(r.last().unparsed.size(), 1u);
  ASSERT_EQ(r.last().findings.size(), 2u);
  EXPECT_EQ(r.last().findings[1].status, "unparsed");
  EXPECT_EQ(r.last().findings[1].severity, Severity::Low);
  EXPECT_NE(r.last().findings[1].description.find("zzz"), std::string::npos);
}

TEST_F(LoopTest, Stage1RejectNeverSpawnsTheReviewer) {
  write_file(plan, kNoMustHaves);
  reviewer.answer = [](const ReviewerRequest&) { return ran("VERDICT: approve\n"); };
  architect.is_configured = false;
  auto r = run();
  EXPECT_TRUE(reviewer.calls.empty());
  EXPECT_EQ(r.verdict, Verdict::Reject);
  EXPECT_EQ(r.last().source, Source::Stage1Reject);
  EXPECT_GE(r.last().high(), 1u);
}

TEST_F(LoopTest, Stage1RejectCanBeRevisedByTheArchitect) {
  write_file(plan, kNoMustHaves);
  reviewer.answer = [](const ReviewerRequest&) { return ran("VERDICT: approve\n"); };
  architect.act = [&](const ArchitectRequest&) {
    write_file(plan, kGoodPlan);
    return ran("");
  };
  auto r = run();
  ASSERT_EQ(r.cycles.size(), 2u);
  EXPECT_EQ(r.cycles[0].source, Source::Stage1Reject);
  EXPECT_EQ(reviewer.calls.size(), 1u);
  EXPECT_EQ(r.verdict, Verdict::Approve);
  EXPECT_EQ(r.plan_id, "01-02");  // the id of the first cycle is kept
}

TEST_F(LoopTest, InterruptedStopsAtOnce) {
  reviewer.answer = [](const ReviewerRequest&) {
    AgentRun a;
    a.status = AgentRun::Status::Interrupted;
    return a;
  };
  auto r = run();
  EXPECT_TRUE(r.interrupted);
  EXPECT_TRUE(r.cycles.empty());
  EXPECT_EQ(r.verdict, Verdict::Reject);
}

TEST_F(LoopTest, MaxCyclesOneNeverRevises) {
  opts.max_cycles = 1;
  reviewer.answer = [](const ReviewerRequest&) { return ran(kRejectHigh); };
  auto r = run();
  EXPECT_TRUE(architect.calls.empty());
  EXPECT_EQ(r.review_loop_entry()["max"], 1);
}

TEST(ReviewLoop, DeltaIsNewOrChangedSeverityHighAndMedium) {
  auto f = [](std::string id, Severity s) {
    ReviewerFinding x;
    x.id = std::move(id);
    x.severity = s;
    return x;
  };
  std::vector<ReviewerFinding> prev = {f("A", Severity::High), f("B", Severity::Medium), f("E", Severity::Low)};
  std::vector<ReviewerFinding> cur = {f("A", Severity::High), f("B", Severity::High), f("C", Severity::Medium),
                                      f("D", Severity::Low), f("E", Severity::Medium)};
  auto d = delta_findings(cur, prev);
  std::vector<std::string> ids;
  for (const auto& x : d) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"B", "C", "E"}));
  EXPECT_EQ(delta_findings(prev, {}).size(), 2u);
}

TEST(ReviewLoop, PhaseHaltsWhenAnyPlanEndsRejectedAndDeduplicatesFindings) {
  TempDir dir;
  auto phase = dir / ".yolo-planning/phases/01-core";
  std::filesystem::create_directories(dir / ".yolo-planning");
  write_file(phase / "01-01-PLAN.md", plan_with_id("01"));
  write_file(phase / "01-02-PLAN.md", plan_with_id("02"));
  FakeReviewer reviewer;
  reviewer.answer = [](const ReviewerRequest& r) {
    if (r.plan_id == "01-01") return ran("VERDICT: approve\n- [id:f-1] [severity:low] issue: nit\n");
    return ran("VERDICT: reject\n- [id:f-1] [severity:high] issue: bad\n- [id:f-2] [severity:medium] issue: meh\n");
  };
  FakeArchitect architect;
  architect.act = [](const ArchitectRequest& r) { return append_to_plan(r, "\nchurn\n"); };
  RecordingObserver obs;
  LoopOptions opts;
  opts.max_cycles = 2;
  std::vector<PlanTarget> targets = {{phase / "01-01-PLAN.md", phase, ""}, {phase / "01-02-PLAN.md", phase, ""}};
  auto res = run_phase_loops(test::real_world(), targets, opts, reviewer, architect, obs);
  ASSERT_EQ(res.plans.size(), 2u);
  EXPECT_TRUE(res.halted);
  EXPECT_EQ(res.worst, Verdict::Reject);
  EXPECT_EQ(res.plans[0].verdict, Verdict::Approve);
  EXPECT_EQ(res.plans[1].cycles.size(), 2u);
  json acc = res.accumulated_findings();
  ASSERT_EQ(acc.size(), 3u);  // 01-01/f-1, 01-02/f-1, 01-02/f-2 (the latter two seen in 2 cycles, listed once)
  EXPECT_EQ(acc[0]["plan_id"], "01-01");
  EXPECT_EQ(acc[1]["plan_id"], "01-02");
  EXPECT_EQ(acc[1]["id"], "f-1");
  EXPECT_EQ(acc[2]["id"], "f-2");
  // Plans run in order.
  ASSERT_GE(reviewer.calls.size(), 3u);
  EXPECT_EQ(reviewer.calls[0].plan_id, "01-01");
  EXPECT_EQ(reviewer.calls[1].plan_id, "01-02");
}

TEST(ReviewLoop, FileHashOfMissingFileIsEmpty) {
  TempDir dir;
  EXPECT_EQ(file_hash(test::real_world(), dir / "nope.md"), "");
  write_file(dir / "a.md", "abc");
  EXPECT_EQ(file_hash(test::real_world(), dir / "a.md"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace yolo::review
