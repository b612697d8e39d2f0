// `yolo execute`: the agents' checks and the review gate before the waves; how the gates
// (runner/run_gates.h) speak through the run (runner/phase_run_internal.h).
#include "protocol/run/dispatch.h"
#include "protocol/plan/plan.h"
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

// Before the run starts: a configured agent whose program does not exist. A missing executor
// would fail every plan, so the run does not start; a missing reviewer means every plan gets
// only the Stage 1 verdict (the fallback), said loudly, or refused with reviewer_required.
int Run::check_agents() {
  bool reviewing = execution::review_gate(cfg_.review_gate, o_.review) == execution::ReviewGate::Runs;
  for (const auto& m : missing_agent_programs(cfg_, root_)) {
    std::string what = m.role + " program '" + m.program + "' not found (config.json " + m.role +
                       ", argv[0]; PATH or a path from the project root)";
    if (m.role == "executor" || m.role.rfind("dispatch.", 0) == 0) {
      next_ = "install it or correct `" + m.role + "` in .yolo-planning/config.json, then `yolo execute`";
      return finish(kExecHalted, Result::Error, "the " + what);
    }
    if (m.role == "reviewer" && reviewing && cfg_.reviewer_required) {
      next_ =
          "install it or correct `reviewer` in .yolo-planning/config.json (reviewer_required is true), then `yolo "
          "execute`";
      return finish(kExecHalted, Result::Error,
                    "the " + what + ": reviewer_required is true, so no plan can pass the review gate");
    }
    if (m.role == "reviewer" && reviewing)
      emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
           "The " + what +
               ": every plan gets the Stage 1 verdict only (fallback, no real review). "
               "Set \"reviewer_required\": true to refuse that");
    else if (m.role == "architect" && reviewing)
      emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
           "The " + what + ": a rejected plan is not revised");
  }
  return -1;
}

int Run::review_gate() {
  const execution::ReviewGate gate = execution::review_gate(cfg_.review_gate, o_.review);
  if (gate == execution::ReviewGate::OffByConfig) {
    emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Skipped)}, {"review_gate", "never"}}, Sym::Skip,
         "Review gate skipped (review_gate: never)");
    return -1;
  }
  if (gate == execution::ReviewGate::NotRequested) {
    emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Skipped)}, {"review_gate", cfg_.review_gate}}, Sym::Skip,
         "Review gate skipped (review_gate: " + cfg_.review_gate + "; --review runs it)");
    return -1;
  }
  // Already passed for exactly these plan contents: nothing to review again.
  auto snap = state::load(world_, root_);
  auto ledger = review_ledger::load(world_, root_, phase_.abs);
  if (snap.ok() && ledger.ok() && execution::has_step(snap.doc, "step_2b")) {
    std::vector<review::PlanContent> contents;
    for (const auto& e : entries_) contents.push_back({e.id, review::file_hash(world_, root_ / e.path)});
    if (review::passed_as_is(ledger.doc, contents)) {
      emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Passed)}, {"cached", true}}, Sym::Ok,
           "Review gate: already passed for these plan contents");
      return -1;
    }
  }
  emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Running)}}, Sym::Diamond,
       "Review gate: yolo review " + phase_.rel + " --changed" +
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
    g.correlation_id = cid_;
    std::optional<ReviewGateProgress> shown;
    if (!o_.json) {
      shown.emplace("Review gate: reviewing " + phase_.rel, out::live_enabled());
      g.progress = shown->progress();
    }
    std::vector<review::PlanTarget> plans;
    for (const auto& f : list_plan_files(world_, phase_.abs)) plans.push_back(review::PlanTarget{f, phase_.abs, ""});
    r = run_review_gate(world_, g, plans, /*is_phase=*/true);
  }
  if (r.interrupt_signal) {
    // The reviewer's group is gone; like a `yolo execute` stopped by the signal anywhere
    // else before the waves, it dies of the same signal and writes nothing more.
    ::signal(r.interrupt_signal, SIG_DFL);
    ::raise(r.interrupt_signal);
    return finish(kExecHalted, Result::Interrupted, "Interrupted (signal " + std::to_string(r.interrupt_signal) + ")");
  }
  for (const auto& e : r.state_errors) note("review result not recorded: " + e);
  json detail = json::array();
  for (const auto& row : r.rows) detail.push_back(row.to_json());
  const Verdict verdict = r.worst;
  if (verdict == Verdict::Reject) {
    emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Rejected)}, {"verdict", to_string(verdict)}, {"review", detail}}, Sym::Fail,
         "Review gate: rejected: no plan of this phase executes");
    if (!o_.json)
      for (const auto& l : rejected_plans_report(r.rows)) out::line("    " + l);
    auto paths = rejected_plan_paths(r.rows);
    // A reviewer that tried to leave its sandbox is the reviewer's fault, not the plan's.
    auto escaped = std::find_if(r.rows.begin(), r.rows.end(),
                                [](const review::PlanReview& row) { return row.source == review::Source::SandboxRefused; });
    if (escaped != r.rows.end())
      next_ = "`yolo logs " + text::sanitize_for_terminal(escaped->plan_id) +
              "` shows what the reviewer did; fix or replace the reviewer command in .yolo-planning/config.json, "
              "then `yolo execute`";
    else
      next_ = paths.empty() ? "edit the rejected plan, then `yolo execute`"
                          : "edit " + paths.front() +
                                (paths.size() > 1 ? " (and " + std::to_string(paths.size() - 1) + " more)" : "") +
                                ", then `yolo execute`";
    set_halted("review gate rejected the phase");
    return finish(kExecHalted, Result::Halted, "Halted: the review gate rejected the phase (see `yolo status`)");
  }
  // Passed on Stage 1 alone: a reviewer could not run and the config allows that
  // (reviewer_required false). Said, never silent.
  if (r.fallback) note("no real review: a reviewer could not run and Stage 1 decided (reviewer_required is false)");
  auto up = state::update(world_, root_, [&](json& doc) {
    execution::mark_step(doc, "step_2b");
    return true;
  });
  if (!up.ok()) return finish(kExecHalted, Result::Error, up.error);
  emit("review_gate", {{"status", to_string(execution::ReviewGateStatus::Passed)}, {"verdict", to_string(verdict)}, {"review", detail}},
       verdict == Verdict::Approve ? Sym::Ok : Sym::Warn, std::string("Review gate: ") + to_string(verdict));
  note_review_outcomes(r.rows);
  return -1;
}

// One line per reviewed plan for people: its verdict, how many cycles the loop took (a
// reject revised by the architect shows here), and what decided it.
void Run::note_review_outcomes(const std::vector<review::PlanReview>& rows) {
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

// The gates speak through the run: its events and lines, its stop, its next step.
RunGates::Host Run::gates_host() {
  RunGates::Host h;
  h.emit = [this](const std::string& event, json data, Sym sym, const std::string& human) {
    emit(event, std::move(data), sym, human);
  };
  h.note = [this](const std::string& human) { note(human); };
  h.stop = [this](int code, Result result, const std::string& message) { stop(code, result, message); };
  h.set_halted = [this](const std::string& reason) { set_halted(reason); };
  h.next_step = [this](std::string next) { next_ = std::move(next); };
  return h;
}

bool executor_configured(const Config& c) { return !c.executor.argv.empty() || c.dispatch.configured(); }

}  // namespace yolo::runner::phase
