// The file system as protocol/ reaches it: one port (ninja's DiskInterface), the real disk
// for the program and an in-memory one for unit tests (no temp folders). Paths are used as
// the caller built them (from the project root); nothing here throws for I/O, every failure
// is a sentence naming the file.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/ports/contain.h"
#include "protocol/ports/fs.h"

namespace yolo::fs {

// What identifies a file's content without reading it (git's racy-clean test): device, inode,
// size, modification and status-change times in nanoseconds. A process of the same user can
// set the modification time (utime) but not the change time (ctime), and a file replaced by
// another has another inode: an equal FileId means the same bytes, except for a write within
// the same clock tick as the FileId was taken (verified_cache.h keeps such entries out).
struct FileId {
  unsigned long long dev = 0, ino = 0;
  long long size = 0, mtime_ns = 0, ctime_ns = 0;
  bool directory = false;
  bool operator==(const FileId&) const = default;
};

// One entry of a folder as listing it tells (no stat per entry): a link or an entry whose
// type the listing does not say is Other (ask is_file).
struct DirEntry {
  enum class Kind { File, Directory, Other };
  std::string name;
  Kind kind = Kind::Other;
};

class Disk {
 public:
  virtual ~Disk() = default;

  // At most max_bytes of p. text: NUL bytes or invalid UTF-8 make it Binary (read_text's
  // rules); else any bytes (read_bytes). A missing file is NotFound.
  virtual ReadResult read(const stdfs::path& p, size_t max_bytes, bool text) = 0;
  // Replaces p as a whole: temp file beside it, fsync, rename, fsync of the folder (which
  // must exist). Fails with a sentence naming the file.
  virtual Status write_atomic(const stdfs::path& p, const std::string& content) = 0;
  // Appends to p (created, with its folder, when missing) under an exclusive lock of p
  // itself: `next` receives the end of p as it is then (line_tail: its last max_bytes at
  // most, from the start of a line; 0: it is not read, "") and returns what to append, so
  // reading the end (a hash chain) and appending are one step, at a cost that does not grow
  // with the file. With `enough`, the end is read in windows growing from 64 KiB up to
  // max_bytes, until enough(window) holds (what a small window holds is all that most appends
  // need; the first touch of a fresh buffer of max_bytes cost an audit append its page
  // faults). All or nothing: a write that stops part way is cut back. durable:
  // fsync before returning (an audit trail; an event log need not wait for it).
  virtual Status append(const stdfs::path& p, const std::function<std::string(const std::string& before)>& next,
                             size_t max_bytes = 0, bool durable = true,
                             const std::function<bool(const std::string& window)>& enough = {}) = 0;

  // An exclusive lock on the lock file p (created when missing), held while the returned
  // object lives; an error naming the file when it cannot be taken.
  struct Lock {
    virtual ~Lock() = default;
  };
  virtual Result<std::unique_ptr<Lock>> lock(const stdfs::path& p) = 0;

