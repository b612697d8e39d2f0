// Private to the summary modules (summary.cc, summary_gate.cc): helpers both use.
#pragma once
#include <optional>

#include "protocol/base/json.h"

namespace yolo::summary_detail {

// A non-negative integer (number or digits string) -> its value; nullopt otherwise.
std::optional<long long> non_negative(const json& v);

}  // namespace yolo::summary_detail
