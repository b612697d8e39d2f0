// `yolo execute`: one plan once its executor ended (runner/run_conclude.h): its log, its
// usage, its objects, then its checks (runner/run_checks.h) or its outcome: the SUMMARY gate,
// the scope fence and the checks, decided by protocol/run/execute_rules.h, reported to the
// run core.
#include "runner/run_conclude.h"

#include "protocol/state/agent_usage.h"
#include "runner/plan_gate.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {

void PlanConcluder::executor_ended(size_t i, SpawnResult r) {
  // Drop the Process now, inside its own done callback: its handles are still closing, so
  // it detaches cleanly (destroying it after the loop has closed them would touch freed memory).
  host_.exited(i);
  host_.plan(i).tool.clear();
  host_.open_gates(i);
  const PlanEntry& e = host_.entry(i);
  // An executor that succeeded and wrote nothing leaves no log: it would hold only its argv
  // and outcome, which the state and the event log already have, and creating a file per
  // plan was a large share of execute's own time on a large phase.
  const bool silent_success = r.ok() && r.out_total == 0 && r.err_total == 0;
  std::string log_file = silent_success
                             ? std::string()
                             : write_agent_log(world_, root_, phase_.rel, e.id, "executor", 0, host_.plan(i).argv, r);
  if (!log_file.empty()) tell_.note("output: " + log_file + "  (yolo logs " + e.id + ")", true);
  record_usage(i, "executor", r.out);
  // Its commits, hashed again into the repository, before its checks and its gate read them.
  // Bytes that are no object fail the plan; its slot and branch go (they name what is gone).
  bool objects_ok = true;
  if (const PlanWorktree* w = worktree(i)) {
    std::string err;
    if (!slot_objects::take_in(root_, w->path, err)) {
      host_.plan(i).objects_error = err;
      host_.drop(*w);
      objects_ok = false;
    }
  }
  if (!host_.interrupted() && r.ok() && objects_ok) {
    host_.run_checks(i, std::move(r));
    return;
  }
  conclude(i, r);
}

void PlanConcluder::conclude(size_t i, const SpawnResult& r) {
  const PlanEntry& e = host_.entry(i);
  std::string sp = summary_rel_for(world_, root_, e.path);
  json set = json::object();
  if (auto& a = host_.plan(i).aside) {
    const PlanWorktree* w = worktree(i);
    slot_aside::Aside taken = std::move(*a);
    a.reset();
    if (taken.active() && w) return host_.put_back(i, w->path, std::move(taken), r);  // then here again
  }
  PlanRun& pr = host_.plan(i);
  const bool interrupted = host_.interrupted();
  // A plan that did well in its worktree: its gates run on a worker thread (plan_gate.cc),
  // then here again with their answer.
  std::unique_ptr<GateOut> answer = std::move(pr.gated);
  if (!answer && !interrupted && pr.dispatch_error.empty() && r.ok() && host_.isolated() && worktree(i))
    return host_.gate(i, r);
  // The facts: how the executor (or its job) ended, and once it did well, what the checks and
  // the SUMMARY gate found; protocol/run/execute_rules.h decides the plan from them.
  execution::PlanFacts facts;
  facts.summary_path = sp;
  facts.interrupted = interrupted && !answer;  // gates that ended after a Ctrl-C count
  facts.dispatch_error = pr.dispatch_error;
  facts.executor_ok = r.ok();
  facts.executor_outcome = r.describe();
  facts.executor_err = r.err;
  facts.executor_out = r.out;
  facts.plan_id = e.id;
  if (pr.refused) {
    facts.refused = pr.refused->list();
    pr.refused.reset();
  }
  if (!facts.interrupted && facts.dispatch_error.empty() && facts.executor_ok) {
    // The checks yolo ran: the evidence. A failing one fails the plan whatever the SUMMARY says.
    json checks = json::array();
    for (const auto& o : pr.check_out) checks.push_back(o.to_json());
    facts.check_findings = plan_checks::findings(pr.check_out, pr.check_errors);
    if (!pr.check_out.empty() || !pr.check_errors.empty()) set["checks"] = checks;
    if (answer) {
      facts.summary = answer->state;
      facts.summary_findings = std::move(answer->findings);
      for (auto it = answer->set.begin(); it != answer->set.end(); ++it) set[it.key()] = it.value();
    } else {
      facts.summary = host_.check_summary(e, facts.summary_findings, &sp);
    }
  }
  const execution::PlanOutcome outcome = execution::plan_outcome(facts);
  const PlanStatus status = outcome.end.status;
  if (!facts.refused.empty() && status != PlanStatus::Pending)
    tell_.log("sandbox_refused", e.plan, {{"plan_id", e.id}, {"refused", facts.refused}});
  pr.dispatch_error.clear();
  pr.check_out.clear();
  pr.check_todo.clear();
  pr.check_errors.clear();
  std::string now = world_.now();
  {
    // Its gates ran: the slot serves the next plan (the branch keeps the work); a plan that
    // passed in its worktree waits for its merge, in plan order.
    const json& wt = pr.worktree_record;
    const bool gated = status == PlanStatus::Complete && wt.is_object() && set.contains("worktree");
    host_.concluded(i, outcome.end, gated ? execution::merge_state(wt) : MergeState::None,
                    gated ? str(wt, "head") : std::string());
  }
  execution::PlanUpdate u = execution::ended(outcome.end, now);
  u.set = set;
  host_.queue(i, std::move(u));
  report(e, sp, outcome, set, r);
  // Dispatch's merges ahead; with worktrees, once nothing runs, the plans that passed are
  // merged in plan order (the core's Merge), then the wave's end and what starts next.
  host_.next();
}

