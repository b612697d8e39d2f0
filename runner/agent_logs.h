// Agents' and executors' output, kept per plan and cycle (issue 16): today an executor's
// output was lost. `.yolo-planning/.logs/<phase folder>/<plan id>/<role>-<n>.log`, n the
// review cycle (reviewer, architect) or the attempt (executor). `yolo logs PLAN` shows them.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "runner/subprocess.h"

namespace yolo::runner {

std::filesystem::path logs_dir(const std::filesystem::path& root);

// Writes one log; n <= 0 takes the next free number for that role. Returns the path written
// (relative to root), or "" when it could not be written (never fails the caller).
std::string write_agent_log(const std::filesystem::path& root, const std::string& phase_dir, const std::string& plan_id,
                            const std::string& role, int n, const std::vector<std::string>& argv, const SpawnResult& r);

}  // namespace yolo::runner
