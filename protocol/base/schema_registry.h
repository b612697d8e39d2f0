// The JSON Schemas of schemas/*.json, compiled into the binary (see cmake/embed_schemas.cmake).
#pragma once
#include <string_view>
#include <vector>

namespace yolo::schemas {
struct EmbeddedSchema {
  std::string_view name;  // file stem, e.g. "execution-state"
  std::string_view text;
};
const std::vector<EmbeddedSchema>& embedded();
}  // namespace yolo::schemas
