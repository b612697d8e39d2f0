// yolo review-plan PLAN [PHASE_DIR] | --phase DIR...: Stage 1, PROTOCOL.md section 3.
#include <filesystem>

#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/review/stage1.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/output.h"
#include "runner/render.h"
#include "runner/config_report.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string plan;
  std::string phase_dir;
  std::vector<std::string> phases;
  bool human = false;
  bool json = false;
};

Stage1Options options_for(const World& w, const stdfs::path& near) {
  Stage1Options o;
  if (auto root = w.files().project_root(near)) {
    auto cfg = load_config_reported(w, *root);
    if (!cfg.ok()) out::err("⚠ " + text::sanitize_for_terminal(cfg.error) + " (using defaults)");
    o.max_tasks = cfg.config.max_tasks_per_plan;
  }
  return o;
}

int run(const Context& ctx, const Options& o) {
  bool human = o.human || (!o.json && out::stdout_is_tty());
  if (!o.phases.empty()) {
    Verdict worst_v = Verdict::Approve;
    for (const auto& dir : o.phases) {
      std::error_code ec;
      if (!stdfs::is_directory(dir, ec)) {
        json e = {
            {"ok", false}, {"cmd", "review-plan"}, {"verdict", "reject"}, {"error", "phase folder not found: " + dir}};
        if (human)
          out::line(out::sym(out::Sym::Fail) + " phase folder not found: " + text::sanitize_for_terminal(dir));
        else
          out::json_line(e);
        worst_v = Verdict::Reject;
        continue;
      }
      for (const auto& r : stage1_phase(ctx.world, dir, options_for(ctx.world, dir))) {
        worst_v = worst(worst_v, r.verdict());
        if (human)
          out::line(render::structural_review(r));
        else
          out::json_line(r.to_json());
      }
    }
    return exit_code(worst_v);
  }
  if (o.plan.empty()) {
    out::err("review-plan: give a PLAN file, or --phase PHASE_DIR...");
    return kExitUsage;
  }
  std::optional<stdfs::path> phase;
  if (!o.phase_dir.empty()) phase = o.phase_dir;
  StructuralReview r =
      stage1_plan_file(ctx.world, o.plan, phase, options_for(ctx.world, phase ? *phase : stdfs::path(o.plan)));
  if (human)
    out::line(render::structural_review(r));
  else
    out::json_line(r.to_json());
  return exit_code(r.verdict());
}

const CommandRegistrar reg{Command{
    "review-plan", "Stage 1 structural pre-check of a plan (exit 0 approve, 1 reject, 2 conditional)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("PLAN", o->plan, "The PLAN.md file");
      sub.add_option("PHASE_DIR", o->phase_dir, "Its phase folder: enables file and cross-plan checks");
      sub.add_option("--phase", o->phases, "Review every plan of these phase folders (JSON lines)")->expected(1, -1);
      sub.add_flag("--human", o->human, "Readable report with ✓ ⚠ ✗ (default on a TTY)");
      sub.add_flag("--json", o->json, "JSON even on a TTY");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
