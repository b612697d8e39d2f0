// Who approves: --by NAME, else `git config user.name` (run with argv in the project
// folder), else the OS user name, else "unknown".
#pragma once
#include <filesystem>
#include <string>

namespace yolo::runner {

std::string approver_identity(const std::string& by_flag, const std::filesystem::path& project_root);

}  // namespace yolo::runner
