// yolo verify-summary SUMMARY [PLAN] [--mode strict|structural|off] [--root DIR]:
// the SUMMARY gate of PROTOCOL.md section 7 with its claims checks against git.
// Exit 0 pass, 1 fail, 2 pass with warnings.
#include <filesystem>

#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/summary/summary_gate.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/git.h"
#include "runner/output.h"
#include "runner/render.h"
#include "runner/config_report.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string summary;
  std::string plan;
  std::string mode;
  std::string root;
  bool human = false;
  bool json = false;
};

out::Sym sym_for(VerifyVerdict v) {
  return v == VerifyVerdict::Pass ? out::Sym::Ok : v == VerifyVerdict::Warn ? out::Sym::Warn : out::Sym::Fail;
}

// Ids, paths and findings come from the SUMMARY and its plan: no control characters reach
// the terminal.
std::string safe(const std::string& s) { return text::sanitize_for_terminal(s); }

std::string render(const SummaryVerdict& v) {
  VerifyVerdict vv = v.verdict();
  std::string s = out::sym(sym_for(vv)) + " " + out::bold(safe(v.plan_id.empty() ? v.summary_path : v.plan_id)) + "  " +
                  to_string(vv) + "  " + out::dim(safe(v.summary_path) + " (" + to_string(v.mode) + ")");
  s += render::checks(v.review);
  return s;
}

stdfs::path project_root_for(const World& w, const stdfs::path& summary) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(summary, ec);
  if (ec) abs = summary;
  if (auto r = w.files().project_root(abs.parent_path())) return *r;
  if (auto top = git_toplevel(abs.parent_path())) return *top;
  return stdfs::current_path(ec);
}

int run(const Context& ctx, const Options& o) {
  bool human = o.human || (!o.json && out::stdout_is_tty());
  auto usage_error = [&](const std::string& msg) {
    if (human)
      out::err(out::sym(out::Sym::Fail) + " verify-summary: " + safe(msg));
    else
      out::json_line({{"ok", false}, {"cmd", "verify-summary"}, {"verdict", "fail"}, {"error", msg}});
    return kExitUsage;
  };
  if (o.summary.empty()) return usage_error("give a SUMMARY file");
  std::optional<SummaryMode> mode;
  if (!o.mode.empty()) {
    mode = parse_summary_mode(o.mode);
    if (!mode) return usage_error("--mode must be strict, structural or off, not '" + o.mode + "'");
  }
  stdfs::path root;
  if (!o.root.empty()) {
    std::error_code ec;
    if (!stdfs::is_directory(o.root, ec)) return usage_error("--root is not a folder: " + o.root);
    root = stdfs::absolute(o.root, ec);
  } else {
    root = project_root_for(ctx.world, o.summary);
  }
  auto cfg = load_config_reported(ctx.world, root);
  if (!cfg.ok()) out::err(out::sym(out::Sym::Warn) + " " + cfg.error + " (using defaults)");
  if (!mode) {
    mode = parse_summary_mode(cfg.config.summary_checks);
    if (!mode) {
      out::err(out::sym(out::Sym::Warn) + " summary_checks is '" + cfg.config.summary_checks +
               "', not strict, structural or off (using strict)");
      mode = SummaryMode::Strict;
    }
  }
  std::optional<stdfs::path> plan;
  if (!o.plan.empty()) plan = o.plan;
  GitCli git(root, cfg.config.command_timeout_ms > 0 ? cfg.config.command_timeout_ms : 10000);
  SummaryVerdict v = verify_summary(ctx.world, o.summary, plan, root, *mode, &git);
  if (human)
    out::line(render(v));
  else {
    json j = v.to_json();
    j["root"] = root.string();
    out::json_line(j);
  }
  return exit_code(v.verdict());
}

const CommandRegistrar reg{Command{
    "verify-summary",
    "The SUMMARY gate: structure (its frontmatter keys and sections) and claims checked against the repository "
    "(exit 0 pass, 1 fail, 2 pass with warnings)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("SUMMARY", o->summary, "The SUMMARY.md file")->required();
      sub.add_option("PLAN", o->plan, "Its PLAN.md (default: the PLAN beside the SUMMARY)");
      sub.add_option("--mode", o->mode, "strict | structural | off (default: config summary_checks, else strict)");
      sub.add_option("--root", o->root,
                     "Project root (default: the folder holding .yolo-planning, else the git top level)");
      sub.add_flag("--human", o->human, "Readable report with ✓ ⚠ ✗ (default on a TTY)");
      sub.add_flag("--json", o->json, "JSON even on a TTY");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
