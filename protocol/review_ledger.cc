#include "protocol/review_ledger.h"

#include <algorithm>

#include "protocol/schema.h"

namespace yolo::review_ledger {

namespace stdfs = std::filesystem;

namespace {
constexpr const char* kSchema = "review-ledger";
}

stdfs::path dir(const stdfs::path& root) { return root / ".yolo-planning" / ".reviews"; }

stdfs::path path_for(const stdfs::path& root, const stdfs::path& phase_dir) {
  stdfs::path name = phase_dir.lexically_normal().filename();
  if (name.empty()) name = phase_dir.lexically_normal().parent_path().filename();  // "phases/01-x/"
  return dir(root) / (name.string() + ".json");
}

state::LoadResult load(const stdfs::path& root, const stdfs::path& phase_dir) {
  auto r = state::load_document(path_for(root, phase_dir), kSchema);
  if (r.ok() && !r.exists) r.doc = {{"reviews", json::object()}};
  return r;
}

state::LoadResult load_file(const stdfs::path& file) { return state::load_document(file, kSchema); }

const json* find(const json& ledger, const std::string& plan_id) {
  auto rv = ledger.find("reviews");
  if (rv == ledger.end() || !rv->is_object()) return nullptr;
  auto it = rv->find(plan_id);
  return it != rv->end() && it->is_object() ? &*it : nullptr;
}

std::string record(const stdfs::path& root, const stdfs::path& phase_dir, const std::string& plan_id, json rec) {
  std::vector<std::pair<std::string, json>> one;
  one.emplace_back(plan_id, std::move(rec));
  return record_many(root, phase_dir, std::move(one));
}

std::string record_many(const stdfs::path& root, const stdfs::path& phase_dir,
                        std::vector<std::pair<std::string, json>> records) {
  if (records.empty()) return "";
  auto set = [&](json& doc, std::string&) {
    if (!doc.is_object() || doc.empty()) doc = {{"reviews", json::object()}};
    stdfs::path rel = phase_dir.lexically_normal().lexically_relative(root.lexically_normal());
    doc["phase_dir"] = rel.empty() || rel.native().starts_with("..") ? phase_dir.string() : rel.string();
    json& reviews = doc["reviews"];
    for (auto& [id, rec] : records) reviews[id] = std::move(rec);
    return true;
  };
  // The schema constrains each record on its own and the others were checked when the
  // ledger was read: check the document made of what changed.
  auto check = [&](const json& doc) {
    json changed = {{"phase_dir", doc["phase_dir"]}, {"reviews", json::object()}};
    for (const auto& [id, rec] : records) changed["reviews"][id] = doc["reviews"][id];
    auto errors = schema::validate(kSchema, changed);
    return errors.empty() ? std::string() : schema::describe(errors);
  };
  return state::update_document(root, path_for(root, phase_dir), kSchema, set, check).error;
}

All load_all(const stdfs::path& root) {
  All all;
  std::vector<stdfs::path> files;
  std::error_code ec;
  for (stdfs::directory_iterator it(dir(root), ec), end; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    std::string n = p.filename().string();
    if (n.empty() || n.front() == '.' || p.extension() != ".json") continue;  // temp files, kept copies
    if (!it->is_regular_file(ec)) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto r = load_file(f);
    if (!r.ok()) {
      all.errors.push_back(r.error);
      continue;
    }
    for (auto& [id, rec] : r.doc["reviews"].items()) all.reviews[id] = std::move(rec);
  }
  return all;
}

}  // namespace yolo::review_ledger
