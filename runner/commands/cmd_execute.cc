// yolo execute [PHASE] [--plan NN] [--review] [--json] [--repo DIR]: runs a phase's waves
// (PROTOCOL.md sections 5-7). Exit 0 complete, 1 halted/failed, 3 paused at a gate,
// 4 waiting for SUMMARY files, 64 usage error.
#include <filesystem>

#include "protocol/ports/fs.h"
#include "runner/command.h"
#include "runner/phase_run.h"
#include "runner/gates_view.h"
#include "runner/output.h"
#include "runner/watcher.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string phase;
  std::string plan;
  std::string repo;
  bool review = false;
  bool json = false;
  bool watch = false;
  bool dry_run = false;
  int debounce_ms = -1;
};

int run(const Context& ctx, const Options& o) {
  ExecuteOptions e;
  std::string err;
  bool bad_repo = false;
  auto root = find_project(ctx, o.repo, err, &bad_repo);
  if (!root) {
    out::err("execute: " + err);
    return bad_repo ? kExecUsage : kExecHalted;
  }
  if (o.watch && !o.dry_run) {
    // Run, then keep running: the watcher re-runs `yolo execute` whenever a plan, an approval
    // or a SUMMARY changes what it can do, until SIGINT/SIGTERM.
    WatchOptions w;
    w.self_exe = self_exe();
    w.json = o.json;
    w.drive_execution = true;
    w.debounce_ms = o.debounce_ms;
    if (!o.phase.empty()) w.execute_args.push_back(o.phase);
    if (!o.plan.empty()) w.execute_args.insert(w.execute_args.end(), {"--plan", o.plan});
    if (o.review) w.execute_args.push_back("--review");
    return run_watch(ctx.at(*root), w);
  }
  e.phase = o.phase;
  e.only_plan = o.plan;
  e.review = o.review;
  e.json = o.json;
  e.dry_run = o.dry_run;
  e.self_exe = self_exe();
  return execute(ctx.at(*root), e);
}

const CommandRegistrar reg{Command{
    "execute",
    "Run a phase: validation, review gate, vision gate, then waves of executors and SUMMARY gates "
    "(exit 0 complete, 1 halted, 3 paused at a gate, 4 waiting for SUMMARY, 64 usage)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("PHASE", o->phase,
                     "Phase number or folder name under .yolo-planning/phases (default: the first not complete)");
      sub.add_option("--plan", o->plan, "Only this plan (NN or PHASE-NN); its dependencies must be complete");
      sub.add_flag("--review", o->review,
                   "Run the review gate (as review_gate: always); review_gate: never still skips it");
      sub.add_flag("--json", o->json, "JSON lines of events, then a result object");
      sub.add_flag("--dry-run", o->dry_run,
                   "Show the waves, the dependencies and what would run; run nothing, write nothing");
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--watch", o->watch,
                   "Keep running: re-review changed plans, resume when an approval lands, start the next wave when "
                   "SUMMARY files complete one (as `yolo watch --execute`; stop with Ctrl-C)");
      sub.add_option("--debounce-ms", o->debounce_ms,
                     "With --watch: settle time after a burst of events (default: config watch.debounce_ms, 20)");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
