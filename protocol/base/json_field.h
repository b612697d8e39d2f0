// Member access for JSON documents read from files and children (any shape): the one
// string-field helper of the project.
#pragma once
#include <string>

#include "protocol/base/json.h"

namespace yolo::json_field {

// The string member `key` of j; "" when j is not an object, or the member is absent or not
// a string.
std::string str(const json& j, const char* key);

}  // namespace yolo::json_field
