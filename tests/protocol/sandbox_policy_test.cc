// The sandbox's policy per role, as a pure rule: what each role reads, writes and keeps
// read-only, and a canonical text (its digest is recorded with every child).
#include "protocol/run/sandbox_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace yolo::sandbox {
namespace {

bool grants(const Policy& p, const std::string& path, unsigned access) {
  return std::any_of(p.grants.begin(), p.grants.end(),
                     [&](const Grant& g) { return g.path == path && (g.access & access) == access; });
}
bool at_or_beneath(const std::string& path, const std::string& dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}
// Whether the policy lets the child write path: a write grant over it, and no read-only bind
// over it that a writable one below does not undo.
bool writes_beneath(const Policy& p, const std::string& path) {
  bool granted = std::any_of(p.grants.begin(), p.grants.end(),
                             [&](const Grant& g) { return (g.access & Write) && at_or_beneath(path, g.path); });
  auto over = [&](const std::vector<std::string>& v) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& d) { return at_or_beneath(path, d); });
  };
  return granted && (!over(p.read_only) || over(p.writable_within)) && !over(p.read_only_within);
}

PolicyInputs base(Role r) {
  PolicyInputs in;
  in.role = r;
  in.project_root = "/p";
  in.temp_dir = "/tmp/yolo-1/sbx-a";
  in.yolo_private_dir = "/tmp/yolo-1";
  in.secrets = {"/home/u/.config/yolo", "/home/u/.ssh"};
  return in;
}

TEST(SandboxPolicy, ReadersWriteOnlyTheirTempFolderAndHideTheSecrets) {
  for (Role r : {Role::Reviewer, Role::Approver, Role::Check, Role::Architect}) {
    Policy p = policy_for(base(r));
    EXPECT_TRUE(grants(p, "/tmp/yolo-1/sbx-a", Read | Write)) << role_name(r);
    EXPECT_FALSE(writes_beneath(p, "/p/src/main.cc")) << role_name(r);
    EXPECT_FALSE(writes_beneath(p, "/p/.yolo-planning/.execution-state.json")) << role_name(r);
    for (const char* s : {"/home/u/.config/yolo", "/home/u/.ssh", "/tmp/yolo-1"})
      EXPECT_NE(std::find(p.hidden.begin(), p.hidden.end(), s), p.hidden.end()) << role_name(r) << " " << s;
    EXPECT_TRUE(p.read_only.empty());
  }
}

TEST(SandboxPolicy, AnExecutorInAWorktreeWritesItsSlotItsObjectsAndItsBranchOnly) {
  PolicyInputs in = base(Role::Executor);
  in.worktree = "/p/.git/yolo-worktrees/slot-1";
  in.git_common_dir = "/p/.git";
  in.git_worktree_dir = "/p/.git/worktrees/slot-1";
  in.branch_ref = "refs/heads/yolo/abcd1234/01-01";
  Policy p = policy_for(in);
  EXPECT_TRUE(writes_beneath(p, "/p/.git/yolo-worktrees/slot-1/src/a.cc"));
  EXPECT_TRUE(writes_beneath(p, "/p/.git/worktrees/slot-1/objects/ab/cdef"));
  EXPECT_FALSE(writes_beneath(p, "/p/.git/objects/ab/cdef"));
  EXPECT_TRUE(writes_beneath(p, "/p/.git/refs/heads/yolo/abcd1234/01-01"));
  EXPECT_TRUE(writes_beneath(p, "/p/.git/logs/refs/heads/yolo/abcd1234/01-01"));
  EXPECT_TRUE(writes_beneath(p, "/p/.git/worktrees/slot-1/index"));
  // Nor the files that lead git from the slot to the repository.
  for (const char* no : {"/p/src/a.cc", "/p/.git/config", "/p/.git/hooks/post-checkout", "/p/.git/refs/heads/main",
                         "/p/.git/yolo-worktrees/slot-2/a", "/p/.yolo-planning/phases/01/01-02-PLAN.md",
                         "/p/.git/yolo-worktrees/slot-1/.git", "/p/.git/worktrees/slot-1/commondir",
                         "/p/.git/worktrees/slot-1/gitdir"})
    EXPECT_FALSE(writes_beneath(p, no)) << no;
}

