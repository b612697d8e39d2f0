#include "protocol/state/config.h"
#include "protocol/run/dispatch.h"

#include <algorithm>
#include <cmath>

#include "protocol/ports/fs.h"
#include "protocol/state/records.h"
#include "protocol/base/schema.h"
#include "protocol/base/text.h"

namespace yolo {

bool is_known_agent(const std::string& agent) {
  for (const char* a : kAgents)
    if (agent == a) return true;
  return false;
}

json Config::approver_for(const std::string& gate_type) const {
  auto it = raw.find("approvers");
  if (it != raw.end() && it->is_object()) {
    if (auto g = it->find(gate_type); g != it->end()) return *g;
    if (auto d = it->find("default"); d != it->end()) return *d;
  }
  return "manual";
}

namespace {

CommandSpec command_spec(const json& j) {
  CommandSpec c;
  const json* cmd = nullptr;
  if (j.is_array())
    cmd = &j;
  else if (j.is_object()) {
    if (auto it = j.find("command"); it != j.end() && it->is_array()) cmd = &*it;
    if (auto it = j.find("timeout_ms"); it != j.end() && it->is_number()) c.timeout_ms = it->get<long long>();
  }
  if (cmd)
    for (const auto& a : *cmd)
      if (a.is_string()) c.argv.push_back(a.get<std::string>());
  return c;
}

template <typename T>
void take(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if constexpr (std::is_same_v<T, bool>) {
    if (it->is_boolean()) out = it->get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (it->is_string()) out = it->get<std::string>();
  } else {
    if (it->is_number()) out = it->get<T>();
  }
}

}  // namespace

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {"review_gate",
                                                "review_max_cycles",
                                                "max_tasks_per_plan",
                                                "command_timeout_ms",
                                                "model_profile",
                                                "model_overrides",
                                                "effort",
                                                "agent_max_turns",
                                                "max_turns",
                                                "v3_event_log",
                                                "v2_typed_protocol",
                                                "summary_checks",
                                                "max_parallel",
                                                "wave_approval",
                                                "mcp_can_approve",
                                                "reviewer_required",
                                                "watch",
                                                "reviewer",
                                                "architect",
                                                "executor",
                                                "approvers",
                                                "isolation",
                                                "dispatch",
                                                "scope_fence",
                                                "sandbox",
                                                "budget"};
  return keys;
}

bool is_reference_config_key(const std::string& key) {
  // The settings of the reference plugin that shares this folder: every key its
  // config/defaults.json and config.schema.json have held in any version, and its versioned
  // feature flags (v2_, v3_, v4_...). yolo keeps them as they are and does not act on them;
  // warning about them broke the reference's own tools, which read output and errors together.
  static const char* const ref[] = {"active_profile",
                                    "agent_teams",
                                    "approval_gates",
                                    "auto_commit",
                                    "auto_install_skills",
                                    "auto_push",
                                    "autonomy",
                                    "branch_per_milestone",
                                    "compaction_threshold",
                                    "compaction_trigger",
                                    "complexity_routing",
                                    "context_compiler",
                                    "critique",
                                    "cross_team_handoff",
                                    "custom_profiles",
                                    "delivery",
                                    "department_workflow",
                                    "departments",
                                    "discovery_questions",
                                    "documenter",
                                    "escalation",
                                    "integration_gate",
                                    "mode_profiles",
                                    "plain_summary",
                                    "planning_tracking",
                                    "po",
                                    "prefer_teams",
                                    "qa_gate",
                                    "qa_gates",
                                    "qa_max_cycles",
                                    "qa_skip_agents",
                                    "research_requests",
                                    "review_loop",
                                    "security_audit",
                                    "skill_suggestions",
                                    "task_lease_ttl_secs",
                                    "team_mode",
                                    "verification_tier",
                                    "visual_format",
                                    "worktree_isolation"};
  for (const char* k : ref)
    if (key == k) return true;
  // v2_, v3_, v4_ ...: the reference's feature flags, one prefix per protocol version.
  if (key.size() > 3 && key[0] == 'v' && key[1] >= '1' && key[1] <= '9') {
    size_t i = 1;
    while (i < key.size() && key[i] >= '0' && key[i] <= '9') ++i;
    if (i < key.size() && key[i] == '_') return true;
  }
  return key.starts_with("$") || key.starts_with("_");
}

std::vector<std::string> unknown_key_warnings(const json& config) {
  std::vector<std::string> out;
  if (!config.is_object()) return out;
  const auto& known = known_config_keys();
  for (const auto& [k, v] : config.items()) {
    if (std::find(known.begin(), known.end(), k) != known.end() || is_reference_config_key(k)) continue;
    std::string near = text::nearest(k, known);
    out.push_back("unknown key '" + k + "'" +
                  (near.empty() ? " (yolo ignores it)" : " (did you mean '" + near + "'?)"));
  }
  if (auto w = config.find("watch"); w != config.end() && w->is_object()) {
    static const std::vector<std::string> wk = {"debounce_ms", "fix"};
    for (const auto& [k, v] : w->items()) {
      if (std::find(wk.begin(), wk.end(), k) != wk.end()) continue;
      std::string near = text::nearest(k, wk);
      out.push_back("unknown key 'watch." + k + "'" +
                    (near.empty() ? " (yolo ignores it)" : " (did you mean 'watch." + near + "'?)"));
    }
  }
  return out;
}

