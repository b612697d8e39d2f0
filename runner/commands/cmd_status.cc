// yolo status [--json] [--repo DIR]: phase, waves, each plan's state and review, the
// approval and the open gates, from .yolo-planning/.execution-state.json.
#include "protocol/status.h"
#include "protocol/text.h"
#include "runner/command.h"
#include "runner/config_report.h"
#include "runner/gates_view.h"
#include "runner/output.h"
#include "runner/world.h"

namespace yolo::runner {
namespace {

struct Options {
  std::string repo;
  bool json = false;
  bool records = false;
};

int run(const Options& o) {
  std::string err;
  auto root = find_project(o.repo, err);
  if (!root) {
    if (o.json) out::json_line({{"ok", false}, {"cmd", "status"}, {"error", err}});
    out::err(out::sym(out::Sym::Fail) + " status: " + err);
    return kExitFail;
  }
  json s = execution_status(world(), *root, StatusOptions{o.records});
  if (!s.value("ok", false)) {
    if (o.json) out::json_line(s);
    out::err(out::sym(out::Sym::Fail) +
             " status: " + text::sanitize_for_terminal(s.value("error", std::string("cannot read the state"))));
    return kExitFail;
  }
  if (!o.json) report_config_warnings(load_config(world(), *root));  // unknown keys are worth knowing here too
  if (o.json)
    out::json_line(s);
  else
    out::line(render_status(s));
  return kExitOk;
}

const CommandRegistrar reg{Command{
    "status", "Phase, waves, plans, reviews and gates of the current run (a table; --json for machines)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--json", o->json, "One JSON document on stdout");
      sub.add_flag("--records,--all", o->records,
                   "Every review record of every phase (default: the run's phase; the other ledgers are only named)");
      return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace yolo::runner
