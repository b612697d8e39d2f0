// The real disk: fs.h's bounded reads and atomic writes, file_lock.h's flock, and the
// append and stale-temp-file sweeps that the state, the event log and the audit log share.
#include "protocol/ports/disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <string_view>

#include "protocol/ports/file_lock.h"

namespace yolo::fs {

namespace {

// The pid in a temp file name `.<file>.tmp.<pid>.<n>` of write_atomic, or 0.
pid_t temp_file_writer(std::string_view name) {
  if (name.size() < 2 || name.front() != '.') return 0;
  size_t at = name.rfind(".tmp.");
  if (at == std::string_view::npos || at < 2) return 0;
  std::string_view rest = name.substr(at + 5);
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return 0;
  for (char c : rest.substr(dot + 1))
    if (c < '0' || c > '9') return 0;
  long long pid = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (ec != std::errc() || p != rest.data() + dot || pid <= 0 || pid > INT_MAX) return 0;
  return static_cast<pid_t>(pid);
}

class RealDisk : public Disk {
 public:
  ReadResult read(const stdfs::path& p, size_t max_bytes, bool text) override {
    return text ? read_text(p, max_bytes) : read_bytes(p, max_bytes);
  }

  Status write_atomic(const stdfs::path& p, const std::string& content) override {
    return fs::write_atomic(p, content);
  }

  Status append(const stdfs::path& p, const std::function<std::string(const std::string& before)>& next,
                size_t max_bytes, bool durable, const std::function<bool(const std::string&)>& enough) override {
    std::error_code ec;
    stdfs::create_directories(p.parent_path(), ec);
    int fd = ::open(p.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);  // read through its own open
    if (fd < 0) return Status::fail(p.string() + ": " + std::strerror(errno));
    while (::flock(fd, LOCK_EX) != 0)
      if (errno != EINTR) {
        std::string e = p.string() + ": cannot lock: " + std::strerror(errno);
        ::close(fd);
        return Status::fail(e);
      }
    std::string before;
    if (max_bytes > 0) before = tail(p, max_bytes, enough);
    std::string buf = next(before);
    // All or nothing: on a full disk (or a file-size limit) a write can stop part way; the
    // part written is cut off again, so no truncated line is left for the next one to be
    // glued to. The lock orders appenders, so the size we cut back to is where ours began.
    struct stat st {};
    off_t start = ::fstat(fd, &st) == 0 ? st.st_size : -1;
    size_t done = 0;
    std::string err;
    while (done < buf.size()) {
      ssize_t n = ::write(fd, buf.data() + done, buf.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = p.string() + ": " + (n < 0 ? std::strerror(errno) : "short write");
        break;
      }
      done += static_cast<size_t>(n);
    }
    if (!err.empty() && done > 0) {
      if (start < 0 || ::ftruncate(fd, start) != 0)
        err += " (and a partial line could not be removed: " + std::string(std::strerror(errno)) + ")";
    }
    if (err.empty() && durable && ::fsync(fd) != 0) err = p.string() + ": fsync: " + std::strerror(errno);
    ::close(fd);
    return Status{err};
  }

  // The end of p (grow_tail), "" when it cannot be read.
  static std::string tail(const stdfs::path& p, size_t max_bytes,
                          const std::function<bool(const std::string&)>& enough) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return {};
    struct stat st {};
    std::string out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
      out = grow_tail(
          static_cast<size_t>(st.st_size), max_bytes,
          [&](size_t from, size_t len) {
            std::string buf(len, '\0');
            size_t got = 0;
            while (got < buf.size()) {
              ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(from + got));
              if (n < 0 && errno == EINTR) continue;
              if (n <= 0) break;
              got += static_cast<size_t>(n);
            }
            buf.resize(got);
            return buf;
          },
          enough);
    ::close(fd);
    return out;
  }

  struct Held : Lock {
    explicit Held(const stdfs::path& p) : lock(p) {}
    FileLock lock;
  };
  Result<std::unique_ptr<Lock>> lock(const stdfs::path& p) override {
    auto h = std::make_unique<Held>(p);
    if (!h->lock.error().empty() || !h->lock.held())
      return Status::fail(h->lock.error().empty() ? p.string() + ": cannot lock" : h->lock.error());
    return std::unique_ptr<Lock>(std::move(h));
  }

