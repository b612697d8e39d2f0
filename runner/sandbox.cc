#include "runner/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "protocol/gate_coverage.h"
#include "protocol/sha256.h"
#include "runner/child_keeper.h"
#include "runner/identity.h"
#include "runner/refusals.h"
#include "runner/world.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

// Landlock's rights and fields newer than the kernel headers of older distributions.
namespace ll {
constexpr unsigned long long kRefer = 1ULL << 13;     // ABI 2
constexpr unsigned long long kTruncate = 1ULL << 14;  // ABI 3
constexpr unsigned long long kIoctlDev = 1ULL << 15;  // ABI 5
constexpr unsigned long long kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;  // ABI 6
struct RulesetAttr {
  unsigned long long handled_access_fs, handled_access_net, scoped;
};
struct PathBeneath {
  unsigned long long allowed_access;
  int parent_fd;
} __attribute__((packed));
constexpr unsigned long long kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr unsigned long long kExec = LANDLOCK_ACCESS_FS_EXECUTE;
constexpr unsigned long long kWriteBase =
    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM;
// What applies to a file (not a folder): the rest is refused by landlock_add_rule.
constexpr unsigned long long kFileRights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | kTruncate | kIoctlDev;
}  // namespace ll

int landlock_abi() {
  static const int abi = [] {
    long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? 0 : static_cast<int>(v);
  }();
  return abi;
}

namespace {

unsigned long long handled_fs(int abi) {
  unsigned long long h = ll::kRead | ll::kExec | ll::kWriteBase | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                         LANDLOCK_ACCESS_FS_MAKE_BLOCK;
  if (abi >= 2) h |= ll::kRefer;
  if (abi >= 3) h |= ll::kTruncate;
  if (abi >= 5) h |= ll::kIoctlDev;
  return h;
}

unsigned long long rights_of(unsigned access, int abi) {
  unsigned long long r = 0;
  if (access & sandbox::Read) r |= ll::kRead;
  if (access & sandbox::Exec) r |= ll::kExec;
  if (access & sandbox::Write) {
    r |= ll::kWriteBase;
    if (abi >= 2) r |= ll::kRefer;
    if (abi >= 3) r |= ll::kTruncate;
  }
  return r & handled_fs(abi);
}

// Adds a rule for `path` (followed when it is a symbolic link: the grant is the target's).
// A path that does not exist is no rule (nothing to reach there). 0 or an errno.
int add_rule(int rs, const std::string& path, unsigned long long rights) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : errno;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= ll::kFileRights;
  ll::PathBeneath pb{rights, fd};
  long r = rights ? ::syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) : 0;
  int e = r < 0 ? errno : 0;
  ::close(fd);
  return e;
}

bool beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/' && path != "/";
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// One path granted read and execute, and whether it is a folder.
struct ReadRule {
  std::string path;
  bool dir;
};

// Read and execute everything beneath `dir` except the hidden paths beneath it: each entry
// of a folder that holds a hidden path is granted on its own (a symbolic link is not: what it
// names is reached, and judged, where it lies).
int collect_all_except(const std::string& dir, const std::vector<std::string>& hidden, std::vector<ReadRule>& out,
                       int depth) {
  if (depth > 64) return ELOOP;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return errno == ENOENT || errno == EACCES ? 0 : errno;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  for (const auto& n : names) {
    std::string path = dir == "/" ? "/" + n : dir + "/" + n;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (std::find(hidden.begin(), hidden.end(), path) != hidden.end()) continue;
    bool holds_hidden = std::any_of(hidden.begin(), hidden.end(), [&](const std::string& h) { return beneath(h, path); });
    if (holds_hidden) {
      if (int e = collect_all_except(path, hidden, out, depth + 1)) return e;
      continue;
    }
    out.push_back({path, S_ISDIR(st.st_mode)});
  }
  return 0;
}

// The read rules for a set of hidden paths, listed once per process: every child of a run has
// the same secrets, and listing the folders that hold them was most of a confined start. Paths,
// not descriptors: a process under a low descriptor limit keeps its descriptors for its work.
// (A folder made at the top of the home after yolo started is readable from its next start.)
int read_rules(const std::vector<std::string>& hidden, const std::vector<ReadRule>*& out) {
  static std::mutex mu;
  static std::map<std::string, std::vector<ReadRule>> cache;
  std::string key;
  for (const auto& h : hidden) key += h + '\n';
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) {
    out = &it->second;
    return 0;
  }
  std::vector<ReadRule> rules;
  if (int e = collect_all_except("/", hidden, rules, 0)) return e;
  out = &(cache[key] = std::move(rules));
  return 0;
}

