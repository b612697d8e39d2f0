// yolo status [--json] [--repo DIR]: phase, waves, each plan's state and review, the
// approval and the open gates, from .yolo-planning/.execution-state.json.
#include <chrono>
#include <cstdlib>

#include "protocol/numbers.h"
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
  StatusOptions so{o.records, nullptr};
  // On a terminal, a status that takes a while (the first one on a large project checks every
  // review ledger once) shows how far it is, after YOLO_LIVE_AFTER_MS (1000) of work.
  const bool live = !o.json && out::live_enabled();
  if (live) {
    const auto start = std::chrono::steady_clock::now();
    long long after_ms = 1000;
    if (const char* v = std::getenv("YOLO_LIVE_AFTER_MS"); v && *v)
      if (auto n = text::parse_digits(v)) after_ms = *n;
    auto last = start - std::chrono::seconds(1);
    so.progress = [=](size_t done, size_t total) mutable {
      auto now = std::chrono::steady_clock::now();
      if (now - start < std::chrono::milliseconds(after_ms) || now - last < std::chrono::milliseconds(100)) return;
      last = now;
      out::set_live(out::sym(out::Sym::Diamond) + " Reading the phases' review ledgers: " + std::to_string(done) + "/" +
                    std::to_string(total) + " (a first status checks each once; later ones reuse it)");
    };
  }
  json s = execution_status(world(), *root, so);
  if (live) out::set_live("");
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
                   "Every review record and every phase's row (default: the run's phase's records, the other ledgers "
                   "only named; at most 50 phase rows, those with work left)");
      return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace yolo::runner
