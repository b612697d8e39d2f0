// `yolo execute`'s steps before the waves, a part of the Run (runner/phase_run_internal.h)
// with a class of its own and one entry, prepare(), which runs them in order: which phase runs
// and its plans read from disk, the agents' check, step 2 (the plans' SUMMARY files checked,
// the state prepared), Stage 1 of the plans (on a second thread) and its verdict, the review
// gate, the vision gate (RunGates, runner/run_gates.h), and a halt recorded in the state.
//
// The decisions are protocol's (execution::choose_phase, prepare, missing_agent_step, review_gate;
// the review loop; gates::ensure); this class carries them out against the files and says what
// happened through its Teller (runner/run_teller.h: an event for people and machines, a note,
// the event log) and its Host: the person's next step, the run's own steps between its own
// (the plans it keeps, a dry run, what a stopped run left), and the run's last word (finish).
// A step returns -1 to go on, else the exit code the run ends with (what finish returned).
#pragma once
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "runner/phase_parts.h"
#include "runner/plan_run.h"
#include "runner/run_gates.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

class RunPrelude {
 public:
  struct Host {
    std::function<void(std::string)> next_step;  // the person's next step
    // The run ends here with this code, result and message (its last word); returns code.
    std::function<int(int code, execution::Result result, const std::string& message)> finish;
    // The run ends as a part that stopped it said (its code, result, message); returns the code.
    std::function<int()> stopped;
    // ---- the run's own steps, in prepare()'s order ----
    // The plans as read: each plan's record (content hash, checks) and the programs the checks
    // name, the run's to keep (entries: prepare()'s argument).
    std::function<void(std::vector<PlanRun> runs, std::vector<std::string> check_programs)> plans_read;
    std::function<int()> dry_run;  // --dry-run: what the run would do, said; its exit code
    // Before step 2 (doc: the state as the run read it): what a stopped run left ended, its
    // worktrees and dispatch readied. -1 to go on, else the exit code.
    std::function<int(const json& doc)> ready;
    // ---- step 2 said (the run's report) ----
    // The phase's run starts: its plans and waves, whether it resumes (done: the plans whose
    // SUMMARY passed), whether a run that died left plans running.
    std::function<void(size_t plans, long long total_waves, bool resumed, size_t done, bool was_running)> phase_start;
    std::function<void(const std::string& plan)> summary_not_counted;  // written after the run began
    std::function<void(const std::string& plan, const json& findings)> summary_failed;  // no executor to redo it
    // The state as step 2 wrote it: the run's state now (not read again).
    std::function<void(json doc, std::string stamp)> state_written;
    std::function<void(size_t plans)> already_complete;  // every plan has a SUMMARY that passes
  };
  RunPrelude(const World& world, std::filesystem::path root, const Config& cfg, const ExecuteOptions& o, Teller& tell,
             RunGates& gates, Host host)
      : world_(world), root_(std::move(root)), cfg_(cfg), o_(o), tell_(tell), gates_(gates), host_(std::move(host)) {}
  RunPrelude(const RunPrelude&) = delete;
  RunPrelude& operator=(const RunPrelude&) = delete;

  // ---- the one entry (run_prelude.cc) ----------------------------------------------------
  // Every step before the waves, in order: the phase chosen (into phase), its plans read (into
  // entries; the rest handed to the run), --plan checked, a dry run (Host), the agents, what a
  // stopped run left (Host), Stage 1 started, step 2 (cid: the run's correlation id), an
  // already complete phase, Stage 1's verdict, the review gate, the vision gate. -1: the waves
  // go on; else the exit code the run ended with. snap: the state as the run read it.
  int prepare(const state::LoadResult& snap, PhaseDir& phase, std::vector<PlanEntry>& entries, std::string& cid);
  const std::string& fresh_cid() const { return fresh_cid_; }  // the correlation id a new run gets

  // ---- the steps (run_prelude.cc: the phase, step 2, the review gate) ----------------------
  // The phase asked for, else the first not complete, into phase. snap: the state as the run
  // read it.
  int choose_phase(const state::LoadResult& snap, PhaseDir& phase);
  // Each plan's SUMMARY checked (entries' summary set), the state prepared for the phase's
  // run (a new run gets fresh_cid), its start said; a SUMMARY that appeared after the run
  // began is not counted. cid: the run's correlation id as the state holds it. An empty phase
  // halts.
  int step2(const PhaseDir& phase, std::vector<PlanEntry>& entries, const std::string& fresh_cid, std::string& cid);
  // The review gate (`yolo review PHASE --changed` in this process) when the config or
  // --review asks for it; a rejected phase halts the run. cid: the run's correlation id.
  int review_gate(const PhaseDir& phase, const std::vector<PlanEntry>& entries, const std::string& cid);

  // ---- the plans, the agents, Stage 1, a halt (run_prelude_plans.cc) -----------------------
  // What load_plans read of the phase's plans, in file order.
  struct Plans {
    std::vector<PlanEntry> entries;
    std::vector<PlanRun> runs;  // each plan's content hash and checks as read
    // The programs the checks name inside the project (absolute).
    std::vector<std::string> check_programs;
  };
  // Each plan read, parsed and hashed once per execute; kept for Stage 1 (loaded()) until
  // precheck.
  Plans load_plans(const PhaseDir& phase);
  const std::vector<LoadedPlan>& loaded() const { return loaded_; }
  // The SUMMARY gate (the config's summary_checks) on plan e's SUMMARY as it is on disk; sp:
  // its name as summary_rel_for gives it, when the caller has it.
  SummaryState check_summary(const PlanEntry& e, json& findings, const std::string* sp = nullptr);
  // A configured agent whose program does not exist: refused, or said (missing_agent_step).
  int check_agents();
  // Stage 1 of loaded() on another thread; precheck() waits for its verdict.
  void start_stage1(const PhaseDir& phase);
  bool stage1_pending() const { return stage1_.valid(); }
  // Stage 1's verdicts said; a rejected plan halts the run. The plans as read are dropped.
  int precheck(const PhaseDir& phase);
  // The state's run halted, with why in the event log; false when the state was not written.
  bool set_halted(const std::string& reason);

 private:
  bool phase_complete_on_disk(const PhaseDir& p);
  // The plan files of phase p that the run in doc does not know: added after it completed.
  std::vector<std::string> plans_not_in_run(const json& doc, const PhaseDir& p);
  static std::string plan_rel_path(const PhaseDir& p, const std::filesystem::path& f,
                                   const std::filesystem::path& root);
  void note_review_outcomes(const std::vector<review::PlanReview>& rows);

  const World& world_;
  std::filesystem::path root_;
  const Config& cfg_;
  const ExecuteOptions& o_;
  Teller& tell_;  // what it says: events, notes, the event log
  RunGates& gates_;  // the vision gate
  Host host_;
  GitCli git_{root_};  // the SUMMARY gate's claims about commits
  std::string fresh_cid_;
  bool complete_ = false;  // step 2 found the phase's run complete
  std::vector<LoadedPlan> loaded_;  // the plans as load_plans read them, until precheck
  // Stage 1 of loaded_, computed on another thread until precheck() takes it. Declared after
  // loaded_: destroyed (waited for) before it.
  std::future<std::vector<StructuralReview>> stage1_;
};

}  // namespace yolo::runner::phase
