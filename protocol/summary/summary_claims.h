// The claims layer of the SUMMARY gate (PROTOCOL.md section 7, strict mode): what a SUMMARY
// says is checked against the repository. Each commit hash is a commit (asked through
// GitPort, only after it matched ^[0-9a-fA-F]{4,40}$) and together they touch a file the plan
// names; each file under `## Files Modified` exists unless its action says it was deleted;
// the plan's must_haves.artifacts exist and hold their `contains` text; key_links' `from`
// mentions `to` (warning only); the SUMMARY is of this plan and its task counts agree with
// the plan. Every path is resolved inside the project root (absolute paths, `..` and
// symlinks leading out are refused, never read).
//
// Called by verify_summary (protocol/summary/summary_gate.h) after the structural checks.
// Nothing here throws or prints; problems become findings.
#pragma once
#include <filesystem>

#include "protocol/findings/findings.h"
#include "protocol/ports/git_port.h"
#include "protocol/plan/plan.h"
#include "protocol/summary/summary.h"

namespace yolo {

// Adds the claims checks' findings to r. plan may be nullptr: then a `plan` finding (high)
// says the claims cannot be compared. git nullptr is a `git` failure.
void check_summary_claims(const World& w, const Summary& s, const Plan* plan, const std::filesystem::path& root,
                          GitPort* git, StructuralReview& r);

}  // namespace yolo
