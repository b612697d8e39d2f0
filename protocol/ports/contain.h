// Path containment: the one check for every path that comes from outside the runner.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace yolo::fs {

namespace stdfs = std::filesystem;

// `p` (absolute) with every symbolic link resolved, component by component, also a link
// whose target does not exist (where weakly_canonical stops resolving). nullopt on a loop
// of links. `real_prefix`: a path already resolved (no link in it) that p may begin with;
// its components are not looked at again (a plan's files below the project root: one
// lstat per component below the root, not one per component from `/`).
std::optional<stdfs::path> resolve_links(const stdfs::path& p, const stdfs::path& real_prefix = {});

// ---- containment: the one check for every path that comes from outside -----------------
// A path from a plan, a SUMMARY, a gate request, an MCP call or the command line is read or
// digested only when contained: relative (or, where allowed, absolute) and, with every
// symbolic link resolved, inside the project root. Resolve, then compare: a lexical check
// alone lets `link/notes.md` through when `link` points out of the project.
struct Contained {
  enum class Refusal { None, Empty, Absolute, Escapes, Symlink, LinkLoop };
  Refusal refusal = Refusal::None;
  stdfs::path path;  // what to read: root / rel (links unresolved); empty when refused
  std::string rel;   // relative to root, normalised, '/' separated ("." for the root)
  bool ok() const { return refusal == Refusal::None; }
  // Why it was refused, a phrase that follows the path: "is absolute or escapes the
  // project root", "leads out of the project root through a symbolic link", ...
  std::string why() const;
};

// How an absolute path is taken: refused (plans, SUMMARY claims), or accepted when it lies
// inside the root (the command line, gate requests, MCP).
enum class AbsolutePaths { Refuse, AllowInside };

// How a disk resolves an absolute path's symbolic links: resolve_links on the real disk,
// lexical on a disk without links (fs::Disk::resolve). nullopt on a loop. The second
// argument: a resolved prefix of the path (the root's real path), or empty.
using Resolver = std::function<std::optional<stdfs::path>(const stdfs::path& p, const stdfs::path& real_prefix)>;

// The project root, resolved once; contain() checks any number of paths against it. Made by
// a disk (fs::Disk::root), which brings its own resolver: protocol/ never resolves links on
// the real disk behind the World's back.
class Root {
 public:
  Root(stdfs::path root, Resolver resolve);
  const stdfs::path& path() const { return root_; }
  Contained contain(const std::string& p, AbsolutePaths absolute = AbsolutePaths::Refuse) const;

 private:
  bool inside(const stdfs::path& real) const;
  Resolver resolve_;
  stdfs::path root_, real_;
};

}  // namespace yolo::fs
