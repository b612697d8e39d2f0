#include "protocol/run/execution.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/base/schema.h"
#include "protocol/state/state.h"

namespace yolo::execution {
namespace {

const PhaseInfo kPhase{1, "demo", ".yolo-planning/phases/01-demo"};

std::vector<PlanEntry> entries() {
  std::vector<PlanEntry> v;
  for (int i = 1; i <= 3; ++i) {
    PlanEntry e;
    e.plan = "0" + std::to_string(i);
    e.id = "01-" + e.plan;
    e.title = "plan " + e.plan;
    e.wave = i == 3 ? 2 : 1;
    e.path = kPhase.dir + "/" + e.id + "-PLAN.md";
    v.push_back(e);
  }
  return v;
}

PrepareOptions opts(bool retry = false) { return PrepareOptions{"2026-11-22T05:00:00Z", "cid-new", retry}; }

std::string status_of(const json& doc, const std::string& id) { return (*find_plan(doc, id))["status"]; }

TEST(Execution, NewRunInitialisesAValidState) {
  json doc = json::object();
  Prepared p = prepare(doc, kPhase, entries(), opts());
  EXPECT_TRUE(p.new_run);
  EXPECT_EQ(doc["status"], "running");
  EXPECT_EQ(doc["correlation_id"], "cid-new");
  EXPECT_EQ(doc["phase"], 1);
  EXPECT_EQ(doc["phase_name"], "demo");
  EXPECT_EQ(doc["total_waves"], 2);
  EXPECT_EQ(doc["wave"], 1);
  EXPECT_EQ(doc["steps_completed"], json::array({"step_2"}));
  EXPECT_EQ(doc["plans"].size(), 3u);
  EXPECT_EQ(state::validate(doc).error, "");
}

TEST(Execution, APlanOptionNamingNoPlanIsAUsageErrorNamingTheIds) {
  const auto e = entries();
  EXPECT_FALSE(unknown_plan(e, "", kPhase.dir)) << "no --plan";
  EXPECT_FALSE(unknown_plan(e, "01-03", kPhase.dir)) << "by id";
  EXPECT_FALSE(unknown_plan(e, "02", kPhase.dir)) << "by plan number";
  auto bad = unknown_plan(e, "09", kPhase.dir);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->message, "no plan '09' in .yolo-planning/phases/01-demo");
  EXPECT_EQ(bad->next, "`yolo execute --plan ID` with one of: 01-01, 01-02, 01-03");
  bad = unknown_plan({}, "01", kPhase.dir);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->next, "`yolo execute --plan ID` with one of: (no plans)");
}

TEST(Execution, ResumeKeepsCorrelationIdAndSteps) {
  json doc = {{"status", "running"}, {"correlation_id", "cid-old"}};
  prepare(doc, kPhase, entries(), opts());
  mark_step(doc, "step_2b");
  Prepared p = prepare(doc, kPhase, entries(), opts());
  EXPECT_FALSE(p.new_run);
  EXPECT_EQ(doc["correlation_id"], "cid-old");
  EXPECT_TRUE(has_step(doc, "step_2b"));
  mark_step(doc, "step_2b");
  EXPECT_EQ(doc["steps_completed"].size(), 2u);
}

TEST(Execution, AwaitingApprovalIsNeverReplacedWithRunning) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  doc["status"] = "awaiting_approval";
  prepare(doc, kPhase, entries(), opts());
  EXPECT_EQ(doc["status"], "awaiting_approval");
}

TEST(Execution, HaltByRejectedGateIsKeptOtherHaltsAreRetried) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  doc["status"] = "halted";
  prepare(doc, kPhase, entries(), opts());
  EXPECT_EQ(doc["status"], "running");  // a failed plan: a new execute retries
  doc["status"] = "halted";
  doc["gates"] = json::array(
      {{{"id", "vision-1"}, {"gate_type", "vision"}, {"status", "REJECTED"}, {"created_at", "2026-11-22T05:00:00Z"}}});
  EXPECT_TRUE(halted_by_gate(doc));
  prepare(doc, kPhase, entries(), opts());
  EXPECT_EQ(doc["status"], "halted");
}

