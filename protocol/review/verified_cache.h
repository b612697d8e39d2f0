// A sealed cache of what yolo already worked out from files it verified: the
// answer computed from a set of files (a phase's overview row from its review ledger, whose
// every record's seal was checked; a plan's content hash) is remembered with the identity of
// each of those files (fs::FileId: device, inode, size, mtime and ctime in ns), and given
// back while every identity is unchanged, so a later `yolo status` neither parses nor
// HMACs a ledger nobody touched.
//
// Why it cannot be used to make a record count that would not:
// - Identity: a file edited, replaced (a copy with the same size and mtime set back by
//   `touch -d`: a new inode and ctime), or renamed over has another FileId; the ctime
//   cannot be set by a process of the user. Such an entry is a miss: recomputed from the
//   file, seals checked again.
// - Racy writes (git's racy-clean rule): a file written in the same clock tick as it was
//   read could keep its FileId with other bytes. An answer is remembered only when no file
//   changed while it was computed (identities taken before and after) and each file's
//   ctime is at least kRacySeconds older than the World's clock: until then it is
//   recomputed every time.
// - The cache file (.yolo-planning/.cache/<name>.json) is sealed as a whole with the
//   user's key (World::checking_key; never created here) over its bytes, which name the
//   project (canonical path) and the cache: a cache edited by hand, copied from another
//   project or made with another key fails its seal and is ignored (everything is
//   recomputed, then the file is rewritten). Written atomically; a failed write is not
//   an error (a read-only checkout just gets no cache).
// - Without a key nothing is cached (and no seal counts anyway).
//
// The watcher's start can use it the same way for plan hashes: Cache c(w, root, "plans");
// for each plan: ids = c.identities({plan}); if (auto* v = c.find(plan_rel, *ids)) hash =
// (*v)["hash"] else { hash = hash_of(read(plan)); c.put(plan_rel, *ids, {plan}, {{"hash",
// hash}}); } then c.save(true) once.
#pragma once
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::verified_cache {

// A file changed less than this long before the cache was made is not remembered.
constexpr long long kRacySeconds = 2;
// A file whose ctime (ns since the epoch) is at or after this is racy now (kRacySeconds
// before the World's clock); nullopt when the clock cannot be read (nothing is remembered).
// protocol/review/cross_facts.h keeps the same rule.
std::optional<long long> racy_since_ns(const World& w);

// The one format of yolo's sealed cache files: "<seal>\n<body>", the seal (World's checking
// key, never created here) over the body's bytes as they are. read_sealed gives the body
// when the file exists and its seal verifies under `domain` (edited, copied with another
// key or cut: nullopt); write_sealed writes it atomically (without a key,
// nothing, and ok). Used by Cache below and by cross_facts' stores.
std::optional<std::string> read_sealed(const World& w, const std::filesystem::path& file, std::string_view domain,
                                       bool text);
Status write_sealed(const World& w, const std::filesystem::path& file, std::string_view domain,
                    const std::string& body);

// The identity of a file for the cache: "-" when it does not exist (an absent file is a
// state too: a phase with no ledger yet).
std::string identity_string(const std::optional<fs::FileId>& id);

class Cache {
 public:
  // Loads .yolo-planning/.cache/<name>.json under root when its seal verifies.
  Cache(const World& w, const std::filesystem::path& root, const std::string& name);

  // False without a key or on a disk that cannot tell file identities: find() always
  // misses, put() and save() do nothing.
  bool enabled() const { return enabled_; }

  // The identities of `files` now (taken BEFORE computing an answer from them); nullopt
  // when caching is off.
  std::optional<std::vector<std::string>> identities(const std::vector<std::filesystem::path>& files) const;

  // The answer remembered under key when `ids` (identities() now) are those it was
  // computed from; else nullptr.
  const json* find(const std::string& key, const std::vector<std::string>& ids);

  // Remembers value under key, computed from `files` whose identities were `ids_before`:
  // only when they are unchanged now and none is racy (see above). Whether it was kept.
  bool put(const std::string& key, const std::vector<std::string>& ids_before,
           const std::vector<std::filesystem::path>& files, json value);

  // Writes the cache when something changed. prune: drop the entries neither found nor
  // put since it was loaded (phases removed). Callers may ignore a failure.
  Status save(bool prune);

  std::filesystem::path file() const { return file_; }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }
  // Whether the file on disk was loaded (its seal verified).
  bool loaded() const { return loaded_; }

 private:
  const World& w_;
  std::filesystem::path file_;
  std::string project_, name_;
  bool enabled_ = false, loaded_ = false, changed_ = false;
  json entries_ = json::object();
  std::set<std::string> used_;
  size_t hits_ = 0, misses_ = 0;
};

}  // namespace yolo::verified_cache