  virtual bool exists(const stdfs::path& p) = 0;
  virtual bool is_directory(const stdfs::path& p) = 0;
  virtual bool is_file(const stdfs::path& p) = 0;  // a regular file (through links)
  // The absolute path p with every symbolic link resolved (fs::resolve_links); a disk
  // without links answers p normalised. nullopt on a loop of links.
  virtual std::optional<stdfs::path> resolve(const stdfs::path& p) = 0;
  // The same, where p begins with real_prefix, a path already resolved (fs::resolve_links).
  virtual std::optional<stdfs::path> resolve_below(const stdfs::path& p, const stdfs::path& real_prefix) {
    (void)real_prefix;
    return resolve(p);
  }
  // The one containment rule (protocol/ports/contain.h) on this disk's links.
  Root root(const stdfs::path& root) {
    return Root(root, [this](const stdfs::path& p, const stdfs::path& real_prefix) {
      return real_prefix.empty() ? resolve(p) : resolve_below(p, real_prefix);
    });
  }
  Contained contain(const stdfs::path& root, const std::string& p, AbsolutePaths absolute = AbsolutePaths::Refuse) {
    return this->root(root).contain(p, absolute);
  }
  // Walks up from start to the folder holding `.yolo-planning/`; nullopt if none.
  std::optional<stdfs::path> project_root(const stdfs::path& start);
  // Creates dir and its parents.
  virtual Status make_dirs(const stdfs::path& dir) = 0;
  // A regular file its owner may not write: yolo leaves it alone on purpose.
  virtual bool read_only(const stdfs::path& p) = 0;
  // The identity of the file now; it changes with every write (rename gives a new inode).
  // "" when there is no regular file.
  virtual std::string stamp(const stdfs::path& p) = 0;
  // The names of the entries of dir, sorted; empty when it does not exist.
  virtual std::vector<std::string> list(const stdfs::path& dir) = 0;
  // The entries of dir with their kind, sorted by name (one readdir, no stat per entry).
  // The default lists names and says Other for each.
  virtual std::vector<DirEntry> list_entries(const stdfs::path& dir);
  // The identity of p (through links; a file or a folder) now; nullopt when it does not
  // exist or the disk cannot tell (the memory disk: nothing can be cached on it).
  virtual std::optional<FileId> identity(const stdfs::path&) { return std::nullopt; }
  // Removes from dir the temp files of write_atomic (`.<file>.tmp.<pid>.<n>`) whose writer is
  // gone (kill(pid, 0) says ESRCH: it died between writing and renaming); temp files of live
  // processes, folders and other names are left alone. How many. state::update does this
  // for .yolo-planning/ while it holds the lock.
  virtual size_t remove_stale_temp_files(const stdfs::path& dir) = 0;
};

// The real file system (fs.h and file_lock.h underneath).
Disk& real_disk();

// Files in memory for unit tests: the same answers as the real disk for what protocol/ asks,
// no fsync, no temp files. One thread.
class MemoryDisk : public Disk {
 public:
  MemoryDisk();

  ReadResult read(const stdfs::path& p, size_t max_bytes, bool text) override;
  Status write_atomic(const stdfs::path& p, const std::string& content) override;
  Status append(const stdfs::path& p, const std::function<std::string(const std::string& before)>& next,
                size_t max_bytes = 0, bool durable = true,
                const std::function<bool(const std::string& window)>& enough = {}) override;
  Result<std::unique_ptr<Lock>> lock(const stdfs::path& p) override;
  bool exists(const stdfs::path& p) override;
  bool is_directory(const stdfs::path& p) override;
  bool is_file(const stdfs::path& p) override;
  std::optional<stdfs::path> resolve(const stdfs::path& p) override { return p.lexically_normal(); }
  Status make_dirs(const stdfs::path& dir) override;
  bool read_only(const stdfs::path& p) override;
  std::string stamp(const stdfs::path& p) override;
  std::vector<std::string> list(const stdfs::path& dir) override;
  std::vector<DirEntry> list_entries(const stdfs::path& dir) override;
  size_t remove_stale_temp_files(const stdfs::path&) override { return 0; }

  // For the tests themselves.
  void put(const stdfs::path& p, const std::string& content);  // creates the folders too
  std::string get(const stdfs::path& p) const;                 // "" when absent
  bool has(const stdfs::path& p) const;
  void remove(const stdfs::path& p);
  void set_read_only(const stdfs::path& p, bool on);
  void fail_writes(const std::string& why);  // every write fails with `why` (a full disk); "" ends it
  size_t writes() const { return writes_; }  // writes and appends that succeeded
  bool locked(const stdfs::path& p) const { return held_.count(p.lexically_normal()) > 0; }

 private:
  struct HeldLock;
  std::map<stdfs::path, std::string> files_;
  std::map<stdfs::path, unsigned long long> generation_;
  std::set<stdfs::path> dirs_, read_only_, held_;
  unsigned long long id_ = 0, next_generation_ = 1;
  std::string fail_;
  size_t writes_ = 0;
};

// The end of a file for Disk::append: `window` is its last bytes, read from offset `from`.
// Past the file's start, the first (partial) line is dropped: what is left begins a line.
std::string line_tail(std::string window, size_t from);
// The end of a file of `size` bytes for Disk::append: line_tail of its last max_bytes, or,
// with `enough`, of the smallest window (64 KiB, doubling up to max_bytes) for which enough
// holds. read(from, len) reads the file's bytes [from, from + len).
std::string grow_tail(size_t size, size_t max_bytes, const std::function<std::string(size_t from, size_t len)>& read,
                      const std::function<bool(const std::string& window)>& enough);

}  // namespace yolo::fs
