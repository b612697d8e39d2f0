#include "protocol/run/sandbox_policy.h"

#include <algorithm>
#include <cctype>

namespace yolo::sandbox {

namespace {
const std::vector<std::string>& names() {
  static const std::vector<std::string> n = {"reviewer", "architect", "executor", "approver", "check", "shell"};
  return n;
}

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

// "refs/heads/yolo/run/plan" -> "refs/heads/yolo/run": git writes a ref through a lock file
// beside it, so the grant is on its folder.
std::string parent_of(const std::string& ref) {
  auto slash = ref.rfind('/');
  return slash == std::string::npos ? std::string() : ref.substr(0, slash);
}
// In a writable checkout: yolo's own files and what makes git run programs stay read-only,
// and the repository's folder stays where it is (a .git moved aside and replaced by a copy
// with a config of the child's would be read by every later git, the person's included).
// Submodules' folders hold configs and hooks of their own.
void protect_checkout(Policy& p, const std::string& root) {
  p.pinned.push_back(join(root, ".git"));
  p.read_only.push_back(join(root, ".yolo-planning"));
  p.read_only.push_back(join(root, ".git/config"));
  p.read_only.push_back(join(root, ".git/hooks"));
  p.read_only.push_back(join(root, ".git/modules"));
}
}  // namespace

const char* role_name(Role r) { return names()[static_cast<size_t>(r)].c_str(); }

bool role_from_name(const std::string& name, Role& out) {
  for (size_t i = 0; i < names().size(); ++i)
    if (names()[i] == name) {
      out = static_cast<Role>(i);
      return true;
    }
  return false;
}

const std::vector<std::string>& role_names() { return names(); }

std::string Policy::canonical() const {
  std::vector<std::string> lines;
  lines.push_back(std::string("role ") + role_name(role));
  for (const auto& h : hidden) lines.push_back("hidden " + h);
  for (const auto& k : pinned) lines.push_back("pinned " + k);
  for (const auto& r : read_only) lines.push_back("read-only " + r);
  for (const auto& w : writable_within) lines.push_back("writable " + w);
  for (const auto& f : read_only_within) lines.push_back("read-only-within " + f);
  for (const auto& a : agent_config) lines.push_back("agent-config " + a);
  for (const auto& a : agent_state) lines.push_back("agent-state " + a);
  for (const auto& a : agent_projects) lines.push_back("agent-projects " + a);
  for (const auto& g : grants)
    lines.push_back(std::string("grant ") + ((g.access & Read) ? "r" : "-") + ((g.access & Write) ? "w" : "-") +
                    ((g.access & Exec) ? "x" : "-") + " " + g.path);
  lines.push_back(std::string("unix_sockets ") + (unix_sockets ? "yes" : "no"));
  std::sort(lines.begin() + 1, lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

namespace {
constexpr const char* kPlanRecordDomain = "yolo plan sandbox record v1";
std::string plan_record_bytes(const std::string& project, const std::string& run, const std::string& plan_id,
                              const json& record) {
  return json::array({project, run, plan_id, record}).dump();
}
}  // namespace

std::string seal_plan_record(const std::string& project, const std::string& run, const std::string& plan_id,
                             const json& record, const seal::Key& key) {
  return seal::seal_bytes(kPlanRecordDomain, plan_record_bytes(project, run, plan_id, record), key);
}

bool plan_record_sealed(const std::string& project, const std::string& run, const std::string& plan_id,
                        const json& record, const std::string& seal, const seal::Key& key) {
  return seal::check_bytes(kPlanRecordDomain, plan_record_bytes(project, run, plan_id, record), seal, key);
}

namespace {
bool at_or_beneath(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}
bool any_holds(const std::vector<std::string>& dirs, const std::string& path) {
  return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return at_or_beneath(path, d); });
}
// PROJECTS/NAME/memory/MEMORY.md (or beneath it) for one of `projects_dirs`.
bool is_project_memory(const std::vector<std::string>& projects_dirs, const std::string& path) {
  static const std::string kTail = "/memory/MEMORY.md";
  for (const auto& d : projects_dirs) {
    if (!at_or_beneath(path, d) || path.size() <= d.size() + 1) continue;
    std::string rest = path.substr(d.size() + 1);  // NAME/memory/MEMORY.md[/...]
    auto slash = rest.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    std::string after = rest.substr(slash);
    if (after.compare(0, kTail.size(), kTail) == 0 && (after.size() == kTail.size() || after[kTail.size()] == '/'))
      return true;
  }
  return false;
}
}  // namespace

WriteVerdict judge_write(const WriteView& v, const std::string& path, bool removes) {
  if (any_holds(v.agent_config, path) || is_project_memory(v.agent_projects, path)) return WriteVerdict::Attempt;
  bool refused = !any_holds(v.writable, path);
  if (!refused) {
    // The innermost bind holding the path decides (they are made outermost first).
    const WriteView::Mount* inner = nullptr;
    for (const auto& m : v.mounts)
      if (at_or_beneath(path, m.path) && (!inner || m.path.size() > inner->path.size())) inner = &m;
    refused = inner && (inner->read_only || (removes && inner->path == path));
  }
  if (!refused) return WriteVerdict::Allowed;
  if (any_holds(v.guarded, path)) return WriteVerdict::Attempt;
  if (at_or_beneath(path, v.checkout) && !at_or_beneath(path, v.git_dir)) return WriteVerdict::Attempt;
  return WriteVerdict::Refused;
}

ConnectVerdict judge_connect(const SocketView& v, const std::string& path) {
  if (any_holds(v.guarded, path) || any_holds(v.person, path)) return ConnectVerdict::Attempt;
  return ConnectVerdict::Allowed;
}

SocketView socket_view(const Policy& p, std::vector<std::string> person_sockets) {
  SocketView v;
  v.guarded = p.hidden;
  for (auto& s : person_sockets)
    if (!s.empty() && s != "/") v.person.push_back(std::move(s));
  return v;
}

WriteView write_view(const Policy& p, std::vector<WriteView::Mount> mounts, const std::string& checkout,
                     const std::string& git_dir) {
  WriteView v;
  for (const auto& g : p.grants)
    if (g.access & Write) v.writable.push_back(g.path);
  v.mounts = std::move(mounts);
  v.guarded = p.hidden;
  for (const auto* list : {&p.pinned, &p.read_only, &p.read_only_within})
    for (const auto& x : *list)
      if (std::find(p.agent_state.begin(), p.agent_state.end(), x) == p.agent_state.end()) v.guarded.push_back(x);
  // What of a repository makes git run programs, names its commits, or holds another slot.
  if (!git_dir.empty())
    for (const char* part : {"config", "hooks", "modules", "HEAD", "refs", "packed-refs", "info", "worktrees",
                             "yolo-worktrees", "commondir", "objects"})
      v.guarded.push_back(join(git_dir, part));
  v.guarded.push_back("/dev/pts");  // another terminal (the person's)
  v.agent_config = p.agent_config;
  v.agent_projects = p.agent_projects;
  v.checkout = checkout;
  v.git_dir = git_dir;
  return v;
}

Policy policy_for(const PolicyInputs& in) {
  Policy p;
  p.role = in.role;
  p.unix_sockets = in.unix_sockets;
  p.hidden = in.secrets;
  if (!in.yolo_private_dir.empty()) p.hidden.push_back(in.yolo_private_dir);
  const unsigned rwx = Read | Write | Exec;
  if (!in.temp_dir.empty()) p.grants.push_back({in.temp_dir, rwx});
  if (in.role == Role::Executor) {
    if (!in.worktree.empty()) {
      p.grants.push_back({in.worktree, rwx});
      // Its objects go to its slot's git folder (runner/slot_objects.h), never to the
      // repository's: git does not check an object's bytes against its name when it reads.
      if (!in.git_common_dir.empty()) {
        if (auto dir = parent_of(in.branch_ref); !dir.empty()) {
          p.grants.push_back({join(in.git_common_dir, dir), Read | Write});
          p.grants.push_back({join(join(in.git_common_dir, "logs"), dir), Read | Write});
        }
      }
      if (!in.git_worktree_dir.empty()) p.grants.push_back({in.git_worktree_dir, Read | Write});
      // Where git finds the repository from the slot: pointed at a repository of the
      // executor's own, yolo's later git in the slot would read that one's config.
      p.read_only.push_back(join(in.worktree, ".git"));
      if (!in.git_worktree_dir.empty()) {
        p.read_only.push_back(join(in.git_worktree_dir, "commondir"));
        p.read_only.push_back(join(in.git_worktree_dir, "gitdir"));
        // With per-worktree config on (`git sparse-checkout` turns it on), every git in the
        // slot reads this file, yolo's own after the executor included: guarded like an agent
        // CLI's settings (read-only where it is, named and moved aside when created).
        p.agent_config.push_back(join(in.git_worktree_dir, "config.worktree"));
      }
    } else if (!in.project_root.empty()) {
      p.grants.push_back({in.project_root, rwx});
      protect_checkout(p, in.project_root);
      if (!in.phase_dir.empty()) {
        p.writable_within.push_back(in.phase_dir);
        p.read_only_within = in.phase_files;
      }
      // The project's own agent settings run what they name when the person next starts that
      // CLI in the checkout; in a worktree they reach the checkout only through the merge of
      // a plan that names them (the scope fence).
      for (const char* dir : {".claude", ".gemini", ".codex"})
        for (const auto& n : agent_config_names()) p.agent_config.push_back(join(join(in.project_root, dir), n));
      p.agent_config.push_back(join(in.project_root, ".mcp.json"));
    }
  }
  if (in.role == Role::Shell && !in.project_root.empty()) {
    // The person's own agent: the checkout and the plans, never yolo's state, audit or config.
    p.grants.push_back({in.project_root, rwx});
    protect_checkout(p, in.project_root);
    p.writable_within.push_back(join(join(in.project_root, ".yolo-planning"), "phases"));
    p.grants.push_back({"/dev/tty", Read | Write});
  }
  for (const auto& w : in.extra_write) p.grants.push_back({w, rwx});
  if (!p.read_only.empty())
    for (const auto& f : in.protected_paths) p.read_only.push_back(f);
  // A writable state folder would otherwise let an agent leave a hook that runs, as the person
  // and unconfined, the next time the person starts that CLI themselves (and approves a gate).
  const auto& named = agent_config_names();
  const auto& kept = agent_state_config_names();
  auto holds = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (const auto& w : in.extra_write) {
    auto slash = w.find_last_of('/');
    std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
    if (holds(named, base)) {
      p.agent_config.push_back(w);
    } else if (holds(kept, base)) {
      p.agent_state.push_back(w);
    } else {
      for (const auto& n : named) p.agent_config.push_back(join(w, n));
      for (const auto& n : kept) p.agent_state.push_back(join(w, n));
      // A project's memory index is read as instructions at the start of every later session
      // there (Claude Code's `projects/NAME/memory/MEMORY.md`, which leads to the rest): this
      // project's, and every project's the folder already keeps. The folder itself is the
      // CLI's to make (it does at every start).
      std::vector<std::string> projects{agent_project_name(in.project_root)};
      if (auto it = in.state_projects.find(w); it != in.state_projects.end())
        projects.insert(projects.end(), it->second.begin(), it->second.end());
      std::sort(projects.begin(), projects.end());
      projects.erase(std::unique(projects.begin(), projects.end()), projects.end());
      for (const auto& n : projects)
        if (!n.empty()) p.agent_config.push_back(join(join(join(join(w, "projects"), n), "memory"), "MEMORY.md"));
      p.agent_config.push_back(join(w, "agent-memory"));
      p.agent_projects.push_back(join(w, "projects"));
    }
  }
  p.read_only.insert(p.read_only.end(), p.agent_config.begin(), p.agent_config.end());
  p.read_only.insert(p.read_only.end(), p.agent_state.begin(), p.agent_state.end());
  return p;
}

std::string agent_project_name(const std::string& project_root) {
  std::string n = project_root;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return n;
}

const std::vector<std::string>& agent_config_names() {
  static const std::vector<std::string> names = {
      // Claude Code's and Gemini's settings (hooks, helper commands, MCP servers), Codex's
      // config (notify, MCP servers, providers) and command rules, a hooks folder, user-level
      // MCP servers, trusted folders, memory files read as instructions at every start
      "settings.json", "settings.local.json", "config.toml", "rules", "hooks", "mcp.json", "trustedFolders.json",
      "CLAUDE.md", "AGENTS.md", "GEMINI.md"};
  return names;
}

const std::vector<std::string>& agent_state_config_names() {
  // Written by the CLI itself as it runs (Claude Code rewrites .claude.json, which also holds
  // user-level MCP servers), so only kept read-only: a refused write there names nobody.
  static const std::vector<std::string> names = {".claude.json", "agents", "commands", "extensions"};
  return names;
}

}  // namespace yolo::sandbox
