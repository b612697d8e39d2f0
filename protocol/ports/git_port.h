// The questions the protocol asks of git, as a port: protocol/ runs no processes, so the
// SUMMARY gate asks through this interface and runner/git.h answers with real `git`
// children (argv only, no shell, with a timeout). Tests may pass a fake.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace yolo {

// True when s is 4 to 40 hex digits (`^[0-9a-fA-F]{4,40}$`). Only such strings are ever
// handed to a GitPort: anything else (`--output=/tmp/x`, `HEAD; rm -rf ~`, `main~1`) is
// refused as "not a hash" before git is asked anything.
inline bool is_commit_hash(std::string_view s) {
  if (s.size() < 4 || s.size() > 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

class GitPort {
 public:
  virtual ~GitPort() = default;
  // True when the project root is inside a git work tree.
  virtual bool is_repo() = 0;
  // true: `hash` names a commit of the repository (a prefix of its full id, never a ref
  // name); false: it does not; nullopt: git could not answer (see last_error()).
  // Callers pass only strings for which is_commit_hash() holds.
  virtual std::optional<bool> commit_exists(const std::string& hash) = 0;
  // The paths the commit adds, modifies, deletes or renames (both names of a rename),
  // relative to the project root, '/'-separated; for a merge, against every parent.
  // nullopt when git could not answer (see last_error()).
  virtual std::optional<std::vector<std::string>> files_touched(const std::string& hash) = 0;
  // Optional: called once with every hash (each passing is_commit_hash()) before the
  // per-hash questions, so an implementation can answer them all with a few children
  // and serve commit_exists / files_touched from what it learnt. Default: nothing.
  virtual void prefetch(const std::vector<std::string>& hashes) { (void)hashes; }
  // Why the last call answered nullopt ("git timed out after 10000 ms", ...); may be empty.
  virtual std::string last_error() const { return {}; }
};

}  // namespace yolo
