// yolo sandbox [--role ROLE] [--write DIR]... [--print] -- CMD ARGS...: runs a program (the
// person's own interactive agent, a shell) under the sandbox of a role, so that an agent
// started outside yolo cannot reach the approval key, the state or the gates either.
// Without --role: "shell", which writes the checkout and the plans but not yolo's own files.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "protocol/state/config.h"
#include "protocol/run/sandbox_policy.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/output.h"
#include "runner/sandbox.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string role = "shell", repo;
  std::vector<std::string> write, cmd;
  bool print = false, json = false;
};

int run(const Context& ctx, const Options& o) {
  sandbox::Role role;
  if (!sandbox::role_from_name(o.role, role)) {
    std::string all;
    for (const auto& n : sandbox::role_names()) all += (all.empty() ? "" : ", ") + n;
    out::err(out::sym(out::Sym::Fail) + " sandbox: unknown role '" + o.role + "' (one of " + all + ")");
    return kExitUsage;
  }
  if (o.cmd.empty() && !o.print) {
    out::err(out::sym(out::Sym::Fail) + " sandbox: no command given\nNext: yolo sandbox -- claude   (or --print to see the policy)");
    return kExitUsage;
  }
  std::string err;
  std::error_code ec;
  stdfs::path root = stdfs::current_path(ec);
  if (auto found = find_project(ctx, o.repo, err)) root = *found;
  Config cfg;
  if (auto c = load_config(ctx.world, root); c.ok()) cfg = c.config;
  if (sandbox_off(cfg))
    out::err(out::sym(out::Sym::Warn) + " sandbox: the project's config says \"sandbox\": \"off\"; this command "
             "confines all the same");
  SandboxRequest req;
  req.role = role;
  req.project_root = root;
  for (const auto& w : o.write) req.extra_write.push_back(stdfs::absolute(w, ec).string());
  // Its temp folder outlives this process (the program replaces it): one of its own under /tmp.
  std::string tmpl = (stdfs::temp_directory_path(ec) / "yolo-sandbox-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  stdfs::path temp = o.print ? stdfs::path(tmpl).parent_path() / "yolo-sandbox-…"
                             : ::mkdtemp(buf.data()) ? stdfs::path(buf.data()) : stdfs::path();
  ConfinementResult r = confine_policy(sandbox::policy_for(policy_inputs(ctx.world, cfg, req, temp, {})), o.print ? stdfs::path() : temp);
  r.confinement->keep_temp = true;
  if (o.print) {
    if (o.json) {
      json j = r.confinement->record();
      j["temp_dir"] = temp.string();
      j["ok"] = r.ok();
      if (!r.ok()) j["error"] = r.error;
      j["text"] = r.confinement->policy.canonical();
      out::json_line(j);
    } else {
      std::cout << r.confinement->policy.canonical();
      std::cout << "mechanism " << (r.ok() ? r.confinement->mechanism : "unavailable: " + r.error) << " (Landlock ABI "
                << landlock_abi() << ")\npolicy " << r.confinement->digest << "\n";
    }
    return r.ok() ? kExitOk : kExitFail;
  }
  if (!r.ok()) {
    out::err(out::sym(out::Sym::Fail) + " sandbox: " + r.error);
    return kExitFail;
  }
  if (int e = enter_confinement(*r.confinement)) {
    out::err(out::sym(out::Sym::Fail) + " sandbox: could not enter the sandbox: " + std::strerror(e));
    return kExitFail;
  }
  ::setenv("TMPDIR", temp.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : o.cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  ::execvp(argv[0], argv.data());
  int e = errno;
  out::err(out::sym(out::Sym::Fail) + " sandbox: " + o.cmd[0] + ": " + std::strerror(e));
  return e == ENOENT ? 127 : 126;
}

const CommandRegistrar reg{Command{
    "sandbox",
    "Run a program (your own agent, a shell) in the sandbox yolo gives its agents: no approval key, no gates",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--role", o->role, "reviewer, architect, executor, approver, check or shell (the default)");
      sub.add_option("--write", o->write, "A folder the program may also write (its own state, e.g. ~/.claude)");
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--print", o->print, "Show the policy instead of running a program");
      sub.add_flag("--json", o->json, "With --print: the policy as JSON");
      sub.add_option("CMD", o->cmd, "The program and its arguments, after --");
      sub.prefix_command(false);
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
