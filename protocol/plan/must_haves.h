// A plan's must_haves.artifacts and must_haves.key_links, as Stage 1 and the SUMMARY gate
// both read them.
#pragma once
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/plan/plan.h"

namespace yolo {

// The entries as written (empty when must_haves is a list or has none).
std::vector<json> artifact_entries(const Plan& plan);
std::vector<json> key_link_entries(const Plan& plan);
// An artifact's path: a string entry, or its `path`.
std::string artifact_path(const json& artifact);

}  // namespace yolo
