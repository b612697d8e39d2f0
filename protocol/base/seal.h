// Approval seals: an approval counts only when yolo made it.
//
// Every approval yolo records (`yolo approve`, an approver's verdict, `skip`, an allowed MCP
// call) carries `seal: "hmac-sha256:<hex>"`, an HMAC over the gate's id, type, file, status,
// approver, digest and time, keyed with a secret that lives outside the repository (a
// KeySource below; the runner keeps it in a key file: runner/world.cc). Anyone can write
// `"approved": true` into .execution-state.json (an agent, a checkout, a merge); nobody
// without the key can write a matching seal, so such an approval
// does not count and the gate opens again. The key is per user and machine: approvals made
// elsewhere do not carry over (the state file is a run's, not the repository's).
#pragma once
#include <filesystem>
#include <string>

#include "protocol/base/json.h"

namespace yolo::seal {

struct Key {
  std::string bytes;  // 32 random bytes (empty on error)
  std::string error;  // why there is no key, naming the file
  bool ok() const { return error.empty(); }
};
// Where the key comes from (World::keys): the runner's key file (runner/identity.h), a fixed
// key in tests. sealing() may create the key (mode 0600, random bytes) on first use: only
// sealing an approval (`yolo approve`, an approver's or skip's approval, an allowed MCP
// approve) calls it. checking() never creates it (an error while there is none): a
// read-only command (status, gates, execute's checks) writes no key.
class KeySource {
 public:
  virtual ~KeySource() = default;
  virtual const Key& sealing() = 0;
  virtual const Key& checking() = 0;
};

// HMAC-SHA256 (RFC 2104) of msg under key, lower-case hex.
std::string hmac_sha256_hex(std::string_view key, std::string_view msg);

// The seal of an APPROVED gate record: its id, gate_type, plan_path, status, approved_by,
// digest, resolved_at, override, and what binds it (gates.h): covers (every covered file's
// and config key's digest), project and run. A gate copied into another project or run, or
// with any of these edited, no longer matches. Empty when the key is not ok().
std::string compute(const json& gate, const Key& k);
// Whether gate["seal"] is the seal of its fields under k.
bool valid(const json& gate, const Key& k);

// A seal over any record yolo makes (review records, audit entries): HMAC over `domain`
// and the canonical JSON of `fields`. Empty when the key is not ok().
std::string seal_of(std::string_view domain, const json& fields, const Key& k);
// Whether `seal` is seal_of(domain, fields, k) (constant-time comparison).
bool check(std::string_view domain, const json& fields, const std::string& seal, const Key& k);

// The same seal over bytes as they are on disk (a file sealed whole, its body not
// re-serialised: verified_cache.h). seal_of(d, f, k) is seal_bytes(d, canonical JSON of f, k).
std::string seal_bytes(std::string_view domain, std::string_view bytes, const Key& k);
bool check_bytes(std::string_view domain, std::string_view bytes, const std::string& seal, const Key& k);

}  // namespace yolo::seal
