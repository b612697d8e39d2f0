#include <algorithm>
#include <atomic>

#include "protocol/ports/disk.h"
#include "protocol/base/text.h"

namespace yolo::fs {

namespace {
std::atomic<unsigned long long> g_disks{0};
stdfs::path norm(const stdfs::path& p) { return p.lexically_normal(); }
}  // namespace

struct MemoryDisk::HeldLock : Lock {
  HeldLock(MemoryDisk& d, stdfs::path p) : disk(d), path(std::move(p)) {}
  ~HeldLock() override { disk.held_.erase(path); }
  MemoryDisk& disk;
  stdfs::path path;
};

// Each disk has its own number: a stamp never matches one of another disk (the state's
// cache of its own writes is keyed by path and stamp).
MemoryDisk::MemoryDisk() : id_(++g_disks) { dirs_.insert("/"); }

ReadResult MemoryDisk::read(const stdfs::path& p, size_t max_bytes, bool text) {
  ReadResult r;
  auto it = files_.find(norm(p));
  if (it == files_.end()) {
    if (dirs_.count(norm(p)))
      r.error = FileError{FileError::Kind::Io, p.string(), p.string() + ": not a regular file (a directory)"};
    else
      r.error = FileError{FileError::Kind::NotFound, p.string(), "file not found: " + p.string()};
    return r;
  }
  if (it->second.size() > max_bytes) {
    r.error = FileError{FileError::Kind::TooLarge, p.string(),
                        p.string() + ": file is " + std::to_string(it->second.size()) + " bytes, over the limit of " +
                            std::to_string(max_bytes) + " bytes"};
    return r;
  }
  if (text && (it->second.find('\0') != std::string::npos || !text::valid_utf8(it->second))) {
    r.error = FileError{FileError::Kind::Binary, p.string(),
                        p.string() + ": binary content (NUL bytes or invalid UTF-8), not a text file"};
    return r;
  }
  r.content = it->second;
  return r;
}

Status MemoryDisk::write_atomic(const stdfs::path& p, const std::string& content) {
  if (!fail_.empty()) return Status::fail(p.string() + ": " + fail_);
  if (!dirs_.count(norm(p).parent_path())) return Status::fail(p.string() + ": No such file or directory");
  if (dirs_.count(norm(p))) return Status::fail(p.string() + ": Is a directory");
  files_[norm(p)] = content;
  generation_[norm(p)] = next_generation_++;
  ++writes_;
  return {};
}

Status MemoryDisk::append(const stdfs::path& p, const std::function<std::string(const std::string& before)>& next,
                          size_t max_bytes, bool, const std::function<bool(const std::string&)>& enough) {
  if (!fail_.empty()) return Status::fail(p.string() + ": " + fail_);
  if (Status made = make_dirs(norm(p).parent_path()); !made.ok()) return Status::fail(p.string() + ": " + made.error);
  if (dirs_.count(norm(p))) return Status::fail(p.string() + ": Is a directory");
  std::string& f = files_[norm(p)];
  std::string add = next(
      max_bytes > 0 ? grow_tail(
                          f.size(), max_bytes, [&](size_t from, size_t len) { return f.substr(from, len); }, enough)
                    : std::string());
  f += add;
  generation_[norm(p)] = next_generation_++;
  ++writes_;
  return {};
}

Result<std::unique_ptr<Disk::Lock>> MemoryDisk::lock(const stdfs::path& p) {
  stdfs::path n = norm(p);
  if (!dirs_.count(n.parent_path()))
    return Status::fail(p.string() + ": cannot open the lock file: No such file or directory");
  if (held_.count(n))  // one thread: a second lock would wait for ever
    return Status::fail(p.string() + ": already locked (it would wait for itself)");
  held_.insert(n);
  if (!files_.count(n)) files_[n] = "";
  return std::unique_ptr<Disk::Lock>(std::make_unique<HeldLock>(*this, n));
}

bool MemoryDisk::exists(const stdfs::path& p) { return files_.count(norm(p)) || dirs_.count(norm(p)); }
bool MemoryDisk::is_directory(const stdfs::path& p) { return dirs_.count(norm(p)) > 0; }
bool MemoryDisk::is_file(const stdfs::path& p) { return files_.count(norm(p)) > 0; }

Status MemoryDisk::make_dirs(const stdfs::path& dir) {
  for (stdfs::path d = norm(dir); !d.empty(); d = d.parent_path()) {
    if (files_.count(d)) return Status::fail(dir.string() + ": " + d.string() + " is a file");
    dirs_.insert(d);
    if (d == d.root_path() || d == d.parent_path()) break;
  }
  return {};
}

bool MemoryDisk::read_only(const stdfs::path& p) { return read_only_.count(norm(p)) && files_.count(norm(p)); }

std::string MemoryDisk::stamp(const stdfs::path& p) {
  auto it = generation_.find(norm(p));
  if (it == generation_.end() || !files_.count(norm(p))) return {};
  return "mem" + std::to_string(id_) + ":" + std::to_string(it->second);
}

std::vector<std::string> MemoryDisk::list(const stdfs::path& dir) {
  std::vector<std::string> names;
  stdfs::path d = norm(dir);
  for (const auto& [p, c] : files_)
    if (p.parent_path() == d) names.push_back(p.filename().string());
  for (const auto& p : dirs_)
    if (p.parent_path() == d && p != d) names.push_back(p.filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<DirEntry> MemoryDisk::list_entries(const stdfs::path& dir) {
  std::vector<DirEntry> out;
  for (auto& n : list(dir))
    out.push_back(DirEntry{n, files_.count(norm(dir / n)) ? DirEntry::Kind::File : DirEntry::Kind::Directory});
  return out;
}

void MemoryDisk::put(const stdfs::path& p, const std::string& content) {
  (void)make_dirs(norm(p).parent_path());
  files_[norm(p)] = content;
  generation_[norm(p)] = next_generation_++;
}

std::string MemoryDisk::get(const stdfs::path& p) const {
  auto it = files_.find(norm(p));
  return it == files_.end() ? std::string() : it->second;
}

bool MemoryDisk::has(const stdfs::path& p) const { return files_.count(norm(p)) > 0; }

void MemoryDisk::remove(const stdfs::path& p) {
  files_.erase(norm(p));
  generation_.erase(norm(p));
}

void MemoryDisk::set_read_only(const stdfs::path& p, bool on) {
  if (on)
    read_only_.insert(norm(p));
  else
    read_only_.erase(norm(p));
}

void MemoryDisk::fail_writes(const std::string& why) { fail_ = why; }

}  // namespace yolo::fs
