// The real clock (protocol/ports/clock.h), checked against the system clock itself.
#include "protocol/ports/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <set>
#include <string>
#include <thread>

namespace yolo {
namespace {

// The real clock's ISO time: UTC to the second, the system clock's, also when the text of a
// second is reused (it is formatted once a second).
TEST(RealClock, IsoTimeIsTheSystemClocksToTheSecond) {
  auto iso_of = [](std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(buf);
  };
  std::set<std::string> seen;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2100);
  while (std::chrono::steady_clock::now() < until) {
    auto now = [] { return std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()); };
    std::time_t before = now();
    std::string got = now_iso8601();
    std::time_t after = now();
    ASSERT_TRUE(got == iso_of(before) || got == iso_of(after)) << got;
    seen.insert(got);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  EXPECT_GE(seen.size(), 2u);  // it moved on with the seconds
}

}  // namespace
}  // namespace yolo