TEST(Execution, PlansWithAPassingSummaryAreComplete) {
  json doc = json::object();
  auto e = entries();
  e[0].summary = SummaryState::Passed;
  prepare(doc, kPhase, e, opts());
  EXPECT_EQ(status_of(doc, "01-01"), "complete");
  EXPECT_EQ(status_of(doc, "01-02"), "pending");
  // Even when the state said otherwise.
  (*find_plan(doc, "01-01"))["status"] = "failed";
  prepare(doc, kPhase, e, opts());
  EXPECT_EQ(status_of(doc, "01-01"), "complete");
  // And a plan the state called complete whose SUMMARY is gone is not.
  e[0].summary = SummaryState::Missing;
  prepare(doc, kPhase, e, opts());
  EXPECT_EQ(status_of(doc, "01-01"), "pending");
}

// A SUMMARY that appears during a run for a plan the run never started was written by
// something else than the plan's executor (in the checkout, another plan's executor may
// write the phase folder): the plan is not complete, it runs.
TEST(Execution, ASummaryThatAppearedDuringTheRunCountsOnlyForAPlanTheRunStarted) {
  json doc = json::object();
  auto e = entries();
  prepare(doc, kPhase, e, opts());
  (*find_plan(doc, "01-01"))["status"] = "running";
  for (auto& x : e) x.summary = SummaryState::Passed;
  Prepared p = prepare(doc, kPhase, e, opts());
  EXPECT_EQ(status_of(doc, "01-01"), "complete");  // its own executor wrote it
  EXPECT_EQ(status_of(doc, "01-02"), "pending");
  EXPECT_EQ(status_of(doc, "01-03"), "pending");
  EXPECT_EQ(p.summary_not_counted, (std::vector<std::string>{"01-02", "01-03"}));
  EXPECT_TRUE(find_plan(doc, "01-02")->contains("summary_not_counted"));
  EXPECT_EQ(doc["status"], "running");
  EXPECT_EQ(state::validate(doc).error, "");
  // A SUMMARY there when the run began counts.
  json fresh = json::object();
  EXPECT_TRUE(prepare(fresh, kPhase, e, opts()).summary_not_counted.empty());
  EXPECT_EQ(status_of(fresh, "01-02"), "complete");
  // Complete once in this run, its SUMMARY gone and back: it counts again.
  e[1].summary = SummaryState::Missing;
  prepare(fresh, kPhase, e, opts());
  EXPECT_EQ(status_of(fresh, "01-02"), "pending");
  e[1].summary = SummaryState::Passed;
  EXPECT_TRUE(prepare(fresh, kPhase, e, opts()).summary_not_counted.empty());
  EXPECT_EQ(status_of(fresh, "01-02"), "complete");
}

// A killed run's finished work is taken up only from the slot the state gave the plan.
TEST(Execution, AKilledRunsWorkIsTakenUpOnlyFromTheSlotTheStateGaveThePlan) {
  const json rec = {{"id", "01-02"},
                    {"worktree", {{"path", "/p/.git/yolo-worktrees/slot-1"}, {"branch", "yolo/r/01-02"}, {"merge", "none"}}}};
  EXPECT_EQ(slot_to_take_up(rec, "yolo/r/01-02"), "/p/.git/yolo-worktrees/slot-1");
  EXPECT_EQ(slot_to_take_up(rec, "yolo/r/01-04"), "");  // another plan's branch
  json gated = rec;
  gated["worktree"]["merge"] = "pending";
  EXPECT_EQ(slot_to_take_up(gated, "yolo/r/01-02"), "");  // gated already: merged, not taken up
  EXPECT_EQ(slot_to_take_up(json{{"id", "01-04"}}, "yolo/r/01-04"), "");  // never given a slot
}

TEST(Execution, AMergeTakenUpCompletesOrFailsItsPlanAndARefusalKeepsIt) {
  EXPECT_EQ(status_after_merge(MergeState::Merged), PlanStatus::Complete);
  EXPECT_EQ(status_after_merge(MergeState::Conflict), PlanStatus::Failed);
  EXPECT_EQ(status_after_merge(MergeState::Pending), std::nullopt);
  EXPECT_EQ(status_after_merge(MergeState::None), std::nullopt);
}

