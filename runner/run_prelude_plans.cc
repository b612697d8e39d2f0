// `yolo execute`'s steps before the waves (runner/run_prelude.h), beside its route
// (run_prelude.cc): the phase's plans read from disk, a SUMMARY checked, the agents' check,
// Stage 1 and its verdict, a halt recorded.
#include "protocol/gates/gate_coverage.h"
#include "protocol/run/execute_rules.h"
#include "runner/run_prelude.h"

namespace yolo::runner::phase {

std::string RunPrelude::plan_rel_path(const PhaseDir& p, const stdfs::path& f, const stdfs::path& root) {
  if (f.parent_path() == p.abs && f.has_filename()) return p.rel + "/" + f.filename().string();
  return stdfs::relative(f, root).generic_string();
}

// Each plan is read, parsed and hashed once per execute, here: the entries (ids, waves,
// dependencies), the checks and Stage 1 (precheck, from loaded_) all come from that one read.
// The plans are read first and the entries made after: what the run keeps is not scattered
// among the parsed documents that precheck frees. The reading and parsing is spread over two
// threads (the second core idles before the first executor starts): each plan's
// read is its own, the results land in file order.
RunPrelude::Plans RunPrelude::load_plans(const PhaseDir& phase) {
  Plans out;
  const std::vector<stdfs::path> files = list_plan_files(world_, phase.abs);
  std::vector<std::string> stamps(files.size());
  std::vector<plan_checks::Parsed> checks(files.size());
  loaded_.resize(files.size());
  out.runs.resize(files.size());  // once: the run keeps references into it
  auto read_some = [&](size_t first, size_t step) {
    for (size_t i = first; i < files.size(); i += step) {
      const stdfs::path& f = files[i];
      std::string stamp = world_.files().stamp(f);
      auto l = load_plan(world_, f);
      stamps[i] = l.plan && !stamp.empty() && world_.files().stamp(f) == stamp ? stamp : std::string();
      if (!stamps[i].empty()) checks[i] = plan_checks::parse(*l.plan);
      loaded_[i] = {f, std::move(l)};
    }
  };
  if (files.size() >= 64) {
    std::exception_ptr failed;
    std::thread other([&] {
      try {
        read_some(1, 2);
      } catch (...) {  // never escapes the thread (that would end the process): rethrown below
        failed = std::current_exception();
      }
    });
    try {
      read_some(0, 2);
    } catch (...) {
      other.join();
      throw;
    }
    other.join();
    if (failed) std::rethrow_exception(failed);
  } else {
    read_some(0, 1);
  }
  out.entries.reserve(loaded_.size());
  for (size_t i = 0; i < loaded_.size(); ++i) {
    const stdfs::path& f = loaded_[i].file;
    const auto& l = loaded_[i].load;
    PlanEntry e;
    e.path = plan_rel_path(phase, f, root_);
    for (const auto& c : checks[i].checks)  // the files the wave's approval covers by content
      for (const auto& rel : gates::named_project_files(world_, root_, json(c.argv)))
        out.check_programs.push_back((root_ / rel).string());
    if (!stamps[i].empty()) out.runs[i].checks_read.emplace(stamps[i], std::move(checks[i]));
    if (l.plan) {
      const Plan& p = *l.plan;
      e.plan = p.plan;
      e.id = p.phase.empty() && p.plan.empty() ? f.filename().string() : p.id();
      e.title = p.title;
      e.wave = p.wave.value_or(0);
      e.depends_on = p.depends_on;
      out.runs[i].load_hash = p.content_hash;
    } else {
      e.id = f.filename().string();
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

SummaryState RunPrelude::check_summary(const PlanEntry& e, json& findings, const std::string* sp_rel) {
  stdfs::path sp = root_ / (sp_rel ? *sp_rel : summary_rel_for(world_, root_, e.path));
  if (!world_.files().exists(sp)) return SummaryState::Missing;
  SummaryVerdict v = verify_summary(world_, sp, root_ / e.path, root_, mode_from_config(cfg_.summary_checks), &git_);
  if (v.passed()) return SummaryState::Passed;
  findings = v.to_json().value("findings", json::array());
  return SummaryState::Failed;
}

// Before the run starts: a configured agent whose program does not exist. A missing executor
// would fail every plan, so the run does not start; a missing reviewer means every plan gets
// only the Stage 1 verdict (the fallback), said loudly, or refused with reviewer_required.
int RunPrelude::check_agents() {
  bool reviewing = execution::review_gate(cfg_.review_gate, o_.review) == execution::ReviewGate::Runs;
  for (const auto& m : missing_agent_programs(cfg_, root_)) {
    std::string what = m.role + " program '" + m.program + "' not found (config.json " + m.role +
                       ", argv[0]; PATH or a path from the project root)";
    using Step = execution::MissingAgentStep;
    switch (execution::missing_agent_step(m.role, reviewing, cfg_.reviewer_required)) {
      case Step::Refuse:
        host_.next_step("install it or correct `" + m.role + "` in .yolo-planning/config.json, then `yolo execute`");
        return host_.finish(kExecHalted, Result::Error, "the " + what);
      case Step::RefuseReviewerRequired:
        host_.next_step(
            "install it or correct `reviewer` in .yolo-planning/config.json (reviewer_required is true), then `yolo "
            "execute`");
        return host_.finish(kExecHalted, Result::Error,
                            "the " + what + ": reviewer_required is true, so no plan can pass the review gate");
      case Step::WarnStage1Only:
        tell_.emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
                   "The " + what +
                       ": every plan gets the Stage 1 verdict only (fallback, no real review). "
                       "Set \"reviewer_required\": true to refuse that");
        break;
      case Step::WarnNoRevision:
        tell_.emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
                   "The " + what + ": a rejected plan is not revised");
        break;
      case Step::Ignore:
        break;
    }
  }
  return -1;
}

bool RunPrelude::set_halted(const std::string& reason) {
  auto up = state::update(world_, root_, [&](json& doc) { return execution::halt(doc); });
  tell_.log("phase_end", "", {{"status", to_string(RunStatus::Halted)}, {"reason", reason}});
  return up.ok();
}

void RunPrelude::start_stage1(const PhaseDir& phase) {
  stage1_ = std::async(std::launch::async, [this, dir = phase.abs] {
    Stage1Options po;
    po.max_tasks = cfg_.max_tasks_per_plan;
    po.root = root_;
    return stage1_phase(world_, dir, loaded_, po);
  });
}

int RunPrelude::precheck(const PhaseDir& phase) {
  // Stage 1 of the plans as load_plans read them (the content whose ids and waves are
  // scheduled), started in the run; then they are dropped: the run keeps only the entries.
  if (!stage1_.valid()) start_stage1(phase);
  auto reviews = stage1_.get();
  std::vector<LoadedPlan>().swap(loaded_);
  // For people: every rejected plan in full (they stop the run), the first few with
  // warnings, then how many more (800 plans with a warning each were 10,000 lines before the
  // first executor started).
  constexpr int kConditionalShown = 5;
  std::vector<Verdict> verdicts;
  verdicts.reserve(reviews.size());
  for (const auto& r : reviews) verdicts.push_back(r.verdict());
  const execution::Precheck pc = execution::precheck(verdicts);
  int conditional_seen = 0;
  for (size_t k = 0; k < reviews.size(); ++k) {
    const auto& r = reviews[k];
    const Verdict v = verdicts[k];
    if (v == Verdict::Approve) continue;
    if (v == Verdict::Conditional) ++conditional_seen;
    if (!o_.json && v != Verdict::Reject && conditional_seen > kConditionalShown) continue;
    if (o_.json) {
      json j = r.to_json();
      j.erase("cmd");
      tell_.emit("precheck",
                 {{"plan", r.plan_id}, {"path", r.plan_path}, {"verdict", to_string(v)}, {"findings", j["findings"]}},
                 out::sym_for(v), "");
    } else {
      out::line(render::structural_review(r));
    }
  }
  if (pc.conditional > kConditionalShown)
    tell_.note(std::to_string(pc.conditional - kConditionalShown) +
               " more plan(s) with warnings not shown: `yolo review-plan --human --phase " + phase.rel +
               "` lists them all");
  if (pc.halts()) {
    set_halted(pc.why());
    return host_.finish(kExecHalted, Result::Halted,
                        "Halted before anything ran: " + pc.why() + " (fix them and run `yolo execute` again)");
  }
  tell_.emit("precheck", {{"verdict", to_string(pc.verdict())}, {"plans", reviews.size()}},
             out::sym_for(pc.verdict()),
             "Cross-plan validation: " + std::to_string(reviews.size()) + " plans" +
                 (pc.conditional ? ", " + std::to_string(pc.conditional) + " with warnings" : std::string(", no findings")));
  return -1;
}

}  // namespace yolo::runner::phase
