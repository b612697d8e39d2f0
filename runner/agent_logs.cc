#include "runner/agent_logs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "protocol/ports/fs.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

namespace {
// A file-name-safe component: plan ids and phase folders as written, nothing that climbs.
std::string component(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  while (out.starts_with(".")) out.erase(0, 1);
  return out.empty() ? std::string("_") : out;
}
}  // namespace

stdfs::path logs_dir(const stdfs::path& root) { return root / ".yolo-planning" / ".logs"; }

int log_number_of(std::string_view name, std::string_view role) {
  if (name.size() < role.size() + 6 || !name.starts_with(role) || name[role.size()] != '-' || !name.ends_with(".log"))
    return 0;
  std::string_view digits = name.substr(role.size() + 1, name.size() - role.size() - 5);
  if (digits.empty() || digits.size() > 9) return 0;
  int n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string write_agent_log(const World& world, const stdfs::path& root, const std::string& phase_dir,
                            const std::string& plan_id, const std::string& role, int n,
                            const std::vector<std::string>& argv, const SpawnResult& r) {
  std::string phase = stdfs::path(phase_dir).filename().string();
  if (phase.empty()) phase = stdfs::path(phase_dir).parent_path().filename().string();
  stdfs::path dir = logs_dir(root) / component(phase) / component(plan_id);
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) return "";
  if (n <= 0) {
    n = 0;
    const std::string prefix = component(role);
    if (DIR* d = ::opendir(dir.c_str())) {
      while (const dirent* ent = ::readdir(d)) n = std::max(n, log_number_of(ent->d_name, prefix));
      ::closedir(d);
    }
    ++n;
  }
  stdfs::path file = dir / (component(role) + "-" + std::to_string(n) + ".log");
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::string s = "# yolo " + role + " " + std::to_string(n) + " for plan " + plan_id + " at " + world.now() + "\n";
  s += "# argv: " + cmd + "\n# outcome: " + r.describe() + " after " +
       std::to_string(static_cast<long long>(r.elapsed_ms)) + " ms\n";
  s += "## stdout" +
       std::string(r.out_truncated()
                       ? " (last " + std::to_string(r.out.size()) + " of " + std::to_string(r.out_total) + " bytes)"
                       : "") +
       "\n";
  s += r.out;
  if (!r.out.empty() && r.out.back() != '\n') s += "\n";
  s += "## stderr" +
       std::string(r.err_truncated()
                       ? " (last " + std::to_string(r.err.size()) + " of " + std::to_string(r.err_total) + " bytes)"
                       : "") +
       "\n";
  s += r.err;
  if (!r.err.empty() && r.err.back() != '\n') s += "\n";
  // A log, not state: written in place without fsync (a temp file, two fsyncs and a rename
  // per plan were most of execute's file-system time). Never through a symlink.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return "";
  for (size_t off = 0; off < s.size();) {
    ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      return "";
    }
    off += static_cast<size_t>(w);
  }
  if (::close(fd) != 0) return "";
  // file is root/...: lexically relative (stdfs::relative resolved every component of both
  // paths, a dozen readlink calls per log).
  return file.lexically_relative(root).generic_string();
}

}  // namespace yolo::runner