TEST(Execution, AMergeInALiveRunCompletesItsPlanUnlessItsBranchConflicts) {
  json findings = json::array({merge_conflict_finding("yolo/01-02", {"src/a.c", "src/b.c"}, "its branch conflicts")});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].value("severity", ""), "high");
  EXPECT_EQ(findings[0].value("check", ""), "merge");
  EXPECT_EQ(findings[0]["files"], json::array({"src/a.c", "src/b.c"}));
  EXPECT_NE(findings[0].value("suggested_fix", "").find("yolo/01-02"), std::string::npos);
  PlanEnd conflict = end_after_merge(MergeState::Conflict, "its branch conflicts", findings);
  EXPECT_EQ(conflict.status, PlanStatus::Failed);
  EXPECT_EQ(conflict.error, "its branch conflicts");
  EXPECT_EQ(conflict.findings, findings);
  for (MergeState s : {MergeState::Merged, MergeState::Pending, MergeState::None}) {
    PlanEnd e = end_after_merge(s, "git could not merge it", findings);  // refused: gated, nothing lost
    EXPECT_EQ(e.status, PlanStatus::Complete) << to_string(s);
    EXPECT_EQ(e.error, "") << to_string(s);
    EXPECT_TRUE(e.findings.empty()) << to_string(s);
  }
}

TEST(Execution, FailingSummaryIsFailedUnlessAnExecutorRetries) {
  json doc = json::object();
  auto e = entries();
  e[1].summary = SummaryState::Failed;
  e[1].summary_findings = json::array({{{"severity", "high"}, {"issue", "no commits"}}});
  prepare(doc, kPhase, e, opts(false));
  EXPECT_EQ(status_of(doc, "01-02"), "failed");
  EXPECT_EQ((*find_plan(doc, "01-02"))["findings"].size(), 1u);
  EXPECT_EQ(state::validate(doc).error, "");
  prepare(doc, kPhase, e, opts(true));
  EXPECT_EQ(status_of(doc, "01-02"), "pending");
  EXPECT_FALSE(find_plan(doc, "01-02")->contains("findings"));
}

TEST(Execution, RunningLeftByADeadRunIsPendingReadyStaysReady) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  (*find_plan(doc, "01-01"))["status"] = "running";
  (*find_plan(doc, "01-02"))["status"] = "ready";
  Prepared p = prepare(doc, kPhase, entries(), opts());
  EXPECT_TRUE(p.was_running);
  EXPECT_EQ(status_of(doc, "01-01"), "pending");
  EXPECT_EQ(status_of(doc, "01-02"), "ready");
}

TEST(Execution, ResumeKeepsEachPlansWorktreeScopeAndChecks) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  json wt = {{"path", "/r/.git/yolo-worktrees/ab/01-01"},
             {"branch", "yolo/ab/01-01"},
             {"base", "abc1234"},
             {"head", "def5678"},
             {"merge", "pending"}};
  (*find_plan(doc, "01-01"))["worktree"] = wt;
  (*find_plan(doc, "01-01"))["checks"] = json::array({{{"name", "t"}, {"argv", {"true"}}, {"passed", true}}});
  (*find_plan(doc, "01-01"))["scope"] = {{"changed", {"a"}}};
  prepare(doc, kPhase, entries(), opts(true));
  EXPECT_EQ((*find_plan(doc, "01-01"))["worktree"], wt);  // a resumed run merges what passed
  EXPECT_EQ((*find_plan(doc, "01-01"))["checks"][0]["name"], "t");
  EXPECT_EQ((*find_plan(doc, "01-01"))["scope"]["changed"], json::array({"a"}));
  EXPECT_FALSE(find_plan(doc, "01-02")->contains("worktree"));
  EXPECT_TRUE(schema::validate("execution-state", doc).empty());
}

