#include "protocol/ports/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "protocol/base/text.h"

namespace yolo::fs {
namespace {

const char* file_type(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "an unknown file type";
}

FileError not_regular(const stdfs::path& path, mode_t m) {
  return FileError{FileError::Kind::Io, path.string(), path.string() + ": not a regular file (" + file_type(m) + ")"};
}

ReadResult read_impl(const stdfs::path& path, size_t max_bytes, bool text) {
  ReadResult r;
  auto open_error = [&](int e) {
    if (e == ENOENT || e == ENOTDIR)
      return FileError{FileError::Kind::NotFound, path.string(), "file not found: " + path.string()};
    return FileError{FileError::Kind::Io, path.string(), path.string() + ": " + std::strerror(e)};
  };
  // Only regular files are read. Look before opening: opening a device can have effects of
  // its own, and opening a FIFO for reading blocks until a writer appears.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    r.error = open_error(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = not_regular(path, st.st_mode);
    return r;
  }
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, open() still returns
  // at once, and the fstat below refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    r.error = open_error(errno);
    return r;
  }
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    r.error = FileError{FileError::Kind::Io, path.string(), path.string() + ": " + std::strerror(e)};
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    r.error = not_regular(path, st.st_mode);
    return r;
  }
  // O_NONBLOCK stays: a regular file's read ignores it (clearing it costs two system calls a file).
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    r.error = FileError{FileError::Kind::TooLarge, path.string(),
                        path.string() + ": file is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                            std::to_string(max_bytes) + " bytes"};
    return r;
  }
  std::string buf;
  buf.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      r.error = FileError{FileError::Kind::Io, path.string(), path.string() + ": " + std::strerror(e)};
      return r;
    }
    if (n == 0) break;  // shrank while reading
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  buf.resize(got);
  if (text) {
    if (buf.find('\0') != std::string::npos || !text::valid_utf8(buf)) {
      r.error = FileError{FileError::Kind::Binary, path.string(),
                          path.string() + ": binary content (NUL bytes or invalid UTF-8), not a text file"};
      return r;
    }
  }
  r.content = std::move(buf);
  return r;
}

}  // namespace

ReadResult read_text(const stdfs::path& path, size_t max_bytes) { return read_impl(path, max_bytes, true); }
ReadResult read_bytes(const stdfs::path& path, size_t max_bytes) { return read_impl(path, max_bytes, false); }

Status write_atomic(const stdfs::path& path, const std::string& content) {
  stdfs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::random_device rd;
  std::string tmp =
      (dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd())))
          .string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::fail(path.string() + ": cannot create temp file: " + std::strerror(errno));
  // The file keeps its mode (a 0600 state stays 0600).
  if (struct stat old{}; ::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) ::fchmod(fd, old.st_mode & 07777);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = path.string() + ": write failed: " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::fail(err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    std::string err = path.string() + ": fsync failed: " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::fail(err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = path.string() + ": rename failed: " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::fail(err);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace yolo::fs
