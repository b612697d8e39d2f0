// The mounts of a confinement's own mount namespace, prepared in the parent: which paths are
// bound read-only or writable, with which flags, from which source (runner/sandbox_internal.h).
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "runner/sandbox.h"
#include "runner/sandbox_internal.h"

namespace yolo::runner::sandbox_detail {

namespace stdfs = std::filesystem;

namespace {

// The flags a bind mount of `path` must keep when it is remounted (in a user namespace the
// kernel refuses a remount that would drop them).
unsigned long locked_flags(const std::string& path) {
  struct statvfs v {};
  if (::statvfs(path.c_str(), &v) != 0) return 0;
  unsigned long f = 0;
  if (v.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (v.f_flag & ST_NODEV) f |= MS_NODEV;
  if (v.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (v.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (v.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (v.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

}  // namespace

// The read-only binds (and the writable ones below them) the child makes in its own mount
// namespace, for the paths of the policy that exist.
void prepare_mounts(Confinement& c) {
  std::error_code ec;
  size_t first_within = static_cast<size_t>(-1);  // where the phase folder's files begin
  // The flags the kernel keeps locked on a mount are the same for the files of one folder.
  std::string flags_dir;
  unsigned long dir_flags = 0;
  // In this order: a pinned folder's own bind first, so the read-only binds inside it stay.
  for (const auto* list :
       {&c.policy.pinned, &c.policy.read_only, &c.policy.writable_within, &c.policy.read_only_within})
    for (const auto& p : *list) {
      // The phase folder's files were listed canonical (policy_inputs).
      std::string path = list == &c.policy.read_only_within ? p : canonical(p);
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) continue;
      if (list == &c.policy.read_only_within && first_within > c.mount_paths.size()) first_within = c.mount_paths.size();
      c.mount_paths.push_back(path);
      const bool ro = list == &c.policy.read_only || list == &c.policy.read_only_within;
      unsigned long locked = 0;
      if (S_ISDIR(st.st_mode)) {
        locked = locked_flags(path);
      } else {
        std::string dir = stdfs::path(path).parent_path().string();
        if (dir != flags_dir) {
          flags_dir = dir;
          dir_flags = locked_flags(path);
        }
        locked = dir_flags;
      }
      c.mount_flags.push_back(locked | (ro ? MS_RDONLY : 0));
    }
  // A file directly in a writable folder that itself lies beneath a read-only bind (the phase
  // folder's plans and SUMMARYs, under .yolo-planning) is bound from that read-only bind, seen
  // through a descriptor of the folder the child takes just before binding the folder
  // writable: one mount per file, read-only from its source.
  first_within = std::min(first_within, c.mount_paths.size());
  std::vector<std::string> rw_dirs;
  for (const auto& w : c.policy.writable_within) {
    const std::string dir = canonical(w);
    bool under_ro = false;
    for (size_t i = 0; i < c.mount_paths.size() && !under_ro; ++i)
      under_ro = (c.mount_flags[i] & MS_RDONLY) && dir.size() > c.mount_paths[i].size() &&
                 dir.compare(0, c.mount_paths[i].size(), c.mount_paths[i]) == 0 && dir[c.mount_paths[i].size()] == '/';
    // Its own bind must be made, before its files', for the descriptor to be taken.
    const bool bound = std::find(c.mount_paths.begin(), c.mount_paths.begin() + static_cast<long>(first_within), dir) !=
                       c.mount_paths.begin() + static_cast<long>(first_within);
    rw_dirs.push_back(under_ro && bound ? dir : std::string());
  }
  std::vector<int> src_dir(c.mount_paths.size(), -1);  // which held folder a file is bound from
  std::vector<int> holds(rw_dirs.size(), -1);
  for (size_t i = first_within; i < c.mount_paths.size(); ++i) {
    const std::string dir = stdfs::path(c.mount_paths[i]).parent_path().string();
    for (size_t w = 0; w < rw_dirs.size(); ++w)
      if (!rw_dirs[w].empty() && rw_dirs[w] == dir) {
        if (holds[w] < 0) {
          int fd = ::open("/", O_PATH | O_CLOEXEC);
          if (fd >= 0 && fd < 3) {
            int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
            ::close(fd);
            fd = moved;
          }
          if (fd < 0) break;
          c.hold_fds.push_back(fd);
          holds[w] = fd;
        }
        src_dir[i] = holds[w];
        break;
      }
  }
  c.mount_srcs.resize(c.mount_paths.size());
  for (size_t i = 0; i < c.mount_paths.size(); ++i)
    if (src_dir[i] >= 0)
      c.mount_srcs[i] = "/proc/self/fd/" + std::to_string(src_dir[i]) + "/" + stdfs::path(c.mount_paths[i]).filename().string();
  for (size_t i = 0; i < c.mount_paths.size(); ++i) {
    Confinement::Mount m{c.mount_paths[i].c_str(), c.mount_flags[i]};
    if (src_dir[i] >= 0) m.src = c.mount_srcs[i].c_str();
    for (size_t w = 0; w < rw_dirs.size(); ++w)
      if (holds[w] >= 0 && i < first_within && c.mount_paths[i] == rw_dirs[w]) m.hold_fd = holds[w];
    c.mounts.push_back(m);
  }
  // Last, the decoys over the secrets (outside the checkout, beneath no other bind).
  for (const auto& [decoy, secret] : c.decoys) {
    Confinement::Mount m{secret.c_str(), 0, decoy.c_str()};
    m.optional = true;
    c.mounts.push_back(m);
  }
  if (c.mounts.empty()) return;
  c.user_ns = ::geteuid() != 0;  // root makes a mount namespace alone; anyone else in a user namespace
  c.uid_map = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  c.gid_map = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
}

}  // namespace yolo::runner::sandbox_detail
