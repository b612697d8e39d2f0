// The whole project at a glance (issue 16): `yolo status` before any run, and the phase list
// after one. Per phase folder: its plans, how many have a SUMMARY, and what their last
// reviews said (from the review ledgers), including how many only got the Stage 1 fallback.
#pragma once
#include <filesystem>

#include "protocol/world.h"
#include "protocol/json.h"

namespace yolo {

// {"phases": [{"folder", "plans", "summaries", "reviewed", "approved", "conditional",
//              "rejected", "fallback", "unreadable_plans"}],
//  "totals": {same counts summed, "phases"}}
json project_overview(const World& w, const std::filesystem::path& root);

}  // namespace yolo
