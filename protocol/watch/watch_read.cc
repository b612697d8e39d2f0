#include "protocol/watch/watch_read.h"

#include "protocol/review/cross_facts.h"
#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/review_loop.h"
#include "protocol/review/stage1.h"

namespace yolo::watch {

namespace stdfs = std::filesystem;

// ---- Digests ------------------------------------------------------------------------

namespace {
// The map key of a path: its text, with "//" and "/./" folded (the paths compared are built
// the same way; this keeps a stray separator from making two keys of one file).
std::string key_of(const stdfs::path& p) {
  const std::string& s = p.native();
  if (s.find("//") == std::string::npos && s.find("/./") == std::string::npos) return s;
  return p.lexically_normal().native();
}
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> Digests::get(const stdfs::path& p) const {
  std::string k = key_of(p);
  auto it = map_.find(k);
  if (it == map_.end()) return std::nullopt;
  if (it->second.kind == 0) return std::string();
  if (it->second.kind == 2) return odd_.at(k);
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (int i = 0; i < 32; ++i) {
    s[2 * i] = hex[it->second.d[i] >> 4];
    s[2 * i + 1] = hex[it->second.d[i] & 15];
  }
  return s;
}

void Digests::set(const stdfs::path& p, std::string_view hash) {
  std::string k = key_of(p);
  Val v;
  if (hash.empty()) {
    v.kind = 0;
  } else {
    bool ok = hash.size() == 64;
    for (size_t i = 0; ok && i < 32; ++i) {
      int a = hex_digit(hash[2 * i]), b = hex_digit(hash[2 * i + 1]);
      ok = a >= 0 && b >= 0;
      if (ok) v.d[i] = static_cast<unsigned char>(a * 16 + b);
    }
    v.kind = ok ? 1 : 2;
  }
  if (v.kind == 2)
    odd_[k] = std::string(hash);
  else
    odd_.erase(k);
  map_[std::move(k)] = v;
}

bool Digests::erase(const stdfs::path& p) {
  std::string k = key_of(p);
  odd_.erase(k);
  return map_.erase(k) > 0;
}

void Digests::erase_if(const std::function<bool(const stdfs::path&)>& gone,
                       const std::function<void(const stdfs::path&)>& removed) {
  for (auto it = map_.begin(); it != map_.end();) {
    stdfs::path p = it->first;
    if (gone(p)) {
      removed(p);
      odd_.erase(it->first);
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<stdfs::path> Digests::paths(size_t max) const {
  std::vector<stdfs::path> out;
  for (const auto& [k, _] : map_) {
    if (out.size() >= max) break;
    out.emplace_back(k);
  }
  return out;
}

// ---- ledgers and phases, read through the World ---------------------------------------

// The bytes of a ledger and its journal (protocol/review/review_ledger.h) as one number; nullopt
// when the ledger cannot be read.
std::optional<size_t> ledger_fingerprint(const World& w, const stdfs::path& file) {
  auto bytes = w.files().read(file, 16u << 20, /*text=*/false);
  if (!bytes.ok()) return std::nullopt;
  size_t h = std::hash<std::string>{}(bytes.content);
  if (auto j = w.files().read(review_ledger::journal_for(file), 16u << 20, false); j.ok() && !j.content.empty())
    h = h * 1000003u ^ std::hash<std::string>{}(j.content);
  return h;
}

LedgerRead read_ledger(const World& w, const stdfs::path& file) {
  LedgerRead r;
  r.fingerprint = ledger_fingerprint(w, file);
  if (!r.fingerprint) return r;
  auto l = review_ledger::load_file(w, file);
  if (!l.ok()) {
    r.error = l.error;
    r.fingerprint.reset();
    return r;
  }
  // By plan id, not by the path a record was made at (watch::ReviewRecords says why).
  if (auto it = l.doc.find("reviews"); it != l.doc.end() && it->is_object())
    for (const auto& [id, rec] : it->items())
      if (rec.is_object() && rec.contains("hash") && rec["hash"].is_string())
        r.records.emplace_back(id, rec["hash"].get<std::string>());
  return r;
}

LearntPhase learn_phase(const World& w, const stdfs::path& root, const stdfs::path& dir, bool plans_only) {
  LearntPhase out;
  out.dir = dir;
  out.plans_only = plans_only;
  if (!plans_only) out.ledger = read_ledger(w, review_ledger::path_for(root, dir));
  // Each plan's hash from the phase's store of cross-plan facts while its file is the one
  // they were parsed from (a stat); else the plan is read and parsed, and its facts
  // remembered, so a save in this phase reads one file for its siblings (cross_facts.h).
  cross_facts::Store facts(w, dir, Stage1Options{}.max_file_bytes);
  for (const auto& name : w.files().list(dir)) {
    if (!is_plan_filename(name)) continue;
    stdfs::path p = dir / name;
    std::string h;
    if (facts.enabled())
      if (auto l = facts.load(p); l.plan) h = l.plan->content_hash;
    out.plans.emplace_back(p, h.empty() ? review::file_hash(w, p) : h);
  }
  (void)facts.save(/*prune=*/true);
  return out;
}

}  // namespace yolo::watch
