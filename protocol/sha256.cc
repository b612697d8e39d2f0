#include "protocol/sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define YOLO_SHA256_X86 1
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif
#endif

namespace yolo {
namespace {
alignas(16) constexpr uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

using BlocksFn = void (*)(uint32_t* h, const uint8_t* p, size_t n);

// n 64-byte blocks at p into the state h, one round at a time.
void blocks_portable(uint32_t* hs, const uint8_t* p, size_t n) {
  for (; n > 0; --n, p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t(p[4 * i]) << 24) | (uint32_t(p[4 * i + 1]) << 16) | (uint32_t(p[4 * i + 2]) << 8) | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = hs[0], b = hs[1], c = hs[2], d = hs[3], e = hs[4], f = hs[5], g = hs[6], h = hs[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      uint32_t ch = (e & f) ^ (~e & g);
      uint32_t t1 = h + S1 + ch + K[i] + w[i];
      uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = S0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    hs[0] += a;
    hs[1] += b;
    hs[2] += c;
    hs[3] += d;
    hs[4] += e;
    hs[5] += f;
    hs[6] += g;
    hs[7] += h;
  }
}

#ifdef YOLO_SHA256_X86
// The same on the SHA extensions. sha256rnds2 does two rounds on the state held as two
// registers, (A,B,E,F) and (C,D,G,H) from the high lane down; sha256msg1/msg2 extend the
// message schedule four words at a time: W[t..t+3] from W[t-16..t-1].
__attribute__((target("sha,sse4.1,ssse3"))) void blocks_shani(uint32_t* hs, const uint8_t* p, size_t n) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);  // each 32-bit lane
  // h[0..3] = A B C D, h[4..7] = E F G H (lane 0 first) -> ABEF and CDGH (lane 3 first).
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hs));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hs + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);      // lanes: B A D C
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);      // lanes: H G F E
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);     // lanes: F E B A
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);  // lanes: H G D C
  for (; n > 0; --n, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i m[4];
    for (int i = 0; i < 4; ++i)
      m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), bswap);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i >= 4) {                                                  // W[4i..4i+3] into the slot of W[4i-16..4i-13]
        __m128i t = _mm_sha256msg1_epu32(m[i & 3], m[(i + 1) & 3]);  // W[t-16] + s0(W[t-15])
        t = _mm_add_epi32(t, _mm_alignr_epi8(m[(i + 3) & 3], m[(i + 2) & 3], 4));  // + W[t-7]
        m[i & 3] = _mm_sha256msg2_epu32(t, m[(i + 3) & 3]);                        // + s1(W[t-2])
      }
      __m128i wk = _mm_add_epi32(m[i & 3], _mm_load_si128(reinterpret_cast<const __m128i*>(K + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4i, 4i+1: the new ABEF
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // rounds 4i+2, 4i+3 (the old ABEF is CDGH now)
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i ab = _mm_shuffle_epi32(abef, 0x1B);                                        // lanes: A B E F
  __m128i cd = _mm_shuffle_epi32(cdgh, 0xB1);                                        // lanes: G H C D
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hs), _mm_blend_epi16(ab, cd, 0xF0));   // A B C D
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hs + 4), _mm_alignr_epi8(cd, ab, 8));  // E F G H
}

// glibc's own CPU features (computed once by the C library at start-up): asking libgcc's
// __builtin_cpu_supports instead links its CPU model constructor, which runs CPUID at every
// start of every yolo (each CPUID a trap to the hypervisor in a VM: 6% of `yolo --version`,
// issue 19).
bool have_shani() {
#if defined(CPU_FEATURE_ACTIVE)
  return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSE4_1) && CPU_FEATURE_ACTIVE(SSSE3);
#else
  __builtin_cpu_init();
  return __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3");
#endif
}
#endif

BlocksFn blocks_for(Sha256Impl impl) {
#ifdef YOLO_SHA256_X86
  if (impl == Sha256Impl::Hardware) return blocks_shani;
#else
  (void)impl;
#endif
  return blocks_portable;
}

Sha256Impl chosen() {
  static const Sha256Impl impl = [] {
#ifdef YOLO_SHA256_X86
    if (have_shani()) return Sha256Impl::Hardware;
#endif
    return Sha256Impl::Portable;
  }();
  return impl;
}

// The streaming part and the padding (FIPS 180-4 5.1.1), over either compression function.
void update_with(BlocksFn fn, uint32_t* h, uint8_t* buf, size_t& buf_len, uint64_t& total, const uint8_t* p, size_t n) {
  total += n;
  if (buf_len > 0) {
    size_t take = n < 64 - buf_len ? n : 64 - buf_len;
    std::memcpy(buf + buf_len, p, take);
    buf_len += take;
    p += take;
    n -= take;
    if (buf_len < 64) return;
    fn(h, buf, 1);
    buf_len = 0;
  }
  if (n >= 64) {
    fn(h, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  if (n > 0) {
    std::memcpy(buf, p, n);
    buf_len = n;
  }
}

std::array<uint8_t, 32> finish_with(BlocksFn fn, uint32_t* h, uint8_t* buf, size_t buf_len, uint64_t total) {
  const uint64_t bits = total * 8;
  buf[buf_len++] = 0x80;
  if (buf_len > 56) {
    std::memset(buf + buf_len, 0, 64 - buf_len);
    fn(h, buf, 1);
    buf_len = 0;
  }
  std::memset(buf + buf_len, 0, 56 - buf_len);
  for (int i = 0; i < 8; ++i) buf[56 + i] = uint8_t(bits >> (56 - 8 * i));
  fn(h, buf, 1);
  std::array<uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = uint8_t(h[i] >> (24 - 8 * j));
  return out;
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
}  // namespace

Sha256::Sha256() { std::memcpy(h_, kInit, sizeof h_); }

void Sha256::update(std::string_view data) {
  update_with(blocks_for(chosen()), h_, buf_, buf_len_, total_, reinterpret_cast<const uint8_t*>(data.data()),
              data.size());
}

std::array<uint8_t, 32> Sha256::finish() { return finish_with(blocks_for(chosen()), h_, buf_, buf_len_, total_); }

std::string sha256_hex(std::string_view data) {
  Sha256 s;
  s.update(data);
  return hex_of(s.finish());
}

std::string sha256_digest(std::string_view data) { return "sha256:" + sha256_hex(data); }

bool sha256_available(Sha256Impl impl) {
  if (impl == Sha256Impl::Portable) return true;
#ifdef YOLO_SHA256_X86
  static const bool have = have_shani();
  return have;
#else
  return false;
#endif
}

Sha256Impl sha256_in_use() { return chosen(); }

std::string sha256_hex_with(Sha256Impl impl, std::string_view data) {
  BlocksFn fn = blocks_for(sha256_available(impl) ? impl : Sha256Impl::Portable);
  uint32_t h[8];
  std::memcpy(h, kInit, sizeof h);
  uint8_t buf[64];
  size_t buf_len = 0;
  uint64_t total = 0;
  update_with(fn, h, buf, buf_len, total, reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return hex_of(finish_with(fn, h, buf, buf_len, total));
}

}  // namespace yolo
