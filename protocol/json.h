// One JSON type for the whole project.
#pragma once
#include <nlohmann/json.hpp>

namespace yolo {
using json = nlohmann::json;
}  // namespace yolo
