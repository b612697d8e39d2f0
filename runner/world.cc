#include "runner/world.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

#include "protocol/ports/fs.h"
#include "runner/identity.h"
#include "runner/signing.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

namespace {

constexpr size_t kKeyBytes = 32;

std::string random_bytes(size_t n, std::string& err) {
  std::string out(n, '\0');
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = std::string("/dev/urandom: ") + std::strerror(errno);
    return {};
  }
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, out.data() + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      err = "/dev/urandom: short read";
      ::close(fd);
      return {};
    }
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  return out;
}

// Reads the key file; nullopt when it does not exist.
std::optional<seal::Key> read_key(const stdfs::path& p) {
  std::error_code ec;
  if (!stdfs::exists(p, ec)) return std::nullopt;
  seal::Key k;
  auto r = fs::read_bytes(p, 4096);
  if (!r.ok())
    k.error = "approval key " + p.string() + ": " + r.error->message;
  else if (r.content.size() != kKeyBytes)
    k.error = "approval key " + p.string() + " holds " + std::to_string(r.content.size()) + " bytes, not " +
              std::to_string(kKeyBytes) +
              ": remove it to make a new one (approvals sealed with it then no longer count)";
  else
    k.bytes = std::move(r.content);
  return k;
}

// Creates the key without a race: the bytes go to a private temp file that is then linked
// to the key's name, which fails when another process got there first (its key wins).
seal::Key create_key(const stdfs::path& p) {
  seal::Key k;
  std::error_code ec;
  stdfs::create_directories(p.parent_path(), ec);
  std::string err;
  std::string bytes = random_bytes(kKeyBytes, err);
  if (bytes.empty()) {
    k.error = "cannot make an approval key: " + err;
    return k;
  }
  std::string tmp = p.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(std::random_device{}());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    k.error = "cannot create the approval key " + p.string() + ": " + std::strerror(errno) +
              " (set YOLO_APPROVAL_KEY_FILE to a writable path)";
    return k;
  }
  bool wrote = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!wrote) {
    ::unlink(tmp.c_str());
    k.error = "cannot write the approval key " + p.string() + ": " + std::strerror(errno);
    return k;
  }
  int rc = ::link(tmp.c_str(), p.c_str());
  int link_errno = errno;
  ::unlink(tmp.c_str());
  if (rc != 0 && link_errno != EEXIST) {
    k.error = "cannot create the approval key " + p.string() + ": " + std::strerror(link_errno);
    return k;
  }
  auto existing = read_key(p);  // ours, or the one another process linked first
  if (!existing)
    k.error = "approval key " + p.string() + " vanished while it was created";
  else
    k = *existing;
  return k;
}

}  // namespace

// Until a key exists, read-only callers see an error and look again next time: a later
// approve in the same process may make it.
const seal::Key& KeyFile::get(bool create) {
  std::lock_guard<std::mutex> g(m_);
  if (have_) return key_;
  if (path_.empty()) {
    key_ = seal::Key{{}, "no file for the approval key: set YOLO_APPROVAL_KEY_FILE (or HOME)"};
  } else if (auto existing = read_key(path_)) {
    key_ = *existing;
  } else if (create) {
    key_ = create_key(path_);
  } else {
    return none_;
  }
  have_ = true;
  return key_;
}

const World& world() {
  static KeyFile keys(approval_key_path());
  static const World w{fs::real_disk(), system_clock(), nullptr, &keys, &ssh_signatures()};
  return w;
}

}  // namespace yolo::runner