TEST(Execution, AllCompleteMarksTheRunComplete) {
  json doc = json::object();
  auto e = entries();
  for (auto& x : e) x.summary = SummaryState::Passed;
  prepare(doc, kPhase, e, opts());
  EXPECT_EQ(doc["status"], "complete");
  EXPECT_TRUE(doc["completed_at"].is_string());
  EXPECT_EQ(doc["wave"], 2);
}

TEST(Execution, AnotherPhaseStartsANewRunButKeepsApprovalAndGates) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  doc["approval"] = {{"plan_path", ".yolo-planning/ROADMAP.md"}, {"approved", true}};
  mark_step(doc, "step_2c");
  PhaseInfo two{2, "next", ".yolo-planning/phases/02-next"};
  Prepared p = prepare(doc, two, {}, opts());
  EXPECT_TRUE(p.new_run);
  EXPECT_EQ(doc["approval"]["approved"], true);
  EXPECT_FALSE(has_step(doc, "step_2c"));
  EXPECT_EQ(doc["phase"], 2);
}

TEST(Execution, NodesCarryStatusesFromTheDocument) {
  json doc = json::object();
  auto e = entries();
  e[2].depends_on = {"01"};
  prepare(doc, kPhase, e, opts());
  (*find_plan(doc, "01-01"))["status"] = "complete";
  auto n = nodes(doc, e);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].status, waves::PlanStatus::Complete);
  EXPECT_EQ(n[2].depends_on, std::vector<std::string>{"01"});
  update_wave(doc);
  EXPECT_EQ(doc["wave"], 1);
}

TEST(Execution, PlanStatusesListEachEntryWithItsStatusInTheDocumentInEntryOrder) {
  json doc = json::object();
  auto e = entries();
  prepare(doc, kPhase, e, opts());
  (*find_plan(doc, "01-02"))["status"] = "failed";
  (*find_plan(doc, "01-01"))["status"] = "complete";
  doc["plans"].erase(2);  // no record of the third plan
  EXPECT_EQ(plan_statuses(doc, e), (json{{{"id", e[0].id}, {"status", "complete"}},
                                         {{"id", e[1].id}, {"status", "failed"}},
                                         {{"id", e[2].id}, {"status", "pending"}}}));
  EXPECT_EQ(plan_statuses(json::object(), {}), json::array());
}

// The batched plan records of a run: a start then an end of the same plan, merged before
// they are written or written one after the other, leave the same record.
TEST(PlanUpdates, MergedOrAppliedInTurnTheyWriteTheSameRecord) {
  json base = json::object();
  prepare(base, kPhase, entries(), opts());
  json exec = {{"pid", 41}, {"pgid", 41}, {"start_ticks", 900}, {"boot_id", "b"}};
  PlanUpdate start{PlanStatus::Running, std::string("2026-11-22T05:01:00Z"), nullptr, "", nullptr};
  start.set = {{"scope", nullptr}, {"checks", nullptr}, {"executor", exec}};
  PlanUpdate end{PlanStatus::Complete, std::nullopt, json("2026-11-22T05:02:00Z"), "", nullptr};
  end.set = {{"checks", json::array()}};

  json in_turn = base;
  auto c1 = apply_plan_updates(in_turn, {{"01-02", start}});
  ASSERT_EQ(c1, std::vector<size_t>{1});
  EXPECT_EQ(in_turn["plans"][1]["status"], "running");
  EXPECT_EQ(in_turn["plans"][1]["executor"], exec);
  EXPECT_EQ(in_turn["plans"][1]["started_at"], "2026-11-22T05:01:00Z");
  apply_plan_updates(in_turn, {{"01-02", end}});

  json merged = base;
  PlanUpdate m = merge_updates(start, end);
  EXPECT_EQ(m.started_at, start.started_at);
  EXPECT_EQ(m.set["checks"], json::array());  // the later one wins
  EXPECT_TRUE(m.set.contains("scope"));       // the earlier one's fields are kept
  apply_plan_updates(merged, {{"01-02", m}});
  EXPECT_EQ(merged, in_turn);

  const json& p = merged["plans"][1];
  EXPECT_EQ(p["status"], "complete");
  EXPECT_EQ(p["started_at"], "2026-11-22T05:01:00Z");
  EXPECT_EQ(p["completed_at"], "2026-11-22T05:02:00Z");
  EXPECT_FALSE(p.contains("executor")) << "an ended plan keeps no executor";
  EXPECT_FALSE(p.contains("scope"));
  EXPECT_EQ(p["checks"], json::array());
  EXPECT_EQ(merged["plans"][0], base["plans"][0]) << "other plans untouched";
  EXPECT_EQ(state::validate(merged).error, "");
}

