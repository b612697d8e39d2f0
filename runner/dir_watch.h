// Recursive directory watching on the libuv loop. On Linux: inotify, one watch per
// folder, added and removed as folders come and go; a queue overflow asks the owner to
// rescan (events may have been lost). Events only say "something changed here": the owner
// reconciles by content.
// Under the inotify watch limit the folders that matter most are watched first (the
// owner's `rank`, then nearest the top first), the ones left without a watch are kept, and
// their watches are added again as soon as the limit allows: whenever events arrive (any
// event, and a watch freed by a folder that went away), never on a timer.
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace yolo::runner {

class DirWatch {
 public:
  struct Change {
    std::filesystem::path path;  // the entry that changed (file or folder)
    bool is_dir = false;
    bool gone = false;  // deleted or moved away
  };
  using ChangeFn = std::function<void(const Change&)>;
  using RescanFn = std::function<void(const std::string& why)>;

  DirWatch(uv_loop_t* loop, ChangeFn on_change, RescanFn on_rescan);
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // Starts the kernel side. Returns an error message, or empty.
  std::string start();
  // Watches dir and every folder below it (skip_name folders excluded), dir first, then
  // by `rank` (lower first), then nearest dir first, then by name.
  void add_tree(const std::filesystem::path& dir);
  // Watches one folder only (its direct entries), e.g. the project root.
  void add_single(const std::filesystem::path& dir);
  void stop();
  // Reads the events the kernel has queued now and reports them (as on readiness).
  void drain() { on_readable(); }
  size_t watch_count() const { return by_wd_.size(); }
  std::function<bool(const std::string& name)> skip_name;     // folders never watched
  std::function<int(const std::filesystem::path& dir)> rank;  // which folders get a watch first
  // Folders the watch limit left without a watch (each with every folder below it).
  const std::vector<std::filesystem::path>& unwatched() const { return unwatched_paths_; }
  // The list of unwatched folders changed: more were left out, or some are watched again
  // (`recovered`: those, empty when none).
  std::function<void(const std::vector<std::filesystem::path>& recovered)> on_limit;
  // Adds the missing watches again where the limit allows now; stops at the first refusal.
  void retry_unwatched();
  // A folder that cannot be watched or listed (EACCES, ELOOP, ...): named, skipped, and the
  // walk goes on.
  std::function<void(const std::filesystem::path&, const std::error_code&)> on_error;

 private:
  void on_readable();
  enum class Added { Yes, No, Limit };
  Added add_one(const std::filesystem::path& dir, bool recursive);
  void tree(const std::filesystem::path& dir, std::vector<std::filesystem::path>& left);
  void set_unwatched(std::vector<std::filesystem::path> v, const std::vector<std::filesystem::path>& recovered);
  std::vector<std::filesystem::path> unwatched_paths_;
  bool retrying_ = false;
  uv_loop_t* loop_;
  ChangeFn on_change_;
  RescanFn on_rescan_;
  int fd_ = -1;
  uv_poll_t poll_{};
  bool polling_ = false;
  struct Entry {
    std::filesystem::path path;
    bool recursive;
  };
  std::unordered_map<int, Entry> by_wd_;
};

}  // namespace yolo::runner
