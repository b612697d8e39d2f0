#include "protocol/review/review_ledger.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "protocol/base/schema.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/base/seal.h"

namespace yolo::review_ledger {

namespace stdfs = std::filesystem;

namespace {
constexpr const char* kSchema = "review-ledger";
constexpr const char* kSealDomain = "yolo-review-record-v1";
constexpr size_t kMaxJournalRead = 16u << 20;

// What a record's seal covers: the project (its canonical path), the ledger file's name,
// the plan id and the record itself (without its seal), as the canonical JSON (keys sorted,
// no spaces) of {"ledger", "plan_id", "project", "record"}. Written out member by member
// rather than built as a document and dumped: checking the seals of a cold `status` at
// 100,000 records copied every record once for nothing. The bytes are exactly the dump of
// that document (tests: a record sealed over the dump is trusted). `project`:
// gates::project_id(w, root), worked out once per ledger.
std::string sealed_bytes(const std::string& project, const stdfs::path& ledger_file, const std::string& plan_id,
                         const json& rec) {
  auto dump = [](std::string& out, const json& j) { out += j.dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string s = "{\"ledger\":";
  dump(s, json(ledger_file.filename().string()));
  s += ",\"plan_id\":";
  dump(s, json(plan_id));
  s += ",\"project\":";
  dump(s, json(project));
  s += ",\"record\":";
  if (rec.is_object()) {
    s += '{';
    bool first = true;
    for (auto it = rec.begin(); it != rec.end(); ++it) {
      if (it.key() == "seal") continue;
      if (!first) s += ',';
      first = false;
      dump(s, json(it.key()));
      s += ':';
      dump(s, it.value());
    }
    s += '}';
  } else {
    dump(s, rec);
  }
  s += '}';
  return s;
}

// The project root of a ledger file (<root>/.yolo-planning/.reviews/<name>.json).
stdfs::path root_of(const stdfs::path& ledger_file) { return ledger_file.parent_path().parent_path().parent_path(); }

// The ledgers this process read (validated) or wrote, by file: their identity then
// (fs::Disk::stamp) and how many records they held. A ledger whose file is still that one
// takes new records in its journal without being parsed again. Bounded, shared by threads.
class KnownLedgers {
 public:
  void put(const stdfs::path& file, const std::string& stamp, size_t records) {
    if (stamp.empty()) return;
    std::lock_guard<std::mutex> g(m_);
    if (map_.size() >= kMax && !map_.count(file.native())) map_.erase(map_.begin());
    map_[file.native()] = {stamp, records};
  }
  // The records of `file` when it is still the file seen (same stamp), else nullopt.
  std::optional<size_t> records(const stdfs::path& file, const std::string& stamp) {
    std::lock_guard<std::mutex> g(m_);
    auto it = map_.find(file.native());
    if (stamp.empty() || it == map_.end() || it->second.first != stamp) return std::nullopt;
    return it->second.second;
  }

 private:
  static constexpr size_t kMax = 4096;
  std::mutex m_;
  std::map<std::string, std::pair<std::string, size_t>> map_;
};

KnownLedgers& known() {
  static KnownLedgers k;
  return k;
}

size_t records_in(const json& doc) {
  auto rv = doc.find("reviews");
  return rv != doc.end() && rv->is_object() ? rv->size() : 0;
}

// The ledger file with its journal applied and its untrusted records dropped (why each was,
// into `dropped` when given). The journal is read first: a fold between the two reads leaves
// a ledger that holds what was read. Every reader of ledgers comes through here.
state::LoadResult load_merged(const World& w, const stdfs::path& root, const stdfs::path& file, bool empty_if_missing,
                              std::vector<std::string>* dropped = nullptr) {
  fs::Disk& disk = w.files();
  auto journal = disk.read(journal_for(file), kMaxJournalRead, false);
  std::string stamp = disk.stamp(file);
  auto r = state::load_document(w, file, kSchema);
  if (!r.ok()) return r;
  if (r.exists && disk.stamp(file) == stamp) known().put(file, stamp, records_in(r.doc));
  if ((empty_if_missing && !r.exists) || !r.doc.is_object()) r.doc = {{"reviews", json::object()}};
  if (journal.ok() && !journal.content.empty()) apply_journal(r.doc, journal.content);
  auto why = drop_untrusted(w, root, file, r.doc);
  if (dropped)
    dropped->insert(dropped->end(), std::make_move_iterator(why.begin()), std::make_move_iterator(why.end()));
  return r;
}
}  // namespace

stdfs::path journal_for(const stdfs::path& ledger_file) {
  stdfs::path j = ledger_file;
  j += "l";  // <phase>.json -> <phase>.jsonl
  return j;
}

size_t apply_journal(json& ledger, std::string_view text) {
  size_t applied = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a torn last line: its writer was killed part way
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    json e = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (e.is_discarded() || !e.is_object()) continue;
    auto id = e.find("plan_id");
    auto rec = e.find("record");
    if (id == e.end() || !id->is_string() || id->get_ref<const std::string&>().empty() || rec == e.end() ||
        !rec->is_object())
      continue;
    json one = {{"reviews", json::object()}};
    one["reviews"][id->get<std::string>()] = *rec;
    if (!schema::validate(kSchema, one).empty()) continue;
    if (!ledger.is_object()) ledger = json::object();
    if (!ledger.contains("reviews") || !ledger["reviews"].is_object()) ledger["reviews"] = json::object();
    ledger["reviews"][id->get<std::string>()] = std::move(*rec);
    ++applied;
  }
  return applied;
}

static bool trusted_in(const World& w, const std::string& project, const stdfs::path& ledger_file,
                       const std::string& plan_id, const json& rec) {
  if (!rec.is_object()) return false;
  auto it = rec.find("seal");
  if (it == rec.end() || !it->is_string()) return false;
  return seal::check_bytes(kSealDomain, sealed_bytes(project, ledger_file, plan_id, rec),
                           it->get_ref<const std::string&>(), w.checking_key());
}

bool trusted(const World& w, const stdfs::path& root, const stdfs::path& ledger_file, const std::string& plan_id,
             const json& rec) {
  return trusted_in(w, gates::project_id(w, root), ledger_file, plan_id, rec);
}

std::vector<std::string> drop_untrusted(const World& w, const stdfs::path& root, const stdfs::path& ledger_file,
                                        json& ledger) {
  std::vector<std::string> dropped;
  auto rv = ledger.find("reviews");
  if (rv == ledger.end() || !rv->is_object()) return dropped;
  const std::string project = gates::project_id(w, root);  // once, not once per record
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
  return load_merged(w, root, path_for(root, phase_dir), /*empty_if_missing=*/true);
}

state::LoadResult load_file(const World& w, const stdfs::path& file) {
  return load_merged(w, root_of(file), file, /*empty_if_missing=*/false);
}

const json* find(const json& ledger, const std::string& plan_id) {
  auto rv = ledger.find("reviews");
  if (rv == ledger.end() || !rv->is_object()) return nullptr;
  auto it = rv->find(plan_id);
  return it != rv->end() && it->is_object() ? &*it : nullptr;
}

Status record(const World& w, const stdfs::path& root, const stdfs::path& phase_dir, const std::string& plan_id,
              json rec) {
  std::vector<std::pair<std::string, json>> one;
  one.emplace_back(plan_id, std::move(rec));
  return record_many(w, root, phase_dir, std::move(one));
}

Status record_many(const World& w, const stdfs::path& root, const stdfs::path& phase_dir,
                   std::vector<std::pair<std::string, json>> records) {
  if (records.empty()) return {};
  fs::Disk& disk = w.files();
  const seal::Key& key = w.sealing_key();
  const std::string project = gates::project_id(w, root);
  const stdfs::path ledger = path_for(root, phase_dir);
  const stdfs::path journal = journal_for(ledger);
  stdfs::path rel_dir = phase_dir.lexically_normal().lexically_relative(root.lexically_normal());
  const std::string phase_text =
      rel_dir.empty() || rel_dir.native().starts_with("..") ? phase_dir.string() : rel_dir.string();
  // Sealed: only a record yolo wrote after a review counts when the ledger is read.
  for (auto& [id, rec] : records)
    if (rec.is_object()) rec["seal"] = seal::seal_bytes(kSealDomain, sealed_bytes(project, ledger, id, rec), key);
  // The schema constrains each record on its own and the others were checked when the
  // ledger was read: check the document made of what changed.
  auto check_changed = [&]() {
    json changed = {{"phase_dir", phase_text}, {"reviews", json::object()}};
    for (const auto& [id, rec] : records) changed["reviews"][id] = rec;
    auto errors = schema::validate(kSchema, changed);
    return errors.empty() ? Status{} : Status::fail(schema::describe(errors));
  };
  std::string lines;  // the records as journal lines
  for (const auto& [id, rec] : records) lines += json{{"plan_id", id}, {"record", rec}}.dump() + "\n";

  // A large ledger this process knows as it is: append to its journal, under the lock.
  if (disk.is_directory(root / ".yolo-planning")) {
    auto lock = disk.lock(state::lock_path(root));
    if (!lock.ok()) return lock.status();
    std::string stamp = disk.stamp(ledger);
    auto n = known().records(ledger, stamp);
    if (n && *n >= kJournalFromRecords && !disk.read_only(ledger)) {
      auto cur = disk.read(journal, kJournalMaxBytes, false);
      bool missing = !cur.ok() && cur.error->kind == fs::FileError::Kind::NotFound;
      if ((cur.ok() || missing) && cur.content.size() + lines.size() <= kJournalMaxBytes) {
        if (Status v = check_changed(); !v.ok())
          return Status::fail(ledger.string() + ": update refused, the result would not match schema " + kSchema +
                              ": " + v.error);
        // A torn last line (a writer killed part way) stays a line of its own, skipped.
        std::string add = !cur.content.empty() && cur.content.back() != '\n' ? "\n" + lines : lines;
        return disk.append(
            journal, [&](const std::string&) { return add; }, 0, /*durable=*/true);
      }
    }
  }

  // Otherwise the ledger is rewritten with its journal folded in. When there is a journal,
  // the new records go to it first: a crash after the ledger is written and before the
  // journal is emptied leaves lines the ledger holds already (in the same order).
  bool fold = false;
  auto set = [&](json& doc) -> state::Change {
    if (!doc.is_object() || doc.empty()) doc = {{"reviews", json::object()}};
    doc["phase_dir"] = phase_text;
    auto cur = disk.read(journal, kMaxJournalRead, false);
    if (!cur.ok() && cur.error->kind != fs::FileError::Kind::NotFound) return Status::fail(cur.error->message);
    fold = cur.ok() && !cur.content.empty();
    if (!fold) {
      for (const auto& [id, rec] : records) doc["reviews"][id] = rec;
      return true;
    }
    std::string add = cur.content.back() != '\n' ? "\n" + lines : lines;
    if (Status s = disk.append(
            journal, [&](const std::string&) { return add; }, 0, true);
        !s.ok())
      return s;
    apply_journal(doc, cur.content + add);
    return true;
  };
  auto check = [&](const json&) { return check_changed(); };
  auto after = [&]() {
    if (fold) (void)disk.write_atomic(journal, "");  // a journal left behind holds lines the ledger has
  };
  auto r = state::update_document(w, root, ledger, kSchema, set, check, after);
  if (r.ok() && !r.stamp.empty()) known().put(ledger, r.stamp, records_in(r.doc));
  return Status{r.error};
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
    auto r = load_merged(w, root, f, /*empty_if_missing=*/true, &all.errors);
    if (!r.ok()) {
      all.errors.push_back(r.error);
      continue;
    }
    for (auto& [id, rec] : r.doc["reviews"].items()) all.reviews[id] = std::move(rec);
  }
  return all;
}

}  // namespace yolo::review_ledger
