// SHA-256 (FIPS 180-4). Used for content hashes of plans and approval digests.
#pragma once
#include <array>
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
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// "sha256:<64 hex digits>" of data.
std::string sha256_digest(std::string_view data);
// Lower-case hex of the hash of data.
std::string sha256_hex(std::string_view data);

}  // namespace yolo
