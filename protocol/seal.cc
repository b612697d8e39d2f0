#include "protocol/seal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>

#include "protocol/fs.h"
#include "protocol/sha256.h"

namespace yolo::seal {
namespace {

namespace stdfs = std::filesystem;
constexpr size_t kKeyBytes = 32;

std::optional<Key> testing_key;
// Function-local: use_key_file() may run from another file's static initializer (tests).
stdfs::path& key_file() {
  static stdfs::path p;
  return p;
}

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(d[p[i] >> 4]);
    s.push_back(d[p[i] & 15]);
  }
  return s;
}

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
std::optional<Key> read_key(const stdfs::path& p) {
  std::error_code ec;
  if (!stdfs::exists(p, ec)) return std::nullopt;
  Key k;
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
Key create_key(const stdfs::path& p) {
  Key k;
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

// The fields of a gate its seal covers; the message is their canonical JSON (keys sorted),
// so no two different records share one message.
json sealed_fields(const json& gate) {
  json f = json::object();
  for (const char* k : {"id", "gate_type", "plan_path", "status", "approved_by", "digest", "resolved_at", "override",
                        "covers", "project", "run"}) {
    auto it = gate.find(k);
    f[k] = it != gate.end() ? *it : json(nullptr);
  }
  return f;
}

bool same(const std::string& want, const std::string& got) {
  if (want.empty() || got.size() != want.size()) return false;
  unsigned diff = 0;  // constant time: the comparison says nothing about where they differ
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(want[i] ^ got[i]);
  return diff == 0;
}

}  // namespace

void use_key_file(const stdfs::path& p) { key_file() = p; }

// The key as read (or made) once per process. Until one exists, read-only callers see an
// error and look again next time: a later approve in the same process may make it.
static const Key& cached_key(bool create) {
  static std::mutex m;
  static Key k;
  static bool have = false;
  std::lock_guard<std::mutex> g(m);
  if (have) return k;
  const stdfs::path& p = key_file();
  if (p.empty()) {
    k = Key{{}, "no file for the approval key: set YOLO_APPROVAL_KEY_FILE (or HOME)"};
  } else if (auto existing = read_key(p)) {
    k = *existing;
  } else if (create) {
    k = create_key(p);
  } else {
    thread_local Key none;
    none = Key{{}, "no approval key " + p.string() + " yet: nothing was approved with yolo on this machine"};
    return none;
  }
  have = true;
  return k;
}

const Key& key() {
  if (testing_key) return *testing_key;
  return cached_key(/*create=*/true);
}

const Key& existing_key() {
  if (testing_key) return *testing_key;
  return cached_key(/*create=*/false);
}

void set_key_for_testing(const std::string& bytes) {
  if (bytes.empty())
    testing_key.reset();
  else
    testing_key = Key{bytes, {}};
}

std::string hmac_sha256_hex(std::string_view key_bytes, std::string_view msg) {
  std::string k(key_bytes);
  if (k.size() > 64) {
    Sha256 h;
    h.update(k);
    auto d = h.finish();
    k.assign(reinterpret_cast<const char*>(d.data()), d.size());
  }
  k.resize(64, '\0');
  std::string ipad(64, '\0'), opad(64, '\0');
  for (size_t i = 0; i < 64; ++i) {
    ipad[i] = static_cast<char>(k[i] ^ 0x36);
    opad[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.update(ipad);
  inner.update(msg);
  auto id = inner.finish();
  Sha256 outer;
  outer.update(opad);
  outer.update(std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
  auto od = outer.finish();
  return to_hex(od.data(), od.size());
}

namespace {
std::string seal_with(const Key& k, std::string_view domain, const json& fields) {
  if (!k.ok()) return {};
  return "hmac-sha256:" + hmac_sha256_hex(k.bytes, std::string(domain) + "\n" +
                                                       fields.dump(-1, ' ', false, json::error_handler_t::replace));
}
}  // namespace

std::string seal_of(std::string_view domain, const json& fields) { return seal_with(key(), domain, fields); }

std::string seal_of(std::string_view domain, const json& fields, const Key& k) { return seal_with(k, domain, fields); }

bool check(std::string_view domain, const json& fields, const std::string& seal, const Key& k) {
  return same(seal_with(k, domain, fields), seal);
}

std::string compute(const json& gate, const Key& k) {
  if (!gate.is_object()) return {};
  return seal_of("yolo-approval-seal-v2", sealed_fields(gate), k);
}

bool valid(const json& gate, const Key& k) {
  if (!gate.is_object()) return false;
  auto it = gate.find("seal");
  if (it == gate.end() || !it->is_string()) return false;
  return check("yolo-approval-seal-v2", sealed_fields(gate), it->get_ref<const std::string&>(), k);
}

bool check(std::string_view domain, const json& fields, const std::string& seal) {
  return same(seal_with(existing_key(), domain, fields), seal);  // checking a seal never makes a key
}

std::string compute(const json& gate) {
  if (!gate.is_object()) return {};
  return seal_of("yolo-approval-seal-v2", sealed_fields(gate));
}

bool valid(const json& gate) {
  if (!gate.is_object()) return false;
  auto it = gate.find("seal");
  if (it == gate.end() || !it->is_string()) return false;
  return check("yolo-approval-seal-v2", sealed_fields(gate), it->get_ref<const std::string&>());
}

}  // namespace yolo::seal
