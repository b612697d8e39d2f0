// yolo hooks install|uninstall|run: git hooks that re-review plans after checkout,
// merge and rewrite, and block commits of rejected plans.
//
// An installed hook is a tiny sh script calling this binary (its absolute path, else `yolo`
// on PATH) with argv; an existing hook is kept as `<hook>.pre-yolo` and chained (run after
// ours, with git's arguments), and `uninstall` puts it back as it was. Installing again
// leaves our hooks alone unless --force rewrites them.
//
// pre-commit reviews the staged plans with one review cycle (the architect never rewrites
// a plan while it is being committed) and blocks the commit on a reject, naming the
// findings and the command that shows them. post-checkout, post-merge and post-rewrite run
// `yolo review PHASE --changed` for every phase. Git exports GIT_INDEX_FILE & co. to hooks:
// our own git questions get them made absolute (a `git commit -a` stages into a temporary
// index), every other child (yolo review, hence the agents) starts without them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "protocol/config.h"
#include "protocol/fs.h"
#include "protocol/approvals.h"
#include "protocol/plan.h"
#include "protocol/state.h"
#include "protocol/text.h"
#include "runner/world.h"
#include "runner/command.h"
#include "runner/git.h"
#include "runner/output.h"
#include "runner/subprocess.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

const char* const kHooks[] = {"post-checkout", "post-merge", "post-rewrite", "pre-commit"};
const char* const kMarker = "# installed by yolo-runner (yolo hooks install)";

// The repository a hook (or `git --git-dir/--work-tree`) is working on, as git exported it,
// made absolute. The runner's own git questions about that repository keep it: a partial
// commit (`git commit FILE`, `git commit -a`) stages into a temporary index that only
// GIT_INDEX_FILE names, and a repository with a separate git dir is found only through
// GIT_DIR. Relative values are relative to the hook's folder, our current folder.
std::vector<std::pair<std::string, std::string>> own_repo_env() {
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* k : {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"}) {
    const char* v = std::getenv(k);
    if (!v || !*v) continue;
    std::error_code ec;
    stdfs::path p = stdfs::absolute(v, ec);
    env.emplace_back(k, (ec ? stdfs::path(v) : p.lexically_normal()).string());
  }
  return env;
}

// A git child about the current repository (runner/git.h): the hook's variables are dropped
// (GIT_PREFIX would be wrong from another folder) and the repository's location is given
// absolute. Nothing the repository's config names runs; core.hooksPath is read here, not
// overridden.
GitRun git(const stdfs::path& cwd, std::vector<std::string> args) {
  auto env = own_repo_env();
  env.emplace_back("GIT_OPTIONAL_LOCKS", "0");
  return run_git(cwd, args, 30000, env, {}, true);
}

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

std::string trimmed(const std::string& s) { return std::string(text::trim(s)); }

// The hooks folder git uses: core.hooksPath (relative to the top level) or .git/hooks.
std::optional<stdfs::path> hooks_dir(const stdfs::path& cwd, std::string& err) {
  auto top = git(cwd, {"rev-parse", "--show-toplevel"});
  if (!top.ok()) {
    err = "not a git repository: " + cwd.string();
    return std::nullopt;
  }
  stdfs::path toplevel = trimmed(top.out);
  auto cfg = git(toplevel, {"config", "--get", "core.hooksPath"});
  if (cfg.ok() && !trimmed(cfg.out).empty()) {
    stdfs::path p = trimmed(cfg.out);
    if (p.string().starts_with("~/")) {
      const char* home = std::getenv("HOME");
      p = stdfs::path(home ? home : "") / p.string().substr(2);
    }
    return p.is_absolute() ? p : toplevel / p;
  }
  auto gp = git(toplevel, {"rev-parse", "--git-path", "hooks"});
  if (!gp.ok()) {
    err = "git rev-parse --git-path hooks failed: " + gp.error;
    return std::nullopt;
  }
  stdfs::path p = trimmed(gp.out);
  return p.is_absolute() ? p : toplevel / p;
}

bool is_ours(const stdfs::path& hook) {
  auto r = fs::read_text(hook, 1 << 20);
  return r.ok() && r.content.find(kMarker) != std::string::npos;
}

