#include "protocol/plan/plan_cache.h"

namespace yolo {

PlanLoad PlanCache::load_sibling(const World& w, const std::filesystem::path& path, size_t max_bytes) {
  fs::Disk& disk = w.files();
  Key k{disk.stamp(path), max_bytes};
  if (k.stamp.empty()) {  // no regular file
    entries_.erase(path);
    return load_plan(w, path, max_bytes);  // says why, in its own words
  }
  if (auto it = entries_.find(path); it != entries_.end() && it->second.key == k) {
    ++hits_;
    return it->second.load;
  }
  PlanLoad l = load_plan(w, path, max_bytes);
  if (l.plan) l.plan->frontmatter = json::object();
  // A file that changed while it was read is not kept: its stamp may not be its content's.
  if (l.plan && disk.stamp(path) == k.stamp && (entries_.size() < max_entries_ || entries_.count(path)))
    entries_[path] = Entry{k, l};
  else
    entries_.erase(path);
  return l;
}

std::optional<PlanLoad> PlanCache::cached(const World& w, const std::filesystem::path& path, size_t max_bytes) {
  auto it = entries_.find(path);
  if (it == entries_.end()) return std::nullopt;
  Key k{w.files().stamp(path), max_bytes};
  if (k.stamp.empty() || !(it->second.key == k)) return std::nullopt;
  ++hits_;
  return it->second.load;
}

}  // namespace yolo
