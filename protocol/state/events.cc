#include "protocol/state/events.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/ports/clock.h"

namespace yolo::events {

const std::vector<std::string>& known_types() {
  static const std::vector<std::string> types = {
      "phase_start", "phase_end", "wave_start", "wave_end", "plan_start", "plan_end", "plan_failed", "task_start",
      "task_end", "agent_spawn", "agent_shutdown", "agent_token_usage", "error", "exit", "review_start", "review_end",
      "review_agent_fallback", "review_parse_failure", "review_loop_start", "review_loop_cycle", "review_loop_end",
      "review_halt", "qa_loop_start", "qa_loop_cycle", "qa_loop_end", "qa_parse_failure", "gate_frozen", "gate_resumed",
      "gate_rejected", "gate_error", "approval_requested", "approval_granted", "approval_invalidated",
      "summary_checks_passed", "summary_claims_failed", "state_corrupt", "watch_start", "watch_stop", "watch_rescan",
      "plan_changed", "plan_resumed", "agent_tool", "sandbox_refused",
      // The reference's own list: V1 checkpoint, the V2 task and gate protocol,
      // and its metric types. Agents written for the reference log these.
      "checkpoint", "phase_planned", "task_created", "task_claimed", "task_started", "artifact_written", "gate_passed",
      "gate_failed", "task_completed_candidate", "task_completed_confirmed", "task_blocked", "task_reassigned",
      "shutdown_sent", "shutdown_received", "token_overage", "token_cap_escalated", "file_conflict", "smart_route",
      "contract_revision", "cache_hit", "task_completion_rejected", "snapshot_restored", "state_recovered",
      "message_rejected"};
  return types;
}

bool is_known_type(const std::string& type) {
  const auto& t = known_types();
  return std::find(t.begin(), t.end(), type) != t.end();
}

json to_json(const World& w, const Event& e) {
  json j = {{"ts", w.now()}, {"event_id", new_uuid()}};
  j["correlation_id"] = e.correlation_id.empty() ? json(nullptr) : json(e.correlation_id);
  j["event"] = e.type;
  j["phase"] = e.phase;
  if (e.plan) j["plan"] = *e.plan;
  j["data"] = e.data.is_object() ? e.data : json::object();
  return j;
}

std::filesystem::path log_path(const std::filesystem::path& root) {
  return root / ".yolo-planning" / ".events" / "event-log.jsonl";
}

// One line, under the file's lock, all or nothing (a partial line is cut back, so the next
// event is never glued to it); not fsynced: the audit log is the durable trail.
Status append_line(const World& w, const std::filesystem::path& path, const std::string& line) {
  return w.files().append(
      path, [&](const std::string&) { return line + "\n"; }, 0, /*durable=*/false);
}

WriteResult log_always(const World& w, const std::filesystem::path& root, const Event& e) {
  WriteResult r;
  json j = to_json(w, e);
  r.event_id = j["event_id"].get<std::string>();
  Status s = append_line(w, log_path(root), j.dump());
  if (!s.ok()) {
    r.reason = s.error;
    return r;
  }
  r.written = true;
  return r;
}

namespace {
bool flag(const json& config, const char* k) {
  if (!config.is_object()) return false;
  auto it = config.find(k);
  return it != config.end() && it->is_boolean() && it->get<bool>();
}
}  // namespace

bool enabled(const json& config) { return flag(config, "v3_event_log"); }

WriteResult log(const World& w, const std::filesystem::path& root, const json& config, const Event& e) {
  if (!enabled(config)) return WriteResult{false, "", "v3_event_log is not enabled in config"};
  if (flag(config, "v2_typed_protocol") && !is_known_type(e.type))
    return WriteResult{false, "", "unknown event type '" + e.type + "' refused (v2_typed_protocol)"};
  return log_always(w, root, e);
}

}  // namespace yolo::events
