// Google Benchmark of the hashes yolo computes most: SHA-256 of a plan-sized text and of
// larger files (content hashes, digests a gate covers), and HMAC-SHA256 of a seal's message
// (every approval and review record). Uses only the public interface, so the same file
// measures any implementation behind protocol/base/sha256.h (docs/benchmarks.md compares two).
#include <benchmark/benchmark.h>

#include <string>

#include "protocol/base/seal.h"
#include "protocol/base/sha256.h"

namespace {

std::string bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i * 7 % 26);
  return s;
}

void BM_Sha256Hex(benchmark::State& st) {
  const std::string data = bytes(static_cast<size_t>(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(yolo::sha256_hex(data));
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * st.range(0));
}
// 64 B: a short key or id; 3.8 KB: the corpus's median plan; 64 KiB and 1 MiB: large files.
BENCHMARK(BM_Sha256Hex)->Arg(64)->Arg(3800)->Arg(64 << 10)->Arg(1 << 20);

void BM_Sha256Streamed(benchmark::State& st) {
  const std::string data = bytes(3800);
  for (auto _ : st) {
    yolo::Sha256 h;
    for (size_t i = 0; i < data.size(); i += 100) h.update(std::string_view(data).substr(i, 100));
    benchmark::DoNotOptimize(h.finish());
  }
}
BENCHMARK(BM_Sha256Streamed);

void BM_HmacSeal(benchmark::State& st) {
  const std::string key = bytes(32);
  const std::string msg = bytes(static_cast<size_t>(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(yolo::seal::hmac_sha256_hex(key, msg));
}
// 400 B: a gate's sealed fields; 4 KiB: a review record with its findings.
BENCHMARK(BM_HmacSeal)->Arg(400)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
