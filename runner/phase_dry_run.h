// `yolo execute --dry-run`: what a run of the phase would do (its waves, what each plan would
// run, Stage 1's rejections, the review gate, dispatch or worktrees), said and nothing started
// or written. A function of what the Run has read, not a part of it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runner/phase_parts.h"
#include "runner/phase_run.h"

namespace yolo::runner::phase {

struct DryRunInput {
  const World& world;
  const stdfs::path& root;
  const Config& cfg;
  const ExecuteOptions& options;
  const PhaseDir& phase;
  const std::vector<PlanEntry>& entries;
  const std::vector<LoadedPlan>& loaded;  // the plans as read, for Stage 1
  bool dispatched = false;                // each plan a job of a cluster engine
  int dispatch_parallel = 0;             // jobs at once, when dispatched
  bool isolated = false;                  // each plan in its own worktree
  // Whether a plan's SUMMARY is there and passes its gate (findings: why not), as the run judges it.
  std::function<execution::SummaryState(const PlanEntry&, json& findings)> check_summary;
};

// Prints the dry run (JSON with options.json) and returns execute's exit code: halted when
// Stage 1 rejects a plan, complete otherwise. next: the person's next step.
int dry_run(const DryRunInput& in, std::string& next);

}  // namespace yolo::runner::phase
