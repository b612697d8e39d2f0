// Two small readers of git's output shared by worktree.cc, worktree_merge.cc and slot_aside.cc.
#pragma once
#include <string>
#include <vector>

#include "protocol/base/text.h"

namespace yolo::runner::worktree_text {

inline std::string trimmed(const std::string& s) { return std::string(text::trim(s)); }

// The names of a `-z` listing (empty names skipped).
inline std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nul = s.find('\0', pos);
    std::string tok = s.substr(pos, nul == std::string::npos ? std::string::npos : nul - pos);
    if (!tok.empty()) out.push_back(std::move(tok));
    if (nul == std::string::npos) break;
    pos = nul + 1;
  }
  return out;
}

}  // namespace yolo::runner::worktree_text
