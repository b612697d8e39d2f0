#include "protocol/ports/contain.h"

#include <deque>
#include <vector>

namespace yolo::fs {

std::optional<stdfs::path> resolve_links(const stdfs::path& p, const stdfs::path& real_prefix) {
  std::deque<stdfs::path> todo;
  stdfs::path cur = p.root_path().empty() ? stdfs::path("/") : p.root_path();
  const stdfs::path rel_part = p.relative_path();
  auto it = rel_part.begin();
  if (!real_prefix.empty() && real_prefix.is_absolute() && p.is_absolute()) {
    // Skip the components p shares with the resolved prefix (every one of the prefix's).
    auto pi = rel_part.begin();
    const stdfs::path prefix_rel = real_prefix.relative_path();
    bool all = true;
    for (const auto& c : prefix_rel) {
      if (c.empty()) continue;  // a trailing separator
      if (pi == rel_part.end() || *pi != c) {
        all = false;
        break;
      }
      ++pi;
    }
    if (all) {
      cur = real_prefix.root_path() / prefix_rel;
      if (!cur.has_filename()) cur = cur.parent_path();
      it = pi;
    }
  }
  for (; it != rel_part.end(); ++it) todo.push_back(*it);
  int links = 0;
  // How deep cur lies below a component that does not exist (or is not a directory): no
  // link can be there, so those components are taken as written, without an lstat each,
  // until a `..` (from a link's target) climbs back above it.
  int below_missing = 0;
  while (!todo.empty()) {
    stdfs::path c = std::move(todo.front());
    todo.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      cur = cur.parent_path();
      if (below_missing > 0) --below_missing;
      continue;
    }
    stdfs::path next = cur / c;
    if (below_missing > 0) {
      ++below_missing;
      cur = std::move(next);
      continue;
    }
    std::error_code ec;
    const stdfs::file_status st = stdfs::symlink_status(next, ec);
    if (st.type() == stdfs::file_type::not_found) {  // ENOENT or ENOTDIR: nothing below it
      below_missing = 1;
      cur = std::move(next);
      continue;
    }
    if (stdfs::is_symlink(st)) {
      if (++links > 40) return std::nullopt;
      stdfs::path target = stdfs::read_symlink(next, ec);
      if (!ec) {
        stdfs::path rel = target.relative_path();
        std::vector<stdfs::path> parts(rel.begin(), rel.end());
        todo.insert(todo.begin(), parts.begin(), parts.end());
        if (target.is_absolute()) cur = target.root_path();
        continue;
      }
    }
    cur = std::move(next);
  }
  return cur;
}

std::string Contained::why() const {
  switch (refusal) {
    case Refusal::None:
      return {};
    case Refusal::Empty:
      return "is empty";
    case Refusal::Absolute:
    case Refusal::Escapes:
      return "is absolute or escapes the project root";
    case Refusal::Symlink:
      return "leads out of the project root through a symbolic link";
    case Refusal::LinkLoop:
      return "is a loop of symbolic links";
  }
  return {};
}

Root::Root(stdfs::path root, Resolver resolve) : resolve_(std::move(resolve)), root_(std::move(root)) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(root_, ec);
  if (ec) abs = root_;
  abs = abs.lexically_normal();
  real_ = resolve_(abs, {}).value_or(abs);
}

bool Root::inside(const stdfs::path& real) const {
  auto r = real_.begin(), re = real_.end();
  auto it = real.begin(), ce = real.end();
  for (; r != re; ++r, ++it) {
    if (r->empty()) continue;  // trailing separator
    if (it == ce || *it != *r) return false;
  }
  return true;
}

Contained Root::contain(const std::string& p, AbsolutePaths absolute) const {
  using R = Contained::Refusal;
  Contained c;
  if (p.empty()) {
    c.refusal = R::Empty;
    return c;
  }
  auto refuse = [&](R r) {
    c.refusal = r;
    return c;
  };
  const bool is_absolute = p[0] == '/';
  stdfs::path rel, target;  // target: the absolute path to resolve
  if (is_absolute) {
    if (absolute == AbsolutePaths::Refuse) return refuse(R::Absolute);
    target = stdfs::path(p).lexically_normal();
  } else {
    if (p[0] == '~' || p[0] == '\\' || (p.size() > 1 && p[1] == ':')) return refuse(R::Absolute);  // ~user, C:\ style
    rel = stdfs::path(p).lexically_normal();
    for (const auto& part : rel)
      if (part == "..") return refuse(R::Escapes);
    if (rel.empty()) rel = ".";
    target = real_ / rel;
  }
  // Resolve, then compare.
  auto real = resolve_(target, is_absolute ? stdfs::path() : real_);
  if (!real) return refuse(R::LinkLoop);
  if (!inside(*real)) return refuse(is_absolute ? R::Escapes : R::Symlink);
  if (is_absolute) {
    rel = real->lexically_relative(real_);
    if (rel.empty()) rel = ".";
  }
  std::string s = rel.generic_string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  c.rel = s;
  c.path = s == "." ? root_ : (root_ / rel).lexically_normal();
  return c;
}

}  // namespace yolo::fs
