// A plan's gates in its worktree (SUMMARY gate, scope fence, the SUMMARY committed on its
// branch) as one job that needs only its own inputs: WorktreeDriver::gate (plan_gate.cc,
// runner/run_worktrees.h) runs it on a worker thread of the loop, several plans' at once, and
// records its answer on the loop.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/plan/scope_fence.h"
#include "protocol/ports/world.h"
#include "protocol/run/execution.h"
#include "protocol/summary/summary_gate.h"
#include "runner/git.h"
#include "runner/worktree.h"

namespace yolo::runner::phase {

// Copies, taken on the loop: the job reads nothing the loop may change while it runs. The
// slot's GitCli and the worktree cache are shared: the GitCli is the slot's own (no other
// plan has the slot until this one concluded), and the job calls only the cache's git
// helpers (scan, changed_files, commit_paths), never its record of what each slot holds.
struct GateIn {
  PlanWorktree w;
  std::string plan_id, plan_path, summary_path;  // plan and SUMMARY relative to the worktree
  json record;                                   // the plan's worktree record
  std::string objects_error;                     // its commits could not be taken in
  scope::Options scope;                          // severities; exempt is filled by the job
  SummaryMode mode = SummaryMode::Strict;
  bool commit = true;  // the plan may pass (no failed check): only then is its SUMMARY committed
  const World* world = nullptr;
  GitCli* git = nullptr;
  Worktrees* trees = nullptr;
};

struct GateOut {
  execution::SummaryState state = execution::SummaryState::Failed;
  json findings = json::array();
  json set = json::object();  // the plan record's worktree and scope
  json record;                // the worktree record after the gate (head, merge: pending once passed)
  // What the slot holds now, for the cache (Worktrees::remember), recorded on the loop:
  // Keep: untouched; Forget: unknown; Remember: at `tip`, `changed` since its base, `left`.
  enum class Slot { Keep, Forget, Remember } slot = Slot::Keep;
  std::string tip;
  std::vector<std::string> changed;
  std::vector<StatusEntry> left;
};

// The gates; on any thread. Never throws out (an exception becomes a failed gate).
GateOut gate_worktree(const GateIn& in);

}  // namespace yolo::runner::phase
