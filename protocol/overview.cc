#include "protocol/overview.h"

#include <algorithm>
#include <map>
#include <vector>

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
    auto plans = list_plan_files(w, d);
    // Which record is each plan's: by the path the record names (no plan is read), and only
    // for a plan no single record names, by the id in its frontmatter (records written
    // without a path, a plan moved or re-numbered since its review).
    std::vector<const json*> record_of(plans.size(), nullptr);
    std::vector<bool> need_id(plans.size(), false);
    if (ledger.ok() && ledger.doc.contains("reviews") && ledger.doc["reviews"].is_object()) {
      std::map<stdfs::path, std::vector<const json*>> by_path;
      size_t records = 0;
      for (const auto& [id, rec] : ledger.doc["reviews"].items()) {
        ++records;
        if (rec.is_object() && rec.contains("path") && rec["path"].is_string())
          by_path[(root / rec["path"].get<std::string>()).lexically_normal()].push_back(&rec);
      }
      size_t claimed = 0;
      for (size_t i = 0; i < plans.size(); ++i) {
        auto it = by_path.find(plans[i].lexically_normal());
        if (it != by_path.end() && it->second.size() == 1) {
          record_of[i] = it->second.front();
          ++claimed;
        } else {
          need_id[i] = true;
        }
      }
      if (claimed == records) std::fill(need_id.begin(), need_id.end(), false);  // none left to find
    }
    for (size_t i = 0; i < plans.size(); ++i) {
      const auto& f = plans[i];
      p["plans"] = p["plans"].get<long long>() + 1;
      if (locate_summary(w, f).exists) p["summaries"] = p["summaries"].get<long long>() + 1;
      if (!ledger.ok()) continue;
      const json* rv = record_of[i];
      if (need_id[i]) {
        auto l = load_plan(w, f);
        if (!l.plan) continue;
        rv = review_ledger::find(ledger.doc, l.plan->id());
      }
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
