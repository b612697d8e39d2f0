// SHA-256 (FIPS 180-4). Used for content hashes of plans, approval digests and the HMAC of
// every seal. On x86-64 processors with the SHA extensions (Intel since Goldmont and Ice
// Lake, AMD since Zen) the compression function runs on them, chosen once at run time from
// the processor's own report (cpuid); elsewhere the portable code runs. Both give the same
// digest: tests compare them on every length up to several blocks (sha256_hex_with).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace yolo {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<uint8_t, 32> finish();

 private:
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// "sha256:<64 hex digits>" of data.
std::string sha256_digest(std::string_view data);
// Lower-case hex of the hash of data.
std::string sha256_hex(std::string_view data);

// The two implementations of the compression function, for tests and benchmarks: the
// portable one, and the one on the processor's SHA instructions (when it has them).
enum class Sha256Impl { Portable, Hardware };
// Whether this processor can run `impl` (Portable: always).
bool sha256_available(Sha256Impl impl);
// The implementation Sha256 uses on this processor.
Sha256Impl sha256_in_use();
// sha256_hex computed with `impl` (which must be available).
std::string sha256_hex_with(Sha256Impl impl, std::string_view data);

}  // namespace yolo
