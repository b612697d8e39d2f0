// Numbers written as text, the one way to read them.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace yolo::text {

// The value of s when it is 1 to 18 ASCII digits and nothing else (no sign, no space), else
// nullopt.
std::optional<long long> parse_digits(std::string_view s);
// The number s starts with ("03-01" -> 3, "07-api" -> 7): up to max_digits leading ASCII
// digits (at most 18); nullopt when s does not start with a digit.
std::optional<long long> leading_number(std::string_view s, size_t max_digits = 9);

}  // namespace yolo::text