// The canonical form of a path as far as it exists (a hidden path named through a link is
// hidden where it lies).
std::string canonical(const std::string& p) {
  std::error_code ec;
  auto c = stdfs::weakly_canonical(p, ec);
  return ec ? p : c.lexically_normal().string();
}

// ---- the seccomp program ----

struct Bpf {
  std::vector<sock_filter> p;
  void ld_nr() { p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))); }
  void ld_arg_lo(int i) {
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * i)));
  }
  void ret(unsigned v) { p.push_back(BPF_STMT(BPF_RET | BPF_K, v)); }
  // When A == nr, the block (which always returns) runs; else it is jumped over.
  void on(long nr, const std::vector<sock_filter>& block) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, static_cast<unsigned char>(block.size())));
    p.insert(p.end(), block.begin(), block.end());
  }
};

constexpr unsigned kProbeMagic = 0x796f6c6f;  // getcpu's unused third argument, "yolo"
constexpr unsigned ret_errno(int e) { return SECCOMP_RET_ERRNO | (static_cast<unsigned>(e) & SECCOMP_RET_DATA); }

std::vector<sock_filter> seccomp_program(bool unix_sockets, bool notify, bool watch_writes) {
  Bpf b;
#if defined(__x86_64__)
  constexpr unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr unsigned arch = AUDIT_ARCH_AARCH64;
#else
  constexpr unsigned arch = 0;
#endif
  b.p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  b.p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0));
  b.ret(ret_errno(EPERM));  // another system call table (i386 on x86-64): nothing
  b.ld_nr();
#if defined(__x86_64__)
  b.p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 table
  b.ret(ret_errno(EPERM));
#endif
  const unsigned eperm = ret_errno(EPERM);
  if (notify && watch_writes) {
    // Writes go to yolo's supervisor, which lets each go on to the kernel and names those
    // the policy refuses as attempts (runner/refusals.h). An open for reading stays here.
    const unsigned intent = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
    auto on_open = [&](long nr, int flags_arg) {
      b.on(nr, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * flags_arg)),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, intent, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
    };
    on_open(SYS_openat, 2);
#ifdef SYS_open
    on_open(SYS_open, 1);
#endif
    const long writes[] = {SYS_openat2,  SYS_truncate, SYS_unlinkat, SYS_mkdirat, SYS_mknodat, SYS_renameat2,
                           SYS_linkat,   SYS_symlinkat,
#ifdef SYS_renameat
                           SYS_renameat,
#endif
#ifdef SYS_open
                           SYS_creat,    SYS_unlink,   SYS_rmdir,    SYS_mkdir,   SYS_mknod,   SYS_rename,
                           SYS_link,     SYS_symlink,
#endif
    };
    for (long nr : writes) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)});
  }
  // What only an escape attempt asks: handed to yolo's supervisor, which names it in the
  // plan's or review's finding and answers EPERM (runner/refusals.h); silent without one.
  const unsigned refuse = notify ? SECCOMP_RET_USER_NOTIF : eperm;
  const long attempts[] = {
      // ptrace and process_vm_* are left to Landlock, which refuses them towards any process
      // outside the child's own domain (yolo, the person's processes, other children); inside
      // it they stay (a sanitizer's leak check traces its own threads).
      SYS_unshare,      SYS_setns,       SYS_mount,         SYS_umount2,        SYS_pivot_root,    SYS_chroot,
      SYS_bpf,          SYS_init_module, SYS_finit_module,  SYS_delete_module,  SYS_kexec_load,    SYS_reboot,
      SYS_swapon,       SYS_swapoff,     SYS_open_by_handle_at, SYS_open_tree,  SYS_move_mount,    SYS_fsopen,
      SYS_fsconfig,     SYS_fsmount,     SYS_fspick,        SYS_pidfd_getfd,
#ifdef SYS_mount_setattr
      SYS_mount_setattr,
#endif
#ifdef SYS_kexec_file_load
      SYS_kexec_file_load,
#endif
  };
  // What programs probe for (libuv tries io_uring, runtimes the key rings): refused silently.
  const long probes[] = {SYS_perf_event_open, SYS_keyctl,          SYS_add_key,           SYS_request_key,
                         SYS_io_uring_setup,  SYS_io_uring_enter,  SYS_io_uring_register, SYS_userfaultfd,
                         SYS_name_to_handle_at, SYS_kcmp};
  for (long nr : attempts) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, refuse)});
  for (long nr : probes) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, eperm)});
  constexpr unsigned ns_flags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS |
                                CLONE_NEWIPC | CLONE_NEWCGROUP;
  b.on(SYS_clone, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args))),
                   BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1), BPF_STMT(BPF_RET | BPF_K, refuse),
                   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  // clone3's flags lie behind a pointer the filter cannot read: it answers ENOSYS, so that
  // libc falls back to clone, whose flags it reads. With a supervisor, the call is handed
  // over first, so that one asking for a namespace is named; the answer is ENOSYS all the same.
  b.on(SYS_clone3, {BPF_STMT(BPF_RET | BPF_K, notify ? SECCOMP_RET_USER_NOTIF : ret_errno(ENOSYS))});
  // ioctl's request is an unsigned int in the kernel: only the low half counts.
  b.on(SYS_ioctl, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8)),
                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                   BPF_STMT(BPF_RET | BPF_K, refuse)});
  if (!unix_sockets)
    b.on(SYS_socket, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args))),
                      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1), BPF_STMT(BPF_RET | BPF_K, ret_errno(EACCES)),
                      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  b.on(SYS_getcpu, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 16)),
                    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kProbeMagic, 0, 1),
                    BPF_STMT(BPF_RET | BPF_K, ret_errno(ENOTRECOVERABLE)),
                    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  b.ret(SECCOMP_RET_ALLOW);
  return b.p;
}

