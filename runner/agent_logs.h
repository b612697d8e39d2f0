// Agents' and executors' output, kept per plan and cycle: today an executor's
// output was lost. `.yolo-planning/.logs/<phase folder>/<plan id>/<role>-<n>.log`, n the
// review cycle (reviewer, architect) or the attempt (executor). `yolo logs PLAN` shows them.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/ports/world.h"
#include "runner/subprocess.h"

namespace yolo::runner {

std::filesystem::path logs_dir(const std::filesystem::path& root);

// n when `name` is `<role>-<n>.log` (n of 1 to 9 digits), else 0. A new log of a role takes
// one more than the highest n in its folder: a new attempt never overwrites an older one and
// the numbers keep their order.
int log_number_of(std::string_view name, std::string_view role);

// Writes one log; n <= 0 takes the next number for that role (from one read of the plan's
// log folder: probing each number cost a stat per earlier attempt). Returns the path written
// (relative to root), or "" when it could not be written (never fails the caller). Its header
// holds the time of w's clock.
std::string write_agent_log(const World& w, const std::filesystem::path& root, const std::string& phase_dir,
                            const std::string& plan_id, const std::string& role, int n,
                            const std::vector<std::string>& argv, const SpawnResult& r);

}  // namespace yolo::runner
