// yolo logs [PLAN] [--role R] [--last] [--repo DIR]: the output agents and executors wrote
// for a plan, per cycle and attempt (.yolo-planning/.logs, runner/agent_logs.h). Without
// PLAN: which plans have logs.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

#include "protocol/ports/fs.h"
#include "protocol/base/text.h"
#include "runner/agent_logs.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string plan, role, repo;
  bool last = false, json = false;
};

struct LogFile {
  stdfs::path path;
  std::string phase, plan, role;
  int n = 0;
  stdfs::file_time_type mtime;
};

std::vector<LogFile> all_logs(const stdfs::path& root) {
  std::vector<LogFile> out;
  std::error_code ec;
  for (auto ph = stdfs::directory_iterator(logs_dir(root), ec); !ec && ph != stdfs::directory_iterator();
       ph.increment(ec)) {
    if (!ph->is_directory(ec)) continue;
    std::error_code ec2;
    for (auto pl = stdfs::directory_iterator(ph->path(), ec2); !ec2 && pl != stdfs::directory_iterator();
         pl.increment(ec2)) {
      if (!pl->is_directory(ec2)) continue;
      std::error_code ec3;
      for (auto f = stdfs::directory_iterator(pl->path(), ec3); !ec3 && f != stdfs::directory_iterator();
           f.increment(ec3)) {
        std::string name = f->path().filename().string();
        if (!name.ends_with(".log")) continue;
        LogFile l;
        l.path = f->path();
        l.phase = ph->path().filename().string();
        l.plan = pl->path().filename().string();
        std::string stem = name.substr(0, name.size() - 4);
        size_t dash = stem.rfind('-');
        l.role = dash == std::string::npos ? stem : stem.substr(0, dash);
        if (dash != std::string::npos) l.n = std::atoi(stem.c_str() + dash + 1);
        l.mtime = f->last_write_time(ec3);
        out.push_back(std::move(l));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const LogFile& a, const LogFile& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  return out;
}

// "02", "01-02", "1-2" and a plan path all name plan 01-02.
bool plan_matches(const std::string& want, const LogFile& l) {
  if (want == l.plan) return true;
  std::string w = stdfs::path(want).filename().string();
  if (w.ends_with("-PLAN.md")) w = w.substr(0, w.size() - 8);
  auto strip = [](std::string s) {
    std::string out, part;
    for (char c : s + "-") {
      if (c == '-') {
        while (part.size() > 1 && part[0] == '0') part.erase(0, 1);
        out += (out.empty() ? "" : "-") + part;
        part.clear();
      } else
        part += c;
    }
    return out;
  };
  std::string a = strip(w), b = strip(l.plan);
  if (a == b) return true;
  // "02" alone: the plan number, in any phase.
  return w.find('-') == std::string::npos && b.size() > a.size() && b.ends_with("-" + a);
}

int run(const Context& ctx, const Options& o) {
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) {
    out::err(out::sym(out::Sym::Fail) + " logs: " + err);
    return kExitFail;
  }
  auto logs = all_logs(*root);
  if (o.plan.empty()) {
    if (logs.empty()) {
      out::line(out::sym(out::Sym::Skip) + " No agent or executor output kept yet (" + logs_dir(*root).string() + ")");
      return kExitOk;
    }
    std::map<std::string, std::vector<const LogFile*>> by_plan;
    for (const auto& l : logs) by_plan[l.phase + "/" + l.plan].push_back(&l);
    for (const auto& [k, v] : by_plan) {
      std::string roles;
      for (const auto* l : v) roles += (roles.empty() ? "" : ", ") + l->role + " " + std::to_string(l->n);
      out::line("  " + text::sanitize_for_terminal(v.front()->plan) + "  " + text::sanitize_for_terminal(roles) + "  " +
                out::dim(text::sanitize_for_terminal(v.front()->phase)));
    }
    out::line("Next: `yolo logs PLAN` shows a plan's logs");
    return kExitOk;
  }
  std::vector<const LogFile*> mine;
  for (const auto& l : logs)
    if (plan_matches(o.plan, l) && (o.role.empty() || l.role == o.role)) mine.push_back(&l);
  if (mine.empty()) {
    out::err(out::sym(out::Sym::Fail) + " logs: no output kept for plan '" + text::sanitize_for_terminal(o.plan) + "'" +
             (o.role.empty() ? "" : " from " + text::sanitize_for_terminal(o.role)));
    out::err("Next: `yolo logs` lists the plans that have logs");
    return kExitFail;
  }
  if (o.last) mine.erase(mine.begin(), mine.end() - 1);
  for (const auto* l : mine) {
    auto r = ctx.world.files().read(l->path, 8u << 20, /*text=*/true);
    if (!r.ok()) {
      out::err(out::sym(out::Sym::Warn) + " " + r.error->message);
      continue;
    }
    std::error_code ec;
    out::line(out::bold("── " + stdfs::relative(l->path, *root, ec).generic_string() + " ──"));
    std::string body = out::stdout_is_tty() ? text::sanitize_for_terminal(r.content) : r.content;
    std::cout << body;
    if (!body.empty() && body.back() != '\n') std::cout << "\n";
  }
  std::cout.flush();
  return kExitOk;
}

const CommandRegistrar reg{Command{
    "logs", "Show what the agents and the executor printed for a plan, per cycle and attempt (yolo logs PLAN)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("PLAN", o->plan,
                     "Plan id (01-02), number (02) or PLAN file; without it, the plans that have logs");
      sub.add_option("--role", o->role, "Only reviewer, architect or executor");
      sub.add_flag("--last", o->last, "Only the newest log");
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
