// yolo doctor [--repo DIR] [--json]: before a run, whether the configured agents will work:
// for each role (reviewer, architect, executor, command approvers, the plans' checks) the
// program found on PATH, for a known agent CLI its version against the versions yolo was
// tested with, the template's flags against the CLI's own `--help`, and its credentials (an
// environment variable or the CLI's credential file: existence only, never read); then the
// config, git, the sandbox, the approval key, signing and the hooks. One line per check with a next step.
// This file holds the command and the checks around the agents; what yolo knows of agent CLIs
// and the agent-role checks are in doctor_agents.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "protocol/gates/approver_policy.h"
#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/gates.h"
#include "protocol/plan/plan.h"
#include "protocol/plan/plan_checks.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/commands/doctor.h"
#include "runner/gates_view.h"
#include "runner/identity.h"
#include "runner/output.h"
#include "runner/sandbox.h"
#include "runner/signing.h"
#include "runner/subprocess.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo;
  bool json = false;
};

using doctor::Doctor;

const char* status_of(out::Sym s) {
  switch (s) {
    case out::Sym::Ok:
      return "ok";
    case out::Sym::Warn:
      return "warn";
    case out::Sym::Fail:
      return "fail";
    default:
      return "skip";
  }
}

}  // namespace

namespace doctor {

// A command an approver or a check runs: only whether its program is there.
void Doctor::program_only(const std::string& role, const std::string& what, const std::string& prog,
                          const std::string& next_if_missing) {
  if (auto p = find_program(prog, root_))
    add(role, "program", out::Sym::Ok, what + ": " + prog + " → " + p->string(), {}, {{"program", prog}});
  else
    add(role, "program", out::Sym::Fail, what + ": " + prog + " not found", next_if_missing, {{"program", prog}});
}

void Doctor::approvers(const Config& cfg) {
  std::string simple;
  for (auto t : {gates::GateType::Vision, gates::GateType::Wave, gates::GateType::Security,
                 gates::GateType::ScopeChange, gates::GateType::Budget}) {
    std::string name(gates::to_string(t));
    gates::ApproverSpec a = gates::approver_spec(cfg, t);
    switch (a.kind) {
      case gates::ApproverSpec::Kind::Manual:
        simple += (simple.empty() ? "" : ", ") + name + " manual";
        break;
      case gates::ApproverSpec::Kind::Skip:
        simple += (simple.empty() ? "" : ", ") + name + " skip";
        break;
      case gates::ApproverSpec::Kind::Invalid:
        add("approvers", name, out::Sym::Fail, name + ": " + a.error,
            "fix approvers." + name + " in .yolo-planning/config.json (\"manual\", \"skip\" or a command)");
        break;
      case gates::ApproverSpec::Kind::Command:
        if (a.argv.empty()) break;
        program_only("approvers", name + " approver", a.argv.front(),
                     "install it or change approvers." + name + " in .yolo-planning/config.json");
        break;
    }
  }
  if (!simple.empty()) add("approvers", "gates", out::Sym::Ok, simple);
}

// The programs the plans' must_haves.checks run (each once).
void Doctor::plan_checks_programs() {
  stdfs::path phases = root_ / ".yolo-planning" / "phases";
  std::error_code ec;
  if (!stdfs::is_directory(phases, ec)) return;
  std::map<std::string, std::string> progs;  // program -> the first plan naming it
  std::vector<stdfs::path> dirs;
  for (const auto& d : stdfs::directory_iterator(phases, ec))
    if (d.is_directory(ec)) dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs)
    for (const auto& p : list_plan_files(world_, d)) {
      auto l = load_plan(world_, p);
      if (!l.plan) continue;
      for (const auto& c : plan_checks::parse(*l.plan).checks)
        if (!c.argv.empty() && c.argv.front().find('{') == std::string::npos)
          progs.emplace(c.argv.front(), l.plan->id());
    }
  for (const auto& [prog, plan] : progs) {
    // A relative path is run in the plan's worktree: it may be created by the plan itself.
    if (prog.find('/') != std::string::npos && stdfs::path(prog).is_relative()) continue;
    program_only("checks", "plan " + plan + "'s check", prog,
                 "install it, or change must_haves.checks of plan " + plan);
  }
}

