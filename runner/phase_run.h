// `yolo execute`: one phase, end to end (PROTOCOL.md sections 5-7).
//
//   Step 2   load the phase's plans, initialise or resume the state (correlation id,
//            steps_completed, plan statuses: a plan whose SUMMARY passes is complete)
//            and run the cross-plan validation (any Stage 1 reject halts before anything runs)
//   Step 2b  the review gate (`yolo review PHASE_DIR --changed`, in this process) when config
//            review_gate is `always` or with --review
//   Step 2c  the vision gate on .yolo-planning/ROADMAP.md: approved and unchanged since
//            (digest) or the run pauses; with no approval object execute opens it and its
//            approver decides
//   waves    plans by wave and depends_on, up to max_parallel executors at once on one
//            libuv loop, each with its timeout; after each one the SUMMARY gate; with
//            wave_approval a `wave` gate before each wave after the first; with no
//            executor configured the wave's plans become `ready` and execute waits for
//            their SUMMARY files.
#pragma once
#include <filesystem>
#include <string>

#include "protocol/run/execute_rules.h"
#include "runner/context.h"

namespace yolo::runner {

// Exit codes of `yolo execute` (docs/commands.md, "Exit codes").
inline constexpr int kExecComplete = execution::kExitComplete;
inline constexpr int kExecHalted = execution::kExitHalted;
inline constexpr int kExecPaused = execution::kExitPaused;
inline constexpr int kExecWaitingSummary = execution::kExitWaitingSummary;
inline constexpr int kExecUsage = execution::kExitUsage;

struct ExecuteOptions {
  std::string phase;           // number or folder name under .yolo-planning/phases; empty: first not complete
  std::string only_plan;       // --plan NN: only this plan (its dependencies must be complete)
  bool review = false;         // --review
  bool json = false;           // JSON lines of events
  bool dry_run = false;        // --dry-run: show the waves and what would run; run and write nothing
  std::string self_exe;        // the yolo binary (for `yolo review`)
};

// ctx: the command's World and project root (the root holds .yolo-planning).
int execute(const Context& ctx, const ExecuteOptions& opts);

}  // namespace yolo::runner
