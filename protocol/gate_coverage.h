// What a gate covers (PROTOCOL.md section 6): the digest of every file and config key it
// governs, the project's identity, and the paths a gate may name (inside the project).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/gates.h"
#include "protocol/json.h"
#include "protocol/world.h"

namespace yolo::gates {

// ---- what a gate covers ----------------------------------------------------------------
//
// A gate binds, from the moment it opens: the project (project_id), the run (the state's
// correlation_id) and `covers`, the digest of everything it governs: "file:<path>" for each
// covered file (vision: ROADMAP.md; wave: every plan of the wave; others: the requested
// file) and, for vision, "config:<key>" for every config key that decides gates, reviewers
// and executors (kGateConfigKeys). The person approves exactly that; the seal covers it; a
// later change of any of it makes the approval Stale and the gate opens again.

// approvers, review_gate, reviewer, architect, executor, summary_checks, mcp_can_approve,
// wave_approval, review_max_cycles, command_timeout_ms.
const std::vector<std::string>& gate_config_keys();

// The covers of a gate of `type` over `files` (relative to root) as they are now. A file
// that cannot be read is "absent"; an unparseable config.json is "config:config.json".
// Files are read through the world's disk.
json coverage(const World& w, const std::filesystem::path& root, GateType type, const std::vector<std::string>& files);
// The files a gate covers (its "file:" entries; else its plan_path).
std::vector<std::string> covered_files(const json& gate);
// One line per difference: "ROADMAP.md changed (sha256:ab… -> sha256:cd…)", "config key
// reviewer changed", "plan X added". Empty when equal.
std::vector<std::string> coverage_changes(const json& before, const json& after);
// The project's identity for approvals sealed with the local key: its canonical path (every
// link resolved on the world's disk).
std::string project_id(const World& w, const std::filesystem::path& root);

// "sha256:..." of the gate's file (plan_path relative to root, or absolute inside root).
// Empty with err set when it cannot be read or lies outside the project.
std::string file_digest(const World& w, const std::filesystem::path& root, const std::string& plan_path,
                        std::string& err);
// plan_path as it is stored: relative to root, normalised; err when outside the project.
std::string normalize_plan_path(const World& w, const std::filesystem::path& root, const std::string& plan_path,
                                std::string& err);

}  // namespace yolo::gates
