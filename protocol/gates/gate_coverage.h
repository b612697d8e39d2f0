// What a gate covers (PROTOCOL.md section 6): the digest of every file and config key it
// governs, the project's identity, and the paths a gate may name (inside the project).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/gates/gates.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::gates {

// ---- what a gate covers ----------------------------------------------------------------
//
// A gate binds, from the moment it opens: the project (project_id), the run (the state's
// correlation_id) and `covers`, the digest of everything it governs, by content: "file:<path>"
// for each covered file (vision: ROADMAP.md; wave: every plan of the wave; others: the
// requested file). The vision gate also covers every config key but the cosmetic ones
// ("config:<key>"), every program a config argv names by a project-relative path, the model
// profiles and the project's allowed_signers ("file:<path>"), and, under wave_approval, each
// phase's plan -> wave map and dependency graph ("waves:<phase folder>"). The person approves
// exactly that; the seal covers it; a later change of any of it makes the approval Stale
// and the gate opens again. coverage_rules() says it in words, for people and docs/trust.md.

// The config keys the vision gate covers even when absent (a key set later re-opens it):
// every key yolo reads but the cosmetic ones. Keys present in config.json are covered too.
const std::vector<std::string>& gate_config_keys();
// Top-level keys, and "watch.debounce_ms", that change how fast or how much yolo reports,
// never what runs or what is judged: not covered.
const std::vector<std::string>& cosmetic_config_keys();
// The digest coverage() records for a config value.
std::string config_value_digest(const json& v);

// What an approval covers, one rule per entry (kind: "vision", "wave", "any"), as people read
// it; coverage() implements exactly these. docs/trust.md holds coverage_markdown() between
// its covers markers, and a test keeps the two equal.
struct CoverageRule {
  std::string gate;  // "every gate", "vision", "wave", "security / scope_change"
  std::string what;
};
const std::vector<CoverageRule>& coverage_rules();
std::string coverage_markdown();

// ".yolo-planning/allowed_signers": the project's signers file, which the vision gate covers
// so that a change of it re-opens the gate (and an approval of it pins it, approvals.h).
const std::string& signers_file();

// The covers of a gate of `type` over `files` (relative to root) as they are now. A file
// that cannot be read is "absent"; an unparseable config.json is "config:config.json".
// Files are read through the world's disk.
json coverage(const World& w, const std::filesystem::path& root, GateType type, const std::vector<std::string>& files);
// The files a gate covers (its "file:" entries; else its plan_path).
std::vector<std::string> covered_files(const json& gate);

// ---- what was approved, kept ---------------------------------------------------------------
//
// A person approves content, so the next approval shows what changed since as a diff: the
// bytes of every file an approval covered are kept, content-addressed, as
// .yolo-planning/.cache/approved/<sha256 hex> (`.cache` is ignored by git and not watched).
// A copy is written only when the file still hashes to the digest the approval covers, and a
// name is never written twice (same name, same bytes). Approvals made before copies were kept
// have none: their files are shown as changed, without a diff.
std::filesystem::path approved_copies_dir(const std::filesystem::path& root);
// Keeps a copy of each "file:" entry of covers; returns what could not be kept (the approval
// stands without it).
std::vector<std::string> keep_approved_copies(const World& w, const std::filesystem::path& root, const json& covers);
// The kept bytes whose digest is `digest` ("sha256:<hex>"), or nullopt.
std::optional<std::string> approved_copy(const World& w, const std::filesystem::path& root, const std::string& digest);
// The project files a config value or an argv names by a project-relative path (not
// absolute, no placeholder, an existing regular file): what an approval covers by content,
// and what the sandbox keeps read-only for an executor. Relative to root, sorted.
std::vector<std::string> named_project_files(const World& w, const std::filesystem::path& root, const json& v);
// The project's identity for approvals sealed with the local key: its canonical path (every
// link resolved on the world's disk).
std::string project_id(const World& w, const std::filesystem::path& root);

// "sha256:..." of the gate's file (plan_path relative to root, or absolute inside root).
// Fails when it cannot be read or lies outside the project.
Result<std::string> file_digest(const World& w, const std::filesystem::path& root, const std::string& plan_path);
// plan_path as it is stored: relative to root, normalised; fails when outside the project.
Result<std::string> normalize_plan_path(const World& w, const std::filesystem::path& root,
                                        const std::string& plan_path);

}  // namespace yolo::gates
