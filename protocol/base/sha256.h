// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto, and HMAC-SHA256 (RFC 2104) over it. Used for
// the content hashes of plans, approval digests and the HMAC of every seal. libcrypto is the
// implementation reviewers of security code know, kept up by its maintainers, and runs on the
// processor's SHA instructions where there are any (docs/dependencies.md says why, and why
// the HMAC construction is ours: libcrypto's own HMAC would double yolo's start-up).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace yolo {

// A hash fed in pieces.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest of everything fed so far; the hash is then spent (feed a new Sha256).
  std::array<uint8_t, 32> finish();

 private:
  // libcrypto's SHA256_CTX, kept in place (no allocation) and out of this header so that only
  // sha256.cc sees OpenSSL's.
  alignas(8) unsigned char ctx_[128];
};

// "sha256:<64 hex digits>" of data.
std::string sha256_digest(std::string_view data);
// Lower-case hex of the hash of data.
std::string sha256_hex(std::string_view data);

// HMAC-SHA256 of msg under key (seal::hmac_sha256_hex gives it as hex).
std::array<uint8_t, 32> hmac_sha256(std::string_view key, std::string_view msg);

}  // namespace yolo