// Each program an argv of the config names by a path inside the project (agents, executor,
// approvers, dispatch adapters), and every project file the config names that the vision
// approval covers by content: absolute, existing.
std::vector<std::string> configured_programs(const Config& cfg, const stdfs::path& root) {
  std::vector<std::string> out;
  auto take = [&](const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0].find('/') == std::string::npos) return;
    stdfs::path p = stdfs::path(argv[0]).is_absolute() ? stdfs::path(argv[0]) : root / argv[0];
    std::error_code ec;
    if (stdfs::is_regular_file(p, ec)) out.push_back(p.lexically_normal().string());
  };
  for (const CommandSpec* c : {&cfg.reviewer, &cfg.architect, &cfg.executor, &cfg.dispatch.submit, &cfg.dispatch.wait,
                               &cfg.dispatch.cancel})
    take(c->argv);
  for (const auto& rel : gates::named_project_files(world(), root, cfg.raw)) out.push_back((root / rel).string());
  if (auto a = cfg.raw.find("approvers"); a != cfg.raw.end() && a->is_object())
    for (const auto& [type, v] : a->items()) {
      const json* cmd = v.is_array() ? &v : (v.is_object() && v.contains("command") ? &v["command"] : nullptr);
      if (!cmd || !cmd->is_array()) continue;
      std::vector<std::string> argv;
      for (const auto& x : *cmd)
        if (x.is_string()) argv.push_back(x.get<std::string>());
      take(argv);
    }
  return out;
}

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

// The read-only binds (and the writable ones below them) the child makes in its own mount
// namespace, for the paths of the policy that exist.
void prepare_mounts(Confinement& c) {
  std::error_code ec;
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
  if (c.mount_paths.empty()) return;
  for (size_t i = 0; i < c.mount_paths.size(); ++i) c.mounts.push_back({c.mount_paths[i].c_str(), c.mount_flags[i]});
  c.user_ns = ::geteuid() != 0;  // root makes a mount namespace alone; anyone else in a user namespace
  c.uid_map = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  c.gid_map = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
}

std::string home() {
  const char* h = std::getenv("HOME");
  return h && *h ? std::string(h) : std::string();
}

std::string expand_home(const std::string& p) {
  if (p == "~") return home();
  if (p.rfind("~/", 0) == 0) return home() + p.substr(1);
  return p;
}