TEST(SandboxPolicy, AnExecutorInTheCheckoutKeepsYolosFilesAndGitsProgramsReadOnly) {
  PolicyInputs in = base(Role::Executor);
  in.phase_dir = "/p/.yolo-planning/phases/01-demo";
  in.phase_files = {"/p/.yolo-planning/phases/01-demo/01-01-PLAN.md", "/p/.yolo-planning/phases/01-demo/01-02-PLAN.md",
                    "/p/.yolo-planning/phases/01-demo/01-02-SUMMARY.md"};
  Policy p = policy_for(in);
  // In its phase folder it writes its own SUMMARY, never a plan or another plan's SUMMARY.
  for (const auto& f : in.phase_files) EXPECT_FALSE(writes_beneath(p, f)) << f;
  EXPECT_TRUE(grants(p, "/p", Read | Write | Exec));
  for (const char* ro : {"/p/.yolo-planning", "/p/.git/config", "/p/.git/hooks", "/p/.git/modules"})
    EXPECT_NE(std::find(p.read_only.begin(), p.read_only.end(), ro), p.read_only.end()) << ro;
  EXPECT_EQ(p.writable_within, std::vector<std::string>{"/p/.yolo-planning/phases/01-demo"});
  // The repository's folder stays in place (its own bind comes before those inside it).
  EXPECT_EQ(p.pinned, std::vector<std::string>{"/p/.git"});
  EXPECT_TRUE(writes_beneath(p, "/p/.git/objects/ab/cdef"));
  EXPECT_FALSE(writes_beneath(p, "/p/.git/modules/sub/config"));
  EXPECT_TRUE(writes_beneath(p, "/p/.yolo-planning/phases/01-demo/01-01-SUMMARY.md"));
}

TEST(SandboxPolicy, ConfigFoldersAddToTheRoleAndTheCanonicalTextIsStable) {
  PolicyInputs in = base(Role::Reviewer);
  in.extra_write = {"/home/u/.claude"};
  Policy a = policy_for(in);
  EXPECT_TRUE(grants(a, "/home/u/.claude", Read | Write));
  std::reverse(in.secrets.begin(), in.secrets.end());
  Policy b = policy_for(in);
  EXPECT_EQ(a.canonical(), b.canonical());  // order of the inputs does not change the digest
  EXPECT_EQ(a.canonical().rfind("role reviewer\n", 0), 0u);
  in.unix_sockets = true;
  EXPECT_NE(policy_for(in).canonical(), a.canonical());
}

// The binds a child makes for a policy, as runner/sandbox makes them (every listed path here
// exists): pinned and writable-within ones writable, the others read-only.
std::vector<WriteView::Mount> binds(const Policy& p) {
  std::vector<WriteView::Mount> m;
  for (const auto& x : p.pinned) m.push_back({x, false});
  for (const auto& x : p.read_only) m.push_back({x, true});
  for (const auto& x : p.writable_within) m.push_back({x, false});
  for (const auto& x : p.read_only_within) m.push_back({x, true});
  return m;
}

