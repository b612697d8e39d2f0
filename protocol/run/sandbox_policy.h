// What each program yolo starts may touch, by its role: the sandbox's policy, as a rule
// (runner/sandbox.h carries it out with Landlock and seccomp).
//
// Every role reads the whole file system except the secrets (the approval key, the person's
// SSH and GnuPG folders, yolo's own private folder, the other children's temp folders), and
// writes only what its role needs:
//   reviewer, approver, check   its private temp folder;
//   architect                   its private temp folder, which holds the copy of the plan it
//                               revises (yolo checks the copy and writes it back itself);
//   executor                    its temp folder and its worktree slot, the git objects, its own
//                               branch's refs and reflog and the slot's git folder, except
//                               the files that lead git to the repository (the slot's .git,
//                               its folder's commondir and gitdir); without a worktree, the
//                               project's checkout except .yolo-planning, .git/config,
//                               .git/hooks and .git/modules (read-only there, and .git itself
//                               cannot be moved or replaced), and its own
//                               phase folder (for its SUMMARY: the other plans of the phase are
//                               hashed again just before each starts);
//   shell                       (`yolo sandbox`: the person's own agent) the checkout and the
//                               plans' phase folders, never .yolo-planning's state, audit log
//                               or config, and its own terminal;
// plus the folders the config declares for a role (an agent CLI's own state folder). None may
// create namespaces, trace or read the memory of other processes, push input into a terminal,
// or connect to a UNIX socket by path (the person's tmux, ssh-agent) unless the config allows it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/base/seal.h"

