#include "protocol/plan_cache.h"

namespace yolo {

PlanLoad PlanCache::load_sibling(const std::filesystem::path& path, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    entries_.erase(path);
    return load_plan(path, max_bytes);  // says why, in its own words
  }
  Key k{st.st_dev,
        st.st_ino,
        st.st_size,
        static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
        static_cast<long long>(st.st_ctim.tv_sec) * 1000000000LL + st.st_ctim.tv_nsec,
        max_bytes};
  if (auto it = entries_.find(path); it != entries_.end() && it->second.key == k) {
    ++hits_;
    return it->second.load;
  }
  PlanLoad l = load_plan(path, max_bytes);
  if (l.plan) l.plan->frontmatter = json::object();
  // A file that changed while it was read is not kept: its stat may not be its content's.
  struct stat after {};
  if (l.plan && ::stat(path.c_str(), &after) == 0 && after.st_ino == st.st_ino && after.st_size == st.st_size &&
      after.st_mtim.tv_sec == st.st_mtim.tv_sec && after.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
      after.st_ctim.tv_sec == st.st_ctim.tv_sec && after.st_ctim.tv_nsec == st.st_ctim.tv_nsec &&
      (entries_.size() < max_entries_ || entries_.count(path)))
    entries_[path] = Entry{k, l};
  else
    entries_.erase(path);
  return l;
}

}  // namespace yolo
