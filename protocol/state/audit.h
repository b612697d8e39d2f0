// The gates' audit log (.yolo-planning/audit-log.jsonl): one JSON line per gate transition
// (opened, content changed, approved, rejected, invalidated, approver error), hash-chained:
// each entry carries the previous entry's hash (`prev`), its own `hash` (SHA-256 of the
// entry without hash and mac) and a `mac` (protocol/base/seal.h) over that hash. An entry
// removed from the middle or edited breaks the chain; one removed from the end no longer
// matches the approvals recorded in the state (`yolo verify` checks both).
// Appends take an flock on the log itself, so concurrent writers keep one chain.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/state/events.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::audit {

std::filesystem::path path(const std::filesystem::path& root);

// The end of the chain after an append: the last entry's sequence number and hash.
struct Head {
  long long seq = 0;
  std::string hash;
};

// Appends one entry per event; `head`, when given, receives the chain's new end.
Status append(const World& w, const std::filesystem::path& root, const std::vector<events::Event>& evs,
              Head* head = nullptr);

struct Check {
  std::vector<json> entries;          // the entries read, in order
  std::vector<std::string> problems;  // each a sentence naming the line
  bool exists = false;
};
// Reads the log and checks the chain, each hash and each mac.
Check check(const World& w, const std::filesystem::path& root);

// ---- the head anchored in the state ----------------------------------------------------
//
// A line removed from the end of the log leaves an intact chain; so each gate transition
// records the chain's head in the state it writes, in the same locked update:
// `audit_head = {seq, hash, gates, mac}`, where `gates` fingerprints every gate's id and
// status and the mac (the approval key) binds the three. Removing the last entries of the
// log, a gate from the state, or both, no longer agrees with the anchor, and the anchor
// cannot be rewritten without the key.

// The fingerprint of the state's gates: their ids and statuses, in order.
std::string gates_fingerprint(const json& state);
// The anchor to store as state["audit_head"] after an append that ended at `h`.
json anchor(const World& w, const Head& h, const json& state);
// Appends `evs` and anchors the new head in `state` (call it inside the state's locked
// update that makes the transition, so the two agree).
Status append_anchored(const World& w, const std::filesystem::path& root, json& state,
                       const std::vector<events::Event>& evs);
// What is wrong with the state's anchor against the log read by check(): the log ends
// before the anchored head (its tail was cut), its entry there differs, the gates changed
// since, or the anchor is missing or not made with this machine's key. Each a sentence.
std::vector<std::string> check_anchor(const World& w, const json& state, const Check& log);

}  // namespace yolo::audit
