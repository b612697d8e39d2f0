#include "runner/sandbox.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "protocol/gates/gate_coverage.h"
#include "protocol/base/sha256.h"
#include "runner/child_keeper.h"
#include "runner/identity.h"
#include "runner/refusals.h"
#include "runner/sandbox_internal.h"
#include "runner/world.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;
using sandbox_detail::canonical;
using sandbox_detail::prepare_mounts;
using sandbox_detail::read_rules;
using sandbox_detail::ReadRule;
using sandbox_detail::seccomp_program;
using sandbox_detail::sandbox_object;
using sandbox_detail::secret_files;

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

// An empty decoy per secret file (a set taken from the pool, runner/sandbox_decoys.cc), which
// the ruleset lets the child read and an inotify descriptor watches for IN_OPEN: the child's
// mount namespace binds each decoy over its secret, so an open of the secret opens the decoy,
// reads nothing, and is queued by the kernel as it happens, attributed to this child by the
// decoy's inode, which no other child holds meanwhile (no per-open cost: nothing is handed to
// the supervisor). A stat sees the decoy's (empty) status and is not named. Returns the watch
// of each decoy with what an open of it means; empty when there is nothing to watch.
std::vector<std::pair<int, std::string>> make_decoys(Confinement& c) {
  std::vector<std::pair<int, std::string>> names;
  const std::vector<std::string> secrets = secret_files();
  if (secrets.empty()) return names;
  sandbox_detail::DecoySet* set = sandbox_detail::take_decoys(secrets, c.temp_dir.parent_path().string());
  if (!set) return names;
  c.decoy_set = set;
  const char* h = std::getenv("HOME");
  const std::string home = h && *h ? canonical(h) : std::string();
  const std::string role = sandbox::role_name(c.policy.role);
  for (size_t k = 0; k < set->decoys.size(); ++k) {
    if (add_rule(c.ruleset_fd, set->decoys[k], rights_of(sandbox::Read, c.abi) & ll::kFileRights) != 0) continue;
    std::string shown = set->secrets[k];
    if (!home.empty() && shown.size() > home.size() && shown.compare(0, home.size(), home) == 0 && shown[home.size()] == '/')
      shown = "~" + shown.substr(home.size());
    names.push_back({set->wds[k], "reading " + shown + " by the " + role});
    c.decoys.push_back({set->decoys[k], set->secrets[k]});
  }
  sandbox_detail::drop_queued(*set);  // what adding the rules may have queued: no child yet
  return names;
}

}  // namespace

Confinement::~Confinement() {
  if (ruleset_fd >= 0) ::close(ruleset_fd);
  for (int fd : hold_fds) ::close(fd);
  for (const auto& a : absent_agent_config) {
    struct stat st {};
    if (::lstat(a.c_str(), &st) != 0) continue;
    std::string aside = a + ".refused-by-yolo";
    for (int n = 2; ::lstat(aside.c_str(), &st) == 0 && n < 100; ++n) aside = a + ".refused-by-yolo." + std::to_string(n);
    ::rename(a.c_str(), aside.c_str());
  }
  if (decoy_set) {
    // Its opens into the child's log, then the set is the next child's.
    if (refusals) refusals->release_decoys();
    sandbox_detail::give_back(decoy_set);
  }
  if (!temp_dir.empty() && !keep_temp) {
    std::error_code ec;
    stdfs::remove_all(temp_dir, ec);
  }
}

json Confinement::record() const {
  return {{"role", sandbox::role_name(policy.role)}, {"mechanism", mechanism}, {"abi", abi}, {"policy", digest}};
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
  for (const auto& a : c->policy.agent_config) {
    struct stat st {};
    if (std::string path = canonical(a); ::lstat(path.c_str(), &st) != 0) c->absent_agent_config.push_back(path);
  }
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
  std::shared_ptr<const std::vector<ReadRule>> reads;
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
  // Decoys, where a refusal log will read their watches: only for a child of yolo's (not
  // `yolo sandbox`, where no yolo stays to watch).
  std::vector<std::pair<int, std::string>> decoy_names;
  if (!e && !checkout.empty() && !c->temp_dir.empty() && refusal_notes_available()) decoy_names = make_decoys(*c);
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
    // Connections are judged only where the kernel would let them through (a role allowed
    // UNIX sockets); the supervisor must be able to let the others go on.
    std::shared_ptr<const sandbox::SocketView> sockets;
    if (c->policy.unix_sockets && write_notes_available())
      sockets = std::make_shared<const sandbox::SocketView>(sandbox::socket_view(c->policy, person_sockets()));
    c->notify_filter = seccomp_program(c->policy.unix_sockets, true, writes != nullptr, sockets != nullptr);
    c->notify_prog.len = static_cast<unsigned short>(c->notify_filter.size());
    c->notify_prog.filter = c->notify_filter.data();
    c->refusals = std::make_shared<RefusalLog>(std::move(writes), std::move(sockets));
    if (c->decoy_set) c->refusals->watch_decoys(c->decoy_set->fd, std::move(decoy_names));
  }
  return out;
}

ConfinementResult confine(const World& w, const Config& cfg, const SandboxRequest& req) {
  sandbox_detail::CanonicalScope paths;  // each folder resolved once while the policy is made
  // The child's own temp folder, inside yolo's private one (which no child can read).
  stdfs::path priv = private_temp_dir();
  std::string tmpl = (priv.empty() ? stdfs::temp_directory_path() : priv).string() + "/sbx-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  stdfs::path temp;
  if (::mkdtemp(buf.data())) temp = buf.data();
  const sandbox::PolicyInputs inputs = policy_inputs(w, cfg, req, temp, priv);
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
      if (m.hold_fd >= 0) {
        int fd = ::open(m.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return errno;
        int d = ::dup3(fd, m.hold_fd, O_CLOEXEC);
        int e = errno;
        ::close(fd);
        if (d < 0) return e;
      }
      if (m.src) {
        if (::mount(m.src, m.path, nullptr, MS_BIND, nullptr) != 0 && !m.optional) return errno;
        continue;
      }
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

}  // namespace yolo::runner
