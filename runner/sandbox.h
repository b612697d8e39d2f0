// The sandbox every program yolo starts runs in (protocol/run/sandbox_policy.h says what each role
// may touch; docs/sandbox.md says why it is made this way).
//
// Made of three kernel mechanisms, all without privilege, applied in the child between its
// clone and its exec (runner/launch.cc), so a confined start costs a few system calls:
//   - no_new_privs: no set-uid program regains what the child gave up;
//   - Landlock (the file system): a ruleset built here, in yolo, from the policy, and entered
//     by the child; read everything but the hidden paths, write only the role's grants; no
//     ptrace or process_vm_* of a process outside it; from ABI 6 also scoped: no signal to,
//     and no abstract socket of, a process outside it;
//   - a seccomp filter: no namespaces (unshare, setns, clone with CLONE_NEW*; clone3 answers
//     ENOSYS so that libc falls back to clone), no mount, bpf, keyrings,
//     io_uring, open_by_handle_at; no TIOCSTI/TIOCLINUX; no UNIX socket unless allowed. The
//     escape attempts among these are named to yolo as they are refused (runner/refusals.h).
// The filter also answers one probe (inside_sandbox) that no unconfined process can fake.
#pragma once
#include <linux/filter.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "protocol/state/config.h"
#include "protocol/ports/world.h"
#include "protocol/run/sandbox_policy.h"

namespace yolo::runner {

namespace sandbox_detail {
struct DecoySet;  // runner/sandbox_internal.h
}

// The Landlock ABI version of this kernel, 0 when it has none (or it is disabled).
int landlock_abi();

// A policy made ready for a child: the Landlock ruleset (an fd the child enters) and the
// seccomp program. Owns the child's private temp folder, removed with it.
class RefusalLog;

struct Confinement {
  sandbox::Policy policy;
  int ruleset_fd = -1;
  std::vector<sock_filter> filter;
  sock_fprog prog{};
  // The same program handing escape attempts to yolo's supervisor, which writes them into
  // `refusals` (runner/refusals.h); empty where the kernel has no such hand-over.
  std::vector<sock_filter> notify_filter;
  sock_fprog notify_prog{};
  std::shared_ptr<RefusalLog> refusals;
  int abi = 0;
  std::string mechanism;  // "landlock+seccomp" | "off"
  std::string digest;     // sha256 of the policy's canonical text
  std::filesystem::path temp_dir;
  bool keep_temp = false;
  // Agent config the policy guards that was not there when the child was confined: found
  // there when the confinement ends, it is moved aside (NAME.refused-by-yolo), so the person's
  // next start of that CLI does not run what a child left (its creation was named, refusals.h).
  std::vector<std::string> absent_agent_config;
  // The child's own mount namespace (and user namespace, unless root): each path bound onto
  // itself and remounted with its flags (MS_RDONLY for the read-only ones), in order. A mount
  // with `hold_fd` first puts an O_PATH descriptor of its path, as the child sees it before the
  // bind, on that number. A mount with `src` is bound from there alone, without a remount: a
  // file of a writable folder that lies in a read-only bind, taken from that bind through the
  // held descriptor (/proc/self/fd/N/NAME), and a bind keeps its source mount's flags, so the
  // file is read-only with one mount instead of two.
  struct Mount {
    const char* path;
    unsigned long flags;
    const char* src = nullptr;
    int hold_fd = -1;
    bool optional = false;  // a decoy: a bind that fails (the secret gone meanwhile) ends nothing
  };
  // Each secret file the child could name, with the empty decoy bound over it in the child's
  // mount namespace (decoy, secret): the ruleset lets the child read the decoy alone, and the
  // refusal log watches it, so an attempt to read the secret reads nothing and is named.
  std::vector<std::pair<std::string, std::string>> decoys;
  sandbox_detail::DecoySet* decoy_set = nullptr;  // the pool's, back to it when this ends
  std::vector<std::string> mount_paths;
  std::vector<unsigned long> mount_flags;
  std::vector<std::string> mount_srcs;
  std::vector<int> hold_fds;  // reserved in yolo (close-on-exec), replaced in the child
  std::vector<Mount> mounts;
  bool user_ns = false;
  bool drop_caps = false;  // yolo runs as root: the child keeps no capability
  std::string uid_map, gid_map;
  ~Confinement();
  bool off() const { return ruleset_fd < 0; }
  // {"role","mechanism","abi","policy"}: what the child ran under, for its record.
  json record() const;
};

// What a caller knows of the child it is about to start.
struct SandboxRequest {
  sandbox::Role role = sandbox::Role::Shell;
  std::filesystem::path project_root;
  std::filesystem::path phase_dir;  // absolute; executor without a worktree
  std::filesystem::path own_summary;  // absolute; its SUMMARY there (the one file it may change)
  std::vector<std::string> protected_programs;  // more programs that stay as approved (the checks')
  std::filesystem::path worktree;   // executor with a worktree slot
  std::string branch;               // its branch ("yolo/RUN/PLAN/work")
  std::vector<std::string> extra_write;  // more folders to write (absolute), beside the config's
};

struct ConfinementResult {
  std::shared_ptr<Confinement> confinement;  // never null when error is empty
  std::string error;                         // why the child must not start
  bool ok() const { return error.empty(); }
};

// The sandbox's mode in the config: "on" (the default) or "off".
bool sandbox_off(const Config& cfg);
// Prepares the confinement of one child. With the sandbox off: a Confinement that confines
// nothing (mechanism "off") with a temp folder all the same. With it on and a kernel without
// Landlock: an error that says so and how to choose "off".
ConfinementResult confine(const World& w, const Config& cfg, const SandboxRequest& req);
// The policy's inputs for a request: the config's extra folders for the role, the slot's git
// folders, the checkout's entries.
sandbox::PolicyInputs policy_inputs(const World& w, const Config& cfg, const SandboxRequest& req, const std::filesystem::path& temp,
                                    const std::filesystem::path& yolo_private_dir);
// The same from an explicit policy (yolo sandbox, tests). With the project's checkout and its
// git folder, the child's refused writes into what yolo guards are named too (refusals.h).
ConfinementResult confine_policy(sandbox::Policy policy, std::filesystem::path temp_dir,
                                 const std::string& checkout = {}, const std::string& git_dir = {});

// What every role is denied reading: the approval key's folder, ~/.ssh, ~/.gnupg, the
// person's ssh-agent socket folder.
std::vector<std::string> default_secrets();
// The person's own sockets, canonical, that no role may connect to even where the config
// allows UNIX sockets: the ssh-agent's ($SSH_AUTH_SOCK), gpg-agent's, tmux's and screen's
// servers (their folders, as this environment names them or as the programs make them).
std::vector<std::string> person_sockets();

// Enters the confinement in this process (for `yolo sandbox`, which then execs). 0 or an errno.
int enter_confinement(const Confinement& c);

// Whether this process runs inside a yolo sandbox (the seccomp filter's probe).
bool inside_sandbox();

}  // namespace yolo::runner