namespace yolo::sandbox {

enum class Role { Reviewer, Architect, Executor, Approver, Check, Shell };

// "reviewer" ... "shell"; the inverse returns false for an unknown name.
const char* role_name(Role r);
bool role_from_name(const std::string& name, Role& out);
const std::vector<std::string>& role_names();

// What a granted path allows.
enum Access : unsigned { Read = 1, Write = 2, Exec = 4 };

struct Grant {
  std::string path;  // absolute
  unsigned access = Read;
  bool operator==(const Grant& o) const { return path == o.path && access == o.access; }
};

struct Policy {
  Role role = Role::Shell;
  // Read (and execute) everything but these paths and what lies beneath them.
  std::vector<std::string> hidden;
  std::vector<Grant> grants;
  // Inside a granted folder, paths kept in place (each bound onto itself, writable: a mount
  // point cannot be renamed or removed, so a folder git trusts, such as .git, cannot be
  // swapped for one the child made), then paths that stay read-only (bound read-only in a
  // mount namespace of the child's own: Landlock grants whole hierarchies), then paths below
  // those that are writable again, then files in those that stay read-only all the same.
  std::vector<std::string> pinned, read_only, writable_within, read_only_within;
  bool unix_sockets = false;  // connect to UNIX sockets by path
  // In the folders the config makes writable (an agent CLI's state), the entries that make
  // that CLI run programs or read instructions when the person starts it later, outside any
  // sandbox (agent_config_names): bound read-only where they exist (they are in `read_only`
  // too), and a write that would create one is an attempt.
  std::vector<std::string> agent_config;
  // The CLI's own rewritten config there (agent_state_config_names): read-only, not guarded.
  std::vector<std::string> agent_state;
  // The `projects` folders of those state folders: a write to the memory index of any project
  // there (`NAME/memory/MEMORY.md`), one the folder did not keep yet included, is an attempt.
  std::vector<std::string> agent_projects;
  // A stable text of the policy (one line per item, sorted), and its digest's input.
  std::string canonical() const;
};

struct PolicyInputs {
  Role role = Role::Shell;
  std::string project_root;
  std::string temp_dir;          // the child's private temp folder (read and write)
  std::string yolo_private_dir;  // yolo's private folder, holding every child's temp folder
  std::vector<std::string> secrets;
  // Executor only: its worktree slot (empty: it runs in the project's checkout), the
  // repository's common git folder, the slot's own git folder and the branch's ref name
  // ("refs/heads/yolo/RUN/PLAN/work": its folder is the plan's alone).
  std::string worktree, git_common_dir, git_worktree_dir, branch_ref;
  std::string phase_dir;  // absolute; an executor without a worktree writes its SUMMARY there
  // The files already in that phase folder but its own SUMMARY (the plans, the other plans'
  // SUMMARYs): read-only for it, so it can change no plan between its hash check and its
  // executor's reading it, nor another plan's record.
  std::vector<std::string> phase_files;
  std::vector<std::string> extra_write;  // from the config, for this role
  // The project folders an agent CLI keeps in a writable state folder (`FOLDER/projects/NAME`,
  // as Claude Code does), by that folder: each may hold a memory the CLI reads as instructions.
  std::map<std::string, std::vector<std::string>> state_projects;
  // Files inside a writable checkout that stay read-only (the programs the config names).
  std::vector<std::string> protected_paths;
  bool unix_sockets = false;
};

Policy policy_for(const PolicyInputs& in);

// The names, inside an agent CLI's state folder, of what makes the CLI run a program or take
// instructions when the person starts it (Claude Code's and Gemini's settings.json hooks and
// MCP servers, Codex's config.toml `notify` and rules, hooks folders, the memory files): bound
// read-only where they exist; creating one is an attempt, and what a child created is moved
// aside when its confinement ends.
const std::vector<std::string>& agent_config_names();
// The name an agent CLI gives a project's folder in its state (`projects/NAME`): the
// project's path with every character but a letter or digit made '-'.
std::string agent_project_name(const std::string& project_root);
// Config the CLI rewrites itself as it runs (`.claude.json`, with its MCP servers; subagents,
// commands, extensions): bound read-only where it exists, and nothing more.
const std::vector<std::string>& agent_state_config_names();

// A write the sandbox refused, judged for naming. Landlock and the read-only binds decide
// what is refused; this only says, from the same policy, whether a write a child asks for
// will be refused and whether that refusal is an attempt on what yolo guards (its state and
// plans, the repository's config, hooks and refs, the approved programs, the secrets, the
// checkout a child may not write) or what programs do in passing where they may not write
// (git refreshing an index it cannot lock, a cache in the home), which names nobody.
struct WriteView {
  std::vector<std::string> writable;  // canonical; the ruleset lets the child write beneath them
  struct Mount {
    std::string path;  // canonical; a bind of the child's mount namespace
    bool read_only = false;
  };
  std::vector<Mount> mounts;
  std::vector<std::string> guarded;  // canonical; a refused write at or beneath one is an attempt
  std::vector<std::string> agent_config;  // canonical; any write at or beneath one is an attempt
  std::vector<std::string> agent_projects;  // canonical; a write to NAME/memory/MEMORY.md in one is too
  std::string checkout;              // canonical; so is one in the project's checkout,
  std::string git_dir;               //   except in its git folder outside the guarded parts
};

enum class WriteVerdict { Allowed, Refused, Attempt };

// `removes`: the call takes the path away (unlink, rmdir, the old name of a rename), which a
// mount point refuses however it is bound.
WriteVerdict judge_write(const WriteView& view, const std::string& path, bool removes);

// The view of a policy: its write grants and the binds the child makes (each with whether it
// is read-only), the paths it guards, the checkout and its git folder, all canonical.
WriteView write_view(const Policy& policy, std::vector<WriteView::Mount> mounts, const std::string& checkout,
                     const std::string& git_dir);

// A connection a child asks for to a UNIX socket by its path, judged for naming and refusing.
// A role the config does not allow UNIX sockets cannot make one (the filter refuses
// `socket(AF_UNIX)` whole, before any path is known). A role it allows them reaches sockets by
// path wherever they lie, since Landlock cannot scope those: yolo's supervisor then refuses and
// names a connection to what no role may reach (the person's ssh-agent, tmux, screen or
// gpg-agent, anything in a hidden folder), and lets every other one go on.
struct SocketView {
  std::vector<std::string> guarded;  // canonical; the hidden folders (the secrets, yolo's private folder)
  std::vector<std::string> person;   // canonical; the person's own sockets, or the folders that hold them
};

enum class ConnectVerdict { Allowed, Attempt };

ConnectVerdict judge_connect(const SocketView& view, const std::string& path);

// The view of a policy: its hidden folders, and the person's sockets given (made canonical by
// the caller, as they are where the person's programs listen).
SocketView socket_view(const Policy& policy, std::vector<std::string> person_sockets);

// The seal of a plan's confinement record (the `sandbox` of its state record: role,
// mechanism, ABI, policy digest), bound to the project, the run and the plan: a record edited,
// or copied from another plan or run, does not verify. `yolo verify` checks it.
std::string seal_plan_record(const std::string& project, const std::string& run, const std::string& plan_id,
                             const json& record, const seal::Key& key);
bool plan_record_sealed(const std::string& project, const std::string& run, const std::string& plan_id,
                        const json& record, const std::string& seal, const seal::Key& key);

}  // namespace yolo::sandbox
