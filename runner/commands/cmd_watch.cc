// yolo watch [REPO]: react live to .yolo-planning changes.
#include "protocol/ports/fs.h"
#include "runner/child_keeper.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/output.h"
#include "runner/watcher.h"

namespace yolo::runner {
namespace {

struct Options {
  std::string repo;
  bool json = false;
  bool execute = false;
  bool no_review = false;
  bool fix = false;
  int debounce_ms = -1;
};

int run(const Context& ctx, const Options& o) {
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) {
    out::err("✗ " + err);
    return kExitFail;
  }
  start_keeper();  // while this process is small: it loads every plan next (runner/child_keeper.h)
  WatchOptions w;
  w.self_exe = self_exe();
  w.json = o.json;
  w.drive_execution = o.execute;
  w.debounce_ms = o.debounce_ms;
  w.review = !o.no_review;
  w.fix = o.fix;
  return run_watch(ctx.at(*root), w);
}

const CommandRegistrar reg{Command{
    "watch", "Watch .yolo-planning: re-review changed plans, resume on approval, advance waves on SUMMARY",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("REPO", o->repo, "Project folder (default: found from the current folder)");
      sub.add_flag("--json", o->json, "One JSON line per event");
      sub.add_flag("--execute", o->execute, "Also drive `yolo execute` (same as `yolo execute --watch`)");
      sub.add_flag("--no-review", o->no_review, "Do not review changed plans");
      sub.add_flag("--fix", o->fix,
                   "Let the architect revise rejected plans (default off: a plan you just saved is never rewritten; "
                   "config watch.fix turns it on too)");
      sub.add_option("--debounce-ms", o->debounce_ms,
                     "Settle time after a burst of events (default: config watch.debounce_ms, 20)");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
