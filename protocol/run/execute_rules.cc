#include "protocol/run/execute_rules.h"

#include "protocol/findings/failure_line.h"
#include "protocol/base/json_field.h"
#include "protocol/base/numbers.h"
#include "protocol/findings/make_finding.h"

namespace yolo::execution {

ExecuteEnd execute_end(int exit_code) {
  switch (exit_code) {
    case kExitComplete:
      return ExecuteEnd::Complete;
    case kExitHalted:
      return ExecuteEnd::HaltedOrFailed;
    case kExitPaused:
      return ExecuteEnd::Paused;
    case kExitWaitingSummary:
      return ExecuteEnd::WaitingForSummaries;
    default:
      return ExecuteEnd::Other;
  }
}

bool expected_end(ExecuteEnd e) {
  return e == ExecuteEnd::Complete || e == ExecuteEnd::Paused || e == ExecuteEnd::WaitingForSummaries;
}

const char* to_string(Result r) {
  switch (r) {
    case Result::Complete:
      return "complete";
    case Result::Halted:
      return "halted";
    case Result::Error:
      return "error";
    case Result::Interrupted:
      return "interrupted";
    case Result::Locked:
      return "locked";
    case Result::Paused:
      return "paused";
    case Result::WaitingForSummary:
      return "waiting_for_summary";
  }
  return "error";
}

std::optional<Result> parse_result(std::string_view word) {
  for (Result r : {Result::Complete, Result::Halted, Result::Error, Result::Interrupted, Result::Locked, Result::Paused,
                   Result::WaitingForSummary})
    if (word == to_string(r)) return r;
  return std::nullopt;
}

const char* to_string(ReviewGateStatus s) {
  switch (s) {
    case ReviewGateStatus::Running:
      return "running";
    case ReviewGateStatus::Passed:
      return "passed";
    case ReviewGateStatus::Rejected:
      return "rejected";
    case ReviewGateStatus::Skipped:
      return "skipped";
    case ReviewGateStatus::Error:
      return "error";
  }
  return "error";
}

ReviewGate review_gate(const std::string& setting, bool review_flag) {
  if (setting == "never") return ReviewGate::OffByConfig;
  if (setting == "always" || review_flag) return ReviewGate::Runs;
  return ReviewGate::NotRequested;
}

MissingAgentStep missing_agent_step(const std::string& role, bool reviewing, bool reviewer_required) {
  if (role == "executor" || role.rfind("dispatch.", 0) == 0) return MissingAgentStep::Refuse;
  if (role == "reviewer" && reviewing)
    return reviewer_required ? MissingAgentStep::RefuseReviewerRequired : MissingAgentStep::WarnStage1Only;
  if (role == "architect" && reviewing) return MissingAgentStep::WarnNoRevision;
  return MissingAgentStep::Ignore;
}

namespace {
bool high(const json& f) { return json_field::str(f, "severity") == to_string(Severity::High); }
}  // namespace

namespace {
PlanOutcome gated_outcome(const PlanFacts& f) {
  PlanOutcome o;
  PlanEnd& e = o.end;
  if (f.interrupted) {
    e.status = PlanStatus::Pending;
    e.error = "interrupted";
    return o;
  }
  if (!f.dispatch_error.empty()) {
    e.status = PlanStatus::Failed;
    e.error = f.dispatch_error;
    return o;
  }
  if (!f.executor_ok) {
    e.status = PlanStatus::Failed;
    e.error = "the executor " + f.executor_outcome;
    // The line that says why (an `error:` line, not the usage tail printed after it).
    if (std::string why = failure::explaining_line(f.executor_err, f.executor_out); !why.empty())
      e.error += ": " + why;
    return o;
  }
  switch (f.summary) {
    case SummaryState::Passed:
      e.status = PlanStatus::Complete;
      break;
    case SummaryState::Missing:
      e.status = PlanStatus::Failed;
      e.error = "the executor exited 0 but wrote no SUMMARY (" + f.summary_path + ")";
      break;
    case SummaryState::Failed: {
      e.status = PlanStatus::Failed;
      e.findings = f.summary_findings.is_array() ? f.summary_findings : json::array();
      std::string fence;
      bool summary_high = false;
      for (const auto& x : e.findings) {
        if (!high(x)) continue;
        if (json_field::str(x, "check") == "scope_fence") {
          if (fence.empty()) fence = json_field::str(x, "issue");
        } else {
          summary_high = true;
        }
      }
      if (summary_high || fence.empty()) {
        e.error = "its SUMMARY fails the SUMMARY gate (" + f.summary_path + ")";
        if (!fence.empty()) e.error += "; the scope fence: " + fence;
        o.summary_failed = true;
      } else {
        e.error = "the scope fence: " + fence;
      }
      break;
    }
  }
  if (!f.check_findings.empty()) {
    for (const auto& cf : f.check_findings) e.findings.push_back(cf.to_json());
    if (e.status == PlanStatus::Complete) {
      e.status = PlanStatus::Failed;
      e.error = f.check_findings.front().issue;
    } else {
      e.error += "; " + f.check_findings.front().issue;
    }
  }
  return o;
}
}  // namespace

Precheck precheck(const std::vector<Verdict>& verdicts) {
  Precheck p;
  for (Verdict v : verdicts) {
    if (v == Verdict::Reject) ++p.rejected;
    if (v == Verdict::Conditional) ++p.conditional;
  }
  return p;
}

Verdict Precheck::verdict() const {
  return rejected ? Verdict::Reject : conditional ? Verdict::Conditional : Verdict::Approve;
}

std::string Precheck::why() const {
  return halts() ? std::to_string(rejected) + " plan(s) rejected by the structural pre-check" : std::string();
}

PlanOutcome plan_outcome(const PlanFacts& f) {
  PlanOutcome o = gated_outcome(f);
  // Its work was done by an agent that tried to leave its confinement: not merged.
  if (f.refused.empty() || o.end.status == PlanStatus::Pending) return o;
  std::string what = "the sandbox refused ";
  for (size_t k = 0; k < f.refused.size(); ++k) what += (k ? "; " : "") + f.refused[k];
  o.end.findings.push_back(make_finding(Severity::High, "sandbox", what,
                                        "see what the executor tried in `yolo logs " + f.plan_id +
                                            "`; an agent that needs this is not one to run unattended")
                               .to_json());
  if (o.end.status == PlanStatus::Complete) {
    o.end.status = PlanStatus::Failed;
    o.end.error = what;
  } else {
    o.end.error += "; " + what;
  }
  return o;
}

WorktreeGate worktree_gate(const json& findings, bool checks_passed) {
  bool any_high = false;
  if (findings.is_array())
    for (const auto& f : findings) any_high = any_high || high(f);
  WorktreeGate g;
  g.state = any_high ? SummaryState::Failed : SummaryState::Passed;
  g.commit = !any_high && checks_passed;
  return g;
}

PhaseChoice choose_phase(const std::vector<PhaseName>& phases, std::string asked, const json* state,
                         const std::function<bool(size_t)>& new_plans,
                         const std::function<bool(size_t)>& complete_on_disk) {
  using Kind = PhaseChoice::Kind;
  if (phases.empty()) return {Kind::NoPhases, 0};
  if (!asked.empty()) {
    while (!asked.empty() && asked.back() == '/') asked.pop_back();
    if (size_t slash = asked.rfind('/'); slash != std::string::npos) asked = asked.substr(slash + 1);
    const std::optional<long long> num = text::parse_digits(asked);
    for (size_t i = 0; i < phases.size(); ++i) {
      const PhaseName& p = phases[i];
      const bool numbered = !p.folder.empty() && p.folder[0] >= '0' && p.folder[0] <= '9';
      if (p.folder == asked || (num && numbered && p.number == *num)) return {Kind::Run, i};
    }
    return {Kind::NotFound, 0};
  }
  const std::string running =
      state && state->is_object() && (*state).contains("phase_dir") && (*state)["phase_dir"].is_string()
          ? (*state)["phase_dir"].get<std::string>()
          : std::string();
  for (size_t i = 0; i < phases.size(); ++i) {
    if (!running.empty() && running == phases[i].rel) {
      if (run_status(*state) == RunStatus::Complete && !new_plans(i)) continue;
      return {Kind::Run, i};  // the phase the state is running
    }
    if (complete_on_disk(i)) continue;
    return {Kind::Run, i};
  }
  return {Kind::AllComplete, phases.size() - 1};
}

run::Settings core_settings(bool executor, bool isolated, bool wave_approval, int max_parallel, std::string only,
                            size_t plans, std::optional<int> dispatch_parallel, bool wave_form) {
  run::Settings rs;
  rs.executor = executor;
  rs.isolated = isolated;
  rs.wave_approval = wave_approval;
  rs.only = std::move(only);
  const int all = static_cast<int>(plans) + 1;
  if (!executor || (dispatch_parallel && wave_form))
    rs.max_parallel = all;
  else
    rs.max_parallel = dispatch_parallel.value_or(max_parallel);
  return rs;
}

}  // namespace yolo::execution
