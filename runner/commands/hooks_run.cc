// What the installed hooks do when git runs them (`yolo hooks run HOOK`): pre-commit reviews
// the staged plans and blocks a commit of a rejected one; post-checkout, post-merge and
// post-rewrite re-review the plans that changed. Apart from cmd_hooks.cc, which installs and
// removes the hook scripts, because this part runs inside git's hook, with git's variables.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/approvals.h"
#include "protocol/plan/plan.h"
#include "protocol/state/state.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/commands/hooks.h"
#include "runner/git.h"
#include "runner/output.h"
#include "runner/subprocess.h"

namespace yolo::runner::hooks {
namespace {

namespace stdfs = std::filesystem;

// A yolo child started from a hook: none of the variables git exported to the hook, so
// the reviewer and architect agents (which may run git in other repositories) start clean.
SpawnResult run_yolo_child(const stdfs::path& cwd, std::vector<std::string> argv) {
  SpawnSpec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  s.unset_env = git_hook_env();
  s.timeout_ms = 0;  // the agents have their own timeouts
  return run_process(s);
}

// Plan files staged for commit (added, copied, modified, renamed).
std::vector<stdfs::path> staged_plans(const stdfs::path& toplevel) {
  std::vector<stdfs::path> out;
  auto r = git(toplevel, {"diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR"});
  if (!r.ok()) return out;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t z = r.out.find('\0', start);
    std::string p = r.out.substr(start, z == std::string::npos ? std::string::npos : z - start);
    start = z == std::string::npos ? r.out.size() : z + 1;
    stdfs::path rel = p;
    if (is_plan_filename(rel.filename().string()) && p.find(".yolo-planning/") != std::string::npos)
      out.push_back(toplevel / rel);
  }
  return out;
}

// The verdict lines `yolo review --json` printed for one plan: its findings, for the message.
std::vector<std::string> finding_lines(const std::string& review_out) {
  std::vector<std::string> lines;
  std::istringstream in(review_out);
  std::string l;
  while (std::getline(in, l)) {
    json j = json::parse(l, nullptr, false);
    if (!j.is_object() || j.value("type", "") != "plan" || !j.contains("findings") || !j["findings"].is_array())
      continue;
    for (const auto& f : j["findings"]) {
      if (!f.is_object()) continue;
      std::string what = f.value("title", "");
      if (what.empty()) what = f.value("description", "");
      lines.push_back("[" + f.value("severity", "?") + "] " + what);
    }
  }
  return lines;
}

// pre-commit: review the staged plans (or the files the pre-commit framework passes) and
// refuse the commit when one is rejected.
int pre_commit(const World& w, const std::vector<std::string>& files) {
  stdfs::path cwd = stdfs::current_path();
  std::vector<stdfs::path> plans;
  if (!files.empty()) {
    for (const auto& f : files)
      if (is_plan_filename(stdfs::path(f).filename().string())) plans.push_back(stdfs::absolute(f).lexically_normal());
  } else {
    auto top = git(cwd, {"rev-parse", "--show-toplevel"});
    if (!top.ok()) return kExitOk;  // not in a work tree (a bare repository): nothing staged to review
    stdfs::path toplevel = trimmed(top.out);
    plans = staged_plans(toplevel);
    // The review reads the working tree; say so when it is not what is being committed.
    if (!plans.empty()) {
      std::vector<std::string> args = {"--literal-pathspecs", "diff", "--name-only", "-z", "--"};
      for (const auto& p : plans) args.push_back(p.lexically_relative(toplevel).string());
      auto d = git(toplevel, args);
      size_t start = 0;
      while (d.ok() && start < d.out.size()) {
        size_t z = d.out.find('\0', start);
        std::string f = d.out.substr(start, z == std::string::npos ? std::string::npos : z - start);
        start = z == std::string::npos ? d.out.size() : z + 1;
        if (!f.empty())
          out::err(
              out::sym(out::Sym::Warn) + " " + text::sanitize_for_terminal(f) +
              " has unstaged changes: the review reads the file as it is now, not the staged version (git add it)");
      }
    }
  }
  const std::string exe = self_exe();
  int worst = 0;
  // Say what takes the time: a reviewer agent may take minutes per plan.
  if (!plans.empty())
    out::err(out::sym(out::Sym::Diamond) + " yolo: reviewing " + std::to_string(plans.size()) + " staged plan(s)…");
  for (const auto& p : plans) {
    auto root = w.files().project_root(p.parent_path());
    if (!root) continue;  // a PLAN.md outside any yolo project
    // One cycle: the architect must not rewrite the plan while it is being committed (the
    // commit would keep the staged, rejected text while the rewrite passed the review).
    auto r = run_yolo_child(*root, {exe, "review", p.string(), "--json", "--max-cycles", "1"});
    if (r.outcome == SpawnResult::Outcome::Exited && r.exit_code == 1) {
      out::err(out::sym(out::Sym::Fail) + " " + text::sanitize_for_terminal(p.string()) +
               " was rejected by the review gate");
      auto why = finding_lines(r.out);
      for (size_t i = 0; i < why.size() && i < 10; ++i) out::err("    " + text::sanitize_for_terminal(why[i]));
      if (why.size() > 10) out::err("    ... and " + std::to_string(why.size() - 10) + " more");
      // One review cycle, so the hint never lets the architect rewrite the plan being committed.
      out::err("  see why with:\n    yolo review --max-cycles 1 " + quote_sh(p.string()));
      worst = 1;
    } else if (!(r.outcome == SpawnResult::Outcome::Exited && (r.exit_code == 0 || r.exit_code == 2))) {
      std::string detail = trimmed(r.err);
      out::err(out::sym(out::Sym::Fail) + " review of " + text::sanitize_for_terminal(p.string()) + " could not run: " +
               r.describe() + (detail.empty() ? "" : "\n    " + text::sanitize_for_terminal(detail)));
      worst = 1;
    }
  }
  if (worst) out::err("commit blocked: fix the rejected plan(s), or commit with --no-verify to skip the gate");
  return worst;
}

// post-checkout / post-merge / post-rewrite: re-review the plans whose content differs from
// their last review (`yolo review PHASE --changed` for every phase folder).
int re_review(const Context& ctx) {
  const World& w = ctx.world;
  if (ctx.root.empty()) return kExitOk;  // not a yolo project: nothing to do
  const stdfs::path& root = ctx.root;
  const std::string exe = self_exe();
  std::vector<stdfs::path> phases;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(root / ".yolo-planning" / "phases", ec);
       !ec && it != stdfs::directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !list_plan_files(w, it->path()).empty()) phases.push_back(it->path());
  std::sort(phases.begin(), phases.end());
  // A checkout or merge may bring a config whose reviewer or architect is any program: the
  // agents run only when a person approved that config (the vision gate covers it);
  // otherwise the hook runs Stage 1 alone (no agent, nothing recorded).
  bool agents = true;
  if (auto cfg = load_config(w, root);
      cfg.ok() && (!cfg.config.reviewer.argv.empty() || !cfg.config.architect.argv.empty())) {
    auto snap = state::load(w, root);
    agents = snap.ok() && gates::config_approval(snap.doc, gates::now_of(w, root)).counts();
    if (!agents)
      out::err(out::sym(out::Sym::Warn) +
               " the reviewer/architect in .yolo-planning/config.json are not covered by an approved vision gate: the "
               "hook runs "
               "no agent, only Stage 1 (`yolo execute` asks a person to approve the config)");
  }
  // Quiet: nothing when no plan changed, one line otherwise. The hook's output
  // goes to the person running git: on stderr, like git's own.
  std::vector<std::string> outcomes;
  size_t rejected = 0;
  std::vector<std::string> failures;
  for (const auto& phase : phases) {
    if (!agents) {  // Stage 1 only: one line at the end names the plans it rejects
      for (const auto& plan : list_plan_files(w, phase)) {
        auto r = run_yolo_child(root, {exe, "review-plan", plan.string(), phase.string()});
        json j = json::parse(r.out, nullptr, false);
        if (j.is_object() && j.value("verdict", "") == "reject") {
          ++rejected;
          outcomes.push_back(text::sanitize_for_terminal(plan.filename().string()) + " reject (Stage 1)");
        }
      }
      continue;
    }
    auto r = run_yolo_child(root, {exe, "review", phase.string(), "--changed", "--json"});
    if (!(r.outcome == SpawnResult::Outcome::Exited && r.exit_code >= 0 && r.exit_code <= 2)) {
      failures.push_back(phase.filename().string() + ": " + r.describe());
      continue;
    }
    std::istringstream in(r.out);
    std::string l;
    while (std::getline(in, l)) {
      json j = json::parse(l, nullptr, false);
      if (!j.is_object() || j.value("type", "") != "plan" || j.value("skipped", false)) continue;
      std::string v = j.value("verdict", "?");
      if (v == "reject") ++rejected;
      outcomes.push_back(text::sanitize_for_terminal(j.value("plan_id", "?")) + " " + v);
    }
  }
  if (!outcomes.empty()) {
    std::string list;
    for (size_t i = 0; i < outcomes.size() && i < 6; ++i) list += (i ? ", " : "") + outcomes[i];
    if (outcomes.size() > 6) list += ", +" + std::to_string(outcomes.size() - 6) + " more";
    out::err(out::sym(rejected ? out::Sym::Fail : out::Sym::Ok) + " yolo: re-reviewed " +
             std::to_string(outcomes.size()) + " changed plan(s): " + list +
             (rejected ? "  (`yolo status` shows why)" : ""));
  }
  for (const auto& f : failures)
    out::err(out::sym(out::Sym::Warn) + " yolo: review of " + text::sanitize_for_terminal(f));
  return kExitOk;
}

}  // namespace

int run_hook(const Context& ctx, const std::string& name, const std::vector<std::string>& files) {
  if (name == "pre-commit") return pre_commit(ctx.world, files);
  return re_review(ctx);
}

}  // namespace yolo::runner::hooks
