// parallel_for (protocol/base/parallel.h): every index once, whatever the thread count; the first
// exception comes back to the caller after every thread ended.
#include "protocol/base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace yolo {
namespace {

TEST(ParallelFor, EveryIndexRunsExactlyOnce) {
  for (size_t n : {0u, 1u, 7u, 8u, 16u, 17u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    parallel_for(n, [&](size_t i) { hits[i]++; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, TheFirstExceptionReachesTheCaller) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(1000,
                            [&](size_t i) {
                              ++ran;
                              if (i == 10) throw std::runtime_error("item 10");
                            }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 11);
  EXPECT_LE(ran.load(), 1000);
}

}  // namespace
}  // namespace yolo
