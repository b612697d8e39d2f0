// The siblings of a plan as the cross-plan checks see them, kept between reviews by a
// long-running caller (the watcher): a review of one plan runs the cross-plan checks of its
// phase, which read every sibling; with 100 plans in a phase that is 100 YAML parses per
// save. A cached plan is reused only while its file is the very same (device, inode, size,
// mtime and ctime, to the nanosecond): any write or rename changes ctime, so a changed file
// is always read again. Entries are slim: the parsed frontmatter document is dropped (the
// cross-plan checks use the fields taken from it), about 1 KB a plan. Not thread-safe.
// Across processes the same facts are kept on disk, sealed (protocol/review/cross_facts.h); a phase
// loaded by PhaseSnapshots takes them from there first.
#pragma once

#include <filesystem>
#include <map>

#include "protocol/plan/plan.h"

namespace yolo {

class PlanCache {
 public:
  explicit PlanCache(size_t max_entries = 20000) : max_entries_(max_entries) {}

  // load_plan(path, max_bytes) without Plan::frontmatter (the document; its fields are
  // kept), from the cache when the file has not changed since. For siblings only: the
  // pre-check of a plan itself needs the document.
  // The file's identity is the world's disk's stamp (fs::Disk::stamp).
  PlanLoad load_sibling(const World& w, const std::filesystem::path& path, size_t max_bytes);
  // The plan kept for path when its file has not changed since (a stat; no read, no parse).
  std::optional<PlanLoad> cached(const World& w, const std::filesystem::path& path, size_t max_bytes);
  void forget(const std::filesystem::path& path) { entries_.erase(path); }
  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return max_entries_; }  // plans kept at most
  size_t hits() const { return hits_; }

 private:
  struct Key {
    std::string stamp;
    size_t max_bytes = 0;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    PlanLoad load;
  };
  std::map<std::filesystem::path, Entry> entries_;
  size_t hits_ = 0;
  size_t max_entries_;  // beyond it, plans are read but not kept
};

}  // namespace yolo