TEST(SandboxWrites, AReviewersWriteIntoTheCheckoutIsAnAttemptGitsIndexLockIsNot) {
  Policy p = policy_for(base(Role::Reviewer));
  WriteView v = write_view(p, binds(p), "/p", "/p/.git");
  EXPECT_EQ(judge_write(v, "/tmp/yolo-1/sbx-a/notes", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.yolo-planning/phases/01-x/01-01-PLAN.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/agents/reviewer", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/config", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/refs/heads/main", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/index.lock", false), WriteVerdict::Refused);
  EXPECT_EQ(judge_write(v, "/home/u/.cache/tool/x", false), WriteVerdict::Refused);
  EXPECT_EQ(judge_write(v, "/home/u/.config/yolo/allowed_signers", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/tmp/yolo-1/sbx-b/out", false), WriteVerdict::Attempt);  // another child's temp
  EXPECT_EQ(judge_write(v, "/dev/pts/3", false), WriteVerdict::Attempt);
  // A prefix is no folder: /p2 is not the checkout /p.
  EXPECT_EQ(judge_write(v, "/p2/file", false), WriteVerdict::Refused);
}

TEST(SandboxWrites, AnExecutorInTheCheckoutWritesItsWorkNotWhatIsBoundReadOnly) {
  PolicyInputs in = base(Role::Executor);
  in.phase_dir = "/p/.yolo-planning/phases/01-x";
  in.phase_files = {"/p/.yolo-planning/phases/01-x/01-02-PLAN.md"};
  in.protected_paths = {"/p/agents/reviewer"};
  Policy p = policy_for(in);
  WriteView v = write_view(p, binds(p), "/p", "/p/.git");
  EXPECT_EQ(judge_write(v, "/p/src/main.c", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.git/index.lock", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.yolo-planning/phases/01-x/01-01-SUMMARY.md", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.yolo-planning/phases/01-x/01-02-PLAN.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.yolo-planning/config.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/config", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/hooks/post-checkout", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/agents/reviewer", false), WriteVerdict::Attempt);
  // The repository's folder is a mount point: written in, never taken away.
  EXPECT_EQ(judge_write(v, "/p/.git", true), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/index.lock", true), WriteVerdict::Allowed);
}

TEST(SandboxWrites, AnExecutorInAWorktreeWritesItsSlotAndBranchNotTheCheckoutOrAnotherSlot) {
  PolicyInputs in = base(Role::Executor);
  in.worktree = "/p/.git/yolo-worktrees/slot-1";
  in.git_common_dir = "/p/.git";
  in.git_worktree_dir = "/p/.git/worktrees/slot-1";
  in.branch_ref = "refs/heads/yolo/r1/01-01/work";
  Policy p = policy_for(in);
  WriteView v = write_view(p, binds(p), "/p", "/p/.git");
  EXPECT_EQ(judge_write(v, "/p/.git/yolo-worktrees/slot-1/src/a.c", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.git/refs/heads/yolo/r1/01-01/work.lock", false), WriteVerdict::Allowed);
  // Its objects go to its own folder; the repository's (an object, an alternates list, a
  // commit graph) are an attempt.
  EXPECT_EQ(judge_write(v, "/p/.git/worktrees/slot-1/objects/ab/cd", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.git/objects/ab/cd", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/objects/info/alternates", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/worktrees/slot-1/index.lock", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.git/worktrees/slot-1/commondir", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/worktrees/slot-1/config.worktree", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/yolo-worktrees/slot-1/.git", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/refs/heads/yolo/r1/01-02/work", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/yolo-worktrees/slot-2/src/a.c", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/src/a.c", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/config", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.git/FETCH_HEAD", false), WriteVerdict::Refused);
}

TEST(SandboxPolicy, RoleNamesRoundTrip) {
  for (const auto& n : role_names()) {
    Role r;
    ASSERT_TRUE(role_from_name(n, r));
    EXPECT_EQ(role_name(r), n);
  }
  Role r;
  EXPECT_FALSE(role_from_name("root", r));
}

// An agent CLI's state folder the config makes writable: its sessions are written, the config
// that would run a program at the person's next start of that CLI is not (bound read-only where
// it exists), and creating such config is an attempt. The CLI's own rewritten state file stays
// read-only without naming anyone.
// A project's memory in an agent CLI's state (Claude Code's `projects/NAME/memory`) is read as
// instructions at the start of the person's next session there: this project's, and every
// project's the folder keeps, are guarded like the settings; its sessions are not.
TEST(SandboxWrites, AnAgentsProjectMemoryIsGuardedButNotItsSessions) {
  PolicyInputs in = base(Role::Reviewer);
  in.project_root = "/work/my.proj";
  in.extra_write = {"/home/u/.claude"};
  in.state_projects["/home/u/.claude"] = {"-home-u-other", "-work-my-proj"};
  EXPECT_EQ(agent_project_name("/work/my.proj"), "-work-my-proj");
  Policy p = policy_for(in);
  WriteView v = write_view(p, binds(p), "/work/my.proj", "/work/my.proj/.git");
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-work-my-proj/memory/MEMORY.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-home-u-other/memory/MEMORY.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-home-u-other/memory", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/agent-memory/reviewer/MEMORY.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-work-my-proj/s1.jsonl", false), WriteVerdict::Allowed);
  // A project the folder does not keep yet: its memory index is an attempt too (named; there
  // is no file to bind), its sessions and its memory folder are not.
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-home-u-new/memory/MEMORY.md", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-home-u-new/memory", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/-home-u-new/s.jsonl", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/memory/MEMORY.md", false), WriteVerdict::Allowed);
  // Without the project yet in the folder, its memory is guarded all the same.
  in.state_projects.clear();
  WriteView w = write_view(policy_for(in), {}, "/work/my.proj", "/work/my.proj/.git");
  EXPECT_EQ(judge_write(w, "/home/u/.claude/projects/-work-my-proj/memory/MEMORY.md", false), WriteVerdict::Attempt);
}

TEST(SandboxWrites, AnAgentsStateFolderIsWritableButNotTheConfigThatRunsItsProgramsLater) {
  PolicyInputs in = base(Role::Reviewer);
  in.extra_write = {"/home/u/.claude", "/home/u/.claude.json"};
  Policy p = policy_for(in);
  auto holds = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  EXPECT_TRUE(holds(p.read_only, "/home/u/.claude/settings.json"));
  EXPECT_TRUE(holds(p.read_only, "/home/u/.claude/hooks"));
  EXPECT_TRUE(holds(p.read_only, "/home/u/.claude.json"));
  EXPECT_TRUE(holds(p.agent_config, "/home/u/.claude/settings.json"));
  EXPECT_FALSE(holds(p.agent_config, "/home/u/.claude.json"));
  EXPECT_TRUE(holds(p.agent_state, "/home/u/.claude.json"));
  EXPECT_NE(p.canonical().find("agent-config /home/u/.claude/hooks"), std::string::npos);
  // settings.json and .claude.json exist (bound read-only); hooks does not.
  WriteView v = write_view(p, {{"/home/u/.claude/settings.json", true}, {"/home/u/.claude.json", true}}, "/p", "/p/.git");
  EXPECT_EQ(judge_write(v, "/home/u/.claude/projects/p/session.jsonl", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/settings.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/hooks", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude/hooks/session-start.sh", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/home/u/.claude.json", true), WriteVerdict::Refused);
  // A folder that is config itself, named directly.
  in.extra_write = {"/home/u/.codex/config.toml"};
  Policy q = policy_for(in);
  EXPECT_TRUE(holds(q.agent_config, "/home/u/.codex/config.toml"));
  EXPECT_FALSE(holds(q.agent_config, "/home/u/.codex/config.toml/hooks"));
}

// An executor in the checkout writes the project, but not the project's own agent settings
// (a hook there runs at the person's next start of that CLI in the checkout).
TEST(SandboxWrites, AnExecutorInTheCheckoutCannotLeaveTheProjectsAgentSettings) {
  Policy p = policy_for(base(Role::Executor));
  WriteView v = write_view(p, binds(p), "/p", "/p/.git");
  EXPECT_EQ(judge_write(v, "/p/src/main.c", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/.claude/settings.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.claude/settings.local.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.gemini/settings.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.mcp.json", false), WriteVerdict::Attempt);
  EXPECT_EQ(judge_write(v, "/p/.claude/notes.md", false), WriteVerdict::Allowed);
  EXPECT_EQ(judge_write(v, "/p/CLAUDE.md", false), WriteVerdict::Allowed);  // the project's docs
  // In a worktree the slot is its own: what it changes reaches the checkout by the merge.
  PolicyInputs in = base(Role::Executor);
  in.worktree = "/p/.git/yolo-worktrees/slot-1";
  Policy w = policy_for(in);
  EXPECT_TRUE(std::none_of(w.agent_config.begin(), w.agent_config.end(),
                           [](const std::string& a) { return a.rfind("/p/.claude", 0) == 0; }));
}

// A role allowed UNIX sockets reaches them by path wherever they lie (Landlock cannot scope
// them): a connection to the person's agents or into a hidden folder is an attempt; one to a
// socket the role may use (a build server's, a docker socket the config allowed it) is not.
TEST(SandboxSockets, ThePersonsAgentsAndHiddenFoldersAreAttemptsOtherSocketsAreNot) {
  PolicyInputs in = base(Role::Executor);
  in.unix_sockets = true;
  SocketView v = socket_view(policy_for(in), {"/run/user/1/ssh-agent.sock", "/tmp/tmux-1", "/run/screen", "", "/"});
  EXPECT_EQ(judge_connect(v, "/run/user/1/ssh-agent.sock"), ConnectVerdict::Attempt);
  EXPECT_EQ(judge_connect(v, "/tmp/tmux-1/default"), ConnectVerdict::Attempt);
  EXPECT_EQ(judge_connect(v, "/run/screen/S-u/123.pts-0.host"), ConnectVerdict::Attempt);
  EXPECT_EQ(judge_connect(v, "/home/u/.ssh/agent.sock"), ConnectVerdict::Attempt);
  EXPECT_EQ(judge_connect(v, "/tmp/yolo-1/sbx-b/server.sock"), ConnectVerdict::Attempt);  // another child's
  EXPECT_EQ(judge_connect(v, "/var/run/docker.sock"), ConnectVerdict::Allowed);
  EXPECT_EQ(judge_connect(v, "/tmp/tmux-10/default"), ConnectVerdict::Allowed);  // a prefix is no folder
  EXPECT_EQ(judge_connect(v, "/run/user/1/ssh-agent.sock2"), ConnectVerdict::Allowed);
  // Neither an empty name nor the root folder guards everything.
  EXPECT_EQ(v.person.size(), 3u);
}

}  // namespace
}  // namespace yolo::sandbox