void PlanConcluder::report(const PlanEntry& e, const std::string& sp, const execution::PlanOutcome& outcome,
                           const json& set, const SpawnResult& r) {
  const PlanStatus status = outcome.end.status;
  const std::string& error = outcome.end.error;
  const json& findings = outcome.end.findings;
  long long ms = static_cast<long long>(r.elapsed_ms);
  if (outcome.summary_failed) {
    const size_t high = count_severity(findings, Severity::High);
    tell_.log("summary_claims_failed", e.plan,
              {{"plan_id", e.id}, {"summary_path", sp}, {"findings", findings.size()}, {"high", high}});
  }
  tell_.log("plan_end", e.plan,
            {{"plan_id", e.id}, {"status", to_string(status)}, {"elapsed_ms", ms}, {"outcome", r.describe()}});
  json data = {{"plan", e.id}, {"status", to_string(status)}, {"wave", e.wave}, {"elapsed_ms", ms}};
  if (!error.empty()) data["error"] = error;
  if (!findings.empty()) data["findings"] = findings;
  for (const char* k : {"worktree", "scope", "checks"})
    if (set.contains(k)) data[k] = set[k];
  if (status == PlanStatus::Complete) {
    tell_.emit("plan_end", data, Sym::Ok, "Plan " + e.id + " complete (" + fmt_secs(r.elapsed_ms) + ")");
    if (set.contains("scope"))
      for (const auto& f : set["scope"].value("findings", json::array()))
        tell_.note("[" + str(f, "severity") + "] " + str(f, "check") + ": " + str(f, "issue"));
  } else if (status == PlanStatus::Pending) {
    tell_.emit("plan_end", data, Sym::Warn, "Plan " + e.id + " stopped (interrupted)");
  } else {
    data["stderr_tail"] = text::tail_lines(r.err, 10);
    tell_.emit("plan_end", data, Sym::Fail, "Plan " + e.id + " failed: " + error);
    size_t shown = 0;
    for (const auto& f : findings) {
      if (shown++ == 5) {
        tell_.note("... " + std::to_string(findings.size() - 5) + " more (yolo status --json)");
        break;
      }
      tell_.note("[" + str(f, "severity") + "] " + str(f, "check") + ": " + str(f, "issue"));
    }
    if (!r.ok()) {
      std::string tail = text::tail_lines(r.err, 5);
      for (const auto& l : text::lines(tail))
        if (!text::trim(l).empty()) tell_.note(std::string(l), true);
      tell_.note("Next: " + agent_next_step(r.outcome != SpawnResult::Outcome::SpawnFailed, e.id));
    }
  }
}

void PlanConcluder::record_usage(size_t i, const std::string& agent, const std::string& out) {
  auto u = usage::parse(out);
  if (!u) return;  // the CLI printed no machine-readable usage (plain text output)
  const auto& e = host_.entry(i);
  usage::Record rec{world_.now(), host_.cid(), phase_.folder, e.id, agent, 0, *u};
  if (std::string err = usage::append(world_, root_, rec).error; !err.empty())
    tell_.note("could not record the usage: " + err, false);
  json data = {{"plan", e.id}, {"agent", agent}, {"usage", u->to_json()}};
  tell_.log("agent_token_usage", e.plan, data);
}

}  // namespace yolo::runner::phase
