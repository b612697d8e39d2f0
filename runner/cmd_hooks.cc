// yolo hooks install|uninstall|run: git hooks that re-review plans after checkout,
// merge and rewrite, and block commits of rejected plans.
//
// An installed hook is a tiny sh script calling this binary with argv; an existing hook
// is kept as `<hook>.pre-yolo` and chained, and `uninstall` puts it back.
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "protocol/fs.h"
#include "protocol/plan.h"
#include "protocol/text.h"
#include "runner/command.h"
#include "runner/output.h"
#include "runner/subprocess.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

const char* const kHooks[] = {"post-checkout", "post-merge", "post-rewrite", "pre-commit"};
const char* const kMarker = "# installed by yolo-runner (yolo hooks install)";

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("yolo");
}

SpawnResult git(const stdfs::path& cwd, std::vector<std::string> args) {
  SpawnSpec s;
  s.argv = {"git"};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.cwd = cwd;
  s.timeout_ms = 30000;
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
    err = "git rev-parse --git-path hooks failed: " + gp.describe();
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

std::string hook_script(const std::string& name, const std::string& exe) {
  std::string s = "#!/bin/sh\n" + std::string(kMarker) + "\n";
  s += "yolo_bin=" + quote_sh(exe) + "\n";
  s += "[ -x \"$yolo_bin\" ] || yolo_bin=yolo\n";
  s += "chained=\"$0.pre-yolo\"\n";
  if (name == std::string("pre-commit")) {
    s += "\"$yolo_bin\" hooks run pre-commit || exit $?\n";
    s += "if [ -x \"$chained\" ]; then exec \"$chained\" \"$@\"; fi\n";
  } else {
    s += "\"$yolo_bin\" hooks run " + name + " \"$@\" || true\n";
    s += "if [ -x \"$chained\" ]; then exec \"$chained\" \"$@\"; fi\n";
  }
  s += "exit 0\n";
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
    bool exists = stdfs::exists(hook, ec);
    std::string action = "installed";
    if (exists && is_ours(hook)) {
      if (!force) {
        installed.push_back({{"hook", name}, {"action", "already installed"}});
        if (!json_out) out::line(out::sym(out::Sym::Skip) + " " + hook.string() + " already installed");
        continue;
      }
      action = "reinstalled";
    } else if (exists) {
      if (stdfs::exists(chained, ec)) {
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
  if (json_out) out::json_line({{"ok", true}, {"cmd", "hooks install"}, {"hooks_dir", dir->string()}, {"hooks", installed}});
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
    stdfs::remove(hook, ec);
    std::string action = "removed";
    if (stdfs::exists(chained, ec)) {
      stdfs::rename(chained, hook, ec);
      action = "removed (previous hook restored)";
    }
    removed.push_back({{"hook", name}, {"action", action}});
    if (!json_out) out::line(out::sym(out::Sym::Ok) + " " + hook.string() + " " + action);
  }
  if (json_out) out::json_line({{"ok", true}, {"cmd", "hooks uninstall"}, {"hooks", removed}});
  else if (removed.empty()) out::line(out::sym(out::Sym::Skip) + " no yolo hooks installed in " + dir->string());
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

int run_hook(const std::string& name, const std::vector<std::string>& files) {
  stdfs::path cwd = stdfs::current_path();
  auto root = fs::find_project_root(cwd);
  if (!root) return kExitOk;  // not a yolo project: nothing to do
  std::string exe = self_exe();
  if (name == "pre-commit") {
    std::vector<stdfs::path> plans;
    if (!files.empty()) {
      for (const auto& f : files)
        if (is_plan_filename(stdfs::path(f).filename().string())) plans.push_back(stdfs::absolute(f));
    } else {
      auto top = git(cwd, {"rev-parse", "--show-toplevel"});
      if (top.ok()) plans = staged_plans(trimmed(top.out));
    }
    int worst = 0;
    for (const auto& p : plans) {
      SpawnSpec s;
      s.argv = {exe, "review", p.string(), "--json"};
      s.cwd = *root;
      s.timeout_ms = 0;
      auto r = run_process(s);
      if (r.outcome == SpawnResult::Outcome::Exited && r.exit_code == 1) {
        out::err(out::sym(out::Sym::Fail) + " " + p.string() + " was rejected by the review gate; see why with:\n    yolo review " +
                 p.string());
        worst = 1;
      } else if (!(r.outcome == SpawnResult::Outcome::Exited && (r.exit_code == 0 || r.exit_code == 2))) {
        out::err(out::sym(out::Sym::Fail) + " review of " + p.string() + " could not run: " + r.describe());
        worst = 1;
      }
    }
    if (worst) out::err("commit blocked: fix the rejected plan(s), or commit with --no-verify to skip the gate");
    return worst;
  }
  // post-checkout / post-merge / post-rewrite: re-review plans whose content changed.
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(*root / ".yolo-planning" / "phases", ec);
       !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
    if (!it->is_directory()) continue;
    SpawnSpec s;
    s.argv = {exe, "review", it->path().string(), "--changed"};
    s.cwd = *root;
    s.timeout_ms = 0;
    auto r = run_process(s);
    if (!r.out.empty()) std::fwrite(r.out.data(), 1, r.out.size(), stderr);
  }
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
      run->add_option("HOOK", o->hook, "post-checkout | post-merge | post-rewrite | pre-commit")->required();
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
