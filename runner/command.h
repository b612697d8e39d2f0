// Each `yolo` subcommand lives in its own cmd_*.cc and registers itself here with a
// static CommandRegistrar, so adding a command never touches main.cc.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "runner/context.h"

namespace yolo::runner {

// Exit codes shared by all commands (docs/commands.md, "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 64;

struct Command {
  std::string name;
  std::string description;
  // Declares the subcommand's options on `sub`; returns what runs after parsing, given the
  // command's context (the process's World, the project found from the current folder).
  std::function<std::function<int(const Context&)>(CLI::App& sub)> setup;
};

void register_command(Command c);
const std::vector<Command>& commands();

struct CommandRegistrar {
  explicit CommandRegistrar(Command c) { register_command(std::move(c)); }
};

// Absolute path of the running `yolo` binary (children and hooks run this same binary);
// "yolo" (found on PATH) when it cannot be read.
std::string self_exe();

// Builds the World (runner/world.h) and the CLI, parses argv and runs the chosen command with
// its context. Returns the exit code.
int run_cli(int argc, char** argv);

}  // namespace yolo::runner
