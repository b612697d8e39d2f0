// The policy's inputs for a child: what its request, the config and the person's home make of
// them (runner/sandbox.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/gates/gate_coverage.h"
#include "runner/identity.h"
#include "runner/sandbox.h"
#include "runner/sandbox_internal.h"
#include "runner/slot_objects.h"
#include "runner/world.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;
using sandbox_detail::canonical;

namespace {

// Each program an argv of the config names by a path inside the project (agents, executor,
// approvers, dispatch adapters), and every project file the config names that the vision
// approval covers by content: absolute, existing.
std::vector<std::string> configured_programs(const World& w, const Config& cfg, const stdfs::path& root) {
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
  for (const auto& rel : gates::named_project_files(w, root, cfg.raw)) out.push_back((root / rel).string());
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

std::string home() {
  const char* h = std::getenv("HOME");
  return h && *h ? std::string(h) : std::string();
}

std::string expand_home(const std::string& p) {
  if (p == "~") return home();
  if (p.rfind("~/", 0) == 0) return home() + p.substr(1);
  return p;
}


}  // namespace

const json* sandbox_detail::sandbox_object(const Config& cfg) {
  auto it = cfg.raw.find("sandbox");
  return it != cfg.raw.end() && it->is_object() ? &*it : nullptr;
}

using sandbox_detail::sandbox_object;

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

std::vector<std::string> sandbox_detail::secret_files() {
  std::vector<std::string> out;
  auto regular = [](const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  // A private key by its name (`id_*` but `.pub`) or by its first line (PEM and OpenSSH keys
  // say "PRIVATE KEY" there), so a key named after its host counts too.
  auto private_key = [](const std::string& path, const std::string& name) {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".pub") == 0) return false;
    if (name.rfind("id_", 0) == 0) return true;
    char head[128] = {0};
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    const size_t n = std::fread(head, 1, sizeof head - 1, f);
    std::fclose(f);
    return std::string(head, n).find("PRIVATE KEY") != std::string::npos;
  };
  auto take_dir = [&](const std::string& dir, bool keys_only) {
    std::error_code ec;
    for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
      const std::string path = it->path().string();
      if (!regular(path)) continue;
      if (keys_only && !private_key(path, it->path().filename().string())) continue;
      out.push_back(path);
    }
  };
  if (auto k = approval_key_path(); !k.empty()) {
    if (std::string key = canonical(k.string()); regular(key)) out.push_back(key);
    if (std::string dir = canonical(k.parent_path().string()); dir != "/" && dir != canonical(home())) take_dir(dir, false);
  }
  if (std::string h = home(); !h.empty()) {
    take_dir(canonical(h + "/.config/yolo"), false);
    take_dir(canonical(h + "/.ssh"), true);
    take_dir(canonical(h + "/.gnupg/private-keys-v1.d"), false);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> person_sockets() {
  std::vector<std::string> s;
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (auto a = env("SSH_AUTH_SOCK"); !a.empty()) s.push_back(canonical(a));
  const std::string uid = std::to_string(::getuid());
  // tmux: "$TMUX" is "SOCKET,PID,SESSION" inside a session; its servers' folder otherwise.
  if (auto t = env("TMUX"); !t.empty()) s.push_back(canonical(t.substr(0, t.find(','))));
  const std::string tmux_tmp = env("TMUX_TMPDIR").empty() ? "/tmp" : env("TMUX_TMPDIR");
  s.push_back(canonical(tmux_tmp + "/tmux-" + uid));
  if (auto d = env("SCREENDIR"); !d.empty()) s.push_back(canonical(d));
  for (const char* d : {"/run/screen", "/var/run/screen"}) s.push_back(canonical(d));
  if (auto r = env("XDG_RUNTIME_DIR"); !r.empty()) s.push_back(canonical(r + "/gnupg"));
  s.push_back(canonical("/run/user/" + uid + "/gnupg"));
  s.erase(std::remove_if(s.begin(), s.end(), [](const std::string& p) { return p.empty() || p == "/" || p[0] != '/'; }),
          s.end());
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

sandbox::PolicyInputs policy_inputs(const World& world, const Config& cfg, const SandboxRequest& req, const stdfs::path& temp,
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
    if (stdfs::path gitdir = slot_objects::git_folder(req.worktree); !gitdir.empty()) {
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
  // The projects a writable state folder keeps (each may hold a memory: sandbox_policy.h).
  for (const auto& w : in.extra_write) {
    std::error_code le;
    for (auto it = stdfs::directory_iterator(stdfs::path(w) / "projects", le); !le && it != stdfs::directory_iterator();
         it.increment(le))
      if (it->is_directory(le)) in.state_projects[w].push_back(it->path().filename().string());
  }
  // The programs the config names inside the project stay as approved, whoever can write there.
  // So does the yolo binary the person runs, when it lies in the project (a build folder).
  if (req.role == sandbox::Role::Executor || req.role == sandbox::Role::Shell) {
    for (const auto& prog : configured_programs(world, cfg, req.project_root)) in.protected_paths.push_back(canonical(prog));
    for (const auto& prog : req.protected_programs) in.protected_paths.push_back(canonical(prog));
    std::error_code se;
    const std::string self = canonical(stdfs::read_symlink("/proc/self/exe", se).string());
    const std::string root = canonical(req.project_root.string());
    if (!self.empty() && !root.empty() && self.rfind(root + "/", 0) == 0) in.protected_paths.push_back(self);
  }
  return in;
}

}  // namespace yolo::runner
