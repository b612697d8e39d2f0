#include "protocol/state/state.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "protocol/ports/clock.h"
#include "protocol/ports/file_lock.h"
#include "protocol/ports/fs.h"
#include "protocol/base/schema.h"
#include "protocol/base/sha256.h"

namespace yolo::state {
namespace {

constexpr size_t kMaxStateBytes = 16u << 20;

// One copy per distinct content, named by its hash: reading the same broken file again (every
// `yolo status`) makes no new copy, and two different contents never share a name.
std::string keep_copy(fs::Disk& disk, const std::filesystem::path& path, const std::string& content) {
  std::filesystem::path copy = path;
  copy += ".corrupt-" + sha256_hex(content).substr(0, 16);
  if (!disk.exists(copy)) (void)disk.write_atomic(copy, content);  // the copy is a courtesy: the error names the file
  return copy.string();
}

// What the schema cannot say: every gate id is unique (approvals are found by id).
std::string duplicate_gate_id(const json& doc) {
  auto g = doc.find("gates");
  if (g == doc.end() || !g->is_array()) return {};
  std::map<std::string, int> seen;
  for (const auto& gate : *g)
    if (gate.is_object() && gate.contains("id") && gate["id"].is_string() && ++seen[gate["id"].get<std::string>()] == 2)
      return "gates: the gate id '" + gate["id"].get<std::string>() +
             "' appears more than once (each gate needs its own id)";
  return {};
}

std::string validate_with(const std::string& schema_name, const json& doc) {
  auto errors = schema::validate(schema_name, doc);
  if (!errors.empty()) return schema::describe(errors);
  if (schema_name == "execution-state" && doc.is_object()) return duplicate_gate_id(doc);
  return {};
}

// The whole-document check of `after` where `before` was checked already (read, or written
// after its check): of each top-level array only the elements that differ from before's at
// the same index (and those past its end); any other value whole. The schemas of the
// documents updated without a check of their own (execution-state) constrain each element
// on its own, with no counts and no uniqueness over an array (a test holds them to it), so
// the answer is the whole check's, in time proportional to the change: on a large phase,
// checking every plan record at every gate step was a large share of execute's own time.
// The rule across elements (unique gate ids) is checked on the whole document.
std::string validate_changes(const std::string& schema_name, const json& before, const json& after) {
  if (!before.is_object() || !after.is_object()) return validate_with(schema_name, after);
  json part = json::object();
  for (const auto& [k, v] : after.items()) {
    auto old = before.find(k);
    if (!v.is_structured() || old == before.end()) {
      part[k] = v;
      continue;
    }
    if (v.is_array() && old->is_array()) {
      json some = json::array();
      for (size_t i = 0; i < v.size(); ++i)
        if (i >= old->size() || (*old)[i] != v[i]) some.push_back(v[i]);
      part[k] = std::move(some);
    } else {
      part[k] = v;  // an object (small: the approval, the review step) or a changed kind: whole
    }
  }
  auto errors = schema::validate(schema_name, part);
  if (!errors.empty()) return schema::describe(errors);
  if (schema_name == "execution-state") return duplicate_gate_id(after);
  return {};
}

// Documents this process has validated (read, or written after validation), by their exact
// bytes: reading the same bytes again skips the schema check, not the parse. A long-running
// reader (the watcher) rereads what it wrote itself; at 100 plans a phase, the check of a
// ledger was most of a review. Bounded, shared by threads.
class ValidatedBytes {
 public:
  bool has(const std::filesystem::path& p, const std::string& schema_name, const std::string& bytes) {
    std::lock_guard<std::mutex> g(m_);
    auto it = docs_.find(p);
    return it != docs_.end() && it->second.first == schema_name && it->second.second == bytes;
  }
  void put(const std::filesystem::path& p, const std::string& schema_name, const std::string& bytes) {
    if (bytes.size() > kMaxBytes) return;
    std::lock_guard<std::mutex> g(m_);
    if (docs_.size() >= kMaxDocs && !docs_.count(p)) docs_.erase(docs_.begin());
    docs_[p] = {schema_name, bytes};
  }

