// The scope fence of the SUMMARY gate, pure: the files a plan's branch changed
// (its diff against the commit its worktree was created from) compared with the files the
// plan says it modifies (files_modified, `**Files:**` lines, `<files>` blocks; globs
// honoured). Files changed outside them, and planned files left untouched, are findings.
// No git, no files: the runner hands in both lists.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/plan/plan.h"

namespace yolo::scope {

// Glob match of a '/'-separated relative path: `*` and `?` stay inside one path segment,
// `**` spans segments (`src/**` is everything under src, `**/x.cc` any x.cc), `[abc]`
// and `[!a-z]` are character classes. A pattern ending in '/' names a folder and
// matches everything under it. A pattern without glob characters matches only itself.
bool glob_match(std::string_view pattern, std::string_view path);

// The planned entries of a plan (each path once, '/'-separated, a leading "./" removed):
// files_modified when the plan has it, else every file its tasks name.
std::vector<std::string> planned_files(const Plan& plan);

struct Options {
  std::optional<Severity> outside = Severity::High;    // nullopt: not reported
  std::optional<Severity> untouched = Severity::High;  // nullopt: not reported
  // Paths never reported as outside (the plan's own PLAN and SUMMARY files).
  std::vector<std::string> exempt;
};

struct Result {
  std::vector<std::string> planned;    // as given
  std::vector<std::string> changed;    // as given, sorted, unique
  std::vector<std::string> outside;    // changed, matching no planned entry and not exempt
  std::vector<std::string> untouched;  // planned entries no changed file matches
  std::vector<Finding> findings;       // check "scope_fence"
  // {"planned","changed","outside","untouched"}
  json to_json() const;
};

Result check(const std::vector<std::string>& planned, const std::vector<std::string>& changed, const Options& opts);

// "high" | "medium" | "low" -> that severity; "off" (or anything else) -> nullopt.
std::optional<Severity> severity_setting(std::string_view s);

}  // namespace yolo::scope
