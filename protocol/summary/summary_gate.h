// The SUMMARY gate (PROTOCOL.md section 7).
//
// A plan is complete only when its SUMMARY passes the gate. The gate has two layers:
//  - structural (section 7): frontmatter with phase, plan, title, status
//    (complete|partial|failed), completed (YYYY-MM-DD), tasks_completed, tasks_total,
//    commit_hashes (>= 1) and deviations; tasks_completed == tasks_total when complete;
//    body sections `## What Was Built`, `## Files Modified`, `## Deviations`.
//  - claims (strict mode, protocol/summary/summary_claims.h): what the SUMMARY says is checked
//    against the repository: each commit hash is a commit (asked through GitPort, only after
//    it matched ^[0-9a-fA-F]{4,40}$) and together they touch a file the plan names; each file
//    under `## Files Modified` exists unless its action says it was deleted; the plan's
//    must_haves.artifacts exist and hold their `contains` text; key_links' `from` mentions
//    `to` (warning only); task counts agree with the plan. Every path is resolved inside the
//    project root (absolute paths, `..` and symlinks leading out are refused, never read).
//
// Typical use (the execute loop and the watcher):
//
//   runner::GitCli git(root);                       // runner/git.h
//   SummaryVerdict v = verify_summary(summary_path, std::nullopt, root,
//                                     mode_from_config(cfg.summary_checks), &git);
//   if (v.verdict() == VerifyVerdict::Fail) { mark plan failed; store v.to_json()["findings"];
//                                             log summary_claims_failed; do not advance; }
//
// Verdict: any high finding fails; otherwise any finding is a warning; else pass.
// Nothing here throws or prints; bad files become findings naming the file.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/ports/git_port.h"
#include "protocol/base/json.h"
#include "protocol/plan/plan.h"
#include "protocol/summary/summary.h"

namespace yolo {

inline const char* const kSummarySections[] = {"What Was Built", "Files Modified", "Deviations"};
// Of those, the sections that only describe: missing is a warning.
inline const char* const kSummaryDescriptiveSections[] = {"Deviations"};

enum class SummaryMode { Strict, Structural, Off };
const char* to_string(SummaryMode m);
std::optional<SummaryMode> parse_summary_mode(std::string_view s);  // strict|structural|off
// Config value to mode; an unknown value is strict (the safe side).
SummaryMode mode_from_config(std::string_view s);

enum class VerifyVerdict { Pass, Warn, Fail };
const char* to_string(VerifyVerdict v);
// 0 pass, 1 fail, 2 pass with warnings.
int exit_code(VerifyVerdict v);

struct SummaryVerdict {
  std::string summary_path;
  std::string plan_path;  // empty when no plan was used
  std::string plan_id;    // from the SUMMARY (else the plan), "01-03"
  SummaryMode mode = SummaryMode::Strict;
  StructuralReview review;  // checks and findings

  // high finding -> Fail; any other finding -> Warn; none -> Pass.
  VerifyVerdict verdict() const;
  bool passed() const { return verdict() != VerifyVerdict::Fail; }
  const std::vector<Finding>& findings() const { return review.findings; }
  // {"ok","cmd":"verify-summary","verdict","mode","summary","plan","plan_id","checks","findings"};
  // ok is false exactly when the verdict is fail.
  json to_json() const;
};

// The SUMMARY gate on a file. plan_path: the plan it reports on; nullopt finds it
// (find_plan_for_summary). root: the project root every path is resolved from. git: used
// only in strict mode (nullptr there is a `git` failure). Structural mode runs only the
// section 7 checks (no plan, no git, no file reads besides the SUMMARY); off only requires
// the SUMMARY to be readable. Every file is read through the world's disk.
SummaryVerdict verify_summary(const World& w, const std::filesystem::path& summary_path,
                              const std::optional<std::filesystem::path>& plan_path, const std::filesystem::path& root,
                              SummaryMode mode, GitPort* git);

// The same on already parsed files (plan may be nullptr: then the plan checks fail in
// strict mode with a `plan` finding).
SummaryVerdict verify_summary(const World& w, const Summary& summary, const Plan* plan,
                              const std::filesystem::path& root, SummaryMode mode, GitPort* git);
}  // namespace yolo
