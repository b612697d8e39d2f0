// The review gate of one plan or a phase's plans (PROTOCOL.md section 4), the one review path
// of `yolo review`, `yolo execute`'s review gate (Step 2b) and the watcher, each calling it in
// its own process and reading typed rows (protocol/review/review_report.h): Stage 1, the reviewer agent,
// the feedback loop with the architect, people's lines (or JSON lines), events, and the
// records: the phase's review ledger (protocol/review/review_ledger.h: reviews["{id}"] = {hash,
// verdict, path, reviewed_at, source, findings, loop}) and the state's
// review_loops["{id}"] = {cycle, max, status, findings_per_cycle} for the run's phase.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/state/config.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/review/review_loop.h"
#include "protocol/review/review_report.h"
#include "runner/agents.h"

namespace yolo::runner {

struct ReviewGateOptions {
  std::filesystem::path root;  // the project root (holds .yolo-planning)
  Config config;
  int max_cycles = 0;               // 0: config review_max_cycles
  bool json = false;                // JSON lines on stdout; the ⚠/✗ agent lines go to stderr
  bool changed_only = false;        // skip plans whose hash equals their ledger record's hash
  bool record_state = true;         // write the ledger / review_loops
  bool quiet = false;               // print nothing (not even warnings): the caller reads the result
  PlanCache* plan_cache = nullptr;  // a long-running caller's parsed plans (the watcher's)
  // A long-running caller's phase snapshots (the watcher's fresh lane), kept across passes
  // and told of changed plans by it; else this pass's own.
  PhaseSnapshots* snapshots = nullptr;
  std::string correlation_id;  // "": $YOLO_CORRELATION_ID, else the state's, else a new one
  // How the agent calls are shown; empty: a live line on a terminal (not with json or quiet).
  AgentProgress progress;
};

struct ReviewGateResult {
  review::PhaseLoopResult loops;  // the plans actually reviewed
  std::vector<review::PlanReview> rows;  // one per plan (reviewed or skipped), in order
  json summary;                   // the phase summary object (also printed for a phase)
  Verdict worst = Verdict::Approve;
  bool halted = false;       // some plan ends rejected: no plan of the phase executes
  int interrupt_signal = 0;  // SIGINT/SIGTERM/SIGHUP stopped an agent (its group is gone)
  std::vector<std::string> state_errors;
  // A plan passed on the Stage 1 verdict alone because its reviewer could not run (allowed
  // only with reviewer_required: false): not a real review, and the exit says so.
  bool fallback = false;
  int exit_code() const { return worst != Verdict::Reject && fallback ? kExitNoRealReview : yolo::exit_code(worst); }
  static constexpr int kExitNoRealReview = 4;
};

// Reviews the plans in order, each with its own loop; files and the time go through w. is_phase
// adds the summary table (and, with json, a final {"type":"phase_summary"} line).
ReviewGateResult run_review_gate(const World& w, const ReviewGateOptions& opts,
                                 const std::vector<review::PlanTarget>& plans, bool is_phase);

// The plan id of a plan file as the gate records it ("{phase}-{plan}", else the file stem).
std::string gate_plan_id(const World& w, const std::filesystem::path& plan_path);

}  // namespace yolo::runner
