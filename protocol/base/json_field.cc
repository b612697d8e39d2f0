#include "protocol/base/json_field.h"

namespace yolo::json_field {

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace yolo::json_field
