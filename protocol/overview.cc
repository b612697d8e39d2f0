#include "protocol/overview.h"

#include <algorithm>

#include "protocol/plan.h"
#include "protocol/review_ledger.h"
#include "protocol/summary.h"

namespace yolo {

namespace stdfs = std::filesystem;

json project_overview(const World& w, const stdfs::path& root) {
  std::vector<stdfs::path> dirs;
  const stdfs::path phases_dir = root / ".yolo-planning" / "phases";
  for (const auto& name : w.files().list(phases_dir))
    if (w.files().is_directory(phases_dir / name)) dirs.push_back(phases_dir / name);
  json phases = json::array();
  json totals = {{"phases", dirs.size()}, {"plans", 0},       {"summaries", 0}, {"reviewed", 0},
                 {"approved", 0},         {"conditional", 0}, {"rejected", 0},  {"fallback", 0}};
  for (const auto& d : dirs) {
    json p = {{"folder", d.filename().string()},
              {"plans", 0},
              {"summaries", 0},
              {"reviewed", 0},
              {"approved", 0},
              {"conditional", 0},
              {"rejected", 0},
              {"fallback", 0}};
    auto ledger = review_ledger::load(w, root, d);
    for (const auto& f : list_plan_files(w, d)) {
      p["plans"] = p["plans"].get<long long>() + 1;
      if (locate_summary(w, f).exists) p["summaries"] = p["summaries"].get<long long>() + 1;
      if (!ledger.ok()) continue;
      auto l = load_plan(w, f);
      if (!l.plan) continue;
      const json* rv = review_ledger::find(ledger.doc, l.plan->id());
      if (!rv || !rv->is_object()) continue;
      p["reviewed"] = p["reviewed"].get<long long>() + 1;
      std::string v = rv->value("verdict", "");
      if (v == "approve" || v == "conditional" || v == "reject") {
        const char* k = v == "approve" ? "approved" : v == "conditional" ? "conditional" : "rejected";
        p[k] = p[k].get<long long>() + 1;
      }
      if (rv->value("source", "") == "fallback") p["fallback"] = p["fallback"].get<long long>() + 1;
    }
    for (auto& [k, v] : p.items())
      if (k != "folder") totals[k] = totals[k].get<long long>() + v.get<long long>();
    phases.push_back(std::move(p));
  }
  return {{"phases", std::move(phases)}, {"totals", std::move(totals)}};
}

}  // namespace yolo
