// `yolo execute`'s steps before the waves (runner/run_prelude.h), from its one entry,
// prepare(): which phase runs (the one asked for, else the first not complete), step 2 (the
// plans' SUMMARY files checked and the state prepared for the run), the review gate and the
// vision gate. (The plans read, the agents' check, Stage 1: run_prelude_plans.cc.)
#include "runner/run_prelude.h"

#include "protocol/gates/gate_coverage.h"
#include "protocol/run/execute_rules.h"

namespace yolo::runner::phase {

// The steps before the waves, in this order; a dry run ends after the plans are read.
int RunPrelude::prepare(const state::LoadResult& snap, PhaseDir& phase, std::vector<PlanEntry>& entries,
                        std::string& cid) {
  if (int rc = choose_phase(snap, phase); rc >= 0) return rc;
  {
    Plans read = load_plans(phase);
    entries = std::move(read.entries);
    host_.plans_read(std::move(read.runs), std::move(read.check_programs));
  }
  if (auto bad = execution::unknown_plan(entries, o_.only_plan, phase.rel)) {  // nothing written
    host_.next_step(bad->next);
    return host_.finish(kExecUsage, Result::Error, bad->message);
  }
  if (o_.dry_run) return host_.dry_run();
  if (int rc = check_agents(); rc >= 0) return rc;
  fresh_cid_ = new_uuid();
  if (int rc = host_.ready(snap.doc); rc >= 0) return rc;
  // Stage 1 over the plans as read, on a second thread while this one does step 2 (the
  // SUMMARY files, the state; the second core idles before the first executor starts
  // otherwise). It reads only the plans and the files they name, which step 2 does not write, and
  // precheck() uses its verdict after step 2, as before. Started once what a stopped run left is
  // ended and merged (the files it names are the ones precheck always saw).
  start_stage1(phase);
  if (int rc = step2(phase, entries, fresh_cid_, cid); rc >= 0) return rc;
  if (complete_) {
    host_.already_complete(entries.size());
    return host_.finish(kExecComplete, Result::Complete, "");
  }
  if (int rc = precheck(phase); rc >= 0) return rc;
  if (int rc = review_gate(phase, entries, cid); rc >= 0) return rc;
  std::string roadmap = gates::normalize_plan_path(world_, root_, kRoadmap).value_or("");
  if (roadmap.empty()) roadmap = kRoadmap;
  const std::string why = "yolo execute: the vision gate on the roadmap before any wave";
  switch (gates_.ensure(gates::GateType::Vision, roadmap, why, std::nullopt)) {
    case GateOutcome::Passed:
      return -1;
    case GateOutcome::Paused:
      return host_.finish(kExecPaused, Result::Paused,
                          "Paused at the vision gate: after `yolo approve`, run `yolo execute` again");
    case GateOutcome::Halted:
      break;
  }
  return host_.stopped();  // the gate stopped the run: its code, result and message
}

// Every plan of the phase has a SUMMARY that passes the SUMMARY gate (none: complete).
bool RunPrelude::phase_complete_on_disk(const PhaseDir& p) {
  auto files = list_plan_files(world_, p.abs);
  if (files.empty()) return true;
  for (const auto& f : files) {
    PlanEntry e;
    e.path = plan_rel_path(p, f, root_);
    json ignored;
    if (check_summary(e, ignored) != SummaryState::Passed) return false;
  }
  return true;
}

std::vector<std::string> RunPrelude::plans_not_in_run(const json& doc, const PhaseDir& p) {
  std::set<std::string> known;
  if (doc.contains("plans") && doc["plans"].is_array())
    for (const auto& q : doc["plans"]) known.insert(str(q, "path"));
  std::vector<std::string> out;
  for (const auto& f : list_plan_files(world_, p.abs)) {
    std::string rel = plan_rel_path(p, f, root_);
    if (!known.count(rel)) out.push_back(rel);
  }
  return out;
}

int RunPrelude::choose_phase(const state::LoadResult& snap, PhaseDir& phase) {
  const auto phases = list_phases(root_);
  std::vector<execution::PhaseName> names;
  for (const auto& p : phases) names.push_back({p.folder, p.number, p.rel});
  const auto choice = execution::choose_phase(
      names, o_.phase, snap.ok() ? &snap.doc : nullptr,
      [&](size_t i) { return !plans_not_in_run(snap.doc, phases[i]).empty(); },
      [&](size_t i) { return phase_complete_on_disk(phases[i]); });
  using Kind = execution::PhaseChoice::Kind;
  switch (choice.kind) {
    case Kind::NoPhases:
      return host_.finish(kExecHalted, Result::Error,
                          "no phase folders under " + (root_ / ".yolo-planning" / "phases").string());
    case Kind::NotFound:
      return host_.finish(kExecUsage, Result::Error,
                          "no phase '" + o_.phase + "' under .yolo-planning/phases (give a number or a folder name)");
    case Kind::Run:
      phase = phases[choice.index];
      return -1;
    case Kind::AllComplete:
      break;
  }
  phase = phases[choice.index];
  return host_.finish(kExecComplete, Result::Complete,
                      "every phase is complete (" + std::to_string(phases.size()) + " phases)");
}

int RunPrelude::step2(const PhaseDir& phase, std::vector<PlanEntry>& entries, const std::string& fresh_cid,
                      std::string& cid) {
  const bool executor = executor_configured(cfg_);
  for (auto& e : entries) e.summary = check_summary(e, e.summary_findings);
  execution::PhaseInfo info{phase.number, phase.slug, phase.rel};
  execution::PrepareOptions po{world_.now(), fresh_cid, executor};
  execution::Prepared prepared;
  auto up = state::update(world_, root_, [&](json& doc) {
    prepared = execution::prepare(doc, info, entries, po);
    return true;
  });
  if (!up.ok()) return host_.finish(kExecHalted, Result::Error, up.error);
  cid = str(up.doc, "correlation_id");
  complete_ = execution::run_status(up.doc) == RunStatus::Complete;
  host_.state_written(std::move(up.doc), up.stamp);
  size_t done = 0;
  for (const auto& e : entries) done += e.summary == SummaryState::Passed;
  host_.phase_start(entries.size(), prepared.total_waves, !prepared.new_run, done, prepared.was_running);
  for (const auto& id : prepared.summary_not_counted) {
    for (auto& e : entries)
      if (e.id == id) e.summary = SummaryState::Missing;
    host_.summary_not_counted(id);
  }
  for (const auto& e : entries)
    if (e.summary == SummaryState::Failed && !executor) host_.summary_failed(e.id, e.summary_findings);
  if (entries.empty()) return host_.finish(kExecHalted, Result::Halted, "no plans in " + phase.rel);
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

}  // namespace yolo::runner::phase
