// The doctor's knowledge of agent CLIs (the versions yolo was tested with, the flags their
// parsers take, where their credentials live) and the checks of one agent role against it:
// program, version, flags, credentials. Separate from cmd_doctor.cc, which checks the project
// around the agents, because this half changes with each CLI release.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "protocol/findings/failure_line.h"
#include "runner/commands/doctor.h"

namespace yolo::runner::doctor {

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

// reviewer, architect, executor: program, version, flags, credentials.
void Doctor::agent_role(const std::string& role, const CommandSpec& spec, const std::string& if_missing) {
  if (spec.argv.empty()) {
    add(role, "configured", out::Sym::Skip, "not configured: " + if_missing,
        "`yolo init --agent claude|codex|gemini` writes the templates (docs/agents.md)");
    return;
  }
  const std::string& prog = spec.argv.front();
  auto path = find_program(prog, root_);
  if (!path) {
    add(role, "program", out::Sym::Fail, prog + " not found" + (prog.find('/') == std::string::npos ? " on PATH" : ""),
        "install " + prog + " (docs/agents.md) or set " + role + ".command in .yolo-planning/config.json",
        {{"program", prog}});
    return;
  }
  add(role, "program", out::Sym::Ok, prog + " → " + path->string(), {}, {{"program", prog}, {"path", path->string()}});
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

void Doctor::version(const std::string& role, const KnownCli& k, const stdfs::path& path) {
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

void Doctor::flags(const std::string& role, const KnownCli& k, const stdfs::path& path,
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

void Doctor::credentials(const std::string& role, const KnownCli& k) {
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

SpawnResult Doctor::run(const stdfs::path& prog, const std::vector<std::string>& args) {
  SpawnSpec s;
  s.argv = {prog.string()};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.cwd = root_;
  s.timeout_ms = 20000;  // a CLI written in JavaScript takes seconds to start on a busy machine
  s.output_cap = 256 * 1024;
  return run_process(s);
}

std::string Doctor::explained(const SpawnResult& r) {
  std::string why = failure::explaining_line(r.err, r.out);
  return why.empty() ? std::string() : ": " + why;
}

}  // namespace yolo::runner::doctor