std::string quote_sh(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The installed hook. Two things it must get right:
//  - A chained hook runs with its own name as $0: hook managers dispatch on it (husky's
//    `h` runs .husky/$(basename "$0")), so a shell-script hook is sourced by a shell whose
//    $0 is the original path; any other program is run as it is.
//  - When yolo is gone (uninstalled, moved, not on PATH), the hook does not block every
//    commit: pre-commit blocks only when a plan is staged, and says how to fix it.
std::string hook_script(const std::string& name, const std::string& exe) {
  std::string s = "#!/bin/sh\n" + std::string(kMarker) + "\n";
  s += "yolo_bin=" + quote_sh(exe) + "\n";
  s += "if [ ! -x \"$yolo_bin\" ]; then\n"
       "  if command -v yolo >/dev/null 2>&1; then yolo_bin=yolo; else yolo_bin=; fi\n"
       "fi\n";
  s += "chained=\"$0.pre-yolo\"\n";
  s += "run_chained() {\n"
       "  [ -x \"$chained\" ] || exit 0\n"
       "  IFS= read -r first < \"$chained\" || first=\n"
       "  case \"$first\" in\n"
       "    '#!/bin/sh'|'#!/bin/sh '*|'#!/usr/bin/env sh'|'#!/usr/bin/env sh '*|'#!/bin/dash'|'#!/usr/bin/env dash')\n"
       "      exec sh -c '. \"$0.pre-yolo\"' \"$0\" \"$@\" ;;\n"
       "    '#!/bin/bash'|'#!/bin/bash '*|'#!/usr/bin/env bash'|'#!/usr/bin/env bash '*)\n"
       "      exec bash -c '. \"$0.pre-yolo\"' \"$0\" \"$@\" ;;\n"
       "  esac\n"
       "  exec \"$chained\" \"$@\"\n"
       "}\n";
  if (name == std::string("pre-commit")) {
    s += "if [ -z \"$yolo_bin\" ]; then\n"
         "  if git diff --cached --name-only --diff-filter=ACMR 2>/dev/null | grep -qE "
         "'(^|/)\\.yolo-planning/(.*/)?([^/]*-)?PLAN\\.md$'; then\n"
         "    echo \"yolo hooks: a plan is staged but yolo is not at \"" +
         quote_sh(exe) +
         "\" nor on PATH, so its review cannot run.\" >&2\n"
         "    echo \"  fix: put yolo back on PATH and run 'yolo hooks install --force', or remove these hooks with "
         "'yolo hooks uninstall' (git commit --no-verify skips them once)\" >&2\n"
         "    exit 1\n"
         "  fi\n"
         "else\n"
         "  \"$yolo_bin\" hooks run pre-commit || exit $?\n"
         "fi\n";
  } else {
    s += "[ -z \"$yolo_bin\" ] || \"$yolo_bin\" hooks run " + name + " \"$@\" || true\n";
  }
  s += "run_chained \"$@\"\n";
  return s;
}

int install(const stdfs::path& cwd, bool force, bool json_out) {
  std::string err;
  auto dir = hooks_dir(cwd, err);
  if (!dir) {
    out::err("✗ " + err);
    return kExitFail;
  }
  std::error_code ec;
  stdfs::create_directories(*dir, ec);
  json installed = json::array();
  std::string exe = self_exe();
  for (const char* name : kHooks) {
    stdfs::path hook = *dir / name;
    stdfs::path chained = *dir / (std::string(name) + ".pre-yolo");
    // symlink_status: a hook that is a dangling link (a hook manager's) is still a hook to keep.
    bool exists = stdfs::exists(stdfs::symlink_status(hook, ec));
    std::string action = "installed";
    if (exists && is_ours(hook)) {
      if (!force) {
        installed.push_back({{"hook", name}, {"action", "already installed"}});
        if (!json_out) out::line(out::sym(out::Sym::Skip) + " " + hook.string() + " already installed");
        continue;
      }
      action = "reinstalled";
    } else if (exists) {
      if (stdfs::exists(stdfs::symlink_status(chained, ec))) {
        out::err("✗ " + hook.string() + ": a foreign hook is there and " + chained.string() +
                 " already exists; move one of them and run again");
        return kExitFail;
      }
      stdfs::rename(hook, chained, ec);
      if (ec) {
        out::err("✗ cannot move " + hook.string() + " aside: " + ec.message());
        return kExitFail;
      }
      action = "installed (existing hook chained as " + chained.filename().string() + ")";
    }
    if (std::string w = fs::write_atomic(hook, hook_script(name, exe)); !w.empty()) {
      out::err("✗ " + w);
      return kExitFail;
    }
    ::chmod(hook.c_str(), 0755);
    installed.push_back({{"hook", name}, {"path", hook.string()}, {"action", action}});
    if (!json_out) out::line(out::sym(out::Sym::Ok) + " " + hook.string() + " " + action);
  }
  if (json_out)
    out::json_line({{"ok", true}, {"cmd", "hooks install"}, {"hooks_dir", dir->string()}, {"hooks", installed}});
  return kExitOk;
}

int uninstall(const stdfs::path& cwd, bool json_out) {
  std::string err;
  auto dir = hooks_dir(cwd, err);
  if (!dir) {
    out::err("✗ " + err);
    return kExitFail;
  }
  json removed = json::array();
  std::error_code ec;
  for (const char* name : kHooks) {
    stdfs::path hook = *dir / name;
    stdfs::path chained = *dir / (std::string(name) + ".pre-yolo");
    if (!stdfs::exists(hook, ec) || !is_ours(hook)) continue;
    std::string action = "removed";
    if (stdfs::exists(stdfs::symlink_status(chained, ec))) {
      // rename over ours: the original comes back as it was (content, mode, link).
      stdfs::rename(chained, hook, ec);
      action = "removed (previous hook restored)";
    } else {
      stdfs::remove(hook, ec);
    }
    if (ec) {
      out::err("✗ cannot remove " + hook.string() + ": " + ec.message());
      return kExitFail;
    }
    removed.push_back({{"hook", name}, {"action", action}});
    if (!json_out) out::line(out::sym(out::Sym::Ok) + " " + hook.string() + " " + action);
  }
  if (json_out)
    out::json_line({{"ok", true}, {"cmd", "hooks uninstall"}, {"hooks", removed}});
  else if (removed.empty())
    out::line(out::sym(out::Sym::Skip) + " no yolo hooks installed in " + dir->string());
  return kExitOk;
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
int pre_commit(const std::vector<std::string>& files) {
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
    auto root = world().files().project_root(p.parent_path());
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
int re_review() {
  auto root = world().files().project_root(stdfs::current_path());
  if (!root) return kExitOk;  // not a yolo project: nothing to do
  const std::string exe = self_exe();
  std::vector<stdfs::path> phases;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(*root / ".yolo-planning" / "phases", ec);
       !ec && it != stdfs::directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !list_plan_files(world(), it->path()).empty()) phases.push_back(it->path());
  std::sort(phases.begin(), phases.end());
  // A checkout or merge may bring a config whose reviewer or architect is any program: the
  // agents run only when a person approved that config (the vision gate covers it);
  // otherwise the hook runs Stage 1 alone (no agent, nothing recorded).
  bool agents = true;
  if (auto cfg = load_config(world(), *root);
      cfg.ok() && (!cfg.config.reviewer.argv.empty() || !cfg.config.architect.argv.empty())) {
    auto snap = state::load(world(), *root);
    agents = snap.ok() && gates::config_approval(snap.doc, gates::now_of(world(), *root)).counts();
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
      for (const auto& plan : list_plan_files(world(), phase)) {
        auto r = run_yolo_child(*root, {exe, "review-plan", plan.string(), phase.string()});
        json j = json::parse(r.out, nullptr, false);
        if (j.is_object() && j.value("verdict", "") == "reject") {
          ++rejected;
          outcomes.push_back(text::sanitize_for_terminal(plan.filename().string()) + " reject (Stage 1)");
        }
      }
      continue;
    }
    auto r = run_yolo_child(*root, {exe, "review", phase.string(), "--changed", "--json"});
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

int run_hook(const std::string& name, const std::vector<std::string>& files) {
  if (name == "pre-commit") return pre_commit(files);
  return re_review();
}

struct Options {
  bool force = false;
  bool json = false;
  std::string hook;
  std::vector<std::string> files;
};

const CommandRegistrar reg{Command{
    "hooks", "Install or remove git hooks that re-review plans (post-checkout, post-merge, post-rewrite, pre-commit)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.require_subcommand(1);
      auto* inst = sub.add_subcommand("install", "Install the hooks (honours core.hooksPath, chains existing hooks)");
      inst->add_flag("--force", o->force, "Rewrite hooks that yolo installed before");
      inst->add_flag("--json", o->json, "JSON output");
      auto* un = sub.add_subcommand("uninstall", "Remove the hooks and restore what was there");
      un->add_flag("--json", o->json, "JSON output");
      auto* run = sub.add_subcommand("run", "Run a hook's work (called by the installed hooks)");
      run->add_option("HOOK", o->hook, "post-checkout | post-merge | post-rewrite | pre-commit")
          ->required()
          ->check(CLI::IsMember({"post-checkout", "post-merge", "post-rewrite", "pre-commit"}));
      run->add_option("FILES", o->files, "Files (pre-commit framework passes them; hook arguments otherwise)");
      return [o, inst, un, run]() -> int {
        if (inst->parsed()) return install(stdfs::current_path(), o->force, o->json);
        if (un->parsed()) return uninstall(stdfs::current_path(), o->json);
        if (run->parsed()) {
          // git passes hook arguments (refs, flags) to post-* hooks: only files matter, for pre-commit.
          std::vector<std::string> files = o->hook == "pre-commit" ? o->files : std::vector<std::string>{};
          return run_hook(o->hook, files);
        }
        return kExitUsage;
      };
    }}};

}  // namespace
}  // namespace yolo::runner
