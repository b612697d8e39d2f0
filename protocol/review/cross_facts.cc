#include "protocol/review/cross_facts.h"

#include "protocol/gates/gate_coverage.h"
#include "protocol/base/seal.h"
#include "protocol/review/verified_cache.h"

namespace yolo::cross_facts {

namespace stdfs = std::filesystem;

namespace {

constexpr char kItem = '\x1f';  // starts each item of a list (never raw inside a field)

// '\\', control bytes and DEL as \HH: a field never holds a raw tab, newline or kItem.
void escape_to(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u == '\\' || u < 0x20 || u == 0x7f) {
      out += '\\';
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
}
std::string escape(std::string_view s) {
  std::string out;
  escape_to(out, s);
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
std::optional<std::string> unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int a = hex_value(s[i + 1]), b = hex_value(s[i + 2]);
    if (a < 0 || b < 0) return std::nullopt;
    out += static_cast<char>(a * 16 + b);
    i += 2;
  }
  return out;
}

// Splits s at `sep` into exactly n parts (the last one takes the rest); nullopt otherwise.
std::optional<std::vector<std::string_view>> split(std::string_view s, char sep, size_t n) {
  std::vector<std::string_view> parts;
  parts.reserve(n);
  while (parts.size() + 1 < n) {
    size_t at = s.find(sep);
    if (at == std::string_view::npos) return std::nullopt;
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  parts.push_back(s);
  return parts;
}

// A list as kItem-led items: "" is no item, kItem alone one empty item.
std::optional<std::vector<std::string>> items(std::string_view s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  if (s.front() != kItem) return std::nullopt;
  s.remove_prefix(1);
  while (true) {
    size_t at = s.find(kItem);
    auto item = unescape(s.substr(0, at));
    if (!item) return std::nullopt;
    out.push_back(std::move(*item));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::optional<long long> number(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  bool neg = s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
}

// `dir` as an absolute, lexically normal path without a trailing separator.
stdfs::path folder_path(const stdfs::path& dir) {
  std::error_code ec;
  stdfs::path p = stdfs::absolute(dir, ec).lexically_normal();
  if (p.has_relative_path() && p.filename().empty()) p = p.parent_path();
  return p;
}

}  // namespace

// Fields, tab-separated: content hash, has_frontmatter (0/1), frontmatter error ("" or
// line:column:message), phase, plan, wave ("" when none), depends_on, files (each item its
// glob flag, g or -, then the path).
std::string encode(const Plan& p) {
  std::string out;
  out.reserve(160);
  escape_to(out, p.content_hash);
  out += '\t';
  out += p.has_frontmatter ? '1' : '0';
  out += '\t';
  if (p.frontmatter_error) {
    out += std::to_string(p.frontmatter_error->line) + ":" + std::to_string(p.frontmatter_error->column) + ":";
    escape_to(out, p.frontmatter_error->message);
  }
  out += '\t';
  escape_to(out, p.phase);
  out += '\t';
  escape_to(out, p.plan);
  out += '\t';
  if (p.wave) out += std::to_string(*p.wave);
  out += '\t';
  for (const auto& d : p.depends_on) {
    out += kItem;
    escape_to(out, d);
  }
  out += '\t';
  for (const auto& f : p.files) {
    out += kItem;
    out += f.is_glob ? 'g' : '-';
    escape_to(out, f.path);
  }
  return out;
}

std::optional<Plan> decode(std::string_view fields, const std::string& path) {
  auto parts = split(fields, '\t', 8);
  if (!parts) return std::nullopt;
  const auto& f = *parts;
  Plan p;
  p.path = path;
  auto hash = unescape(f[0]);
  auto phase = unescape(f[3]);
  auto plan = unescape(f[4]);
  auto deps = items(f[6]);
  auto files = items(f[7]);
  if (!hash || !phase || !plan || !deps || !files || (f[1] != "0" && f[1] != "1")) return std::nullopt;
  p.content_hash = std::move(*hash);
  p.has_frontmatter = f[1] == "1";
  if (!f[2].empty()) {
    auto e = split(f[2], ':', 3);
    if (!e) return std::nullopt;
    auto line = number((*e)[0]), column = number((*e)[1]);
    auto message = unescape((*e)[2]);
    if (!line || !column || !message) return std::nullopt;
    p.frontmatter_error = FrontmatterError{static_cast<int>(*line), static_cast<int>(*column), std::move(*message)};
  }
  p.phase = std::move(*phase);
  p.plan = std::move(*plan);
  if (!f[5].empty()) {
    auto wave = number(f[5]);
    if (!wave) return std::nullopt;
    p.wave = *wave;
  }
  p.depends_on = std::move(*deps);
  for (auto& item : *files) {
    if (item.empty() || (item[0] != 'g' && item[0] != '-')) return std::nullopt;
    FileRef r;
    r.is_glob = item[0] == 'g';
    r.path = item.substr(1);
    p.files.push_back(std::move(r));
  }
  return p;
}

bool usable(const World& w, const stdfs::path& root) {
  const seal::Key& k = w.checking_key();
  return k.ok() && !k.bytes.empty() && w.files().identity(root);
}

Store::Store(const World& w, const stdfs::path& phase_dir, size_t max_bytes)
    : w_(w), dir_(phase_dir), max_bytes_(max_bytes) {
  stdfs::path dir = folder_path(phase_dir);
  stdfs::path phases = dir.parent_path();
  if (dir.filename().empty() || phases.filename() != "phases" || phases.parent_path().filename() != ".yolo-planning")
    return;  // not a project's phase folder
  const seal::Key& k = w.checking_key();
  if (!k.ok() || k.bytes.empty()) return;
  if (!w.files().identity(dir)) return;  // a disk that cannot tell identities
  stdfs::path root = phases.parent_path().parent_path();
  folder_ = dir.filename().string();
  file_ = root / ".yolo-planning" / ".cache" / "stage1" / (folder_ + ".facts");
  project_ = gates::project_id(w, root);
  enabled_ = true;
  auto sealed = verified_cache::read_sealed(w, file_, kFormat, false);
  if (!sealed) return;  // none, edited, another key
  std::string_view body = *sealed;
  size_t eol = body.find('\n');
  if (eol == std::string_view::npos || body.substr(0, eol) != header()) return;  // another project's, folder's, format
  body.remove_prefix(eol + 1);
  std::map<std::string, Entry> entries;
  while (!body.empty()) {
    eol = body.find('\n');
    if (eol == std::string_view::npos) return;  // sealed, so never cut: not ours
    auto parts = split(body.substr(0, eol), '\t', 3);
    body.remove_prefix(eol + 1);
    if (!parts) return;
    auto name = unescape((*parts)[0]);
    if (!name) return;
    entries[std::move(*name)] = Entry{std::string((*parts)[1]), std::string((*parts)[2])};
  }
  entries_ = std::move(entries);
  loaded_ = true;
}

std::string Store::header() const {
  return std::string(kFormat) + '\t' + escape(project_) + '\t' + escape(folder_) + '\t' + std::to_string(max_bytes_);
}

std::optional<Plan> Store::find_with(const stdfs::path& file, const std::string& id) {
  std::string name = file.filename().string();
  used_.insert(name);  // a plan of the folder: kept by save(prune)
  auto it = entries_.find(name);
  if (it != entries_.end() && it->second.id == id)
    if (auto p = decode(it->second.fields, file.string())) {
      ++hits_;
      return p;
    }
  ++misses_;
  return std::nullopt;
}

std::optional<Plan> Store::find(const stdfs::path& file) {
  if (!enabled_) return std::nullopt;
  auto id = w_.files().identity(file);
  if (!id || id->directory) return std::nullopt;
  return find_with(file, verified_cache::identity_string(id));
}

PlanLoad Store::load(const stdfs::path& file, PlanCache* cache) {
  if (!enabled_) return cache ? cache->load_sibling(w_, file, max_bytes_) : load_plan(w_, file, max_bytes_);
  auto before = w_.files().identity(file);
  std::string id = verified_cache::identity_string(before);
  if (before && !before->directory)
    if (auto p = find_with(file, id)) return PlanLoad{std::move(p), "", false};
  // Read here, between the two identities: a cache's copy could be of a racy moment.
  if (cache)
    if (auto kept = cache->cached(w_, file, max_bytes_)) return std::move(*kept);
  return read(file, before, id);
}

std::vector<std::pair<stdfs::path, PlanLoad>> Store::load_folder(PlanCache* cache) {
  std::vector<std::pair<stdfs::path, PlanLoad>> out;
  fs::Disk& disk = w_.files();
  if (!enabled_) {
    for (auto& f : list_plan_files(w_, dir_))
      out.emplace_back(f, cache ? cache->load_sibling(w_, f, max_bytes_) : load_plan(w_, f, max_bytes_));
    return out;
  }
  // list_plan_files, with the stat of a plan the store knows standing for its is_file: a file
  // with the identity a regular file had is that file.
  for (const auto& name : disk.list(dir_)) {
    if (!is_plan_filename(name)) continue;
    stdfs::path f = dir_ / name;
    auto before = disk.identity(f);
    if (!before || before->directory) continue;
    std::string id = verified_cache::identity_string(before);
    if (auto p = find_with(f, id)) {
      out.emplace_back(std::move(f), PlanLoad{std::move(p), "", false});
      continue;
    }
    if (!disk.is_file(f)) continue;
    std::optional<PlanLoad> kept;
    if (cache) kept = cache->cached(w_, f, max_bytes_);
    PlanLoad l = kept ? std::move(*kept) : read(f, before, id);
    out.emplace_back(std::move(f), std::move(l));
  }
  return out;  // in list()'s order of names: list_plan_files' order of paths in one folder
}

PlanLoad Store::read(const stdfs::path& file, const std::optional<fs::FileId>& before, const std::string& id) {
  PlanLoad l = load_plan(w_, file, max_bytes_);
  if (!l.plan || !before || before->directory) return l;
  auto racy = verified_cache::racy_since_ns(w_);
  auto after = w_.files().identity(file);
  // Changed while it was read, or so recently that a write in the same tick could leave
  // its identity as it is: not remembered (a stale entry stays: it is a miss anyway).
  if (!racy || verified_cache::identity_string(after) != id || before->ctime_ns >= *racy) return l;
  std::string fields = encode(*l.plan);
  auto& e = entries_[file.filename().string()];
  if (e.id != id || e.fields != fields) {
    e = Entry{id, std::move(fields)};
    changed_ = true;
  }
  return l;
}

Status Store::save(bool prune) {
  if (!enabled_) return {};
  if (prune)
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (!used_.count(it->first)) {
        it = entries_.erase(it);
        changed_ = true;
      } else {
        ++it;
      }
    }
  if (!changed_) return {};
  const seal::Key& k = w_.checking_key();
  if (!k.ok()) return {};
  std::string body = header() + '\n';
  body.reserve(body.size() + entries_.size() * 200);
  for (const auto& [name, e] : entries_) {
    escape_to(body, name);
    body += '\t';
    body += e.id;
    body += '\t';
    body += e.fields;
    body += '\n';
  }
  if (Status s = verified_cache::write_sealed(w_, file_, kFormat, body); !s.ok()) return s;
  changed_ = false;
  loaded_ = true;
  return {};
}

}  // namespace yolo::cross_facts
