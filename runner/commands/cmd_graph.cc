// yolo graph [PHASE] [--format mermaid|dot] [--repo DIR]: the plan graph (phases, waves,
// depends_on) as Mermaid or Graphviz DOT, for people who look rather than read.
#include <algorithm>
#include <iostream>

#include "protocol/status/graph.h"
#include "protocol/plan/plan.h"
#include "protocol/summary/summary.h"
#include "protocol/plan/waves.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string phase, format = "mermaid", repo;
};

graph::Phase load_phase(const World& w, const stdfs::path& dir) {
  graph::Phase ph;
  ph.folder = dir.filename().string();
  std::vector<waves::PlanNode> nodes;
  std::vector<std::vector<std::string>> deps;
  for (const auto& f : list_plan_files(w, dir)) {
    auto l = load_plan(w, f);
    graph::Plan p;
    p.id = f.filename().string();
    if (l.plan) {
      if (!l.plan->phase.empty() || !l.plan->plan.empty()) p.id = l.plan->id();
      p.title = l.plan->title;
      p.wave = l.plan->wave.value_or(0);
      deps.push_back(l.plan->depends_on);
      nodes.push_back({p.id, l.plan->plan, p.wave, l.plan->depends_on, waves::PlanStatus::Pending, {}});
    } else {
      p.title = "(unreadable: " + l.error + ")";
      deps.emplace_back();
      nodes.push_back({p.id, "", 0, {}, waves::PlanStatus::Pending, {}});
    }
    p.complete = locate_summary(w, f).exists;
    ph.plans.push_back(std::move(p));
  }
  for (size_t i = 0; i < ph.plans.size(); ++i)
    for (const auto& d : deps[i])
      if (int j = waves::resolve_dependency(nodes, d); j >= 0 && static_cast<size_t>(j) != i)
        ph.plans[i].depends_on.push_back(ph.plans[static_cast<size_t>(j)].id);
  return ph;
}

int run(const Context& ctx, const Options& o) {
  if (o.format != "mermaid" && o.format != "dot") {
    out::err("✗ graph: --format is '" + o.format + "', not mermaid or dot");
    return kExitUsage;
  }
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) {
    out::err(out::sym(out::Sym::Fail) + " graph: " + err);
    return kExitFail;
  }
  stdfs::path phases_dir = *root / ".yolo-planning" / "phases";
  std::vector<stdfs::path> dirs;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(phases_dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<graph::Phase> phases;
  for (const auto& d : dirs) {
    std::string name = d.filename().string();
    if (!o.phase.empty()) {
      std::string want = stdfs::path(o.phase).filename().string();
      bool match =
          name == want || name.starts_with(want + "-") || (want.size() == 1 && name.starts_with("0" + want + "-"));
      if (!match) continue;
    }
    phases.push_back(load_phase(ctx.world, d));
  }
  if (phases.empty()) {
    out::err(out::sym(out::Sym::Fail) + " graph: " +
             (o.phase.empty() ? "no phase folders under " + phases_dir.string()
                              : "no phase '" + o.phase + "' under " + phases_dir.string()));
    return o.phase.empty() ? kExitFail : kExitUsage;
  }
  std::cout << (o.format == "dot" ? graph::dot(phases) : graph::mermaid(phases));
  return kExitOk;
}

const CommandRegistrar reg{Command{
    "graph", "Print the plan graph (phases, waves, dependencies) as Mermaid or Graphviz DOT", [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("PHASE", o->phase, "Phase number or folder name (default: every phase)");
      sub.add_option("--format", o->format,
                     "mermaid (default) or dot (render: yolo graph --format dot | dot -Tsvg > plans.svg)");
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