  bool exists(const stdfs::path& p) override {
    std::error_code ec;
    return stdfs::exists(p, ec);
  }
  bool is_directory(const stdfs::path& p) override {
    std::error_code ec;
    return stdfs::is_directory(p, ec);
  }
  bool is_file(const stdfs::path& p) override {
    std::error_code ec;
    return stdfs::is_regular_file(p, ec);
  }
  std::optional<stdfs::path> resolve(const stdfs::path& p) override { return resolve_links(p); }
  std::optional<stdfs::path> resolve_below(const stdfs::path& p, const stdfs::path& real_prefix) override {
    return resolve_links(p, real_prefix);
  }
  Status make_dirs(const stdfs::path& dir) override {
    std::error_code ec;
    if (stdfs::is_directory(dir, ec)) return {};
    stdfs::create_directories(dir, ec);
    if (ec) return Status::fail(dir.string() + ": " + ec.message());
    return {};
  }
  bool read_only(const stdfs::path& p) override {
    std::error_code ec;
    auto st = stdfs::status(p, ec);
    return !ec && stdfs::is_regular_file(st) && (st.permissions() & stdfs::perms::owner_write) == stdfs::perms::none;
  }
  std::string stamp(const stdfs::path& p) override {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
    // One formatting, one string (seven to_string and their concatenations were most of a
    // stamp's cost, and execute takes two a plan).
    char buf[160];
    int n =
        std::snprintf(buf, sizeof buf, "%llu:%llu:%lld:%lld.%ld:%lld.%ld", static_cast<unsigned long long>(st.st_dev),
                      static_cast<unsigned long long>(st.st_ino), static_cast<long long>(st.st_size),
                      static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec),
                      static_cast<long long>(st.st_ctim.tv_sec), static_cast<long>(st.st_ctim.tv_nsec));
    return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }
  std::vector<std::string> list(const stdfs::path& dir) override {
    std::vector<std::string> names;
    std::error_code ec;
    for (stdfs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::vector<DirEntry> list_entries(const stdfs::path& dir) override {
    std::vector<DirEntry> out;
    // readdir itself (a std::filesystem iterator built a full path per entry, 1,600 of them in
    // a phase of 800 plans): the type it gives (d_type), no stat; a link or an unknown type is
    // Other.
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (const struct dirent* de = ::readdir(d)) {
      const char* n = de->d_name;
      if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
      DirEntry e;
      e.name = n;
      e.kind = de->d_type == DT_REG   ? DirEntry::Kind::File
               : de->d_type == DT_DIR ? DirEntry::Kind::Directory
                                      : DirEntry::Kind::Other;
      out.push_back(std::move(e));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return out;
  }
  std::optional<FileId> identity(const stdfs::path& p) override {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return std::nullopt;
    FileId id;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = st.st_size;
    id.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    id.ctime_ns = static_cast<long long>(st.st_ctim.tv_sec) * 1000000000LL + st.st_ctim.tv_nsec;
    id.directory = S_ISDIR(st.st_mode);
    return id;
  }
  size_t remove_stale_temp_files(const stdfs::path& dir) override {
    size_t removed = 0;
    std::error_code ec;
    for (stdfs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      pid_t pid = temp_file_writer(it->path().filename().string());
      if (pid == 0) continue;
      // Alive (or someone else's: EPERM) => its writer may still rename it into place.
      if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
      std::error_code tec;
      auto st = it->symlink_status(tec);
      if (tec || !stdfs::is_regular_file(st)) continue;
      if (stdfs::remove(it->path(), tec)) ++removed;
    }
    return removed;
  }
};

}  // namespace

std::vector<DirEntry> Disk::list_entries(const stdfs::path& dir) {
  std::vector<DirEntry> out;
  for (auto& n : list(dir)) out.push_back(DirEntry{std::move(n), DirEntry::Kind::Other});
  return out;
}

std::optional<stdfs::path> Disk::project_root(const stdfs::path& start) {
  std::error_code ec;
  stdfs::path p = stdfs::absolute(start, ec);
  if (ec) return std::nullopt;
  p = p.lexically_normal();
  if (!is_directory(p)) p = p.parent_path();
  while (true) {
    if (is_directory(p / ".yolo-planning")) return p;
    if (p == p.root_path() || p.empty()) return std::nullopt;
    p = p.parent_path();
  }
}

std::string line_tail(std::string window, size_t from) {
  if (from == 0) return window;
  size_t nl = window.find('\n');
  if (nl == std::string::npos) return std::string();
  window.erase(0, nl + 1);  // in place: no second buffer of the window's size
  return window;
}

std::string grow_tail(size_t size, size_t max_bytes, const std::function<std::string(size_t from, size_t len)>& read,
                      const std::function<bool(const std::string& window)>& enough) {
  constexpr size_t kFirstWindow = 64 * 1024;
  size_t len = enough ? std::min(kFirstWindow, max_bytes) : max_bytes;
  for (;;) {
    size_t from = size > len ? size - len : 0;
    std::string window = line_tail(read(from, size - from), from);
    if (from == 0 || len >= max_bytes || enough(window)) return window;
    len = std::min(len * 2, max_bytes);
  }
}

Disk& real_disk() {
  static RealDisk d;
  return d;
}

}  // namespace yolo::fs
