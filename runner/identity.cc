#include "runner/identity.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "protocol/base/text.h"
#include "runner/subprocess.h"

namespace yolo::runner {

namespace {

std::string clean(std::string_view s) {
  std::string r(text::trim(s));
  if (auto nl = r.find('\n'); nl != std::string::npos) r = std::string(text::trim(r.substr(0, nl)));
  if (r.size() > 200 || !text::valid_utf8(r)) return {};
  return r;
}

// The name of our uid in /etc/passwd, read directly: the release binary is linked statically,
// where getpwuid_r would load NSS modules (libnss_systemd, sss, ldap) built for the shared
// libc into it, which crashes when the uid is not in /etc/passwd. A user only a directory
// service knows falls back to $USER / $LOGNAME.
std::string passwd_user() {
  std::ifstream f("/etc/passwd");
  const std::string uid = std::to_string(::getuid());
  std::string line;
  while (std::getline(f, line)) {
    // name:password:uid:...
    size_t a = line.find(':');
    if (a == std::string::npos || a == 0) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    size_t c = line.find(':', b + 1);
    if (c == std::string::npos) continue;
    if (line.compare(b + 1, c - b - 1, uid) == 0) return clean(line.substr(0, a));
  }
  return {};
}

std::string os_user() {
  if (std::string u = passwd_user(); !u.empty()) return u;
  for (const char* var : {"USER", "LOGNAME"})
    if (const char* v = std::getenv(var); v && *v) return clean(v);
  return {};
}

}  // namespace

std::string approver_identity(const std::string& by_flag, const std::filesystem::path& project_root) {
  if (std::string by = clean(by_flag); !by.empty()) return by;
  SpawnSpec spec;
  spec.argv = {"git", "config", "user.name"};
  spec.cwd = project_root;
  spec.timeout_ms = 5000;
  spec.output_cap = 4096;
  SpawnResult r = run_process(spec);
  if (r.ok())
    if (std::string name = clean(r.out); !name.empty()) return name;
  if (std::string u = os_user(); !u.empty()) return u;
  return "unknown";
}

std::filesystem::path approval_key_path() {
  auto env = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::string(v) : std::string();
  };
  if (std::string f = env("YOLO_APPROVAL_KEY_FILE"); !f.empty()) return f;
  if (std::string x = env("XDG_CONFIG_HOME"); !x.empty() && std::filesystem::path(x).is_absolute())
    return std::filesystem::path(x) / "yolo" / "approval.key";
  if (std::string h = env("HOME"); !h.empty()) return std::filesystem::path(h) / ".config" / "yolo" / "approval.key";
  return {};
}

}  // namespace yolo::runner
