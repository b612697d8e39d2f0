#include "protocol/base/numbers.h"

namespace yolo::text {

std::optional<long long> parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<long long> leading_number(std::string_view s, size_t max_digits) {
  if (max_digits > 18) max_digits = 18;
  size_t i = 0;
  long long v = 0;
  while (i < s.size() && i < max_digits && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  if (i == 0) return std::nullopt;
  return v;
}

}  // namespace yolo::text