ConfigLoad config_from_json(const json& j, const std::string& source) {
  ConfigLoad r;
  if (!j.is_object()) {
    r.error = source + ": config must be a JSON object";
    return r;
  }
  // Tidied: a level that failed only because a member did says nothing the member's own
  // error does not (a mistyped enum value was reported twice).
  auto errors = records::tidy(schema::validate("config", j));
  if (!errors.empty()) {
    for (const auto& e : errors) r.errors.push_back((e.pointer.empty() ? "(document)" : e.pointer) + ": " + e.message);
    r.error =
        source + ": " + (r.errors.size() == 1 ? r.errors.front() : std::to_string(r.errors.size()) + " problems:");
    if (r.errors.size() > 1)
      for (const auto& e : r.errors) r.error += "\n  " + e;
    r.config.warnings = unknown_key_warnings(j);
    return r;
  }
  Config& c = r.config;
  c.raw = j;
  c.warnings = unknown_key_warnings(j);
  take(j, "reviewer_required", c.reviewer_required);
  if (auto it = j.find("watch"); it != j.end() && it->is_object()) take(*it, "fix", c.watch_fix);
  take(j, "review_gate", c.review_gate);
  take(j, "review_max_cycles", c.review_max_cycles);
  take(j, "max_tasks_per_plan", c.max_tasks_per_plan);
  take(j, "command_timeout_ms", c.command_timeout_ms);
  take(j, "v3_event_log", c.v3_event_log);
  take(j, "v2_typed_protocol", c.v2_typed_protocol);
  take(j, "summary_checks", c.summary_checks);
  take(j, "max_parallel", c.max_parallel);
  take(j, "wave_approval", c.wave_approval);
  take(j, "mcp_can_approve", c.mcp_can_approve);
  if (auto it = j.find("watch"); it != j.end() && it->is_object()) take(*it, "debounce_ms", c.debounce_ms);
  if (auto it = j.find("reviewer"); it != j.end()) c.reviewer = command_spec(*it);
  if (auto it = j.find("architect"); it != j.end()) c.architect = command_spec(*it);
  if (auto it = j.find("executor"); it != j.end()) c.executor = command_spec(*it);
  // A configured reviewer is meant to review: one that cannot run never lets a plan pass on
  // the Stage 1 verdict alone unless the person said so (reviewer_required: false). With no
  // reviewer, the Stage 1 verdict is the rule.
  if (!j.contains("reviewer_required")) c.reviewer_required = !c.reviewer.argv.empty();
  take(j, "isolation", c.isolation);
  if (auto it = j.find("dispatch"); it != j.end() && it->is_object()) {
    DispatchSpec& d = c.dispatch;
    if (auto s = it->find("submit"); s != it->end()) d.submit = command_spec(*s);
    if (auto s = it->find("wait"); s != it->end()) d.wait = command_spec(*s);
    if (auto s = it->find("cancel"); s != it->end()) d.cancel = command_spec(*s);
    if (auto s = it->find("submit_wave"); s != it->end()) d.submit_wave = command_spec(*s);
    if (auto s = it->find("wait_wave"); s != it->end()) d.wait_wave = command_spec(*s);
    take(*it, "remote", d.remote);
    take(*it, "max_parallel", d.max_parallel);
    d.errors = dispatch::check_templates({d.submit.argv, d.wait.argv, d.cancel.argv});
    for (auto& e : dispatch::check_wave_templates(d.submit_wave.argv, d.wait_wave.argv)) d.errors.push_back(e);
    if (d.remote.empty()) d.errors.push_back("dispatch.remote: a git remote name or URL is required");
  }
  // scope_fence: one severity for both kinds of finding, or {outside, untouched}; absent:
  // high in strict SUMMARY mode, medium in structural, off when the SUMMARY gate is off.
  std::string fence_default = c.summary_checks == "off" ? "off" : c.summary_checks == "structural" ? "medium" : "high";
  c.scope_outside = c.scope_untouched = fence_default;
  if (auto it = j.find("scope_fence"); it != j.end()) {
    if (it->is_string()) {
      c.scope_outside = c.scope_untouched = it->get<std::string>();
    } else if (it->is_object()) {
      take(*it, "outside", c.scope_outside);
      take(*it, "untouched", c.scope_untouched);
    }
  }
  if (c.max_parallel < 1) c.max_parallel = 1;
  return r;
}

ConfigLoad load_config(const World& w, const std::filesystem::path& root) {
  auto path = root / ".yolo-planning" / "config.json";
  auto read = w.files().read(path, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!read.ok()) {
    ConfigLoad r;
    if (read.error->kind != fs::FileError::Kind::NotFound) r.error = read.error->message;
    return r;
  }
  JsonParse parsed = parse_json_bounded(read.content);
  if (!parsed.ok()) {
    ConfigLoad r;
    r.error = path.string() + ": " + parsed.message;
    return r;
  }
  return config_from_json(parsed.doc, path.string());
}

