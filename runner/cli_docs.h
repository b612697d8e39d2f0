// What `yolo` can do, told from one source: the commands and options registered
// with CLI11 become the overview of bare `yolo`, `yolo help CMD`, the shell completions
// (`yolo completion bash|zsh|fish`) and the man page (`yolo man`, installed by cmake --install).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace yolo::runner {

struct OptionDoc {
  std::vector<std::string> flags;  // "--json", "-j"; empty for a positional
  std::string positional;          // "PHASE" for a positional
  std::string description;
  bool takes_value = false;
};

struct CommandDoc {
  std::string name;  // "execute", "hooks install"
  std::string description;
  std::vector<OptionDoc> options;
  std::vector<CommandDoc> subcommands;
};

// The commands of `app` (sorted by name), with their options and subcommands.
std::vector<CommandDoc> describe_commands(CLI::App& app);

// The commands for scripts, hooks and agents (listed apart from the daily ones).
bool is_plumbing_command(const std::string& name);
// Bare `yolo`: one line per command, the daily ones first, and how to learn more.
std::string commands_overview(const std::vector<CommandDoc>& cmds);
// The command nearest to a mistyped word, or "".
std::string suggest_command(const std::string& word, const std::vector<CommandDoc>& cmds);

std::string completion_script(const std::string& shell, const std::vector<CommandDoc>& cmds);  // "" unknown shell
std::string man_page(const std::vector<CommandDoc>& cmds, const std::string& version);

}  // namespace yolo::runner
