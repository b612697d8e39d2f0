// Shared by cmd_gates.cc and cmd_status.cc: finding the project (--repo DIR or the current
// folder upward) and the tables people read (✓ ⚠ ✗ ◆ ⏸ ○).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "protocol/base/json.h"
#include "runner/context.h"

namespace yolo::runner {

// The folder holding .yolo-planning/, from repo (when given) or the current folder upward
// (the root run_cli found, in ctx): the one project lookup of the commands that take --repo.
// nullopt with err naming the folder searched; *repo_not_folder (when given) says the --repo
// given is no folder (a usage error).
std::optional<std::filesystem::path> find_project(const Context& ctx, const std::string& repo, std::string& err,
                                                  bool* repo_not_folder = nullptr);

// One line per gate: symbol, id, type, status, file, who/when, feedback or last_error.
std::string render_gates(const json& gates);
// The `yolo status` table from execution_status().
std::string render_status(const json& status);

}  // namespace yolo::runner
