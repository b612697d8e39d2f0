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
//
// This file installs and removes the hooks; what they do when git runs them is in hooks_run.cc.
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

namespace yolo::runner {

namespace hooks {

namespace stdfs = std::filesystem;

namespace {

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

}  // namespace

// A git child about the current repository (runner/git.h): the hook's variables are dropped
// (GIT_PREFIX would be wrong from another folder) and the repository's location is given
// absolute. Nothing the repository's config names runs; core.hooksPath is read here, not
// overridden.
GitRun git(const stdfs::path& cwd, std::vector<std::string> args) {
  auto env = own_repo_env();
  env.emplace_back("GIT_OPTIONAL_LOCKS", "0");
  return run_git(cwd, args, 30000, env, {}, true);
}

std::string trimmed(const std::string& s) { return std::string(text::trim(s)); }

std::string quote_sh(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace hooks

namespace {

namespace stdfs = std::filesystem;
using hooks::git;
using hooks::quote_sh;
using hooks::run_hook;
using hooks::trimmed;

const char* const kHooks[] = {"post-checkout", "post-merge", "post-rewrite", "pre-commit"};
const char* const kMarker = "# installed by yolo-runner (yolo hooks install)";

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
    if (std::string w = fs::write_atomic(hook, hook_script(name, exe)).error; !w.empty()) {
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
      return [o, inst, un, run](const Context& ctx) -> int {
        if (inst->parsed()) return install(stdfs::current_path(), o->force, o->json);
        if (un->parsed()) return uninstall(stdfs::current_path(), o->json);
        if (run->parsed()) {
          // git passes hook arguments (refs, flags) to post-* hooks: only files matter, for pre-commit.
          std::vector<std::string> files = o->hook == "pre-commit" ? o->files : std::vector<std::string>{};
          return run_hook(ctx, o->hook, files);
        }
        return kExitUsage;
      };
    }}};

}  // namespace
}  // namespace yolo::runner
