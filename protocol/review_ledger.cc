#include "protocol/review_ledger.h"

#include <algorithm>

#include "protocol/schema.h"
#include "protocol/seal.h"

namespace yolo::review_ledger {

namespace stdfs = std::filesystem;

namespace {
constexpr const char* kSchema = "review-ledger";
constexpr const char* kSealDomain = "yolo-review-record-v1";

// What a record's seal covers: the project (its canonical path), the ledger file's name,
// the plan id and the record itself (without its seal).
// The project's canonical path (the disk resolves its links), worked out once per ledger.
std::string project_of(const World& w, const stdfs::path& root) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(root, ec).lexically_normal();
  return w.files().resolve(abs).value_or(root.lexically_normal()).generic_string();
}

// `project`: project_of(w, root).
json sealed_fields(const std::string& project, const stdfs::path& ledger_file, const std::string& plan_id,
                   const json& rec) {
  json f = json::object();  // built member by member: the record is copied once, not twice
  f["project"] = project;
  f["ledger"] = ledger_file.filename().string();
  f["plan_id"] = plan_id;
  json& r = f["record"] = rec;
  if (r.is_object()) r.erase("seal");
  return f;
}

// The project root of a ledger file (<root>/.yolo-planning/.reviews/<name>.json).
stdfs::path root_of(const stdfs::path& ledger_file) { return ledger_file.parent_path().parent_path().parent_path(); }
}  // namespace

static bool trusted_in(const World& w, const std::string& project, const stdfs::path& ledger_file,
                       const std::string& plan_id, const json& rec) {
  if (!rec.is_object()) return false;
  auto it = rec.find("seal");
  if (it == rec.end() || !it->is_string()) return false;
  return seal::check(kSealDomain, sealed_fields(project, ledger_file, plan_id, rec), it->get<std::string>(),
                     w.checking_key());
}

bool trusted(const World& w, const stdfs::path& root, const stdfs::path& ledger_file, const std::string& plan_id,
             const json& rec) {
  return trusted_in(w, project_of(w, root), ledger_file, plan_id, rec);
}

std::vector<std::string> drop_untrusted(const World& w, const stdfs::path& root, const stdfs::path& ledger_file,
                                        json& ledger) {
  std::vector<std::string> dropped;
  auto rv = ledger.find("reviews");
  if (rv == ledger.end() || !rv->is_object()) return dropped;
  const std::string project = project_of(w, root);  // once, not once per record
  for (auto it = rv->begin(); it != rv->end();) {
    if (trusted_in(w, project, ledger_file, it.key(), *it)) {
      ++it;
      continue;
    }
    dropped.push_back(
        "the review record of " + it.key() + " in " + ledger_file.string() +
        " carries no valid seal (not made by yolo's review here: edited, copied or older): it does not count "
        "and the plan is reviewed again");
    it = rv->erase(it);
  }
  return dropped;
}

stdfs::path dir(const stdfs::path& root) { return root / ".yolo-planning" / ".reviews"; }

stdfs::path path_for(const stdfs::path& root, const stdfs::path& phase_dir) {
  stdfs::path name = phase_dir.lexically_normal().filename();
  if (name.empty()) name = phase_dir.lexically_normal().parent_path().filename();  // "phases/01-x/"
  return dir(root) / (name.string() + ".json");
}

state::LoadResult load(const World& w, const stdfs::path& root, const stdfs::path& phase_dir) {
  auto r = state::load_document(w, path_for(root, phase_dir), kSchema);
  if (r.ok() && !r.exists) r.doc = {{"reviews", json::object()}};
  if (r.ok()) drop_untrusted(w, root, path_for(root, phase_dir), r.doc);
  return r;
}

state::LoadResult load_file(const World& w, const stdfs::path& file) {
  auto r = state::load_document(w, file, kSchema);
  if (r.ok()) drop_untrusted(w, root_of(file), file, r.doc);
  return r;
}

const json* find(const json& ledger, const std::string& plan_id) {
  auto rv = ledger.find("reviews");
  if (rv == ledger.end() || !rv->is_object()) return nullptr;
  auto it = rv->find(plan_id);
  return it != rv->end() && it->is_object() ? &*it : nullptr;
}

std::string record(const World& w, const stdfs::path& root, const stdfs::path& phase_dir, const std::string& plan_id,
                   json rec) {
  std::vector<std::pair<std::string, json>> one;
  one.emplace_back(plan_id, std::move(rec));
  return record_many(w, root, phase_dir, std::move(one));
}

std::string record_many(const World& w, const stdfs::path& root, const stdfs::path& phase_dir,
                        std::vector<std::pair<std::string, json>> records) {
  if (records.empty()) return "";
  const seal::Key& key = w.sealing_key();
  const std::string project = project_of(w, root);
  const stdfs::path ledger = path_for(root, phase_dir);
  auto set = [&](json& doc, std::string&) {
    if (!doc.is_object() || doc.empty()) doc = {{"reviews", json::object()}};
    stdfs::path rel = phase_dir.lexically_normal().lexically_relative(root.lexically_normal());
    doc["phase_dir"] = rel.empty() || rel.native().starts_with("..") ? phase_dir.string() : rel.string();
    // Sealed: only a record yolo wrote after a review counts when the ledger is read.
    json& reviews = doc["reviews"];
    for (const auto& [id, rec] : records) {
      json r = rec;
      if (r.is_object()) r["seal"] = seal::seal_of(kSealDomain, sealed_fields(project, ledger, id, r), key);
      reviews[id] = std::move(r);
    }
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
  return state::update_document(w, root, path_for(root, phase_dir), kSchema, set, check).error;
}

All load_all(const World& w, const stdfs::path& root) {
  All all;
  std::vector<stdfs::path> files;
  fs::Disk& disk = w.files();
  for (const auto& n : disk.list(dir(root))) {  // sorted
    stdfs::path p = dir(root) / n;
    if (n.empty() || n.front() == '.' || p.extension() != ".json") continue;  // temp files, kept copies
    if (disk.is_directory(p) || !disk.exists(p)) continue;
    files.push_back(p);
  }
  for (const auto& f : files) {
    auto r = state::load_document(w, f, kSchema);
    if (!r.ok()) {
      all.errors.push_back(r.error);
      continue;
    }
    for (auto& why : drop_untrusted(w, root, f, r.doc)) all.errors.push_back(std::move(why));
    for (auto& [id, rec] : r.doc["reviews"].items()) all.reviews[id] = std::move(rec);
  }
  return all;
}

}  // namespace yolo::review_ledger
