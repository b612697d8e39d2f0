#include "protocol/base/sha256.h"

// SHA256_Init/Update/Final, not EVP: EVP brings libcrypto's provider machinery into the static
// binary (about 4.7 MB and 17,000 start-up relocations), which doubled the start of every yolo
// process (docs/dependencies.md). The low-level functions are deprecated in OpenSSL 3 but kept
// through the 3.x series; they run the same assembly, on the SHA instructions where present.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace yolo {
namespace {

static_assert(sizeof(SHA256_CTX) <= 128, "Sha256 keeps the context in place");

// libcrypto's SHA-256 fails only on a null argument; yolo then stops, as on a failed allocation.
void must(int ok) {
  if (ok != 1) std::abort();
}

std::string hex_of(const std::array<uint8_t, 32>& d) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : d) {
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 15]);
  }
  return out;
}

// The hash state after one 64-byte block of the key xor'ed with pad (RFC 2104): the inner
// (0x36) and outer (0x5c) starting points of every HMAC under that key.
SHA256_CTX keyed(std::string_view key, unsigned char pad) {
  unsigned char block[SHA256_CBLOCK] = {};
  if (key.size() > SHA256_CBLOCK) {  // a long key is replaced by its hash
    SHA256_CTX h;
    must(SHA256_Init(&h));
    must(SHA256_Update(&h, key.data(), key.size()));
    must(SHA256_Final(block, &h));
  } else {
    std::memcpy(block, key.data(), key.size());
  }
  for (auto& b : block) b ^= pad;
  SHA256_CTX c;
  must(SHA256_Init(&c));
  must(SHA256_Update(&c, block, sizeof block));
  OPENSSL_cleanse(block, sizeof block);
  return c;
}

}  // namespace

Sha256::Sha256() {
  static_assert(sizeof ctx_ >= sizeof(SHA256_CTX) && alignof(Sha256) >= alignof(SHA256_CTX));
  must(SHA256_Init(reinterpret_cast<SHA256_CTX*>(ctx_)));
}

void Sha256::update(std::string_view data) {
  must(SHA256_Update(reinterpret_cast<SHA256_CTX*>(ctx_), data.data(), data.size()));
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> out{};
  must(SHA256_Final(out.data(), reinterpret_cast<SHA256_CTX*>(ctx_)));
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return hex_of(h.finish());
}

std::string sha256_digest(std::string_view data) { return "sha256:" + sha256_hex(data); }

std::array<uint8_t, 32> hmac_sha256(std::string_view key, std::string_view msg) {
  // The key's two starting points, kept per thread for the last key: a seal's key is the same
  // for every record, and they are two of the four blocks a short message's HMAC hashes.
  thread_local std::string last_key;
  thread_local SHA256_CTX inner0, outer0;
  thread_local bool ready = false;
  if (!ready || last_key != key) {
    inner0 = keyed(key, 0x36);
    outer0 = keyed(key, 0x5c);
    last_key.assign(key);
    ready = true;
  }
  std::array<uint8_t, 32> inner{}, out{};
  SHA256_CTX c = inner0;
  must(SHA256_Update(&c, msg.data(), msg.size()));
  must(SHA256_Final(inner.data(), &c));
  c = outer0;
  must(SHA256_Update(&c, inner.data(), inner.size()));
  must(SHA256_Final(out.data(), &c));
  return out;
}

}  // namespace yolo
