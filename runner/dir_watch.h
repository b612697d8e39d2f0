// Recursive directory watching on the libuv loop. On Linux: inotify, one watch per
// folder, added and removed as folders come and go; a queue overflow or a watch-limit
// hit asks the owner to rescan (events may have been lost). Events only say "something
// changed here": the owner reconciles by content.
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>

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
  // Watches dir and every folder below it (skip_name folders excluded).
  void add_tree(const std::filesystem::path& dir);
  // Watches one folder only (its direct entries), e.g. the project root.
  void add_single(const std::filesystem::path& dir);
  void stop();
  // Reads the events the kernel has queued now and reports them (as on readiness).
  void drain() { on_readable(); }
  size_t watch_count() const { return by_wd_.size(); }
  std::function<bool(const std::string& name)> skip_name;  // folders never watched
  // A folder that cannot be watched or listed (EACCES, ELOOP, ...): named, skipped, and the
  // walk goes on.
  std::function<void(const std::filesystem::path&, const std::error_code&)> on_error;

 private:
  void on_readable();
  bool add_one(const std::filesystem::path& dir, bool recursive);
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
