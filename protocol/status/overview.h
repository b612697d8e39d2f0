// The whole project at a glance: `yolo status` before any run, and the phase list
// after one. Per phase folder: its plans, how many have a SUMMARY, and what their last
// reviews said (from the review ledgers), including how many only got the Stage 1 fallback.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>

#include "protocol/ports/world.h"
#include "protocol/base/json.h"

namespace yolo {

// {"phases": [{"folder", "plans", "summaries", "reviewed", "approved", "conditional",
//              "rejected", "fallback", "unreadable_plans"}],
//  "totals": {same counts summed, "phases"}}
//
// `progress`, when set, hears of the rows that are computed (not remembered from an earlier
// status): (done, total) after each, done counting up to total; calls never overlap (the rows
// are computed on several threads, the calls are made one at a time), so the observer needs
// no lock of its own. A first status on a large project (every ledger parsed and its seals
// checked: a second at 100,000 plans) is the one that takes long enough to show it.
using OverviewProgress = std::function<void(size_t done, size_t total)>;
json project_overview(const World& w, const std::filesystem::path& root, const OverviewProgress& progress = nullptr);

// The overview as `status` shows it without --all (one row per phase folder grows with the
// project, the output must not): the run's phase (`run_folder`, whatever its state) and the phases
// with work left (plans without a SUMMARY), in folder order, at most max_rows in all (the
// run's phase is kept even past them).
// The totals still count every phase. What was left out:
// "phases_omitted": {"complete", "more", "hint"}; nothing is added when every row fits.
json bounded_overview(json overview, const std::string& run_folder, size_t max_rows);

}  // namespace yolo
