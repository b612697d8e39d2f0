// Helpers shared by the dispatch files of `yolo execute` (runner/run_dispatch.h: plan_dispatch.cc,
// dispatch_submit.cc, dispatch_wait.cc, dispatch_return.cc, dispatch_logs.cc) and run_worktrees_merge.cc.
#pragma once

#include <string>
#include <vector>

#include "protocol/run/dispatch.h"
#include "runner/phase_parts.h"

namespace yolo::runner::phase::dispatch_detail {

inline std::string first_line(const std::string& s) {
  std::string t(text::trim(s));
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

// What no adapter child inherits: the keys and gate markers, and git's hook variables.
inline std::vector<std::string> adapter_unset_env() {
  std::vector<std::string> v = dispatch::withheld_env();
  for (const auto& g : git_hook_env()) v.push_back(g);
  return v;
}

}  // namespace yolo::runner::phase::dispatch_detail