const json* sandbox_object(const Config& cfg) {
  auto it = cfg.raw.find("sandbox");
  return it != cfg.raw.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

Confinement::~Confinement() {
  if (ruleset_fd >= 0) ::close(ruleset_fd);
  if (!temp_dir.empty() && !keep_temp) {
    std::error_code ec;
    stdfs::remove_all(temp_dir, ec);
  }
}

json Confinement::record() const {
  return {{"role", sandbox::role_name(policy.role)}, {"mechanism", mechanism}, {"abi", abi}, {"policy", digest}};
}

std::vector<std::string> default_secrets() {
  std::vector<std::string> s;
  if (auto k = approval_key_path(); !k.empty()) {
    s.push_back(canonical(k.string()));
    s.push_back(canonical(k.parent_path().string()));
  }
  if (std::string h = home(); !h.empty()) {
    s.push_back(canonical(h + "/.ssh"));
    s.push_back(canonical(h + "/.gnupg"));
    s.push_back(canonical(h + "/.config/yolo"));
  }
  if (const char* sock = std::getenv("SSH_AUTH_SOCK"); sock && *sock)
    s.push_back(canonical(stdfs::path(sock).parent_path().string()));
  // A folder that is the home or the root itself would hide everything: the file only then.
  s.erase(std::remove_if(s.begin(), s.end(), [](const std::string& p) { return p == "/" || p == home(); }), s.end());
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

bool sandbox_off(const Config& cfg) {
  auto it = cfg.raw.find("sandbox");
  if (it == cfg.raw.end()) return false;
  if (it->is_string()) return it->get<std::string>() == "off";
  if (const json* o = sandbox_object(cfg); o && o->contains("mode") && (*o)["mode"].is_string())
    return (*o)["mode"].get<std::string>() == "off";
  return false;
}

ConfinementResult confine_policy(sandbox::Policy policy, stdfs::path temp_dir, const std::string& checkout,
                                 const std::string& git_dir) {
  ConfinementResult out;
  auto c = std::make_shared<Confinement>();
  c->temp_dir = std::move(temp_dir);
  c->abi = landlock_abi();
  c->digest = "sha256:" + sha256_hex(policy.canonical());
  c->policy = std::move(policy);
  out.confinement = c;
  if (c->abi <= 0) {
    out.error =
        "the sandbox needs Linux Landlock (kernel 5.13 or later, with landlock among the LSMs), which this kernel "
        "does not offer";
    return out;
  }
  ll::RulesetAttr attr{handled_fs(c->abi), 0, c->abi >= 6 ? (ll::kScopeAbstractUnix | ll::kScopeSignal) : 0};
  size_t size = c->abi >= 6 ? sizeof attr : c->abi >= 4 ? 2 * sizeof(unsigned long long) : sizeof(unsigned long long);
  long rs = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (rs < 0) {
    out.error = std::string("the Landlock ruleset could not be made: ") + std::strerror(errno);
    return out;
  }
  // Above 0-2: the child puts its pipes there before it enters the ruleset.
  c->ruleset_fd = static_cast<int>(rs);
  if (c->ruleset_fd < 3) {
    int moved = ::fcntl(c->ruleset_fd, F_DUPFD_CLOEXEC, 3);
    ::close(c->ruleset_fd);
    c->ruleset_fd = moved;
  }
  std::vector<std::string> hidden;
  for (const auto& h : c->policy.hidden) hidden.push_back(canonical(h));
  hidden.push_back("/dev");  // only the harmless devices below, never a terminal
  // Every folder can be listed (names are no secret, and programs walk up from their working
  // folder); the contents of files are read only outside the hidden paths.
  int e = add_rule(c->ruleset_fd, "/", LANDLOCK_ACCESS_FS_READ_DIR);
  const std::vector<ReadRule>* reads = nullptr;
  if (!e) e = read_rules(hidden, reads);
  const unsigned long long read_rights = rights_of(sandbox::Read | sandbox::Exec, c->abi);
  for (size_t k = 0; !e && reads && k < reads->size(); ++k) {
    int fd = ::open((*reads)[k].path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // gone since it was listed
    ll::PathBeneath pb{(*reads)[k].dir ? read_rights : (read_rights & ll::kFileRights), fd};
    if (::syscall(SYS_landlock_add_rule, c->ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) e = errno;
    ::close(fd);
  }
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
    if (!e) e = add_rule(c->ruleset_fd, dev, rights_of(sandbox::Read | sandbox::Write, c->abi) | (c->abi >= 5 ? ll::kIoctlDev : 0));
  for (const auto& g : c->policy.grants)
    if (!e) e = add_rule(c->ruleset_fd, canonical(g.path), rights_of(g.access, c->abi));
  if (e) {
    out.error = std::string("the Landlock ruleset could not be made: ") + std::strerror(e);
    return out;
  }
  c->mechanism = "landlock+seccomp";
  c->drop_caps = ::geteuid() == 0;
  prepare_mounts(*c);
  if (!c->mounts.empty()) c->mechanism = "landlock+seccomp+mountns";
  c->filter = seccomp_program(c->policy.unix_sockets, false, false);
  c->prog.len = static_cast<unsigned short>(c->filter.size());
  c->prog.filter = c->filter.data();
  if (refusal_notes_available()) {
    std::shared_ptr<const sandbox::WriteView> writes;
    if (!checkout.empty() && write_notes_available()) {
      std::vector<sandbox::WriteView::Mount> binds;
      for (size_t k = 0; k < c->mount_paths.size(); ++k)
        binds.push_back({c->mount_paths[k], (c->mount_flags[k] & MS_RDONLY) != 0});
      sandbox::Policy seen = c->policy;  // as the ruleset holds it: canonical, the devices too
      for (auto& g : seen.grants) g.path = canonical(g.path);  // the rest was made from canonical folders
      for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
        seen.grants.push_back({dev, sandbox::Read | sandbox::Write});
      writes = std::make_shared<const sandbox::WriteView>(
          sandbox::write_view(seen, std::move(binds), canonical(checkout), git_dir.empty() ? std::string() : canonical(git_dir)));
    }
    c->notify_filter = seccomp_program(c->policy.unix_sockets, true, writes != nullptr);
    c->notify_prog.len = static_cast<unsigned short>(c->notify_filter.size());
    c->notify_prog.filter = c->notify_filter.data();
    c->refusals = std::make_shared<RefusalLog>(std::move(writes));
  }
  return out;
}

sandbox::PolicyInputs policy_inputs(const Config& cfg, const SandboxRequest& req, const stdfs::path& temp,
                                    const stdfs::path& priv) {
  sandbox::PolicyInputs in;
  in.role = req.role;
  in.project_root = canonical(req.project_root.string());
  in.temp_dir = temp.string();
  if (!priv.empty()) in.yolo_private_dir = canonical(priv.string());
  in.secrets = default_secrets();
  std::error_code ec;
  if (req.role == sandbox::Role::Executor && !req.worktree.empty()) {
    in.worktree = canonical(req.worktree.string());
    // The slot's .git file names its git folder; the common folder is two levels up.
    stdfs::path gitdir;
    if (FILE* f = std::fopen((req.worktree / ".git").c_str(), "r")) {
      char line[4096] = {0};
      if (std::fgets(line, sizeof line, f)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        if (s.rfind("gitdir: ", 0) == 0) gitdir = s.substr(8);
      }
      std::fclose(f);
    }
    if (!gitdir.empty()) {
      if (gitdir.is_relative()) gitdir = req.worktree / gitdir;
      in.git_worktree_dir = canonical(gitdir.string());
      in.git_common_dir = canonical(gitdir.parent_path().parent_path().string());
    }
    if (!req.branch.empty()) {
      in.branch_ref = "refs/heads/" + req.branch;
      // The folders git writes the branch's ref and reflog through must exist to be granted.
      auto dir = stdfs::path(in.branch_ref).parent_path();
      if (!in.git_common_dir.empty()) {
        stdfs::create_directories(stdfs::path(in.git_common_dir) / dir, ec);
        stdfs::create_directories(stdfs::path(in.git_common_dir) / "logs" / dir, ec);
      }
    }
  } else if (req.role == sandbox::Role::Executor && !req.phase_dir.empty()) {
    in.phase_dir = canonical(req.phase_dir.string());
    const std::string own = req.own_summary.empty() ? std::string() : canonical(req.own_summary.string());
    // The folder is canonical, so an entry that is no link is too: no path walk per file (a
    // phase folder holds dozens). A link is followed to what it names.
    for (auto it = stdfs::directory_iterator(in.phase_dir, ec); !ec && it != stdfs::directory_iterator();
         it.increment(ec)) {
      std::error_code fe;
      const auto type = it->symlink_status(fe).type();
      std::string file;
      if (type == stdfs::file_type::regular)
        file = it->path().string();
      else if (type == stdfs::file_type::symlink && it->is_regular_file(fe))
        file = canonical(it->path().string());
      if (!file.empty() && file != own) in.phase_files.push_back(std::move(file));
    }
    std::sort(in.phase_files.begin(), in.phase_files.end());
  }
  const std::string role = sandbox::role_name(req.role);
  if (const json* o = sandbox_object(cfg)) {
    if (auto w = o->find("write"); w != o->end() && w->is_object())
      if (auto list = w->find(role); list != w->end() && list->is_array())
        for (const auto& p : *list)
          if (p.is_string()) {
            std::string path = expand_home(p.get<std::string>());
            if (stdfs::path(path).is_relative()) path = (req.project_root / path).string();
            // A folder the config declares (an agent CLI's state, before its first run) is made,
            // so that the grant has something to hold on to.
            std::error_code mk;
            if (!stdfs::exists(path, mk)) stdfs::create_directories(path, mk);
            in.extra_write.push_back(path);
          }
    if (auto u = o->find("unix_sockets"); u != o->end() && u->is_array())
      for (const auto& r : *u)
        if (r.is_string() && r.get<std::string>() == role) in.unix_sockets = true;
  }
  in.extra_write.insert(in.extra_write.end(), req.extra_write.begin(), req.extra_write.end());
  // The programs the config names inside the project stay as approved, whoever can write there.
  // So does the yolo binary the person runs, when it lies in the project (a build folder).
  if (req.role == sandbox::Role::Executor || req.role == sandbox::Role::Shell) {
    for (const auto& prog : configured_programs(cfg, req.project_root)) in.protected_paths.push_back(canonical(prog));
    for (const auto& prog : req.protected_programs) in.protected_paths.push_back(canonical(prog));
    std::error_code se;
    const std::string self = canonical(stdfs::read_symlink("/proc/self/exe", se).string());
    const std::string root = canonical(req.project_root.string());
    if (!self.empty() && !root.empty() && self.rfind(root + "/", 0) == 0) in.protected_paths.push_back(self);
  }
  return in;
}

ConfinementResult confine(const Config& cfg, const SandboxRequest& req) {
  // The child's own temp folder, inside yolo's private one (which no child can read).
  stdfs::path priv = private_temp_dir();
  std::string tmpl = (priv.empty() ? stdfs::temp_directory_path() : priv).string() + "/sbx-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  stdfs::path temp;
  if (::mkdtemp(buf.data())) temp = buf.data();
  const sandbox::PolicyInputs inputs = policy_inputs(cfg, req, temp, priv);
  const std::string policy_git_dir = inputs.git_common_dir;
  sandbox::Policy policy = sandbox::policy_for(inputs);
  if (sandbox_off(cfg)) {
    ConfinementResult out;
    auto c = std::make_shared<Confinement>();
    c->temp_dir = temp;
    c->mechanism = "off";
    c->abi = landlock_abi();
    c->digest = "sha256:" + sha256_hex(policy.canonical());
    c->policy = std::move(policy);
    out.confinement = c;
    return out;
  }
  // The repository's git folder: the slot's common one, or the checkout's own.
  std::string git_dir = policy_git_dir.empty() ? (req.project_root / ".git").string() : policy_git_dir;
  auto out = confine_policy(std::move(policy), temp, req.project_root.string(), git_dir);
  if (!out.ok())
    out.error += "; set \"sandbox\": \"off\" in .yolo-planning/config.json to run agents unconfined (the vision "
                 "approval covers it)";
  return out;
}

namespace {
int write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text.data(), text.size());
  int e = n == static_cast<ssize_t>(text.size()) ? 0 : (errno ? errno : EIO);
  ::close(fd);
  return e;
}
}  // namespace

int enter_confinement(const Confinement& c) {
  if (c.off()) return 0;
  if (!c.mounts.empty()) {
    if (::unshare(CLONE_NEWNS | (c.user_ns ? CLONE_NEWUSER : 0)) != 0) return errno;
    if (c.user_ns) {
      if (int e = write_file("/proc/self/setgroups", "deny")) return e;
      if (int e = write_file("/proc/self/uid_map", c.uid_map)) return e;
      if (int e = write_file("/proc/self/gid_map", c.gid_map)) return e;
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
    for (const auto& m : c.mounts) {
      if (::mount(m.path, m.path, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
      if (::mount(nullptr, m.path, nullptr, MS_REMOUNT | MS_BIND | m.flags, nullptr) != 0) return errno;
    }
  }
  if (c.drop_caps) {
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    for (int cap = 0; cap < 64; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_landlock_restrict_self, c.ruleset_fd, 0) != 0) return errno;
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &c.prog) != 0) return errno;
  return 0;
}

bool inside_sandbox() {
  long r = ::syscall(SYS_getcpu, nullptr, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(kProbeMagic)));
  return r < 0 && errno == ENOTRECOVERABLE;
}

}  // namespace yolo::runner
