#include "protocol/state.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "protocol/clock.h"
#include "protocol/file_lock.h"
#include "protocol/fs.h"
#include "protocol/schema.h"
#include "protocol/sha256.h"

namespace yolo::state {
namespace {

constexpr size_t kMaxStateBytes = 16u << 20;

// The pid in a temp file name `.<file>.tmp.<pid>.<n>` of fs::write_atomic, or 0.
pid_t temp_file_writer(std::string_view name) {
  if (name.size() < 2 || name.front() != '.') return 0;
  size_t at = name.rfind(".tmp.");
  if (at == std::string_view::npos || at < 2) return 0;
  std::string_view rest = name.substr(at + 5);
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return 0;
  for (char c : rest.substr(dot + 1))
    if (c < '0' || c > '9') return 0;
  long long pid = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (ec != std::errc() || p != rest.data() + dot || pid <= 0 || pid > INT_MAX) return 0;
  return static_cast<pid_t>(pid);
}

// One copy per distinct content, named by its hash: reading the same broken file again (every
// `yolo status`) makes no new copy, and two different contents never share a name.
std::string keep_copy(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::path copy = path;
  copy += ".corrupt-" + sha256_hex(content).substr(0, 16);
  std::error_code ec;
  if (!std::filesystem::exists(copy, ec)) fs::write_atomic(copy, content);
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
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  long long mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> file_id(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileId{st.st_dev, st.st_ino, st.st_size,
                static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
                static_cast<long long>(st.st_ctim.tv_sec) * 1000000000LL + st.st_ctim.tv_nsec};
}

class WrittenDocs {
 public:
  // The document written to p, if p is still exactly the file written.
  std::optional<json> take(const std::filesystem::path& p, const std::string& schema_name) {
    auto id = file_id(p);
    std::lock_guard<std::mutex> g(m_);
    auto it = docs_.find(p);
    if (it == docs_.end() || !id || it->second.schema != schema_name || !(it->second.id == *id)) return std::nullopt;
    std::optional<json> d = std::move(it->second.doc);
    docs_.erase(it);
    return d;
  }
  void put(const std::filesystem::path& p, const std::string& schema_name, const json& doc, size_t bytes) {
    auto id = file_id(p);
    std::lock_guard<std::mutex> g(m_);
    docs_.erase(p);
    if (!id || bytes > kMaxBytes) return;
    if (docs_.size() >= kMaxDocs) docs_.erase(docs_.begin());
    docs_.emplace(p, Entry{schema_name, *id, doc});
  }

 private:
  static constexpr size_t kMaxDocs = 4, kMaxBytes = 16u << 20;
  struct Entry {
    std::string schema;
    FileId id;
    json doc;
  };
  std::mutex m_;
  std::map<std::filesystem::path, Entry> docs_;
};

WrittenDocs& written() {
  static WrittenDocs w;
  return w;
}

LoadResult load_impl(const std::filesystem::path& path, const std::string& schema_name) {
  LoadResult r;
  auto read = fs::read_text(path, kMaxStateBytes);
  if (!read.ok()) {
    if (read.error->kind == fs::FileError::Kind::NotFound) return r;
    r.error = read.error->message;
    if (read.error->kind != fs::FileError::Kind::Io) {
      auto raw = fs::read_bytes(path, kMaxStateBytes * 4);
      if (raw.ok()) r.kept_copy = keep_copy(path, raw.content);
    }
    return r;
  }
  r.exists = true;
  JsonParse parsed = parse_json_bounded(read.content);
  if (!parsed.ok()) {
    r.error = path.string() + ": " + parsed.message + "; the runner will not overwrite it";
    r.kept_copy = keep_copy(path, read.content);
    r.error += " (copy kept at " + r.kept_copy + ")";
    return r;
  }
  if (!validated().has(path, schema_name, read.content)) {
    if (std::string v = validate_with(schema_name, parsed.doc); !v.empty()) {
      r.error = path.string() + ": does not match schema " + schema_name + ": " + v;
      r.kept_copy = keep_copy(path, read.content);
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

std::string validate(const json& doc) { return validate_with("execution-state", doc); }

LoadResult load(const std::filesystem::path& root) { return load_impl(state_path(root), "execution-state"); }

LoadResult load_document(const std::filesystem::path& file, const std::string& schema_name) {
  return load_impl(file, schema_name);
}

size_t remove_stale_temp_files(const std::filesystem::path& dir) {
  size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = temp_file_writer(it->path().filename().string());
    if (pid == 0) continue;
    // Alive (or someone else's: EPERM) => its writer may still rename it into place.
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code tec;
    auto st = it->symlink_status(tec);
    if (tec || !std::filesystem::is_regular_file(st)) continue;
    if (std::filesystem::remove(it->path(), tec)) ++removed;
  }
  return removed;
}

UpdateResult update(const std::filesystem::path& root, const std::function<bool(json& doc, std::string& err)>& fn) {
  return update_document(root, state_path(root), "execution-state", fn);
}

UpdateResult update_document(const std::filesystem::path& root, const std::filesystem::path& file,
                             const std::string& schema_name, const std::function<bool(json& doc, std::string& err)>& fn,
                             const std::function<std::string(const json& doc)>& check) {
  UpdateResult r;
  std::error_code ec;
  if (!std::filesystem::is_directory(root / ".yolo-planning", ec)) {
    r.error = (root / ".yolo-planning").string() + ": no such folder (not a yolo project)";
    return r;
  }
  fs::FileLock lock(lock_path(root));  // exclusive, for the read-modify-write
  if (!lock.error().empty()) {
    r.error = lock.error();
    return r;
  }
  // Writers that died between creating their temp file and renaming it leave it behind.
  remove_stale_temp_files(file.parent_path());
  LoadResult cur;
  if (auto mine = written().take(file, schema_name)) {
    cur.exists = true;
    cur.doc = std::move(*mine);
  } else {
    cur = load_impl(file, schema_name);
  }
  if (!cur.ok()) {
    r.error = cur.error;
    return r;
  }
  json doc = cur.doc;
  std::string err;
  if (!fn(doc, err)) {
    r.doc = cur.doc;
    r.error = err;
    return r;
  }
  if (cur.exists && doc == cur.doc) {  // nothing changed: no write, no event for watchers
    written().put(file, schema_name, doc, 0);
    r.doc = std::move(doc);
    return r;
  }
  if (std::string v = check ? check(doc) : validate_with(schema_name, doc); !v.empty()) {
    r.doc = cur.doc;
    r.error = file.string() + ": update refused, the result would not match schema " + schema_name + ": " + v;
    return r;
  }
  // A file made read-only on purpose is not replaced behind the owner's back (rename would
  // do it: it needs only the folder to be writable).
  if (auto st = std::filesystem::status(file, ec);
      !ec && std::filesystem::is_regular_file(st) &&
      (st.permissions() & std::filesystem::perms::owner_write) == std::filesystem::perms::none) {
    r.doc = cur.doc;
    r.error = file.string() +
              ": is read-only; yolo will not replace it (make it writable with chmod u+w to let yolo update it)";
    return r;
  }
  ec.clear();
  if (!std::filesystem::is_directory(file.parent_path(), ec))
    std::filesystem::create_directories(file.parent_path(), ec);
  std::string text = doc.dump(2) + "\n";
  if (std::string w = fs::write_atomic(file, text); !w.empty()) {
    r.doc = cur.doc;
    r.error = w;
    return r;
  }
  validated().put(file, schema_name, text);
  written().put(file, schema_name, doc, text.size());
  r.doc = std::move(doc);
  r.written = true;
  return r;
}

}  // namespace yolo::state