void Doctor::git_checks() {
  auto git = find_program("git", root_);
  if (!git) {
    add("git", "program", out::Sym::Fail, "git not found on PATH", "install git");
    return;
  }
  SpawnResult v = run(*git, {"--version"});
  auto ver = parse_version(v.out);
  add("git", "program", out::Sym::Ok, "git" + (ver ? " " + version_text(*ver) : std::string()) + " → " + git->string());
  if (!have_project_) return;
  SpawnResult in = run(*git, {"rev-parse", "--is-inside-work-tree"});
  if (!in.ok() || text::trim(in.out) != "true") {
    add("git", "repository", out::Sym::Fail, root_.string() + " is not a git repository",
        "`git init` (strict SUMMARY checks and worktrees need git)");
    return;
  }
  add("git", "repository", out::Sym::Ok, root_.string() + " is a git repository");
  SpawnResult name = run(*git, {"config", "user.name"}), mail = run(*git, {"config", "user.email"});
  if (text::trim(name.out).empty() || text::trim(mail.out).empty())
    add("git", "identity", out::Sym::Warn, "git user.name or user.email is not set: executors' commits will fail",
        "`git config user.name NAME` and `git config user.email EMAIL`");
  else
    add("git", "identity", out::Sym::Ok, "commits as " + std::string(text::trim(name.out)));
}

// The sandbox agents run in: the kernel's Landlock (and its ABI), or the config's "off".
void Doctor::sandbox_check(const Config& cfg) {
  int abi = landlock_abi();
  if (sandbox_off(cfg)) {
    add("sandbox", "sandbox", out::Sym::Warn,
        "\"sandbox\": \"off\": agents, executors, approvers and checks run with your full power",
        "remove \"sandbox\": \"off\" from .yolo-planning/config.json (docs/sandbox.md)");
    return;
  }
  if (abi <= 0) {
    add("sandbox", "sandbox", out::Sym::Fail, "this kernel has no Landlock: yolo will not start agents",
        "a kernel with Landlock (5.13 or later, landlock among the LSMs), or \"sandbox\": \"off\" (docs/sandbox.md)");
    return;
  }
  add("sandbox", "sandbox", out::Sym::Ok,
      "Landlock ABI " + std::to_string(abi) + (abi >= 6 ? " (signals and abstract sockets scoped)" : "") +
          ", seccomp; `yolo sandbox --print --role ROLE` shows a role's policy",
      {}, {{"abi", abi}});
}

void Doctor::key_check() {
  stdfs::path p = approval_key_path();
  if (p.empty()) {
    add("key", "approval key", out::Sym::Fail, "no place for the approval key: HOME is not set",
        "set HOME or YOLO_APPROVAL_KEY_FILE");
    return;
  }
  std::error_code ec;
  if (!stdfs::exists(p, ec)) {
    add("key", "approval key", out::Sym::Skip, p.string() + " not there yet: the first `yolo approve` creates it");
    return;
  }
  const seal::Key& k = world_.checking_key();
  if (!k.ok()) {
    add("key", "approval key", out::Sym::Fail, k.error, "remove it; the next `yolo approve` makes a new one");
    return;
  }
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    add("key", "approval key", out::Sym::Warn, p.string() + " can be read by other users", "chmod 600 " + p.string());
  else
    add("key", "approval key", out::Sym::Ok, p.string());
}

void Doctor::signing_check() {
  if (!have_project_) return;
  stdfs::path signers = allowed_signers_path(root_);
  std::error_code ec;
  if (!stdfs::exists(signers, ec)) {
    add("signing", "ssh signatures", out::Sym::Skip,
        "not required (no .yolo-planning/allowed_signers): approvals are sealed with the approval key");
    return;
  }
  if (!find_program("ssh-keygen", root_)) {
    add("signing", "ssh signatures", out::Sym::Fail,
        "allowed_signers requires signatures but ssh-keygen is not on PATH", "install OpenSSH's ssh-keygen");
    return;
  }
  std::string key = env("YOLO_SIGNING_KEY");
  if (key.empty())
    if (auto git = find_program("git", root_))
      key = std::string(text::trim(run(*git, {"config", "user.signingkey"}).out));
  if (key.empty()) {
    add("signing", "ssh signatures", out::Sym::Fail,
        "allowed_signers requires signed approvals but no signing key is set",
        "`git config user.signingkey ~/.ssh/id_ed25519.pub` (or set YOLO_SIGNING_KEY)");
    return;
  }
  std::string file = key.starts_with("~/") ? env("HOME") + key.substr(1) : key;
  if (!key.starts_with("key::") && !stdfs::exists(file, ec))
    add("signing", "ssh signatures", out::Sym::Fail, "the signing key " + key + " does not exist",
        "point user.signingkey at your SSH key");
  else
    add("signing", "ssh signatures", out::Sym::Ok, "approvals are signed with " + key);
}

