#include "protocol/status/overview.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "protocol/base/parallel.h"
#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "protocol/summary/summary.h"
#include "protocol/review/verified_cache.h"

namespace yolo {

namespace stdfs = std::filesystem;

namespace {

const char* const kCounts[] = {"plans", "summaries", "reviewed", "approved", "conditional", "rejected", "fallback"};
// What a cached row holds and how it was counted: bump it when either changes, so that rows
// an older yolo remembered are recomputed rather than shown.
constexpr int kRowFormat = 2;

// The row of phase folder d: its plans and SUMMARY files from one listing of the folder (no
// stat per plan), its trusted review records (review_ledger::load: schema and seals checked)
// matched to its plans. cacheable: the row follows from the folder's entries and the ledger
// alone (no plan was read for its id, no plan or SUMMARY is a link or of a kind the
// listing does not tell), so it holds while neither's identity changes.
json phase_row(const World& w, const stdfs::path& root, const stdfs::path& d, bool& cacheable) {
  cacheable = true;
  fs::Disk& disk = w.files();
  json p = {{"folder", d.filename().string()}};
  for (const char* k : kCounts) p[k] = 0;
  auto ledger = review_ledger::load(w, root, d);
  const std::string folder = d.filename().string();
  std::vector<stdfs::path> plans;
  std::set<std::string> files;  // regular files of the folder (SUMMARY look-ups)
  auto entries = disk.list_entries(d);
  auto regular = [&](const fs::DirEntry& e) {
    if (e.kind == fs::DirEntry::Kind::File) return true;
    if (e.kind == fs::DirEntry::Kind::Directory) return false;
    cacheable = false;  // a link: its target may change without the folder changing
    return disk.is_file(d / e.name);
  };
  for (const auto& e : entries) {
    bool plan = is_plan_filename(e.name), summary = !plan && is_summary_filename(e.name);
    if (!plan && !summary) continue;
    if (!regular(e)) continue;
    if (plan) plans.push_back(d / e.name);
    files.insert(e.name);
  }
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
  } else {
    cacheable = false;  // an unreadable ledger: said again (and its copy kept) every time
  }
  auto bump = [&](const char* k) { p[k] = p[k].get<long long>() + 1; };
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto& f = plans[i];
    bump("plans");
    // locate_summary's rule on the listing: the first of the plan's SUMMARY names there.
    for (const auto& n : summary_names_for_plan(f.filename().string(), folder))
      if (files.count(n)) {
        bump("summaries");
        break;
      }
    if (!ledger.ok()) continue;
    const json* rv = record_of[i];
    if (need_id[i]) {
      cacheable = false;  // the plan's content decided it
      auto l = load_plan(w, f);
      if (!l.plan) continue;
      rv = review_ledger::find(ledger.doc, l.plan->id());
    }
    if (!rv || !rv->is_object()) continue;
    bump("reviewed");
    std::string v = rv->value("verdict", "");
    if (v == "approve" || v == "conditional" || v == "reject")
      bump(v == "approve" ? "approved" : v == "conditional" ? "conditional" : "rejected");
    if (rv->value("source", "") == "fallback") bump("fallback");
  }
  return p;
}

}  // namespace

json project_overview(const World& w, const stdfs::path& root, const OverviewProgress& progress) {
  std::vector<stdfs::path> dirs;
  const stdfs::path phases_dir = root / ".yolo-planning" / "phases";
  for (const auto& e : w.files().list_entries(phases_dir))
    if (e.kind == fs::DirEntry::Kind::Directory ||
        (e.kind == fs::DirEntry::Kind::Other && w.files().is_directory(phases_dir / e.name)))
      dirs.push_back(phases_dir / e.name);
  json phases = json::array();
  json totals = {{"phases", dirs.size()}};
  for (const char* k : kCounts) totals[k] = 0;
  // A phase's row is remembered with the identities of its folder, its ledger and the
  // ledger's journal (verified_cache.h): while none changed, the ledger is neither parsed nor are its
  // seals checked again.
  verified_cache::Cache cache(w, root, "overview");
  struct Row {
    std::vector<stdfs::path> inputs;
    std::optional<std::vector<std::string>> ids;
    json row;
    bool computed = false, cacheable = false;
  };
  std::vector<Row> rows(dirs.size());
  std::vector<size_t> misses;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const auto& d = dirs[i];
    // The journal too: a large ledger takes new records there, leaving the ledger untouched.
    const stdfs::path ledger = review_ledger::path_for(root, d);
    Row& r = rows[i];
    r.inputs = {d, ledger, review_ledger::journal_for(ledger)};
    const std::string key = d.filename().string();
    r.ids = cache.identities(r.inputs);
    const json* v = r.ids ? cache.find(key, *r.ids) : nullptr;
    if (v && v->is_object() && v->value("format", 0) == kRowFormat && v->contains("row") && (*v)["row"].is_object() &&
        (*v)["row"].value("folder", "") == key)
      r.row = (*v)["row"];
    else
      misses.push_back(i);
  }
  // The rows not remembered, each from its own folder and ledger: on every core (a first
  // status, or one after every ledger changed, parses, schema-checks and HMACs every record;
  // the phases share nothing but the World, whose disk, key and schemas are thread-safe).
  std::mutex progress_m;
  size_t done = 0;
  parallel_for(misses.size(), [&](size_t k) {
    Row& r = rows[misses[k]];
    r.row = phase_row(w, root, dirs[misses[k]], r.cacheable);
    r.computed = true;
    if (progress) {
      std::lock_guard<std::mutex> g(progress_m);
      progress(++done, misses.size());
    }
  });
  for (size_t i = 0; i < dirs.size(); ++i) {
    Row& r = rows[i];
    if (r.computed && r.ids && r.cacheable)
      cache.put(dirs[i].filename().string(), *r.ids, r.inputs, {{"format", kRowFormat}, {"row", r.row}});
    for (const char* k : kCounts) {
      const json& n = r.row[k];
      totals[k] = totals[k].get<long long>() + (n.is_number_integer() ? n.get<long long>() : 0);
    }
    phases.push_back(std::move(r.row));
  }
  (void)cache.save(true);  // best effort: a read-only checkout just gets no cache
  return {{"phases", std::move(phases)}, {"totals", std::move(totals)}};
}

json bounded_overview(json overview, const std::string& run_folder, size_t max_rows) {
  if (!overview.is_object() || !overview.contains("phases") || !overview["phases"].is_array()) return overview;
  json& rows = overview["phases"];
  if (rows.size() <= max_rows) return overview;
  auto count = [](const json& row, const char* k) {
    auto it = row.find(k);
    return it != row.end() && it->is_number_integer() ? it->get<long long>() : 0LL;
  };
  json kept = json::array();
  size_t complete = 0, more = 0;
  for (auto& row : rows) {
    const bool run = !run_folder.empty() && row.value("folder", std::string()) == run_folder;
    if (!run && count(row, "summaries") >= count(row, "plans")) {
      ++complete;
      continue;
    }
    if (kept.size() >= max_rows && !run) {
      ++more;
      continue;
    }
    kept.push_back(std::move(row));
  }
  rows = std::move(kept);
  overview["phases_omitted"] = {
      {"complete", complete}, {"more", more}, {"hint", "every phase's row: yolo status --all"}};
  return overview;
}

}  // namespace yolo
