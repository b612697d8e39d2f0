// yolo doctor [--repo DIR] [--json]: before a run, whether the configured agents will work:
// for each role (reviewer, architect, executor, command approvers, the plans' checks) the
// program found on PATH, for a known agent CLI its version against the versions yolo was
// tested with, the template's flags against the CLI's own `--help`, and its credentials (an
// environment variable or the CLI's credential file: existence only, never read); then the
// config, git, the sandbox, the approval key, signing and the hooks. One line per check with a next step.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "protocol/approver_policy.h"
#include "protocol/config.h"
#include "protocol/failure_line.h"
#include "protocol/fs.h"
#include "protocol/gates.h"
#include "protocol/plan.h"
#include "protocol/plan_checks.h"
#include "protocol/text.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/identity.h"
#include "runner/output.h"
#include "runner/sandbox.h"
#include "runner/signing.h"
#include "runner/subprocess.h"
#include "runner/world.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo;
  bool json = false;
};

// What yolo knows of an agent CLI: the versions its templates were tested with, the words
// that pick a subcommand's own parser, flags its parser accepts without listing them in
// --help, and where its credentials live.
struct KnownCli {
  std::string name, label;
  std::string tested_min, tested_below, tested;  // tested range [min, below); the version of the e2e run
  std::vector<std::string> subcommands;
  std::vector<std::string> hidden_flags;
  std::vector<std::string> env_keys;
  // Credential files: {environment variable naming the folder (may be empty), folder under
  // HOME when it is unset, file name}.
  std::vector<std::tuple<std::string, std::string, std::string>> cred_files;
};

const std::vector<KnownCli>& known_clis() {
  static const std::vector<KnownCli> k = {
      {"claude",
       "Claude Code",
       "2.1.197",
       "2.2.0",
       "2.1.332",
       {},
       {"--max-turns"},  // accepted by its parser, not listed in --help
       {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
       {{"CLAUDE_CONFIG_DIR", ".claude", ".credentials.json"}}},
      {"codex",
       "Codex CLI",
       "0.171.0",
       "0.172.0",
       "0.171.0",
       {"exec", "e"},
       {},
       {"OPENAI_API_KEY", "CODEX_API_KEY"},
       {{"CODEX_HOME", ".codex", "auth.json"}}},
      {"gemini",
       "Gemini CLI",
       "0.61.0",
       "0.62.0",
       "0.61.0",
       {},
       {},
       {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"},
       {{"", ".gemini", "oauth_creds.json"}}},
      {"aider",
       "aider",
       "",
       "",
       "",
       {},
       {},
       {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"},
       {}},
  };
  return k;
}

const KnownCli* known_cli(const std::string& argv0) {
  std::string base = stdfs::path(argv0).filename().string();
  for (const auto& k : known_clis())
    if (k.name == base) return &k;
  return nullptr;
}

std::string env(const char* n) {
  const char* v = std::getenv(n);
  return v ? std::string(v) : std::string();
}

bool executable_file(const stdfs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// Where the program a template names is: a name without '/' on PATH (as the spawn looks it
// up), a path from the project root (the agents' working folder).
std::optional<stdfs::path> find_program(const std::string& name, const stdfs::path& root) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    stdfs::path p = stdfs::path(name).is_absolute() ? stdfs::path(name) : root / name;
    return executable_file(p) ? std::optional<stdfs::path>(p) : std::nullopt;
  }
  std::string path = env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty() && executable_file(stdfs::path(dir) / name)) return stdfs::path(dir) / name;
    start = end + 1;
  }
  return std::nullopt;
}

