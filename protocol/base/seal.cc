#include "protocol/base/seal.h"

#include "protocol/base/sha256.h"

namespace yolo::seal {
namespace {

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(d[p[i] >> 4]);
    s.push_back(d[p[i] & 15]);
  }
  return s;
}

// The fields of a gate its seal covers; the message is their canonical JSON (keys sorted),
// so no two different records share one message.
json sealed_fields(const json& gate) {
  json f = json::object();
  for (const char* k : {"id", "gate_type", "plan_path", "status", "approved_by", "digest", "resolved_at", "override",
                        "covers", "project", "run"}) {
    auto it = gate.find(k);
    f[k] = it != gate.end() ? *it : json(nullptr);
  }
  return f;
}

bool same(const std::string& want, const std::string& got) {
  if (want.empty() || got.size() != want.size()) return false;
  unsigned diff = 0;  // constant time: the comparison says nothing about where they differ
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(want[i] ^ got[i]);
  return diff == 0;
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key_bytes, std::string_view msg) {
  auto d = hmac_sha256(key_bytes, msg);
  return to_hex(d.data(), d.size());
}

std::string seal_bytes(std::string_view domain, std::string_view bytes, const Key& k) {
  if (!k.ok()) return {};
  std::string msg(domain);
  msg += '\n';
  msg += bytes;
  return "hmac-sha256:" + hmac_sha256_hex(k.bytes, msg);
}

bool check_bytes(std::string_view domain, std::string_view bytes, const std::string& seal, const Key& k) {
  return same(seal_bytes(domain, bytes, k), seal);
}

namespace {
std::string seal_with(const Key& k, std::string_view domain, const json& fields) {
  return seal_bytes(domain, fields.dump(-1, ' ', false, json::error_handler_t::replace), k);
}
}  // namespace

std::string seal_of(std::string_view domain, const json& fields, const Key& k) { return seal_with(k, domain, fields); }

bool check(std::string_view domain, const json& fields, const std::string& seal, const Key& k) {
  return same(seal_with(k, domain, fields), seal);
}

std::string compute(const json& gate, const Key& k) {
  if (!gate.is_object()) return {};
  return seal_of("yolo-approval-seal-v2", sealed_fields(gate), k);
}

bool valid(const json& gate, const Key& k) {
  if (!gate.is_object()) return false;
  auto it = gate.find("seal");
  if (it == gate.end() || !it->is_string()) return false;
  return check("yolo-approval-seal-v2", sealed_fields(gate), it->get_ref<const std::string&>(), k);
}

}  // namespace yolo::seal