int cost_weight(const std::string& model) {
  if (model == "opus") return 100;
  if (model == "sonnet") return 20;
  if (model == "haiku") return 2;
  return 0;
}

ModelChoice resolve_model(const std::string& agent, const json& config, const json& profiles) {
  ModelChoice r;
  if (!is_known_agent(agent)) {
    r.error = "unknown agent '" + agent +
              "' (expected one of: lead, dev, qa, scout, debugger, architect, docs, researcher, reviewer)";
    return r;
  }
  std::string profile = "quality";
  if (config.is_object()) {
    if (auto it = config.find("model_profile"); it != config.end() && it->is_string()) profile = it->get<std::string>();
    if (auto ov = config.find("model_overrides"); ov != config.end() && ov->is_object()) {
      if (auto m = ov->find(agent); m != ov->end() && m->is_string() && !m->get<std::string>().empty())
        r.model = m->get<std::string>();
    }
  }
  if (r.model.empty()) {
    auto p = profiles.is_object() ? profiles.find(profile) : profiles.end();
    if (!profiles.is_object() || p == profiles.end() || !p->is_object()) {
      r.error = "unknown model profile '" + profile + "'";
      return r;
    }
    auto m = p->find(agent);
    if (m == p->end() || !m->is_string()) {
      r.error = "profile '" + profile + "' has no model for agent '" + agent + "'";
      return r;
    }
    r.model = m->get<std::string>();
  }
  r.cost_weight = cost_weight(r.model);
  if (r.cost_weight == 0)
    r.error = "unknown model '" + r.model + "' for agent '" + agent + "' (expected opus, sonnet or haiku)";
  return r;
}

int default_base_turns(const std::string& agent) {
  static const std::pair<const char*, int> bases[] = {{"scout", 15},    {"qa", 25},         {"architect", 30},
                                                      {"debugger", 80}, {"lead", 50},       {"dev", 75},
                                                      {"docs", 30},     {"researcher", 15}, {"reviewer", 15}};
  for (const auto& [a, n] : bases)
    if (agent == a) return n;
  return -1;
}

namespace {

std::string canonical_effort(std::string e) {
  if (e == "high") return "thorough";
  if (e == "medium") return "balanced";
  if (e == "low") return "turbo";
  if (e == "thorough" || e == "balanced" || e == "fast" || e == "turbo") return e;
  return "balanced";
}

const char* legacy_alias(const std::string& effort) {
  if (effort == "thorough") return "high";
  if (effort == "turbo") return "low";
  return "medium";  // balanced, fast
}

double multiplier(const std::string& effort) {
  if (effort == "thorough") return 1.5;
  if (effort == "fast") return 0.8;
  if (effort == "turbo") return 0.6;
  return 1.0;
}

// A JSON number, numeric string or bool as a turn count; nullopt when neither.
std::optional<long long> as_turns(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? std::nullopt : std::optional<long long>(0);
  if (v.is_number()) {
    double d = v.get<double>();
    return d <= 0 ? 0 : static_cast<long long>(std::floor(d + 0.5));
  }
  if (v.is_string()) {
    try {
      size_t used = 0;
      double d = std::stod(v.get<std::string>(), &used);
      if (used != v.get<std::string>().size()) return std::nullopt;
      return d <= 0 ? 0 : static_cast<long long>(std::floor(d + 0.5));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

TurnsChoice resolve_turns(const std::string& agent, const json& config, const std::string& effort_arg) {
  TurnsChoice r;
  int base_default = default_base_turns(agent);
  if (base_default < 0) {
    r.error = "unknown agent '" + agent + "'";
    return r;
  }
  std::string effort = effort_arg;
  if (effort.empty() && config.is_object())
    if (auto it = config.find("effort"); it != config.end() && it->is_string()) effort = it->get<std::string>();
  effort = canonical_effort(effort);
  double base = base_default;
  const json* override_v = nullptr;
  if (config.is_object()) {
    for (const char* key : {"agent_max_turns", "max_turns"}) {
      auto it = config.find(key);
      if (it != config.end() && it->is_object())
        if (auto a = it->find(agent); a != it->end()) {
          override_v = &*a;
          break;
        }
    }
  }
  if (override_v) {
    if (override_v->is_object()) {
      for (const std::string& k :
           {effort, std::string(legacy_alias(effort)), std::string("balanced"), std::string("medium")}) {
        if (auto it = override_v->find(k); it != override_v->end())
          if (auto t = as_turns(*it)) {
            r.turns = *t;
            return r;
          }
      }
    } else if (auto t = as_turns(*override_v)) {
      if (*t == 0) return r;  // no budget
      base = static_cast<double>(*t);
    }
  }
  long long turns = static_cast<long long>(std::floor(base * multiplier(effort) + 0.5));
  r.turns = turns < 1 ? 1 : turns;
  return r;
}

}  // namespace yolo
