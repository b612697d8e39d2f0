// SHA-256 from libcrypto and the HMAC-SHA256 over it: the FIPS 180-4 / NIST example digests, the
// streaming interface against the one-shot hash on every length and split, and the RFC 4231
// HMAC test cases (a short key, a key longer than a block, a key changed between calls).
#include "protocol/base/sha256.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>

#include "protocol/base/seal.h"

namespace yolo {
namespace {

std::string hex(const std::array<uint8_t, 32>& d) {
  static const char* h = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) s += {h[b >> 4], h[b & 15]};
  return s;
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                       "klmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_digest(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 s;
  s.update("ab");
  s.update("c");
  EXPECT_EQ(hex(s.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, StreamingAgreesWithOneShotOnEveryLengthAndSplit) {
  std::mt19937 rng(19);
  std::string data(1100, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (size_t len = 0; len <= data.size(); ++len) {
    std::string_view d(data.data(), len);
    std::string want = sha256_hex(d);
    ASSERT_EQ(want.size(), 64u);
    for (size_t cut = 0; cut <= len; cut += 37) {
      Sha256 s;
      s.update(d.substr(0, cut));
      s.update(d.substr(cut));
      ASSERT_EQ(hex(s.finish()), want) << "length " << len << " split at " << cut;
    }
  }
}

TEST(Hmac, Rfc4231TestCases) {
  // Test case 1: a 20-byte key.
  EXPECT_EQ(seal::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2: a key shorter than the output.
  EXPECT_EQ(seal::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key, hashed first.
  EXPECT_EQ(seal::hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // Test case 7: a 131-byte key and a long message.
  EXPECT_EQ(seal::hmac_sha256_hex(std::string(131, '\xaa'),
                                  "This is a test using a larger than block-size key and a larger than block-size "
                                  "data. The key needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

// The keyed context is kept between calls: a call under another key, and the same key again,
// must each give that key's answer, in any order and on any thread.
TEST(Hmac, KeysChangingBetweenCallsAndThreads) {
  const std::string k1(32, 'k'), k2(32, 'K');
  const std::string a = seal::hmac_sha256_hex(k1, "record"), b = seal::hmac_sha256_hex(k2, "record");
  EXPECT_NE(a, b);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seal::hmac_sha256_hex(k1, "record"), a);
    EXPECT_EQ(seal::hmac_sha256_hex(k2, "record"), b);
  }
  EXPECT_NE(seal::hmac_sha256_hex(k1, "record2"), a);
  std::string on_thread;
  std::thread t([&] { on_thread = seal::hmac_sha256_hex(k2, "record"); });
  t.join();
  EXPECT_EQ(on_thread, b);
  EXPECT_EQ(hex(hmac_sha256(k1, "record")), a);
  // An empty key is a valid HMAC key (RFC 2104 pads it with zeros).
  EXPECT_EQ(seal::hmac_sha256_hex("", ""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

}  // namespace
}  // namespace yolo
