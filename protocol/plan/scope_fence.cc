#include "protocol/plan/scope_fence.h"

#include <algorithm>
#include <set>

#include "protocol/findings/make_finding.h"
#include "protocol/base/text.h"

namespace yolo::scope {
namespace {

std::string clean(std::string p) {
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  return p;
}

bool has_glob(std::string_view p) { return p.find_first_of("*?[") != std::string_view::npos; }

// [...] at pattern[pi] (pi on '['): whether c matches; next set to the index after ']'.
// A '[' without a closing ']' is a literal '['.
bool class_match(std::string_view pat, size_t pi, char c, size_t& next, bool& valid) {
  size_t i = pi + 1;
  bool negate = i < pat.size() && (pat[i] == '!' || pat[i] == '^');
  if (negate) ++i;
  size_t start = i;
  bool matched = false;
  while (i < pat.size() && (pat[i] != ']' || i == start)) {
    if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
      if (c >= pat[i] && c <= pat[i + 2]) matched = true;
      i += 3;
    } else {
      if (c == pat[i]) matched = true;
      ++i;
    }
  }
  if (i >= pat.size()) {
    valid = false;
    return false;
  }
  valid = true;
  next = i + 1;
  return c != '/' && matched != negate;
}

bool match_from(std::string_view pat, size_t pi, std::string_view s, size_t si) {
  while (pi < pat.size()) {
    char pc = pat[pi];
    if (pc == '*') {
      bool dbl = pi + 1 < pat.size() && pat[pi + 1] == '*';
      if (dbl) {
        size_t after = pi + 2;
        // "**/" also matches no folder at all.
        if (after < pat.size() && pat[after] == '/' && match_from(pat, after + 1, s, si)) return true;
        for (size_t k = si; k <= s.size(); ++k)
          if (match_from(pat, after, s, k)) return true;
        return false;
      }
      for (size_t k = si; k <= s.size(); ++k) {
        if (match_from(pat, pi + 1, s, k)) return true;
        if (k < s.size() && s[k] == '/') break;
      }
      return false;
    }
    if (si >= s.size()) return false;
    if (pc == '?') {
      if (s[si] == '/') return false;
      ++pi;
      ++si;
      continue;
    }
    if (pc == '[') {
      size_t next = 0;
      bool valid = false;
      bool m = class_match(pat, pi, s[si], next, valid);
      if (valid) {
        if (!m) return false;
        pi = next;
        ++si;
        continue;
      }
    }
    if (pc != s[si]) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  if (pattern.empty()) return false;
  if (pattern.back() == '/') {  // a folder: everything under it
    if (!has_glob(pattern)) return path.size() > pattern.size() && path.substr(0, pattern.size()) == pattern;
    std::string p(pattern);
    p += "**";
    return match_from(p, 0, path, 0);
  }
  if (!has_glob(pattern)) return pattern == path;
  return match_from(pattern, 0, path, 0);
}

std::vector<std::string> planned_files(const Plan& plan) {
  bool has_fm =
      std::any_of(plan.files.begin(), plan.files.end(), [](const FileRef& f) { return f.source == "files_modified"; });
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& f : plan.files) {
    if (has_fm && f.source != "files_modified") continue;
    std::string p = clean(f.path);
    if (p.empty() || !seen.insert(p).second) continue;
    out.push_back(p);
  }
  return out;
}

std::optional<Severity> severity_setting(std::string_view s) {
  if (s == "high") return Severity::High;
  if (s == "medium") return Severity::Medium;
  if (s == "low") return Severity::Low;
  return std::nullopt;
}

Result check(const std::vector<std::string>& planned, const std::vector<std::string>& changed, const Options& opts) {
  Result r;
  r.planned = planned;
  std::set<std::string> ch;
  for (const auto& c : changed)
    if (!c.empty()) ch.insert(clean(c));
  r.changed.assign(ch.begin(), ch.end());
  std::set<std::string> exempt;
  for (const auto& e : opts.exempt) exempt.insert(clean(e));
  std::vector<bool> used(planned.size(), false);
  for (const auto& c : r.changed) {
    bool in = false;
    for (size_t i = 0; i < planned.size(); ++i)
      if (glob_match(clean(planned[i]), c)) {
        in = true;
        used[i] = true;
      }
    if (!in && !exempt.count(c)) r.outside.push_back(c);
  }
  for (size_t i = 0; i < planned.size(); ++i)
    if (!used[i]) r.untouched.push_back(clean(planned[i]));
  if (opts.outside && !r.outside.empty()) {
    Finding f = make_finding(*opts.outside, "scope_fence",
                             "the plan's branch changed " + std::to_string(r.outside.size()) +
                                 " file(s) outside its planned files: " + text::join_some(r.outside),
                             "revert them, or add them to the plan's files_modified (and have the plan reviewed)");
    f.extra["files"] = r.outside;
    r.findings.push_back(std::move(f));
  }
  if (opts.untouched && !r.untouched.empty()) {
    Finding f = make_finding(*opts.untouched, "scope_fence",
                             "the plan's branch left " + std::to_string(r.untouched.size()) +
                                 " planned file(s) untouched: " + text::join_some(r.untouched),
                             "do the planned work on them, or remove them from the plan's files");
    f.extra["files"] = r.untouched;
    r.findings.push_back(std::move(f));
  }
  return r;
}

json Result::to_json() const {
  return {{"planned", planned}, {"changed", changed}, {"outside", outside}, {"untouched", untouched}};
}

}  // namespace yolo::scope
