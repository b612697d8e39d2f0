// What a call a confined child's filter handed over asked, as a person reads it
// (runner/refusal_calls.h).
#include "runner/refusal_calls.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

namespace yolo::runner::refusal_calls {

namespace stdfs = std::filesystem;


std::string clone_flags(unsigned long long f) {
  static const std::pair<unsigned long long, const char*> names[] = {
      {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWNS, "CLONE_NEWNS"},         {CLONE_NEWPID, "CLONE_NEWPID"},
      {CLONE_NEWNET, "CLONE_NEWNET"},   {CLONE_NEWUTS, "CLONE_NEWUTS"},       {CLONE_NEWIPC, "CLONE_NEWIPC"},
      {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}};
  std::string s;
  for (const auto& [bit, name] : names)
    if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
  return s;
}

// What a process asked, as a person reads it. Only the calls the filter hands over.
std::string call_text(const seccomp_data& d) {
  const long nr = d.nr;
  const unsigned long long a0 = d.args[0], a1 = d.args[1];
  if (nr == SYS_unshare) return "unshare(" + clone_flags(a0) + ")";
  if (nr == SYS_clone) return "clone(" + clone_flags(a0) + ")";
  if (nr == SYS_ioctl) {
    const unsigned req = static_cast<unsigned>(a1);
    return std::string("ioctl(") + (req == TIOCSTI ? "TIOCSTI" : req == TIOCLINUX ? "TIOCLINUX" : "?") +
           ") on a terminal";
  }
  static const std::pair<long, const char*> names[] = {
      {SYS_setns, "setns"},           {SYS_mount, "mount"},           {SYS_umount2, "umount"},
      {SYS_pivot_root, "pivot_root"}, {SYS_chroot, "chroot"},         {SYS_bpf, "bpf"},
      {SYS_init_module, "init_module"}, {SYS_finit_module, "finit_module"}, {SYS_delete_module, "delete_module"},
      {SYS_kexec_load, "kexec_load"}, {SYS_reboot, "reboot"},         {SYS_swapon, "swapon"},
      {SYS_swapoff, "swapoff"},       {SYS_open_by_handle_at, "open_by_handle_at"},
      {SYS_open_tree, "open_tree"},   {SYS_move_mount, "move_mount"}, {SYS_fsopen, "fsopen"},
      {SYS_fsconfig, "fsconfig"},     {SYS_fsmount, "fsmount"},       {SYS_fspick, "fspick"},
      {SYS_pidfd_getfd, "pidfd_getfd"},
#ifdef SYS_mount_setattr
      {SYS_mount_setattr, "mount_setattr"},
#endif
#ifdef SYS_kexec_file_load
      {SYS_kexec_file_load, "kexec_file_load"},
#endif
  };
  for (const auto& [n, name] : names)
    if (n == nr) return name;
  return "system call " + std::to_string(nr);
}

// The process's name, as its own comm says (which it can set: only plain characters kept).
std::string process_text(unsigned pid) {
  std::string name;
  int fd = ::open(("/proc/" + std::to_string(pid) + "/comm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[32] = {0};
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    for (ssize_t k = 0; k < n && buf[k] != '\n'; ++k) {
      unsigned char c = static_cast<unsigned char>(buf[k]);
      name += (std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+') ? static_cast<char>(c) : '?';
    }
  }
  if (name.empty()) name = "?";
  return name + " (pid " + std::to_string(pid) + ")";
}

// ---- writes ----

namespace {

// One path a write call names: the folder it is relative to, where its text lies in the
// caller's memory, and whether the call takes it away or follows a final link.
struct WritePath {
  int dirfd;
  unsigned long long addr;
  bool removes;
  bool follows;
  bool creates = false;  // only makes a new name: where one is, the kernel answers EEXIST first
};

constexpr unsigned kWriteIntent = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

bool open_follows(unsigned flags) {
  return !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
}
bool open_creates(unsigned flags) { return (flags & O_CREAT) && (flags & O_EXCL); }

// A NUL-terminated text of the caller's memory, read page by page (a page past it may not be
// mapped); "" when it cannot be read.
std::string read_text(unsigned pid, unsigned long long addr) {
  std::string out;
  constexpr size_t kPage = 4096;
  while (out.size() < 4096) {
    size_t room = kPage - (addr % kPage);
    char buf[kPage];
    iovec local{buf, room}, remote{reinterpret_cast<void*>(addr), room};
    ssize_t n = ::process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    if (n <= 0) return "";
    const char* end = static_cast<const char*>(std::memchr(buf, '\0', static_cast<size_t>(n)));
    out.append(buf, end ? static_cast<size_t>(end - buf) : static_cast<size_t>(n));
    if (end) return out;
    addr += static_cast<unsigned long long>(n);
  }
  return "";
}

std::string read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The paths a write call names, or none for a call that writes nothing (an open for reading
// through openat2).
std::vector<WritePath> write_paths(const seccomp_notif& req) {
  const auto& a = req.data.args;
  const int cwd = AT_FDCWD;
  auto fd = [](unsigned long long v) { return static_cast<int>(v); };
  switch (req.data.nr) {
    case SYS_openat:
      return {{fd(a[0]), a[1], false, open_follows(static_cast<unsigned>(a[2])), open_creates(static_cast<unsigned>(a[2]))}};
    case SYS_openat2: {
      unsigned long long flags = 0;
      iovec local{&flags, sizeof flags}, remote{reinterpret_cast<void*>(a[2]), sizeof flags};
      if (::process_vm_readv(static_cast<pid_t>(req.pid), &local, 1, &remote, 1, 0) != sizeof flags) return {};
      if (!(flags & kWriteIntent)) return {};
      return {{fd(a[0]), a[1], false, open_follows(static_cast<unsigned>(flags)), open_creates(static_cast<unsigned>(flags))}};
    }
    case SYS_truncate: return {{cwd, a[0], false, true}};
    case SYS_unlinkat: return {{fd(a[0]), a[1], true, false}};
    case SYS_mkdirat:
    case SYS_mknodat: return {{fd(a[0]), a[1], false, false, true}};
    case SYS_renameat2:
#ifdef SYS_renameat
    case SYS_renameat:
#endif
      return {{fd(a[0]), a[1], true, false}, {fd(a[2]), a[3], true, false}};
    case SYS_linkat: return {{fd(a[2]), a[3], false, false, true}};
    case SYS_symlinkat: return {{fd(a[1]), a[2], false, false, true}};
#ifdef SYS_open
    case SYS_open: return {{cwd, a[0], false, open_follows(static_cast<unsigned>(a[1])), open_creates(static_cast<unsigned>(a[1]))}};
    case SYS_creat: return {{cwd, a[0], false, true}};
    case SYS_unlink:
    case SYS_rmdir: return {{cwd, a[0], true, false}};
    case SYS_mkdir:
    case SYS_mknod: return {{cwd, a[0], false, false, true}};
    case SYS_rename: return {{cwd, a[0], true, false}, {cwd, a[1], true, false}};
    case SYS_link: return {{cwd, a[1], false, false, true}};
    case SYS_symlink: return {{cwd, a[1], false, false, true}};
#endif
    default: return {};
  }
}

// The canonical path a write reaches, as the caller sees it ("" when it is no file of a
// folder tree: a pipe, a socket, a file of /proc). The caller's mount namespace binds paths
// onto themselves only, so its paths resolve here as they do there.
std::mutex stall_mu;
std::string stall_marker;
std::chrono::milliseconds stall_delay{0};

std::string resolve(unsigned pid, const WritePath& w, const std::string& text) {
  if (text.empty()) return "";
  {
    std::unique_lock<std::mutex> g(stall_mu);
    if (!stall_marker.empty() && text.find(stall_marker) != std::string::npos) {
      auto d = stall_delay;
      g.unlock();
      std::this_thread::sleep_for(d);
    }
  }
  const std::string proc = "/proc/" + std::to_string(pid);
  stdfs::path p(text);
  if (p.is_relative()) {
    std::string base = read_link(w.dirfd == AT_FDCWD ? proc + "/cwd" : proc + "/fd/" + std::to_string(w.dirfd));
    if (base.empty() || base[0] != '/') return "";
    p = stdfs::path(base) / p;
  }
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  // The caller's own descriptors by name: what they are open on, not what ours are.
  for (const auto& [alias, real] : {std::pair<std::string, std::string>{"/dev/stdin", "/fd/0"},
                                    {"/dev/stdout", "/fd/1"},
                                    {"/dev/stderr", "/fd/2"}})
    if (s == alias) s = proc + real;
  for (const char* self : {"/proc/self", "/proc/thread-self", "/dev/fd"}) {
    const std::string pre = self;
    if (s == pre || s.rfind(pre + "/", 0) == 0) s = proc + (pre == "/dev/fd" ? "/fd" : "") + s.substr(pre.size());
  }
  if (s.rfind("/proc/", 0) == 0) {
    const std::string fds = proc + "/fd/";
    if (s.rfind(fds, 0) != 0 || s.find('/', fds.size()) != std::string::npos) return "";
    s = read_link(s);
    if (s.empty() || s[0] != '/') return "";
  }
  std::error_code ec;
  stdfs::path full(s);
  if (w.follows) {
    auto c = stdfs::weakly_canonical(full, ec);
    return ec ? s : c.lexically_normal().string();
  }
  auto parent = stdfs::weakly_canonical(full.parent_path(), ec);
  if (ec) return s;
  return (parent / full.filename()).lexically_normal().string();
}

std::string shown(const sandbox::WriteView& v, const std::string& path) {
  if (!v.checkout.empty() && path.size() > v.checkout.size() && path.compare(0, v.checkout.size(), v.checkout) == 0 &&
      path[v.checkout.size()] == '/')
    return path.substr(v.checkout.size() + 1);
  return path;
}

const char* write_verb(long nr) {
  switch (nr) {
    case SYS_unlinkat:
#ifdef SYS_unlink
    case SYS_unlink:
    case SYS_rmdir:
#endif
      return "removing";
    case SYS_renameat2:
#ifdef SYS_renameat
    case SYS_renameat:
#endif
#ifdef SYS_rename
    case SYS_rename:
#endif
      return "renaming";
    case SYS_linkat:
    case SYS_symlinkat:
#ifdef SYS_link
    case SYS_link:
    case SYS_symlink:
#endif
      return "linking";
    case SYS_mkdirat:
#ifdef SYS_mkdir
    case SYS_mkdir:
#endif
      return "making";
    default: return "writing";
  }
}

}  // namespace

bool is_write_call(long nr) {
  switch (nr) {
    case SYS_openat:
    case SYS_openat2:
    case SYS_truncate:
    case SYS_unlinkat:
    case SYS_mkdirat:
    case SYS_mknodat:
    case SYS_renameat2:
    case SYS_linkat:
    case SYS_symlinkat:
#ifdef SYS_renameat
    case SYS_renameat:
#endif
#ifdef SYS_open
    case SYS_open:
    case SYS_creat:
    case SYS_unlink:
    case SYS_rmdir:
    case SYS_mkdir:
    case SYS_mknod:
    case SYS_rename:
    case SYS_link:
    case SYS_symlink:
#endif
      return true;
    default: return false;
  }
}

void stall_walks_for_tests(std::string marker, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> g(stall_mu);
  stall_marker = std::move(marker);
  stall_delay = delay;
}

bool is_socket_call(long nr) { return nr == SYS_connect || nr == SYS_sendto; }

std::string connect_attempt(const seccomp_notif& req, const sandbox::SocketView& view,
                            const std::function<bool()>& still_valid) {
  const auto& a = req.data.args;
  const unsigned long long addr = req.data.nr == SYS_connect ? a[1] : a[4];
  const unsigned long long len = req.data.nr == SYS_connect ? a[2] : a[5];
  constexpr size_t kPathAt = offsetof(sockaddr_un, sun_path);
  if (!addr || len <= kPathAt) return "";
  sockaddr_un sun;
  std::memset(&sun, 0, sizeof sun);
  const size_t n = std::min<unsigned long long>(len, sizeof sun);
  iovec local{&sun, n}, remote{reinterpret_cast<void*>(addr), n};
  if (::process_vm_readv(static_cast<pid_t>(req.pid), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(n)) return "";
  // An abstract address (a leading NUL) is scoped by Landlock itself; an unnamed one reaches nothing.
  if (sun.sun_family != AF_UNIX || sun.sun_path[0] == '\0') return "";
  std::string text(sun.sun_path, ::strnlen(sun.sun_path, n - kPathAt));
  if (!still_valid()) return "";
  // A socket's path is followed to its end, as connect does.
  const std::string path = resolve(req.pid, WritePath{AT_FDCWD, 0, false, true}, text);
  if (path.empty() || sandbox::judge_connect(view, path) != sandbox::ConnectVerdict::Attempt) return "";
  return "connecting to " + path + " by " + process_text(req.pid);
}

std::vector<std::string> write_attempts(const seccomp_notif& req, const sandbox::WriteView& view,
                                        const std::function<bool()>& still_valid) {
  std::vector<std::pair<WritePath, std::string>> texts;
  for (const auto& p : write_paths(req)) texts.emplace_back(p, read_text(req.pid, p.addr));
  std::vector<std::string> out;
  if (texts.empty() || !still_valid()) return out;
  for (const auto& [p, text] : texts) {
    const std::string path = resolve(req.pid, p, text);
    if (path.empty()) continue;
    struct stat st {};
    if (p.creates && ::lstat(path.c_str(), &st) == 0) continue;  // `mkdir -p` on what is there
    if (sandbox::judge_write(view, path, p.removes) == sandbox::WriteVerdict::Attempt)
      out.push_back(std::string(write_verb(req.data.nr)) + " " + shown(view, path) + " by " + process_text(req.pid));
  }
  return out;
}

}  // namespace yolo::runner::refusal_calls