TEST(PlanUpdates, AFailureSetsErrorAndFindingsAndTheWaveMovesOn) {
  json doc = json::object();
  prepare(doc, kPhase, entries(), opts());
  json f = json::array({{{"severity", "high"}, {"check", "x"}, {"issue", "y"}}});
  auto changed =
      apply_plan_updates(doc, {{"01-01", {PlanStatus::Complete, std::nullopt, json("2026-11-22T05:01:00Z"), "", nullptr}},
                               {"01-02", {PlanStatus::Failed, std::nullopt, json("2026-11-22T05:02:00Z"), "boom", f}},
                               {"01-09", {PlanStatus::Complete, std::nullopt, json("2026-11-22T05:03:00Z"), "", nullptr}}});
  EXPECT_EQ(changed, (std::vector<size_t>{0, 1})) << "an id without a record is skipped";
  EXPECT_EQ(doc["plans"][1]["error"], "boom");
  EXPECT_EQ(doc["plans"][1]["findings"], f);
  EXPECT_EQ(doc["wave"], 1);
  // Passed on a later try: error and findings removed.
  apply_plan_updates(doc, {{"01-02", {PlanStatus::Complete, std::nullopt, json("2026-11-22T05:04:00Z"), "", nullptr}}});
  EXPECT_FALSE(doc["plans"][1].contains("error"));
  EXPECT_FALSE(doc["plans"][1].contains("findings"));
  EXPECT_EQ(doc["wave"], 2) << "wave 1 complete: the current wave is 2";
  EXPECT_EQ(state::validate_changed_plans(doc, changed).error, "");
  json none = json::object();
  EXPECT_TRUE(
      apply_plan_updates(none, {{"01-01", {PlanStatus::Complete, std::nullopt, json("2026-11-22T05:09:00Z"), "", nullptr}}})
          .empty());
}

TEST(ExecutorsJournal, LinesReadBackAsRunningPlansWithTheirExecutors) {
  json r1 = {{"pid", 41}, {"pgid", 41}, {"start_ticks", 900}, {"boot_id", "b"}};
  json r2 = {{"pid", 42}, {"pgid", 42}, {"start_ticks", 901}, {"boot_id", "b"}};
  std::string text = journal_line("01-01", r1) + journal_line("01-02", r2);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  json doc = journal_plans(text);
  ASSERT_EQ(doc["plans"].size(), 2u);
  EXPECT_EQ(doc["plans"][0]["id"], "01-01");
  EXPECT_EQ(doc["plans"][0]["status"], "running");
  EXPECT_EQ(doc["plans"][0]["executor"], r1);
  EXPECT_EQ(doc["plans"][1]["executor"], r2);
}

TEST(ExecutorsJournal, TornAndForeignLinesAreSkipped) {
  json r = {{"pid", 41}, {"pgid", 41}, {"start_ticks", 900}, {"boot_id", "b"}};
  std::string whole = journal_line("01-01", r);
  std::string text = "not json\n" + std::string("{\"plan\": \"\", \"executor\": {}}\n") + "{\"plan\": \"01-03\"}\n" +
                     "{\"plan\": 7, \"executor\": {}}\n" + std::string(200, '[') + "\n" + whole +
                     whole.substr(0, whole.size() / 2);  // a last line cut short by a kill
  json doc = journal_plans(text);
  ASSERT_EQ(doc["plans"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["plans"][0]["id"], "01-01");
  EXPECT_TRUE(journal_plans("")["plans"].empty());
}

}  // namespace
}  // namespace yolo::execution
