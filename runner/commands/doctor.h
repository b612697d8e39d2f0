// The doctor's internals shared by its two files: what yolo knows of agent CLIs (doctor_agents.cc)
// and the Doctor that collects one line per check (its agent-role checks in doctor_agents.cc, the
// project, git, sandbox, key, signing and hook checks in cmd_doctor.cc).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "protocol/ports/world.h"
#include "protocol/state/config.h"
#include "runner/output.h"
#include "runner/subprocess.h"

namespace yolo::runner::doctor {

namespace stdfs = std::filesystem;

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

const std::vector<KnownCli>& known_clis();
const KnownCli* known_cli(const std::string& argv0);
std::string env(const char* n);
bool executable_file(const stdfs::path& p);
// Where the program a template names is: a name without '/' on PATH (as the spawn looks it
// up), a path from the project root (the agents' working folder).
std::optional<stdfs::path> find_program(const std::string& name, const stdfs::path& root);
using Version = std::tuple<int, int, int>;
std::optional<Version> parse_version(const std::string& s);
std::string version_text(const Version& v);
// The long and short flags a help text lists ("-p, --prompt <text>", "--model=MODEL").
std::set<std::string> help_flags(const std::string& help);
// The flags of a template (after the program and its subcommand), without their values.
std::vector<std::string> template_flags(const std::vector<std::string>& argv, size_t from);

struct Check {
  std::string role, check;
  out::Sym sym = out::Sym::Ok;
  std::string detail, next;
  json extra = json::object();
};

class Doctor {
 public:
  Doctor(const World& w, stdfs::path root, bool have_project)
      : world_(w), root_(std::move(root)), have_project_(have_project) {}

  std::vector<Check> checks;

  void add(std::string role, std::string check, out::Sym s, std::string detail, std::string next = {},
           json extra = json::object()) {
    checks.push_back({std::move(role), std::move(check), s, std::move(detail), std::move(next), std::move(extra)});
  }

  void agent_role(const std::string& role, const CommandSpec& spec, const std::string& if_missing);
  void version(const std::string& role, const KnownCli& k, const stdfs::path& path);
  void flags(const std::string& role, const KnownCli& k, const stdfs::path& path, const std::vector<std::string>& argv);
  void credentials(const std::string& role, const KnownCli& k);
  void program_only(const std::string& role, const std::string& what, const std::string& prog,
                    const std::string& next_if_missing);
  void approvers(const Config& cfg);
  void plan_checks_programs();
  void git_checks();
  void sandbox_check(const Config& cfg);
  void key_check();
  void signing_check();
  void hooks_check();

 private:
  SpawnResult run(const stdfs::path& prog, const std::vector<std::string>& args);
  static std::string explained(const SpawnResult& r);

  const World& world_;
  stdfs::path root_;
  bool have_project_;
  std::map<std::string, std::optional<SpawnResult>> versions_, helps_;
};

}  // namespace yolo::runner::doctor
