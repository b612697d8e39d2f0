// yolo execute [PHASE] [--plan NN] [--review] [--json] [--repo DIR]: runs a phase's waves
// (PROTOCOL.md sections 5-7). Exit 0 complete, 1 halted/failed, 3 paused at a gate,
// 4 waiting for SUMMARY files, 64 usage error.
#include <filesystem>

#include "protocol/fs.h"
#include "runner/command.h"
#include "runner/executor.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string phase;
  std::string plan;
  std::string repo;
  bool review = false;
  bool json = false;
};

int run(const Options& o) {
  ExecuteOptions e;
  std::error_code ec;
  stdfs::path start = o.repo.empty() ? stdfs::current_path(ec) : stdfs::path(o.repo);
  if (!o.repo.empty() && !stdfs::is_directory(start, ec)) {
    out::err("execute: --repo " + o.repo + " is not a folder");
    return kExecUsage;
  }
  auto root = fs::find_project_root(stdfs::absolute(start, ec));
  if (!root) {
    out::err("execute: no .yolo-planning folder in " + start.string() + " or above");
    return kExecHalted;
  }
  e.root = *root;
  e.phase = o.phase;
  e.only_plan = o.plan;
  e.review = o.review;
  e.json = o.json;
  stdfs::path self = stdfs::read_symlink("/proc/self/exe", ec);
  e.self_exe = ec ? std::string("yolo") : self.string();
  return execute(e);
}

const CommandRegistrar reg{Command{
    "execute",
    "Run a phase: validation, review gate, vision gate, then waves of executors and SUMMARY gates "
    "(exit 0 complete, 1 halted, 3 paused at a gate, 4 waiting for SUMMARY, 64 usage)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("PHASE", o->phase, "Phase number or folder name under .yolo-planning/phases (default: the first not complete)");
      sub.add_option("--plan", o->plan, "Only this plan (NN or PHASE-NN); its dependencies must be complete");
      sub.add_flag("--review", o->review, "Run the review gate (as review_gate: always)");
      sub.add_flag("--json", o->json, "JSON lines of events, then a result object");
      sub.add_option("--repo", o->repo, "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace yolo::runner
