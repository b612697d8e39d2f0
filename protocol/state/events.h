// The append-only event log (.yolo-planning/.events/event-log.jsonl), PROTOCOL.md section 8.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "protocol/base/result.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::events {

// Event types the protocol defines; with v2_typed_protocol, only these are accepted.
bool is_known_type(const std::string& type);
const std::vector<std::string>& known_types();

struct Event {
  std::string type;
  long long phase = 0;
  std::optional<long long> plan;
  json data = json::object();
  std::string correlation_id;  // may be empty
};

// The JSON line for an event (new ts and event_id).
json to_json(const World& w, const Event& e);

std::filesystem::path log_path(const std::filesystem::path& root);

// Appends one line with a single O_APPEND write (whole lines never interleave).
// Fails with a sentence naming the file.
Status append_line(const World& w, const std::filesystem::path& path, const std::string& line);

struct WriteResult {
  bool written = false;
  std::string event_id;
  std::string reason;  // why not written (disabled, refused type, I/O error)
};

// Whether config enables the event log (v3_event_log is true): log() writes nothing
// otherwise, so a caller may skip building its events. config may be any JSON.
bool enabled(const json& config);

// Writes the event when config enables v3_event_log; refuses unknown types when
// v2_typed_protocol is on. config may be any JSON (non-objects mean defaults).
WriteResult log(const World& w, const std::filesystem::path& root, const json& config, const Event& e);

// Writes unconditionally (the runner's own audit events).
WriteResult log_always(const World& w, const std::filesystem::path& root, const Event& e);

}  // namespace yolo::events
