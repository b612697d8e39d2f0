// yolo review PLAN|PHASE_DIR [--max-cycles N] [--json] [--changed]: the two-stage review
// gate with its feedback loop (PROTOCOL.md section 4). Exit 0 approve, 1 reject,
// 2 conditional (the worst verdict for a phase); 64 for usage errors. On SIGINT/SIGTERM
// the running reviewer/architect group is stopped and yolo dies of the same signal.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "protocol/state/config.h"
#include "protocol/run/execution.h"
#include "protocol/ports/fs.h"
#include "protocol/base/json_field.h"
#include "protocol/plan/plan.h"
#include "protocol/state/state.h"
#include "protocol/summary/summary.h"
#include "runner/child_keeper.h"
#include "runner/command.h"
#include "runner/config_report.h"
#include "runner/gates_view.h"
#include "runner/output.h"
#include "runner/review_gate.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string target;
  int max_cycles = 0;
  bool json = false;
  bool changed = false;
};

int usage_error(const Options& o, const std::string& msg) {
  if (o.json) out::json_line({{"ok", false}, {"cmd", "review"}, {"error", msg}});
  out::err("yolo review: " + msg);
  return kExitUsage;
}

// `yolo review` alone: the phase a person is working on, the one `yolo execute` would run
// (the run's phase while it is not complete, else the first phase with a plan that has no
// SUMMARY yet). Empty when every phase is done; err says why.
std::optional<stdfs::path> current_phase(const Context& ctx, std::string& err) {
  const World& w = ctx.world;
  auto root = find_project(ctx, "", err);
  if (!root) return std::nullopt;
  auto snap = state::load(w, *root);
  if (snap.ok() && snap.exists) {
    std::string dir = json_field::str(snap.doc, "phase_dir");
    std::error_code ec;
    if (!dir.empty() && execution::run_status(snap.doc) != execution::RunStatus::Complete && stdfs::is_directory(*root / dir, ec))
      return *root / dir;
  }
  std::vector<stdfs::path> phases;
  std::error_code ec;
  for (const auto& e : stdfs::directory_iterator(*root / ".yolo-planning" / "phases", ec))
    if (e.is_directory(ec)) phases.push_back(e.path());
  std::sort(phases.begin(), phases.end());
  for (const auto& p : phases)
    for (const auto& f : list_plan_files(w, p)) {
      std::error_code e2;
      if (!stdfs::exists(p / summary_name_for(w, p, f.filename().string()), e2)) return p;
    }
  err = phases.empty()
            ? "no phase folders under " + (*root / ".yolo-planning" / "phases").string()
            : "every phase's plans have their SUMMARY: name one, `yolo review PHASE_DIR` or `yolo review PLAN`";
  return std::nullopt;
}

int run(const Context& ctx, const Options& o) {
  const World& w = ctx.world;
  std::error_code ec;
  std::string chosen = o.target;
  if (chosen.empty()) {
    std::string err;
    auto p = current_phase(ctx, err);
    if (!p) return usage_error(o, err);
    chosen = p->string();
    if (!o.json)
      out::err(out::sym(out::Sym::Diamond) + " Reviewing " + stdfs::relative(*p, stdfs::current_path(ec), ec).string() +
               " (the current phase; `yolo review TARGET` reviews another phase or one plan)");
  }
  stdfs::path target = stdfs::absolute(chosen, ec).lexically_normal();
  if (!stdfs::exists(target, ec)) return usage_error(o, "no such plan file or phase folder: " + chosen);
  if (o.max_cycles < 0) return usage_error(o, "--max-cycles must be at least 1");
  bool is_phase = stdfs::is_directory(target, ec);
  auto root = w.files().project_root(is_phase ? target : target.parent_path());
  if (!root && !ctx.root.empty()) root = ctx.root;
  if (!root) return usage_error(o, "no .yolo-planning folder above " + chosen + " or the current folder");

  ReviewGateOptions g;
  g.root = *root;
  auto cfg = load_config_reported(w, *root);
  if (!cfg.ok()) out::err(out::sym(out::Sym::Warn) + " " + cfg.error + " (using defaults)");
  g.config = cfg.config;
  g.max_cycles = o.max_cycles;
  g.json = o.json;
  g.changed_only = o.changed;

  std::vector<review::PlanTarget> plans;
  if (is_phase) {
    for (const auto& f : list_plan_files(w, target)) plans.push_back(review::PlanTarget{f, target, ""});
    if (plans.empty()) return usage_error(o, "no plan files (*-PLAN.md) in " + chosen);
  } else {
    plans.push_back(review::PlanTarget{target, target.parent_path(), ""});
  }
  ReviewGateResult r = run_review_gate(w, g, plans, is_phase);
  if (r.interrupt_signal) {
    // The agent's group is gone; die of the same signal so the parent sees why.
    ::signal(r.interrupt_signal, SIG_DFL);
    ::raise(r.interrupt_signal);
    return 128 + r.interrupt_signal;
  }
  // Its ledgers and state are written, its agents reaped: a large review spent a visible
  // share of its time freeing what it built.
  return exit_without_freeing(r.exit_code());
}

const CommandRegistrar reg{Command{
    "review",
    "Two-stage review gate with the feedback loop: Stage 1, the reviewer agent, the architect (exit 0 approve, 1 "
    "reject, 2 conditional)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("TARGET", o->target,
                     "A PLAN.md file or a phase folder (default: the current phase, the one `yolo execute` would run)");
      sub.add_option("--max-cycles", o->max_cycles, "Review cycles per plan (default: review_max_cycles, 3)")
          ->check(CLI::Range(1, 100));
      sub.add_flag("--json", o->json, "One JSON object per plan (JSON lines); a phase adds a summary line");
      sub.add_flag("--changed", o->changed, "Only plans whose content hash differs from their last review");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
