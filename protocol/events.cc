#include "protocol/events.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/clock.h"

namespace yolo::events {

const std::vector<std::string>& known_types() {
  static const std::vector<std::string> types = {
      "phase_start", "phase_end", "wave_start", "wave_end", "plan_start", "plan_end", "plan_failed", "task_start",
      "task_end", "agent_spawn", "agent_shutdown", "agent_token_usage", "error", "exit", "review_start", "review_end",
      "review_agent_fallback", "review_parse_failure", "review_loop_start", "review_loop_cycle", "review_loop_end",
      "review_halt", "qa_loop_start", "qa_loop_cycle", "qa_loop_end", "qa_parse_failure", "gate_frozen", "gate_resumed",
      "gate_rejected", "gate_error", "approval_requested", "approval_granted", "approval_invalidated",
      "summary_checks_passed", "summary_claims_failed", "state_corrupt", "watch_start", "watch_stop", "watch_rescan",
      "plan_changed",
      // The reference's own list (issue 16): V1 checkpoint, the V2 task and gate protocol,
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

json to_json(const Event& e) {
  json j = {{"ts", now_iso8601()}, {"event_id", new_uuid()}};
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

std::string append_line(const std::filesystem::path& path, const std::string& line) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return path.string() + ": " + std::strerror(errno);
  std::string buf = line;
  buf.push_back('\n');
  // All or nothing: on a full disk (or a file-size limit) a write can stop part way; the
  // part written is cut off again, so no truncated line is left for the next event to be
  // glued to. The lock orders appenders, so the size we cut back to is where ours began
  // (O_APPEND alone already keeps concurrent lines from interleaving).
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  struct stat st {};
  off_t start = ::fstat(fd, &st) == 0 ? st.st_size : -1;
  size_t done = 0;
  std::string err;
  while (done < buf.size()) {
    ssize_t n = ::write(fd, buf.data() + done, buf.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = path.string() + ": " + (n < 0 ? std::strerror(errno) : "short write");
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (!err.empty() && done > 0) {
    if (start < 0 || ::ftruncate(fd, start) != 0)
      err += " (and a partial line could not be removed: " + std::string(std::strerror(errno)) + ")";
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return err;
}

WriteResult log_always(const std::filesystem::path& root, const Event& e) {
  WriteResult r;
  json j = to_json(e);
  r.event_id = j["event_id"].get<std::string>();
  std::string err = append_line(log_path(root), j.dump());
  if (!err.empty()) {
    r.reason = err;
    return r;
  }
  r.written = true;
  return r;
}

WriteResult log(const std::filesystem::path& root, const json& config, const Event& e) {
  auto flag = [&](const char* k) {
    if (!config.is_object()) return false;
    auto it = config.find(k);
    return it != config.end() && it->is_boolean() && it->get<bool>();
  };
  if (!flag("v3_event_log")) return WriteResult{false, "", "v3_event_log is not enabled in config"};
  if (flag("v2_typed_protocol") && !is_known_type(e.type))
    return WriteResult{false, "", "unknown event type '" + e.type + "' refused (v2_typed_protocol)"};
  return log_always(root, e);
}

}  // namespace yolo::events
