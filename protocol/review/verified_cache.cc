#include "protocol/review/verified_cache.h"

#include <charconv>
#include <ctime>

#include "protocol/gates/gate_coverage.h"
#include "protocol/base/seal.h"

namespace yolo::verified_cache {

namespace stdfs = std::filesystem;

namespace {
constexpr const char* kDomain = "yolo-verified-cache-v1";

// Seconds since the epoch of an ISO 8601 UTC time (2026-11-22T04:51:16Z); nullopt if not.
std::optional<long long> epoch_of(const std::string& iso) {
  std::tm tm{};
  if (iso.size() < 19 || !strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  return static_cast<long long>(timegm(&tm));
}

}  // namespace

std::optional<long long> racy_since_ns(const World& w) {
  auto now = epoch_of(w.now());
  if (!now) return std::nullopt;
  return (*now - kRacySeconds) * 1000000000LL;
}

std::optional<std::string> read_sealed(const World& w, const stdfs::path& file, std::string_view domain, bool text) {
  const seal::Key& k = w.checking_key();
  if (!k.ok() || k.bytes.empty()) return std::nullopt;
  auto r = w.files().read(file, 64u << 20, text);
  if (!r.ok()) return std::nullopt;
  size_t nl = r.content.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string body = r.content.substr(nl + 1);
  if (!seal::check_bytes(domain, body, r.content.substr(0, nl), k)) return std::nullopt;
  return body;
}

Status write_sealed(const World& w, const stdfs::path& file, std::string_view domain, const std::string& body) {
  const seal::Key& k = w.checking_key();
  if (!k.ok()) return {};
  if (Status s = w.files().make_dirs(file.parent_path()); !s.ok()) return s;
  return w.files().write_atomic(file, seal::seal_bytes(domain, body, k) + "\n" + body);
}

std::string identity_string(const std::optional<fs::FileId>& id) {
  if (!id) return "-";
  // dev:ino:size:mtime:ctime:kind, without a temporary per number (once per file looked up).
  std::string out;
  out.reserve(64);
  auto num = [&](auto v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
    out += ':';
  };
  num(id->dev);
  num(id->ino);
  num(id->size);
  num(id->mtime_ns);
  num(id->ctime_ns);
  out += id->directory ? 'd' : 'f';
  return out;
}

Cache::Cache(const World& w, const stdfs::path& root, const std::string& name)
    : w_(w), file_(root / ".yolo-planning" / ".cache" / (name + ".json")), name_(name) {
  const seal::Key& k = w.checking_key();
  if (!k.ok() || k.bytes.empty()) return;
  if (!w.files().identity(root)) return;  // a disk that cannot tell identities
  enabled_ = true;
  project_ = gates::project_id(w, root);
  auto body = read_sealed(w, file_, kDomain, true);
  if (!body) return;  // none, edited, copied with another key
  json doc = json::parse(*body, nullptr, false);
  if (!doc.is_object() || doc.value("project", "") != project_ || doc.value("name", "") != name_ ||
      !doc.contains("entries") || !doc["entries"].is_object())
    return;  // another project's (sealed by the same user's key) or another cache's
  entries_ = std::move(doc["entries"]);
  loaded_ = true;
}

std::optional<std::vector<std::string>> Cache::identities(const std::vector<stdfs::path>& files) const {
  if (!enabled_) return std::nullopt;
  std::vector<std::string> ids;
  ids.reserve(files.size());
  for (const auto& f : files) ids.push_back(identity_string(w_.files().identity(f)));
  return ids;
}

const json* Cache::find(const std::string& key, const std::vector<std::string>& ids) {
  if (!enabled_) return nullptr;
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->is_object()) {
    ++misses_;
    return nullptr;
  }
  const json& e = *it;
  auto id = e.find("ids");
  auto v = e.find("value");
  bool match = id != e.end() && v != e.end() && id->is_array() && id->size() == ids.size();
  for (size_t i = 0; match && i < ids.size(); ++i)
    match = (*id)[i].is_string() && (*id)[i].get_ref<const std::string&>() == ids[i];
  if (!match) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  used_.insert(key);
  return &*v;
}

bool Cache::put(const std::string& key, const std::vector<std::string>& ids_before,
                const std::vector<stdfs::path>& files, json value) {
  if (!enabled_ || ids_before.size() != files.size()) return false;
  used_.insert(key);  // a phase that exists: kept by save(prune) even when not remembered now
  auto racy = racy_since_ns(w_);
  if (!racy) return false;
  for (size_t i = 0; i < files.size(); ++i) {
    auto id = w_.files().identity(files[i]);
    if (identity_string(id) != ids_before[i]) return false;  // changed while the answer was computed
    // Racy: changed so recently that a write in the same tick could leave the identity as is.
    if (id && id->ctime_ns >= *racy) return false;
  }
  json e = {{"ids", ids_before}, {"value", std::move(value)}};
  auto it = entries_.find(key);
  if (it != entries_.end() && *it == e) return true;
  entries_[key] = std::move(e);
  changed_ = true;
  return true;
}

Status Cache::save(bool prune) {
  if (!enabled_) return {};
  if (prune) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (!used_.count(it.key())) {
        it = entries_.erase(it);
        changed_ = true;
      } else {
        ++it;
      }
    }
  }
  if (!changed_ && loaded_) return {};
  if (!changed_ && entries_.empty()) return {};  // nothing worth a file
  if (!w_.checking_key().ok()) return {};
  json doc = {{"project", project_}, {"name", name_}, {"entries", entries_}};
  if (Status s = write_sealed(w_, file_, kDomain, doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
      !s.ok())
    return s;
  changed_ = false;
  loaded_ = true;
  return {};
}

}  // namespace yolo::verified_cache