void Doctor::hooks_check() {
  if (!have_project_) return;
  auto git = find_program("git", root_);
  if (!git) return;
  SpawnResult r = run(*git, {"rev-parse", "--git-path", "hooks"});
  if (!r.ok()) return;  // not a repository: the git line says so
  stdfs::path dir = std::string(text::trim(r.out));
  if (dir.is_relative()) dir = root_ / dir;
  int ours = 0;
  const char* names[] = {"post-checkout", "post-merge", "post-rewrite", "pre-commit"};
  for (const char* n : names) {
    auto t = fs::read_text(dir / n, 1 << 20);
    if (t.ok() && t.content.find("# installed by yolo-runner") != std::string::npos) ++ours;
  }
  if (ours == 4)
    add("hooks", "git hooks", out::Sym::Ok, "installed in " + dir.string());
  else if (ours == 0)
    add("hooks", "git hooks", out::Sym::Skip, "not installed (optional: they re-review plans on checkout and commit)",
        "`yolo hooks install`");
  else
    add("hooks", "git hooks", out::Sym::Warn, std::to_string(ours) + " of 4 yolo hooks in " + dir.string(),
        "`yolo hooks install` puts back the missing ones");
}

}  // namespace doctor

namespace {

int run(const Context& ctx, const Options& o) {
  std::string err;
  bool not_folder = false;
  auto found = find_project(ctx, o.repo, err, &not_folder);
  if (not_folder) {
    if (o.json) out::json_line({{"ok", false}, {"cmd", "doctor"}, {"error", err}});
    out::err(out::sym(out::Sym::Fail) + " doctor: " + err);
    return kExitUsage;
  }
  std::error_code ec;
  stdfs::path root = found ? *found : (o.repo.empty() ? stdfs::current_path(ec) : stdfs::path(o.repo));
  Doctor d(ctx.world, root, found.has_value());
  Config cfg;
  if (!found) {
    d.add("project", "project", out::Sym::Fail, err, "`yolo init` in the project folder (or --repo DIR)");
  } else {
    ConfigLoad l = load_config(ctx.world, root);
    if (!l.ok())
      d.add("config", "config", out::Sym::Fail, l.error, "fix .yolo-planning/config.json (`yolo validate` lists it)");
    else if (!l.config.warnings.empty())
      for (const auto& w : l.config.warnings)
        d.add("config", "config", out::Sym::Warn, w, "fix the key in .yolo-planning/config.json");
    else
      d.add("config", "config", out::Sym::Ok, (root / ".yolo-planning" / "config.json").string());
    cfg = l.config;
  }
  if (found) {
    d.agent_role("reviewer", cfg.reviewer, "the review gate runs Stage 1 only");
    d.agent_role("architect", cfg.architect, "a rejected plan is not revised by an agent");
    d.agent_role("executor", cfg.executor, "plans wait for a SUMMARY written by a person or an agent outside yolo");
    d.approvers(cfg);
    d.plan_checks_programs();
  }
  d.git_checks();
  d.sandbox_check(cfg);
  d.key_check();
  d.signing_check();
  d.hooks_check();

  int fails = 0, warns = 0;
  json arr = json::array();
  for (const auto& c : d.checks) {
    fails += c.sym == out::Sym::Fail;
    warns += c.sym == out::Sym::Warn;
    json j = {{"role", c.role}, {"check", c.check}, {"status", status_of(c.sym)}, {"detail", c.detail}};
    if (!c.next.empty()) j["next"] = c.next;
    for (auto& [k, v] : c.extra.items()) j[k] = v;
    arr.push_back(std::move(j));
  }
  if (o.json) {
    out::json_line({{"ok", fails == 0},
                    {"cmd", "doctor"},
                    {"root", root.string()},
                    {"problems", fails},
                    {"warnings", warns},
                    {"checks", std::move(arr)}});
    return fails ? kExitFail : kExitOk;
  }
  out::line(out::bold("yolo doctor") + ": " + root.string());
  for (const auto& c : d.checks) {
    std::string l = out::sym(c.sym) + " " + c.role + (c.check == c.role ? "" : " " + c.check) + ": " +
                    text::sanitize_for_terminal(c.detail);
    if (!c.next.empty()) l += "  Next: " + text::sanitize_for_terminal(c.next);
    out::line(l);
  }
  if (fails == 0 && warns == 0) {
    out::line(out::sym(out::Sym::Ok) + " Ready: every check passed. Next: `yolo execute`");
    return kExitOk;
  }
  std::string first;
  for (const auto& c : d.checks)
    if (c.sym == out::Sym::Fail && first.empty()) first = c.next;
  out::line(out::sym(fails ? out::Sym::Fail : out::Sym::Warn) + " " + std::to_string(fails) + " problem" +
            (fails == 1 ? "" : "s") + ", " + std::to_string(warns) + " warning" + (warns == 1 ? "" : "s") +
            ". Next: " + (first.empty() ? "the lines marked ⚠ above" : text::sanitize_for_terminal(first)));
  return fails ? kExitFail : kExitOk;
}

const CommandRegistrar reg{Command{
    "doctor",
    "Check that the configured agents will work before a run: programs, versions, flags, credentials, git, key, "
    "signing, hooks",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--json", o->json, "One JSON document on stdout");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