 private:
  static constexpr size_t kMaxDocs = 16, kMaxBytes = 1u << 20;
  std::mutex m_;
  std::map<std::filesystem::path, std::pair<std::string, std::string>> docs_;  // path -> (schema, bytes)
};

ValidatedBytes& validated() {
  static ValidatedBytes v;
  return v;
}

// The documents this process wrote last, by file, with the identity of the file it wrote
// (device, inode, size, times: rename gives every write a new inode). An update that finds
// the file as it left it (checked under the lock) starts from that document instead of
// reading and parsing the file again: a review pass that records 400 plans in batches
// would otherwise parse its own, growing ledger at every batch. Bounded, shared by threads.
class WrittenDocs {
 public:
  // A document this process wrote, and the text of each of its plan records as that write
  // serialised them (empty when the write did not keep them: see dump_state).
  struct Doc {
    json doc;
    std::vector<std::string> plan_texts;
  };
  // The document written to p, if p is still exactly the file written (the entry goes).
  std::optional<Doc> take(fs::Disk& disk, const std::filesystem::path& p, const std::string& schema_name) {
    std::string id = disk.stamp(p);
    std::lock_guard<std::mutex> g(m_);
    auto it = find(p, schema_name, id);
    if (it == docs_.end()) return std::nullopt;
    std::optional<Doc> d = std::move(it->second.doc);
    docs_.erase(it);
    return d;
  }
  // A copy of it, the entry kept (a read: copying the tree is a third of parsing the file).
  std::optional<json> peek(fs::Disk& disk, const std::filesystem::path& p, const std::string& schema_name) {
    std::string id = disk.stamp(p);
    std::lock_guard<std::mutex> g(m_);
    auto it = find(p, schema_name, id);
    if (it == docs_.end()) return std::nullopt;
    return it->second.doc.doc;
  }
  void put(const std::string& id, const std::filesystem::path& p, const std::string& schema_name, Doc doc,
           size_t bytes) {
    std::lock_guard<std::mutex> g(m_);
    docs_.erase(p);
    if (id.empty() || bytes > kMaxBytes) return;
    if (docs_.size() >= kMaxDocs) docs_.erase(docs_.begin());
    docs_.emplace(p, Entry{schema_name, id, std::move(doc)});
  }

