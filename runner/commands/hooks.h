// What cmd_hooks.cc (install, uninstall, the command) and hooks_run.cc (what a hook does
// when git runs it) share: the git runner for the hook's repository.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/context.h"
#include "runner/git.h"

namespace yolo::runner::hooks {

// A git child about the current repository: the hook's repository variables kept, made
// absolute; core.hooksPath read as the repository sets it.
GitRun git(const std::filesystem::path& cwd, std::vector<std::string> args);
std::string trimmed(const std::string& s);
// A word for sh, in single quotes.
std::string quote_sh(const std::string& s);
// `yolo hooks run HOOK [FILES]`: pre-commit reviews the staged plans, the others re-review.
int run_hook(const Context& ctx, const std::string& name, const std::vector<std::string>& files);

}  // namespace yolo::runner::hooks
