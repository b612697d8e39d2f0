// Time stamps and identifiers.
#pragma once
#include <string>

namespace yolo {
std::string now_iso8601();  // UTC, e.g. 2026-11-22T04:51:16Z
std::string today_ymd();    // UTC, e.g. 2026-11-22
std::string new_uuid();     // random version-4 UUID
}  // namespace yolo
