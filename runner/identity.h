// Who approves: --by NAME, else `git config user.name` (run with argv in the project
// folder), else the OS user name, else "unknown".
#pragma once
#include <filesystem>
#include <string>

namespace yolo::runner {

std::string approver_identity(const std::string& by_flag, const std::filesystem::path& project_root);

// Where approvals' sealing key lives (protocol/base/seal.h), outside any repository:
// $YOLO_APPROVAL_KEY_FILE, else $XDG_CONFIG_HOME/yolo/approval.key, else
// $HOME/.config/yolo/approval.key. Empty when none can be formed.
std::filesystem::path approval_key_path();

}  // namespace yolo::runner
