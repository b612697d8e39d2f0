// `yolo watch`: one libuv loop reacting to .yolo-planning changes (PROTOCOL.md).
// Events only say that something changed; after a debounce the watcher reconciles by
// content hash against what was last reviewed (the review ledgers), reviews exactly the
// plans whose content changed (in this process: runner/watch_reviews.h, a fresh lane for
// saves beside a backlog lane), and drives `yolo execute` when an approval, a SUMMARY or
// ROADMAP changes the run's inputs. The parts: runner/watcher_impl.h.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "runner/context.h"

namespace yolo::runner {

struct WatchOptions {
  std::string self_exe;                   // the yolo binary to run children with
  bool json = false;                      // JSON lines instead of human lines
  bool drive_execution = false;           // run `yolo execute` as inputs change (execute --watch)
  int debounce_ms = -1;                   // <0: config watch.debounce_ms
  bool review = true;                     // review changed plans
  bool fix = false;                       // --fix: the architect may revise rejected plans (else config watch.fix)
  std::vector<std::string> execute_args;  // extra arguments for each `yolo execute` child (PHASE, --plan, --review)
};

// Runs until SIGINT/SIGTERM. Returns the exit code.
// ctx: the command's World and project root (the root holds .yolo-planning).
int run_watch(const Context& ctx, const WatchOptions& opts);

}  // namespace yolo::runner
