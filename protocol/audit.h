// The gates' audit log (.yolo-planning/audit-log.jsonl): one JSON line per gate transition
// (opened, content changed, approved, rejected, invalidated, approver error), hash-chained:
// each entry carries the previous entry's hash (`prev`), its own `hash` (SHA-256 of the
// entry without hash and mac) and a `mac` (protocol/seal.h) over that hash. An entry
// removed from the middle or edited breaks the chain; one removed from the end no longer
// matches the approvals recorded in the state (`yolo verify` checks both).
// Appends take an flock on the log itself, so concurrent writers keep one chain.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/events.h"
#include "protocol/json.h"
#include "protocol/world.h"

namespace yolo::audit {

std::filesystem::path path(const std::filesystem::path& root);

// Appends one entry per event. Returns an error sentence (empty when written).
std::string append(const World& w, const std::filesystem::path& root, const std::vector<events::Event>& evs);

struct Check {
  std::vector<json> entries;          // the entries read, in order
  std::vector<std::string> problems;  // each a sentence naming the line
  bool exists = false;
};
// Reads the log and checks the chain, each hash and each mac.
Check check(const World& w, const std::filesystem::path& root);

}  // namespace yolo::audit
