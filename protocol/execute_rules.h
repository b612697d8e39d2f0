// What `yolo execute` decides before and after a run that others need too: its exit codes and
// what each says (the watcher reads them), and whether the review gate runs.
#pragma once
#include <string>

namespace yolo::execution {

// The exit codes of `yolo execute` (docs/commands.md), for execute itself and for whoever
// started it (the watcher).
inline constexpr int kExitComplete = 0;        // the phase (or --plan's plan) is complete, or a dry run
inline constexpr int kExitHalted = 1;          // halted or failed; also a broken state or config file
inline constexpr int kExitPaused = 3;          // paused at a gate
inline constexpr int kExitWaitingSummary = 4;  // no executor: waiting for SUMMARY files
inline constexpr int kExitUsage = 64;          // an unknown PHASE or --plan: nothing written
enum class ExecuteEnd { Complete, HaltedOrFailed, Paused, WaitingForSummaries, Other };
// What an exit code of `yolo execute` says about the run.
ExecuteEnd execute_end(int exit_code);
// Whether that end is one the run chose (complete, paused, waiting), not a failure to report.
bool expected_end(ExecuteEnd e);

// Whether execute runs the review gate: `review_gate` "always" does, "never" never does (not
// even with --review), "on_request" (the default) and any other value only with --review.
enum class ReviewGate { Runs, OffByConfig, NotRequested };
ReviewGate review_gate(const std::string& setting, bool review_flag);

}  // namespace yolo::execution