 private:
  struct Entry {
    std::string schema;
    std::string id;  // Disk::stamp: device, inode, size, times (a memory disk: its number and write)
    Doc doc;
  };
  std::map<std::filesystem::path, Entry>::iterator find(const std::filesystem::path& p, const std::string& schema_name,
                                                        const std::string& id) {
    auto it = docs_.find(p);
    if (it == docs_.end() || id.empty() || it->second.schema != schema_name || it->second.id != id) return docs_.end();
    return it;
  }
  static constexpr size_t kMaxDocs = 4, kMaxBytes = 16u << 20;
  std::mutex m_;
  std::map<std::filesystem::path, Entry> docs_;
};

WrittenDocs& written() {
  static WrittenDocs w;
  return w;
}

LoadResult load_impl(fs::Disk& disk, const std::filesystem::path& path, const std::string& schema_name) {
  LoadResult r;
  auto read = disk.read(path, kMaxStateBytes, true);
  if (!read.ok()) {
    if (read.error->kind == fs::FileError::Kind::NotFound) return r;
    r.error = read.error->message;
    if (read.error->kind != fs::FileError::Kind::Io) {
      auto raw = disk.read(path, kMaxStateBytes * 4, false);
      if (raw.ok()) r.kept_copy = keep_copy(disk, path, raw.content);
    }
    return r;
  }
  r.exists = true;
  JsonParse parsed = parse_json_bounded(read.content);
  if (!parsed.ok()) {
    r.error = path.string() + ": " + parsed.message + "; the runner will not overwrite it";
    r.kept_copy = keep_copy(disk, path, read.content);
    r.error += " (copy kept at " + r.kept_copy + ")";
    return r;
  }
  if (!validated().has(path, schema_name, read.content)) {
    if (std::string v = validate_with(schema_name, parsed.doc); !v.empty()) {
      r.error = path.string() + ": does not match schema " + schema_name + ": " + v;
      r.kept_copy = keep_copy(disk, path, read.content);
      r.error += " (copy kept at " + r.kept_copy + ")";
      return r;
    }
    validated().put(path, schema_name, read.content);
  }
  r.doc = std::move(parsed.doc);
  return r;
}

}  // namespace

std::filesystem::path state_path(const std::filesystem::path& root) {
  return root / ".yolo-planning" / ".execution-state.json";
}

std::filesystem::path lock_path(const std::filesystem::path& root) { return root / ".yolo-planning" / ".lock"; }

Status validate(const json& doc) { return Status{validate_with("execution-state", doc)}; }

Status validate_changed_plans(const json& doc, const std::vector<size_t>& plan_indexes) {
  if (!doc.is_object()) return validate(doc);
  json part = json::object();
  for (const auto& [k, v] : doc.items())
    if (k != "plans") part[k] = v;
  auto plans = doc.find("plans");
  if (plans != doc.end()) {
    if (!plans->is_array()) return validate(doc);
    json some = json::array();
    for (size_t i : plan_indexes)
      if (i < plans->size()) some.push_back((*plans)[i]);
    part["plans"] = std::move(some);
  }
  auto errors = schema::validate("execution-state", part);
  if (!errors.empty()) return Status::fail(schema::describe(errors));
  return Status{duplicate_gate_id(doc)};
}

LoadResult load(const World& w, const std::filesystem::path& root) {
  const std::filesystem::path file = state_path(root);
  // The file as this process last wrote it (same identity): its document, not a parse of it.
  if (auto mine = written().peek(w.files(), file, "execution-state")) {
    LoadResult r;
    r.exists = true;
    r.doc = std::move(*mine);
    return r;
  }
  return load_impl(w.files(), file, "execution-state");
}

LoadResult load_document(const World& w, const std::filesystem::path& file, const std::string& schema_name) {
  return load_impl(w.files(), file, schema_name);
}

UpdateResult update(const World& w, const std::filesystem::path& root,
                    const std::function<Change(json& doc)>& fn,
                    const std::function<Status(const json& doc)>& check) {
  return update_document(w, root, state_path(root), "execution-state", fn, check);
}

namespace {

// A plan record's text as it sits in the state's "plans" array: its dump(2), each line indented
// four more spaces (strings are dumped with their newlines escaped, so every newline of the
// dump is one of its lines).
std::string record_text(const json& record) {
  const std::string t = record.dump(2);
  std::string out;
  out.reserve(t.size() + t.size() / 8);
  for (char c : t) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

// doc.dump(2) + "\n", with the records of doc["plans"] serialised from `texts`: the texts of the
// records at the indexes in `changed` are made again (all of them when the counts differ), the
// others are the previous write's. The rest of the document is serialised with its "plans" set
// aside: that key, indented two spaces at the start of a line, can only be the document's own.
std::string dump_state(json& doc, std::vector<std::string>& texts, const std::vector<size_t>& changed) {
  auto plans = doc.is_object() ? doc.find("plans") : doc.end();
  if (!doc.is_object() || plans == doc.end() || !plans->is_array()) {
    texts.clear();
    return doc.dump(2) + "\n";
  }
  const size_t n = plans->size();
  if (texts.size() != n) {
    texts.assign(n, std::string());
    for (size_t i = 0; i < n; ++i) texts[i] = record_text((*plans)[i]);
  } else {
    for (size_t i : changed)
      if (i < n) texts[i] = record_text((*plans)[i]);
  }
  json records = std::move(*plans);
  *plans = nullptr;
  std::string head = doc.dump(2);
  *plans = std::move(records);
  static const std::string kKey = "\n  \"plans\": null";
  const size_t at = head.find(kKey);
  if (at == std::string::npos) return doc.dump(2) + "\n";  // cannot happen: the whole dump then
  size_t bytes = head.size() + 8;
  for (const auto& t : texts) bytes += t.size() + 6;
  std::string out;
  out.reserve(bytes);
  out.append(head, 0, at + kKey.size() - 4);  // up to the placeholder's "null"
  if (n == 0) {
    out += "[]";
  } else {
    out += "[\n";
    for (size_t i = 0; i < n; ++i) {
      out += "    ";
      out += texts[i];
      out += i + 1 < n ? ",\n" : "\n";
    }
    out += "  ]";
  }
  out.append(head, at + kKey.size(), std::string::npos);
  out += '\n';
  // Debug builds (the sanitizer suite runs every execute test with them) prove the texts
  // kept: a record changed without its index in `changed` would be written stale.
  assert(out == doc.dump(2) + "\n" && "a plan record changed without being named as changed");
  return out;
}

// The one read-modify-write (update, update_plan_records, update_document). For the plans'
// records (`fn_records`), fn changes the document as read and names the records it changed;
// the document is not copied first nor compared with the original after, and a refused
// change reads the file again for r.doc (under the lock, it is the file as it was).
UpdateResult update_impl(
    const World& w, const std::filesystem::path& root, const std::filesystem::path& file,
    const std::string& schema_name, const std::function<Change(json& doc)>& fn,
    const std::function<Change(json& doc, std::vector<size_t>& changed)>& fn_records,
    const std::function<Status(const json& doc)>& check, const std::function<void()>& after_write) {
  UpdateResult r;
  fs::Disk& disk = w.files();
  if (!disk.is_directory(root / ".yolo-planning")) {
    r.error = (root / ".yolo-planning").string() + ": no such folder (not a yolo project)";
    return r;
  }
  auto lock = disk.lock(lock_path(root));  // exclusive, for the read-modify-write
  if (!lock.ok()) {
    r.error = lock.error;
    return r;
  }
  // Writers that died between creating their temp file and renaming it leave it behind.
  disk.remove_stale_temp_files(file.parent_path());
  LoadResult cur;
  std::vector<std::string> texts;  // the plan records' texts of the document as this process wrote it
  if (auto mine = written().take(disk, file, schema_name)) {
    cur.exists = true;
    cur.doc = std::move(mine->doc);
    texts = std::move(mine->plan_texts);
  } else {
    cur = load_impl(disk, file, schema_name);
  }
  if (!cur.ok()) {
    r.error = cur.error;
    return r;
  }
  const bool in_place = static_cast<bool>(fn_records);
  json copy;
  if (!in_place) copy = cur.doc;
  json& doc = in_place ? cur.doc : copy;
  // The document as the file holds it, for a refused change.
  auto as_it_was = [&]() -> json {
    if (!in_place) return cur.doc;
    LoadResult again = load_impl(disk, file, schema_name);
    return again.ok() ? std::move(again.doc) : json();
  };
  std::vector<size_t> records;
  if (Change c = in_place ? fn_records(doc, records) : fn(doc); !c.ok() || !*c) {
    r.doc = as_it_was();
    r.error = c.error;
    return r;
  }
  if (!in_place && cur.exists && doc == cur.doc) {  // nothing changed: no write, no event for watchers
    r.stamp = disk.stamp(file);
    written().put(r.stamp, file, schema_name, {doc, {}}, 0);
    r.doc = std::move(doc);
    return r;
  }
  if (Status v = check        ? check(doc)
                 : in_place   ? validate_changed_plans(doc, records)
                 : cur.exists ? Status{validate_changes(schema_name, cur.doc, doc)}
                              : Status{validate_with(schema_name, doc)};
      !v.ok()) {
    r.doc = as_it_was();
    r.error = file.string() + ": update refused, the result would not match schema " + schema_name + ": " + v.error;
    return r;
  }
  // A file made read-only on purpose is not replaced behind the owner's back (rename would
  // do it: it needs only the folder to be writable).
  if (disk.read_only(file)) {
    r.doc = as_it_was();
    r.error = file.string() +
              ": is read-only; yolo will not replace it (make it writable with chmod u+w to let yolo update it)";
    return r;
  }
  if (!disk.is_directory(file.parent_path())) (void)disk.make_dirs(file.parent_path());  // write_atomic says why
  if (!in_place) texts.clear();
  std::string text = in_place ? dump_state(doc, texts, records) : doc.dump(2) + "\n";
  if (Status s = disk.write_atomic(file, text); !s.ok()) {
    r.doc = as_it_was();
    r.error = s.error;
    return r;
  }
  validated().put(file, schema_name, text);
  if (after_write) after_write();
  r.stamp = disk.stamp(file);
  r.written = true;
  if (in_place) {
    // The caller gets the document without its records; the whole of it, with the records'
    // texts, stays here for the next write (no copy of the plans).
    r.doc = json::object();
    for (const auto& [k, v] : doc.items())
      if (k != "plans") r.doc[k] = v;
    written().put(r.stamp, file, schema_name, {std::move(doc), std::move(texts)}, text.size());
    return r;
  }
  written().put(r.stamp, file, schema_name, {doc, {}}, text.size());
  r.doc = std::move(doc);
  return r;
}

}  // namespace

UpdateResult update_document(const World& w, const std::filesystem::path& root, const std::filesystem::path& file,
                             const std::string& schema_name, const std::function<Change(json& doc)>& fn,
                             const std::function<Status(const json& doc)>& check,
                             const std::function<void()>& after_write) {
  return update_impl(w, root, file, schema_name, fn, nullptr, check, after_write);
}

UpdateResult update_plan_records(
    const World& w, const std::filesystem::path& root,
    const std::function<Change(json& doc, std::vector<size_t>& changed)>& fn) {
  return update_impl(w, root, state_path(root), "execution-state", nullptr, fn, nullptr, nullptr);
}

}  // namespace yolo::state