using Version = std::tuple<int, int, int>;
std::optional<Version> parse_version(const std::string& s) {
  static const std::regex re(R"((\d+)\.(\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(s, m, re)) return std::nullopt;
  try {
    return Version{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  } catch (...) {
    return std::nullopt;
  }
}

std::string version_text(const Version& v) {
  return std::to_string(std::get<0>(v)) + "." + std::to_string(std::get<1>(v)) + "." + std::to_string(std::get<2>(v));
}

// The long and short flags a help text lists ("-p, --prompt <text>", "--model=MODEL").
std::set<std::string> help_flags(const std::string& help) {
  std::set<std::string> f;
  static const std::regex lng(R"((?:^|[^A-Za-z0-9-])(--[A-Za-z0-9][A-Za-z0-9-]*))");
  static const std::regex shrt(R"((?:^|[\s,\[(|])(-[A-Za-z0-9])(?=[\s,=\]|)<]|$))");
  for (std::sregex_iterator it(help.begin(), help.end(), lng), end; it != end; ++it) f.insert((*it)[1]);
  for (std::sregex_iterator it(help.begin(), help.end(), shrt), end; it != end; ++it) f.insert((*it)[1]);
  return f;
}

// The flags of a template (after the program and its subcommand), without their values.
std::vector<std::string> template_flags(const std::vector<std::string>& argv, size_t from) {
  std::vector<std::string> f;
  for (size_t k = from; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    if (a == "--") break;  // the rest are arguments
    if (a.size() < 2 || a[0] != '-' || a.find('{') == 1) continue;
    std::string name = a.substr(0, a.find('='));
    if (name.size() == 2 || name.starts_with("--")) f.push_back(name);
  }
  return f;
}

struct Check {
  std::string role, check;
  out::Sym sym = out::Sym::Ok;
  std::string detail, next;
  json extra = json::object();
};

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

class Doctor {
 public:
  Doctor(stdfs::path root, bool have_project) : root_(std::move(root)), have_project_(have_project) {}

  std::vector<Check> checks;

  void add(std::string role, std::string check, out::Sym s, std::string detail, std::string next = {},
           json extra = json::object()) {
    checks.push_back({std::move(role), std::move(check), s, std::move(detail), std::move(next), std::move(extra)});
  }

  // reviewer, architect, executor: program, version, flags, credentials.
  void agent_role(const std::string& role, const CommandSpec& spec, const std::string& if_missing) {
    if (spec.argv.empty()) {
      add(role, "configured", out::Sym::Skip, "not configured: " + if_missing,
          "`yolo init --agent claude|codex|gemini` writes the templates (docs/agents.md)");
      return;
    }
    const std::string& prog = spec.argv.front();
    auto path = find_program(prog, root_);
    if (!path) {
      add(role, "program", out::Sym::Fail,
          prog + " not found" + (prog.find('/') == std::string::npos ? " on PATH" : ""),
          "install " + prog + " (docs/agents.md) or set " + role + ".command in .yolo-planning/config.json",
          {{"program", prog}});
      return;
    }
    add(role, "program", out::Sym::Ok, prog + " → " + path->string(), {},
        {{"program", prog}, {"path", path->string()}});
    const KnownCli* k = known_cli(prog);
    if (!k) {
      add(role, "version", out::Sym::Skip,
          "not a known agent CLI (claude, codex, gemini, aider): version, flags and credentials not checked");
      return;
    }
    version(role, *k, *path);
    flags(role, *k, *path, spec.argv);
    credentials(role, *k);
  }

  void version(const std::string& role, const KnownCli& k, const stdfs::path& path) {
    auto& cached = versions_[path.string()];
    if (!cached) cached = run(path, {"--version"});
    const SpawnResult& r = *cached;
    if (!r.ok()) {
      add(role, "version", out::Sym::Fail, k.name + " --version " + r.describe() + explained(r),
          "run `" + k.name + " --version` to see why it fails");
      return;
    }
    auto v = parse_version(r.out + "\n" + r.err);
    if (!v) {
      add(role, "version", out::Sym::Warn, k.name + " --version printed no version number",
          "check that " + path.string() + " is " + k.label);
      return;
    }
    json extra = {{"version", version_text(*v)}};
    if (k.tested_min.empty()) {
      add(role, "version", out::Sym::Warn, k.label + " " + version_text(*v) + ": its template is untested",
          "try it on a small phase first (docs/agents.md)", extra);
      return;
    }
    extra["tested_min"] = k.tested_min;
    extra["tested_below"] = k.tested_below;
    auto lo = parse_version(k.tested_min), hi = parse_version(k.tested_below);
    std::string range = ">= " + k.tested_min + ", < " + k.tested_below;
    if (lo && hi && *v >= *lo && *v < *hi)
      add(role, "version", out::Sym::Ok, k.label + " " + version_text(*v) + " (tested: " + range + ")", {}, extra);
    else
      add(role, "version", out::Sym::Warn,
          k.label + " " + version_text(*v) + " is outside the tested range (" + range + ")",
          "install " + k.label + " " + k.tested + " (docs/agents.md), or try this one on a small phase first", extra);
  }

  void flags(const std::string& role, const KnownCli& k, const stdfs::path& path,
             const std::vector<std::string>& argv) {
    size_t from = 1;
    std::vector<std::string> help_argv;
    std::string cmd = k.name;
    if (argv.size() > 1)
      for (const auto& s : k.subcommands)
        if (argv[1] == s) {
          help_argv.push_back(s);
          cmd += " " + s;
          from = 2;
        }
    help_argv.push_back("--help");
    std::vector<std::string> wanted = template_flags(argv, from);
    if (wanted.empty()) {
      add(role, "flags", out::Sym::Ok, "the template passes no flags");
      return;
    }
    std::string key = path.string();
    for (const auto& a : help_argv) key += " " + a;
    auto& cached = helps_[key];
    if (!cached) cached = run(path, help_argv);
    const SpawnResult& r = *cached;
    if (!r.ok()) {
      add(role, "flags", out::Sym::Warn, "cannot check: " + cmd + " --help " + r.describe() + explained(r),
          "run `" + cmd + " --help` to see why it fails");
      return;
    }
    std::set<std::string> listed = help_flags(r.out + "\n" + r.err);
    std::vector<std::string> refused;
    for (const auto& f : wanted) {
      bool hidden = std::find(k.hidden_flags.begin(), k.hidden_flags.end(), f) != k.hidden_flags.end();
      if (!listed.count(f) && !hidden) refused.push_back(f);
    }
    if (refused.empty()) {
      std::string all;
      for (const auto& f : wanted) all += (all.empty() ? "" : " ") + f;
      add(role, "flags", out::Sym::Ok, cmd + " accepts " + all, {}, {{"flags", wanted}});
      return;
    }
    std::string bad;
    for (const auto& f : refused) bad += (bad.empty() ? "" : ", ") + f;
    add(role, "flags", out::Sym::Fail, cmd + " does not accept " + bad + " (its --help does not list it)",
        "remove " + bad + " from " + role + ".command in .yolo-planning/config.json (`" + cmd +
            " --help` lists what it takes; docs/agents.md has tested templates)",
        {{"refused", refused}});
  }

  void credentials(const std::string& role, const KnownCli& k) {
    for (const auto& e : k.env_keys)
      if (!env(e.c_str()).empty()) {
        if (e == "GOOGLE_APPLICATION_CREDENTIALS" && !stdfs::exists(env(e.c_str()))) continue;
        add(role, "credentials", out::Sym::Ok, "$" + e + " is set", {}, {{"source", e}});
        return;
      }
    std::string home = env("HOME");
    std::string where;
    for (const auto& [dir_env, home_dir, file] : k.cred_files) {
      stdfs::path dir = !dir_env.empty() && !env(dir_env.c_str()).empty() ? stdfs::path(env(dir_env.c_str()))
                        : home.empty()                                    ? stdfs::path()
                                                                          : stdfs::path(home) / home_dir;
      if (dir.empty()) continue;
      stdfs::path f = dir / file;
      std::error_code ec;
      if (stdfs::is_regular_file(f, ec)) {
        add(role, "credentials", out::Sym::Ok, f.string() + " exists", {}, {{"source", f.string()}});
        return;
      }
      where += (where.empty() ? "" : ", ") + f.string();
    }
    std::string vars;
    for (const auto& e : k.env_keys) vars += (vars.empty() ? "$" : ", $") + e;
    add(role, "credentials", out::Sym::Fail,
        "no credentials for " + k.label + ": none of " + vars + (where.empty() ? "" : " is set, no " + where),
        "log in once with `" + k.name + "` (or set " + k.env_keys.front() + ")");
  }

  // A command an approver or a check runs: only whether its program is there.
  void program_only(const std::string& role, const std::string& what, const std::string& prog,
                    const std::string& next_if_missing) {
    if (auto p = find_program(prog, root_))
      add(role, "program", out::Sym::Ok, what + ": " + prog + " → " + p->string(), {}, {{"program", prog}});
    else
      add(role, "program", out::Sym::Fail, what + ": " + prog + " not found", next_if_missing, {{"program", prog}});
  }

  void approvers(const Config& cfg) {
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
  void plan_checks_programs() {
    stdfs::path phases = root_ / ".yolo-planning" / "phases";
    std::error_code ec;
    if (!stdfs::is_directory(phases, ec)) return;
    std::map<std::string, std::string> progs;  // program -> the first plan naming it
    std::vector<stdfs::path> dirs;
    for (const auto& d : stdfs::directory_iterator(phases, ec))
      if (d.is_directory(ec)) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs)
      for (const auto& p : list_plan_files(world(), d)) {
        auto l = load_plan(world(), p);
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

  void git_checks() {
    auto git = find_program("git", root_);
    if (!git) {
      add("git", "program", out::Sym::Fail, "git not found on PATH", "install git");
      return;
    }
    SpawnResult v = run(*git, {"--version"});
    auto ver = parse_version(v.out);
    add("git", "program", out::Sym::Ok,
        "git" + (ver ? " " + version_text(*ver) : std::string()) + " → " + git->string());
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
  void sandbox_check(const Config& cfg) {
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

  void key_check() {
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
    const seal::Key& k = world().checking_key();
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

  void signing_check() {
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

  void hooks_check() {
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

 private:
  SpawnResult run(const stdfs::path& prog, const std::vector<std::string>& args) {
    SpawnSpec s;
    s.argv = {prog.string()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.cwd = root_;
    s.timeout_ms = 20000;  // a CLI written in JavaScript takes seconds to start on a busy machine
    s.output_cap = 256 * 1024;
    return run_process(s);
  }
  static std::string explained(const SpawnResult& r) {
    std::string why = failure::explaining_line(r.err, r.out);
    return why.empty() ? std::string() : ": " + why;
  }

  stdfs::path root_;
  bool have_project_;
  std::map<std::string, std::optional<SpawnResult>> versions_, helps_;
};

int run(const Options& o) {
  std::string err;
  bool not_folder = false;
  auto found = find_project(o.repo, err, &not_folder);
  if (not_folder) {
    if (o.json) out::json_line({{"ok", false}, {"cmd", "doctor"}, {"error", err}});
    out::err(out::sym(out::Sym::Fail) + " doctor: " + err);
    return kExitUsage;
  }
  std::error_code ec;
  stdfs::path root = found ? *found : (o.repo.empty() ? stdfs::current_path(ec) : stdfs::path(o.repo));
  Doctor d(root, found.has_value());
  Config cfg;
  if (!found) {
    d.add("project", "project", out::Sym::Fail, err, "`yolo init` in the project folder (or --repo DIR)");
  } else {
    ConfigLoad l = load_config(world(), root);
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
      return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace yolo::runner
