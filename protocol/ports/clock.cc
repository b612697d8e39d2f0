#include "protocol/ports/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace yolo {
namespace {
std::tm utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}
}  // namespace

std::string now_iso8601() {
  // To the second: the text of the last second asked for, formatted once (execute stamps
  // every start and end, and gmtime and strftime showed in its loop's profile).
  thread_local std::time_t last = -1;
  thread_local char text[32];
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  if (t != last) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    if (std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) text[0] = '\0';
    last = t;
  }
  return text;
}

std::string today_ymd() {
  std::tm tm = utc_now();
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string new_uuid() {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  uint64_t a = rng(), b = rng();
  a = (a & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
                static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace yolo
