// .yolo-planning/config.json: every key optional, defaults from PROTOCOL.md section 9.
// Also the model and turn-budget resolution of `resolve-model` / `resolve-turns`.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/ports/world.h"
#include "protocol/base/json.h"

namespace yolo {

inline const char* const kAgents[] = {"lead",      "dev",  "qa",         "scout",   "debugger",
                                      "architect", "docs", "researcher", "reviewer"};
bool is_known_agent(const std::string& agent);

struct CommandSpec {
  std::vector<std::string> argv;  // argv template; empty = not configured
  long long timeout_ms = 0;       // 0 = use command_timeout_ms
};

// dispatch (docs/dispatch.md): a wave's plans handed to a cluster engine through
// three argv templates; the plans' branches come back through the git remote `remote`.
struct DispatchSpec {
  CommandSpec submit, wait, cancel;
  // The wave-level form (an engine with arrays): both set, or neither.
  CommandSpec submit_wave, wait_wave;
  bool wave_form() const { return !submit_wave.argv.empty() && !wait_wave.argv.empty(); }
  std::string remote;    // a git remote name or URL; the run pushes each wave's base there
  int max_parallel = 0;  // jobs submitted at once; 0: max(max_parallel, 8)
  bool configured() const { return !submit.argv.empty(); }
  std::vector<std::string> errors;  // beyond the schema (a template without {handle}, ...)
};

struct Config {
  json raw = json::object();
  std::string review_gate = "on_request";  // always | on_request | never
  int review_max_cycles = 3;
  int max_tasks_per_plan = 5;
  long long command_timeout_ms = 30000;
  bool v3_event_log = false;
  bool v2_typed_protocol = false;
  std::string summary_checks = "strict";  // strict | structural | off
  CommandSpec reviewer, architect, executor;
  int max_parallel = 2;
  bool wave_approval = false;
  int debounce_ms = 20;
  bool mcp_can_approve = false;
  bool reviewer_required = false;  // a reviewer that cannot run rejects; load: true when a reviewer is set
  bool watch_fix = false;          // watch.fix: the architect revises in `yolo watch`
  // isolation: "none" (every executor in the project's checkout) | "worktree" (each plan in
  // its own git worktree and branch, merged back in plan order).
  std::string isolation = "none";
  DispatchSpec dispatch;
  // The scope fence's severities (high | medium | low | off) for files changed outside the
  // plan's files and for planned files left untouched.
  std::string scope_outside = "high", scope_untouched = "high";
  // Keys yolo does not know (neither its own nor the reference's): one line each, with the
  // nearest known key when one is near ("unknown key 'reveiw_gate' (did you mean 'review_gate'?)").
  std::vector<std::string> warnings;

  // approvers[gate_type]: "manual" | "skip" | a command (json array or {command, timeout_ms})
  json approver_for(const std::string& gate_type) const;
  long long timeout_for(const CommandSpec& c) const { return c.timeout_ms > 0 ? c.timeout_ms : command_timeout_ms; }
};

struct ConfigLoad {
  Config config;
  std::string error;                // names the file and lists every problem; config holds defaults when set
  std::vector<std::string> errors;  // each problem on its own ("/review_gate: ..."), when the schema refused it
  bool ok() const { return error.empty(); }
};

// Reads <root>/.yolo-planning/config.json. A missing file is defaults, not an error.
ConfigLoad load_config(const World& w, const std::filesystem::path& project_root);
// The top-level keys yolo reads, and the keys of the reference's config that yolo accepts
// and ignores (autonomy, qa_gate, v2_*/v3_* flags, ...).
const std::vector<std::string>& known_config_keys();
bool is_reference_config_key(const std::string& key);
// One warning per unknown key (top level and under watch), with the nearest known key.
std::vector<std::string> unknown_key_warnings(const json& config);
// Interprets already parsed JSON (unknown keys kept in raw).
ConfigLoad config_from_json(const json& j, const std::string& source);

// --- resolve-model ---------------------------------------------------------
struct ModelChoice {
  std::string model;    // opus | sonnet | haiku
  int cost_weight = 0;  // 100 | 20 | 2
  std::string error;    // set on failure (exit 1)
};
int cost_weight(const std::string& model);  // 0 for an unknown model
ModelChoice resolve_model(const std::string& agent, const json& config, const json& profiles);

// --- resolve-turns ---------------------------------------------------------
struct TurnsChoice {
  long long turns = 0;
  std::string error;
};
// effort: the argument (may be empty). Config may be null (missing/malformed: defaults).
TurnsChoice resolve_turns(const std::string& agent, const json& config, const std::string& effort);
int default_base_turns(const std::string& agent);  // -1 for an unknown agent

}  // namespace yolo
