// SHA-256: the FIPS 180-4 / NIST example digests, and the processor's SHA instructions
// giving the same digest as the portable code on every length and every way of feeding it.
#include "protocol/sha256.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace yolo {
namespace {

std::vector<Sha256Impl> impls() {
  std::vector<Sha256Impl> v{Sha256Impl::Portable};
  if (sha256_available(Sha256Impl::Hardware)) v.push_back(Sha256Impl::Hardware);
  return v;
}

TEST(Sha256, KnownDigestsWithEachImplementation) {
  if (!sha256_available(Sha256Impl::Hardware))
    std::cout << "[ NOTE     ] this processor has no SHA instructions: the portable code alone is checked\n";
  const std::string a_million(1000000, 'a');
  for (auto impl : impls()) {
    SCOPED_TRACE(impl == Sha256Impl::Portable ? "portable" : "hardware");
    EXPECT_EQ(sha256_hex_with(impl, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex_with(impl, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex_with(impl, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex_with(impl,
                              "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                              "klmnopqrlmnopqrsmnopqrstnopqrstu"),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    EXPECT_EQ(sha256_hex_with(impl, a_million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_digest(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, BothImplementationsAgreeOnEveryLengthAndSplit) {
  std::mt19937 rng(19);
  std::string data(1100, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (size_t len = 0; len <= data.size(); ++len) {
    std::string_view d(data.data(), len);
    std::string want = sha256_hex_with(Sha256Impl::Portable, d);
    for (auto impl : impls()) ASSERT_EQ(sha256_hex_with(impl, d), want) << "length " << len;
    ASSERT_EQ(sha256_hex(d), want) << "length " << len;
    // The streaming interface, fed in two pieces at every 37th split and in odd chunks.
    for (size_t cut = 0; cut <= len; cut += 37) {
      Sha256 s;
      s.update(d.substr(0, cut));
      s.update(d.substr(cut));
      auto out = s.finish();
      static const char* hex = "0123456789abcdef";
      std::string got;
      for (uint8_t b : out) got += {hex[b >> 4], hex[b & 15]};
      ASSERT_EQ(got, want) << "length " << len << " split at " << cut;
    }
  }
}

TEST(Sha256, TheHardwarePathIsUsedWhenTheProcessorHasIt) {
  EXPECT_EQ(sha256_in_use(), sha256_available(Sha256Impl::Hardware) ? Sha256Impl::Hardware : Sha256Impl::Portable);
}

}  // namespace
}  // namespace yolo
