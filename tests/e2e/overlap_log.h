// Slow steps that log when they begin and end ("start TIME", "end TIME", appended in time
// order), and how many of them ran at once at most.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "test_support.h"

namespace yolo::test {

struct Overlap {
  int starts = 0;
  int most = 0;
};

inline Overlap overlap_of(const std::string& log) {
  Overlap o;
  int open = 0;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("start ", 0) == 0) ++open, ++o.starts;
    if (l.rfind("end ", 0) == 0) --open;
    o.most = std::max(o.most, open);
  }
  return o;
}

// A `git` in bin/ that runs the real one, but for the calls whose argv (as " $* ") matches
// the shell case pattern `calls`: those take 1.5 s and append "start TIME" and "end TIME" to
// `log`. Returns the PATH that puts it first; empty when no git is found.
inline std::string slow_git_path(const std::filesystem::path& bin, const std::filesystem::path& log,
                                 const std::string& calls) {
  std::filesystem::create_directories(bin);
  std::string real_git = run_program({"sh", "-c", "command -v git"}, bin).out;
  while (!real_git.empty() && (real_git.back() == '\n' || real_git.back() == ' ')) real_git.pop_back();
  if (real_git.empty()) return {};
  write_file(bin / "git",
             "#!/bin/sh\n"
             "slow=\n"
             "case \" $* \" in " + calls + ") slow=1 ;; esac\n"
             "if [ -n \"$slow\" ]; then echo \"start $(date +%s.%N)\" >> '" + log.string() + "'; sleep 1.5; fi\n"
             "'" + real_git + "' \"$@\"; rc=$?\n"
             "if [ -n \"$slow\" ]; then echo \"end $(date +%s.%N)\" >> '" + log.string() + "'; fi\n"
             "exit $rc\n");
  std::filesystem::permissions(bin / "git", std::filesystem::perms::owner_all);
  const char* path = std::getenv("PATH");
  return bin.string() + ":" + (path ? path : "/usr/bin:/bin");
}

}  // namespace yolo::test
