// `yolo execute`'s steps before the waves (runner/run_prelude.h): the agents' check, Stage 1
// and its verdict, the review gate, a halt recorded.
#include "runner/run_prelude.h"

#include "protocol/run/execute_rules.h"

namespace yolo::runner::phase {

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

int RunPrelude::review_gate(const PhaseDir& phase, const std::vector<PlanEntry>& entries, const std::string& cid) {
  const execution::ReviewGate gate = execution::review_gate(cfg_.review_gate, o_.review);
  if (gate == execution::ReviewGate::OffByConfig) {
    tell_.emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Skipped)}, {"review_gate", "never"}},
               Sym::Skip, "Review gate skipped (review_gate: never)");
    return -1;
  }
  if (gate == execution::ReviewGate::NotRequested) {
    tell_.emit("review_gate",
               {{"status", to_string(execution::ReviewGateStatus::Skipped)}, {"review_gate", cfg_.review_gate}},
               Sym::Skip, "Review gate skipped (review_gate: " + cfg_.review_gate + "; --review runs it)");
    return -1;
  }
  // Already passed for exactly these plan contents: nothing to review again.
  auto snap = state::load(world_, root_);
  auto ledger = review_ledger::load(world_, root_, phase.abs);
  if (snap.ok() && ledger.ok() && execution::has_step(snap.doc, "step_2b")) {
    std::vector<review::PlanContent> contents;
    for (const auto& e : entries) contents.push_back({e.id, review::file_hash(world_, root_ / e.path)});
    if (review::passed_as_is(ledger.doc, contents)) {
      tell_.emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Passed)}, {"cached", true}}, Sym::Ok,
                 "Review gate: already passed for these plan contents");
      return -1;
    }
  }
  tell_.emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Running)}}, Sym::Diamond,
             "Review gate: yolo review " + phase.rel + " --changed" +
                 (cfg_.reviewer.argv.empty()
                      ? std::string(" (no reviewer configured: Stage 1 only)")
                      : " (reviewer " + cfg_.reviewer.argv.front() + ", up to " +
                            std::to_string(cfg_.timeout_for(cfg_.reviewer) / 1000) + " s per plan and cycle)"));
  // The review of `yolo review PHASE --changed`, in this process: plans whose content equals
  // their review-ledger record (a `yolo review PLAN` or an earlier gate) keep that verdict;
  // only changed plans are reviewed again. Each agent is a confined child with its own
  // timeout, and a signal while one runs ends its group (runner/agents.h).
  ReviewGateResult r;
  {
    ReviewGateOptions g;
    g.root = root_;
    g.config = cfg_;
    g.changed_only = true;
    g.quiet = true;  // the rows are told below; warnings ride in them (the fallback's reason)
    g.correlation_id = cid;
    std::optional<ReviewGateProgress> shown;
    if (!o_.json) {
      shown.emplace("Review gate: reviewing " + phase.rel, out::live_enabled());
      g.progress = shown->progress();
    }
    std::vector<review::PlanTarget> plans;
    for (const auto& f : list_plan_files(world_, phase.abs)) plans.push_back(review::PlanTarget{f, phase.abs, ""});
    r = run_review_gate(world_, g, plans, /*is_phase=*/true);
  }
  if (r.interrupt_signal) {
    // The reviewer's group is gone; like a `yolo execute` stopped by the signal anywhere
    // else before the waves, it dies of the same signal and writes nothing more.
    ::signal(r.interrupt_signal, SIG_DFL);
    ::raise(r.interrupt_signal);
    return host_.finish(kExecHalted, Result::Interrupted,
                        "Interrupted (signal " + std::to_string(r.interrupt_signal) + ")");
  }
  for (const auto& e : r.state_errors) tell_.note("review result not recorded: " + e);
  json detail = json::array();
  for (const auto& row : r.rows) detail.push_back(row.to_json());
  const Verdict verdict = r.worst;
  if (verdict == Verdict::Reject) {
    tell_.emit("review_gate",
               {{"status", to_string(execution::ReviewGateStatus::Rejected)},
                {"verdict", to_string(verdict)},
                {"review", detail}},
               Sym::Fail, "Review gate: rejected: no plan of this phase executes");
    if (!o_.json)
      for (const auto& l : rejected_plans_report(r.rows)) out::line("    " + l);
    auto paths = rejected_plan_paths(r.rows);
    // A reviewer that tried to leave its sandbox is the reviewer's fault, not the plan's.
    auto escaped = std::find_if(r.rows.begin(), r.rows.end(), [](const review::PlanReview& row) {
      return row.source == review::Source::SandboxRefused;
    });
    if (escaped != r.rows.end())
      host_.next_step(
          "`yolo logs " + text::sanitize_for_terminal(escaped->plan_id) +
          "` shows what the reviewer did; fix or replace the reviewer command in .yolo-planning/config.json, "
          "then `yolo execute`");
    else
      host_.next_step(paths.empty()
                          ? "edit the rejected plan, then `yolo execute`"
                          : "edit " + paths.front() +
                                (paths.size() > 1 ? " (and " + std::to_string(paths.size() - 1) + " more)" : "") +
                                ", then `yolo execute`");
    set_halted("review gate rejected the phase");
    return host_.finish(kExecHalted, Result::Halted, "Halted: the review gate rejected the phase (see `yolo status`)");
  }
  // Passed on Stage 1 alone: a reviewer could not run and the config allows that
  // (reviewer_required false). Said, never silent.
  if (r.fallback)
    tell_.note("no real review: a reviewer could not run and Stage 1 decided (reviewer_required is false)");
  auto up = state::update(world_, root_, [&](json& doc) {
    execution::mark_step(doc, "step_2b");
    return true;
  });
  if (!up.ok()) return host_.finish(kExecHalted, Result::Error, up.error);
  tell_.emit(
      "review_gate",
      {{"status", to_string(execution::ReviewGateStatus::Passed)}, {"verdict", to_string(verdict)}, {"review", detail}},
      verdict == Verdict::Approve ? Sym::Ok : Sym::Warn, std::string("Review gate: ") + to_string(verdict));
  note_review_outcomes(r.rows);
  return -1;
}

