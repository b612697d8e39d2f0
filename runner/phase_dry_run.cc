// `yolo execute --dry-run`: what the run would do, nothing started (runner/phase_dry_run.h).
#include "runner/phase_dry_run.h"

#include "protocol/run/dispatch.h"
#include "protocol/plan/plan.h"

namespace yolo::runner::phase {

int dry_run(const DryRunInput& in, std::string& next) {
  const Config& cfg = in.cfg;
  const ExecuteOptions& o = in.options;
  const PhaseDir& phase = in.phase;
  const std::vector<PlanEntry>& entries = in.entries;
  auto dispatched = [&] { return in.dispatched; };
  auto dispatch_parallel = [&] { return in.dispatch_parallel; };
  auto isolated = [&] { return in.isolated; };
  std::vector<waves::PlanNode> nodes;
  for (const auto& e : entries) nodes.push_back({e.id, e.plan, e.wave, e.depends_on, waves::PlanStatus::Pending, {}});
  std::map<long long, std::vector<size_t>> by_wave;
  for (size_t i = 0; i < entries.size(); ++i) by_wave[entries[i].wave].push_back(i);
  bool executor = !cfg.executor.argv.empty();
  bool reviewing = execution::review_gate(cfg.review_gate, o.review) == execution::ReviewGate::Runs;
  json jw = json::array();
  size_t to_run = 0;
  // Stage 1, as the real run does it before anything runs: a plan it rejects (one that does
  // not parse, a missing key, a cycle) halts that run, so the dry run says so, with the reason.
  std::vector<StructuralReview> stage1;
  {
    Stage1Options po;
    po.max_tasks = cfg.max_tasks_per_plan;
    po.root = in.root;
    stage1 = stage1_phase(in.world, phase.abs, in.loaded, po);
  }
  size_t rejected = 0;
  auto rejection = [&](size_t i) -> const Finding* {
    if (i >= stage1.size() || stage1[i].verdict() != Verdict::Reject) return nullptr;
    for (const auto& f : stage1[i].findings)
      if (f.severity == Severity::High) return &f;
    return nullptr;
  };
  for (size_t i = 0; i < entries.size(); ++i) rejected += rejection(i) != nullptr;
  if (!o.json)
    out::line(out::bold("Phase " + text::sanitize_for_terminal(phase.folder)) + ": " +
              std::to_string(entries.size()) + " plans in " + std::to_string(by_wave.size()) + " wave(s)  " +
              out::dim("(dry run: nothing runs, nothing is written)"));
  for (const auto& [w, idx] : by_wave) {
    if (!o.json)
      out::line(out::bold(w >= 1 ? "Wave " + std::to_string(w) : std::string("No valid wave (never runs)")));
    json jp = json::array();
    for (size_t i : idx) {
      const auto& e = entries[i];
      json deps = json::array();
      std::string dep_text;
      for (const auto& d : e.depends_on) {
        int j = waves::resolve_dependency(nodes, d);
        std::string id = j >= 0 ? entries[static_cast<size_t>(j)].id : d + " (unknown)";
        deps.push_back(id);
        dep_text += (dep_text.empty() ? "" : ", ") + id;
      }
      json f;
      SummaryState ss = in.check_summary(e, f);
      std::string summary = ss == SummaryState::Passed ? "passes" : ss == SummaryState::Failed ? "fails" : "missing";
      std::string sp = summary_rel_for(in.world, in.root, e.path);
      json jl = {{"id", e.id},         {"title", e.title},   {"path", e.path},
                 {"depends_on", deps}, {"summary", summary}, {"summary_path", sp}};
      std::string what;
      if (const Finding* bad = rejection(i)) {
        jl["precheck"] = "reject";
        jl["findings"] = json::array();
        for (const auto& g : stage1[i].findings)
          if (g.severity == Severity::High) jl["findings"].push_back(g.to_json());
        what = out::sym(Sym::Fail) + " rejected by the structural pre-check: " + bad->issue +
               (bad->suggested_fix.empty() ? "" : " (" + bad->suggested_fix + ")");
      } else if (ss == SummaryState::Passed) {
        what = out::sym(Sym::Ok) + " complete (its SUMMARY passes)";
      } else if (dispatched() && w >= 1) {
        // The submit argv as the run would give it; what only the run knows is named.
        std::map<std::string, std::string> vars = {{"plan_path", e.path},
                                                   {"plan_id", e.id},
                                                   {"wave", std::to_string(w)},
                                                   {"phase_dir", phase.rel},
                                                   {"summary_path", sp},
                                                   {"correlation_id", "<run id>"},
                                                   {"attempt", "1"},
                                                   {"base_commit", "<the wave's base commit>"},
                                                   {"branch", "yolo/<run>/" + e.id},
                                                   {"remote", cfg.dispatch.remote}};
        std::vector<std::string> res_errors;  // the plan's resources, as its job would get them
        auto bytes = in.world.files().read(in.root / e.path, 64u << 20, /*text=*/false);
        auto res = bytes.ok() ? dispatch::resources_of(parse_plan(bytes.content, e.path).frontmatter, res_errors)
                              : dispatch::Resources{};
        auto argv =
            dispatch::submit_argv(cfg.dispatch.submit.argv, cfg.executor.argv, vars, dispatch::resources_options(res));
        jl["would_submit"] = argv;
        if (!res_errors.empty()) jl["resource_errors"] = res_errors;
        std::string cmd;
        for (const auto& a : argv)
          cmd += (cmd.empty() ? "" : " ") + (a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'");
        what = out::sym(Sym::Diamond) + " would submit a job (dispatch): " + cmd;
        ++to_run;
      } else if (executor && w >= 1) {
        std::map<std::string, std::string> vars = {{"plan_path", e.path},
                                                   {"plan_id", e.id},
                                                   {"wave", std::to_string(w)},
                                                   {"phase_dir", phase.rel},
                                                   {"summary_path", sp}};
        auto argv = expand_argv(cfg.executor.argv, vars);
        jl["would_run"] = argv;
        std::string cmd;
        for (const auto& a : argv)
          cmd += (cmd.empty() ? "" : " ") + (a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'");
        what = out::sym(Sym::Diamond) + " would run: " + cmd;
        ++to_run;
      } else if (w >= 1) {
        what = out::sym(Sym::Skip) + " would wait for " + sp + " (no executor configured)";
        ++to_run;
      } else {
        what = out::sym(Sym::Fail) + " never runs: its wave is not a positive integer";
      }
      jp.push_back(jl);
      if (!o.json)
        out::line("  " + text::sanitize_for_terminal(e.id) + "  " + text::sanitize_for_terminal(e.title) +
                  (dep_text.empty() ? out::dim("  (no dependencies)")
                                    : out::dim("  (after " + text::sanitize_for_terminal(dep_text) + ")")) +
                  "\n      " + text::sanitize_for_terminal(what));
    }
    jw.push_back({{"wave", w}, {"plans", jp}});
  }
  std::string review = reviewing ? "the review gate runs first (yolo review " + phase.rel + " --changed)"
                                 : "review gate skipped (review_gate: " + cfg.review_gate + ")";
  next = "`yolo execute" + (o.phase.empty() ? std::string() : " " + o.phase) + "` runs it";
  if (rejected)
    next = "fix the " + std::to_string(rejected) + " rejected plan(s) above (`yolo review-plan --human --phase " +
            phase.rel + "` lists every finding): with them, `yolo execute` halts before anything runs";
  if (o.json) {
    out::json_line({{"ok", rejected == 0},
                    {"cmd", "execute"},
                    {"dry_run", true},
                    {"phase", phase.number},
                    {"phase_dir", phase.rel},
                    {"waves", jw},
                    {"review_gate", reviewing},
                    {"executor", executor},
                    {"would_run", to_run},
                    {"isolation", dispatched() ? std::string("dispatch") : cfg.isolation},
                    {"dispatch", dispatched() ? json{{"remote", cfg.dispatch.remote},
                                                     {"max_parallel", dispatch_parallel()},
                                                     {"submit", cfg.dispatch.submit.argv},
                                                     {"wait", cfg.dispatch.wait.argv},
                                                     {"cancel", cfg.dispatch.cancel.argv},
                                                     {"errors", cfg.dispatch.errors}}
                                              : json(nullptr)},
                    {"rejected", rejected},
                    {"next", next}});
    return rejected ? kExecHalted : kExecComplete;
  }
  out::line(out::sym(Sym::Skip) + " " + review + "; then the vision gate on ROADMAP.md");
  if (dispatched()) {
    out::line(out::sym(Sym::Diamond) + " dispatch: each plan a job of the engine behind `" +
              text::sanitize_for_terminal(cfg.dispatch.submit.argv.front()) + "` (" +
              std::to_string(dispatch_parallel()) + " at once); the job pushes branch yolo/<run>/<plan id> to " +
              text::sanitize_for_terminal(cfg.dispatch.remote) +
              ", yolo fetches it, gates it here and merges in plan order (docs/dispatch.md)" +
              (cfg.dispatch.wave_form() ? "; each wave one submission (`dispatch.submit_wave`) and one poller" : ""));
    for (const auto& err : cfg.dispatch.errors)
      out::line(out::sym(Sym::Fail) + " .yolo-planning/config.json: " + text::sanitize_for_terminal(err) +
                ": the run would stop before any submit");
  } else if (isolated())
    out::line(out::sym(Sym::Skip) +
              " isolation: worktree: each plan in its own git worktree on branch yolo/<run>/<plan id>, "
              "merged back in plan order once it passed its gates");
  if (rejected)
    out::line(out::sym(Sym::Fail) + " " + std::to_string(rejected) +
              " plan(s) rejected by the structural pre-check: the run would halt before anything runs");
  out::line("Next: " + next);
  return rejected ? kExecHalted : kExecComplete;
}

}  // namespace yolo::runner::phase
