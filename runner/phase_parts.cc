// What the files of `yolo execute`'s Run share beside the class (runner/phase_parts.h): the
// phase folders, a plan's SUMMARY name, the executors' records.
#include "runner/phase_parts.h"

#include <sys/resource.h>

#include <cmath>

namespace yolo::runner::phase {

std::optional<long long> as_int(const std::string& s) { return text::parse_digits(s); }

std::vector<PhaseDir> list_phases(const stdfs::path& root) {
  std::vector<PhaseDir> out;
  std::error_code ec;
  stdfs::path dir = root / ".yolo-planning" / "phases";
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    PhaseDir p;
    p.folder = it->path().filename().string();
    if (p.folder.empty() || p.folder[0] == '.') continue;
    size_t digits = 0;
    while (digits < p.folder.size() && digits < 18 && p.folder[digits] >= '0' && p.folder[digits] <= '9') ++digits;
    p.number = digits ? std::stoll(p.folder.substr(0, digits)) : 0;
    p.slug = digits && digits < p.folder.size() && p.folder[digits] == '-' ? p.folder.substr(digits + 1) : p.folder;
    p.abs = it->path();
    p.rel = ".yolo-planning/phases/" + p.folder;
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const PhaseDir& a, const PhaseDir& b) { return a.folder < b.folder; });
  return out;
}

// A plan file's path relative to the root: the phase's relative folder and its name when it
// was listed in that folder (no system call: std::filesystem::relative resolves every
// component of both paths, system calls for every plan), else what relative() says.
std::string summary_rel_for(const World& w, const stdfs::path& root, const std::string& plan_rel) {
  const size_t slash = plan_rel.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : plan_rel.substr(0, slash);
  std::string name = summary_name_for(w, dir.empty() ? root : root / dir,
                                      plan_rel.substr(slash == std::string::npos ? 0 : slash + 1));
  return dir.empty() ? name : dir + "/" + name;
}

// "1.5s": tenths of a second, without printf's floating-point formatting (twice per plan).
std::string fmt_secs(double ms) {
  long long tenths = ms > 0 ? std::llround(ms / 100.0) : 0;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "s";
}

// /proc/sys/kernel/random/boot_id: a pid and start time name a process only within one boot.
std::string boot_id() {
  static const std::string id = [] {  // one boot per process: read once
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::string b;
    std::getline(f, b);
    return b;
  }();
  return id;
}

// What a later execute needs to know whether this executor still runs (its pid may be reused).
// Its group is its pid: every child is spawned in a session of its own (subprocess.h).
json executor_record(int pid, unsigned long long start_ticks) {
  return {{"pid", pid}, {"pgid", pid}, {"start_ticks", start_ticks}, {"boot_id", boot_id()}};
}

bool executor_configured(const Config& c) { return !c.executor.argv.empty() || c.dispatch.configured(); }

long open_files_limit() {
  struct rlimit rl {};
  return ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<long>(rl.rlim_cur) : -1;
}

// How many executors can run at once within this process's file descriptor limit: each
// running plan holds a few (its output pipes, its log files, its pidfd, and with worktree
// isolation git's pipes while its slot is made ready). Started past the limit, a plan fails
// ("too many open files") instead of waiting for a slot; so the limit lowers max_parallel.
int fd_parallel_cap(bool isolated) {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1 << 30;
  long open_now = 0;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator("/proc/self/fd", ec); !ec && it != stdfs::directory_iterator();
       it.increment(ec))
    ++open_now;
  const long per_plan = isolated ? 10 : 6, reserve = 24;  // reserve: state writes, logs, the event loop
  long room = static_cast<long>(rl.rlim_cur) - open_now - reserve;
  return static_cast<int>(std::max(1L, room / per_plan));
}

int parallel_within_fd_limit(int want, bool isolated, const std::function<void(int, long)>& lowered) {
  int cap = fd_parallel_cap(isolated);
  if (cap >= want) return want;
  lowered(cap, open_files_limit());
  return cap;
}

}  // namespace yolo::runner::phase