// One line per reviewed plan for people: its verdict, how many cycles the loop took (a
// reject revised by the architect shows here), and what decided it.
void RunPrelude::note_review_outcomes(const std::vector<review::PlanReview>& rows) {
  if (o_.json) return;  // the review_gate event carries the same detail
  for (const auto& row : rows) {
    if (row.skipped) continue;
    Sym s = row.verdict == Verdict::Approve ? Sym::Ok : row.verdict == Verdict::Conditional ? Sym::Warn : Sym::Fail;
    const std::string id = text::sanitize_for_terminal(row.plan_id);
    std::string line = out::sym(s) + " " + id + " " + to_string(row.verdict);
    if (row.cycles > 1) line += " after " + std::to_string(row.cycles) + " cycles (the architect revised it)";
    switch (row.source) {
      case review::Source::Reviewer:
        line += " (reviewer)";
        break;
      case review::Source::Fallback:
        line += " (reviewer unavailable: Stage 1 verdict)";
        break;
      case review::Source::ParseFailure:
        line += " (reviewer output unparseable: failed closed)";
        break;
      case review::Source::Stage1Reject:
        line += " (Stage 1)";
        break;
      case review::Source::SandboxRefused:
        line += " (the reviewer tried what its sandbox refuses: failed closed)";
        break;
    }
    out::line("    " + line);
    // An agent that failed: the line that says why, and where its whole output is.
    if ((row.source == review::Source::Fallback || row.source == review::Source::SandboxRefused) &&
        !row.reason.empty()) {
      out::line("      " + out::dim(text::sanitize_for_terminal(row.reason)));
      out::line("      Next: " + agent_next_step(row.reviewer, row.plan_id));
    }
    for (const auto& a : row.architect)
      if (!a.ran) {
        out::line("      architect unavailable: " + out::dim(text::sanitize_for_terminal(a.reason)));
        out::line("      Next: " + agent_next_step(true, row.plan_id));
      }
  }
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
