#include "protocol/review/review_loop.h"

#include <algorithm>
#include <map>
#include <set>

#include "protocol/ports/fs.h"
#include "protocol/base/sha256.h"
#include "protocol/base/text.h"

namespace yolo::review {

const char* to_string(Source s) {
  switch (s) {
    case Source::Reviewer:
      return "reviewer";
    case Source::Fallback:
      return "fallback";
    case Source::ParseFailure:
      return "parse_failure";
    case Source::Stage1Reject:
      return "stage1_reject";
    case Source::SandboxRefused:
      return "sandbox_refused";
  }
  return "fallback";
}

size_t CycleResult::high() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(),
                                           [](const ReviewerFinding& f) { return f.severity == Severity::High; }));
}

json CycleResult::to_json() const {
  json j = {{"cycle", cycle},
            {"hash", hash},
            {"stage1", to_string(stage1_verdict)},
            {"source", review::to_string(source)},
            {"verdict", yolo::to_string(verdict)},
            {"finding_count", findings.size()},
            {"high", high()}};
  if (verdict != reviewer_verdict) j["reviewer_verdict"] = yolo::to_string(reviewer_verdict);
  if (!escalated.empty()) j["escalated"] = escalated;
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

const char* PlanLoopResult::loop_status(bool finished) const {
  return !finished ? "running" : passed() ? "passed" : "failed";
}

json PlanLoopResult::review_loop_entry(bool finished) const {
  json per = json::array();
  for (const auto& c : cycles)
    per.push_back({{"verdict", yolo::to_string(c.verdict)}, {"finding_count", c.findings.size()}, {"high", c.high()}});
  std::string status = loop_status(finished);
  return {{"cycle", cycles.empty() ? 0 : cycles.back().cycle},
          {"max", max_cycles},
          {"status", status},
          {"findings_per_cycle", std::move(per)}};
}

std::vector<ReviewerFinding> PlanLoopResult::accumulated() const {
  std::vector<ReviewerFinding> out;
  std::map<std::string, size_t> at;
  for (const auto& c : cycles)
    for (const auto& f : c.findings) {
      auto it = at.find(f.id);
      if (it == at.end()) {
        at.emplace(f.id, out.size());
        out.push_back(f);
      } else {
        out[it->second] = f;
      }
    }
  return out;
}

json PhaseLoopResult::accumulated_findings() const {
  json a = json::array();
  for (const auto& p : plans)
    for (const auto& f : p.accumulated()) {
      json j = f.to_json();
      j["plan_id"] = p.plan_id;
      a.push_back(std::move(j));
    }
  return a;
}

std::vector<ReviewerFinding> delta_findings(const std::vector<ReviewerFinding>& current,
                                            const std::vector<ReviewerFinding>& previous) {
  std::map<std::string, Severity> before;
  for (const auto& f : previous) before[f.id] = f.severity;
  std::vector<ReviewerFinding> out;
  for (const auto& f : current) {
    if (f.severity == Severity::Low) continue;
    auto it = before.find(f.id);
    if (it == before.end() || it->second != f.severity) out.push_back(f);
  }
  return out;
}

std::string file_hash(const World& w, const std::filesystem::path& p) {
  auto r = w.files().read(p, 64u << 20, /*text=*/false);
  return r.ok() ? sha256_hex(r.content) : std::string();
}

namespace {

void list_findings(std::string& s, const std::vector<ReviewerFinding>& fs) {
  if (fs.empty()) {
    s += "(none)\n";
    return;
  }
  for (const auto& f : fs) {
    s += "- [id:" + f.id + "] [severity:" + to_string(f.severity) + "]";
    if (!f.file.empty()) s += " [file:" + f.file + "]";
    if (!f.status.empty()) s += " [status:" + f.status + "]";
    s += " issue: " + f.description;
    if (!f.suggestion.empty()) s += " | suggestion: " + f.suggestion;
    s += "\n";
  }
}

}  // namespace

std::string reviewer_prompt(const ReviewerRequest& r) {
  std::string s;
  if (r.cycle > 1)
    s += "Re-review this revised plan (feedback loop cycle " + std::to_string(r.cycle) + "/" +
         std::to_string(r.max_cycles) + ").\n\n";
  else
    s += "Review this plan adversarially.\n\n";
  s += "Plan id: " + r.plan_id + "\nPlan path: " + r.plan_path + "\nPhase directory: " + r.phase_dir + "\n";
  s += "Review cycle: " + std::to_string(r.cycle) + " of " + std::to_string(r.max_cycles) + "\n\n";
  s += "CLI pre-check findings (structural):\n";
  list_findings(s, r.stage1_findings);
  if (r.cycle > 1) {
    s += "\nPrevious cycle findings:\n";
    list_findings(s, r.previous_findings);
    s += "\nCompare against the previous findings and classify each as resolved, persistent, new or changed "
         "severity.\n";
  }
  s += "\nEnd your answer with exactly this block:\n"
       "VERDICT: approve|reject|conditional\n";
  if (r.cycle > 1)
    s += "CYCLE: " + std::to_string(r.cycle) + "/" + std::to_string(r.max_cycles) +
         "\nRESOLVED: n\nPERSISTENT: n\nNEW: n\n";
  s += "FINDINGS:\n"
       "- [id:f-001] [severity:high|medium|low] [file:path] [status:new|persistent] issue: what is wrong | suggestion: "
       "how to fix\n";
  return s;
}

std::string architect_prompt(const ArchitectRequest& r) {
  std::string s = "Revise this plan in place to address the reviewer's findings (cycle " + std::to_string(r.cycle) +
                  "/" + std::to_string(r.max_cycles) + ").\n\n";
  s += "Plan id: " + r.plan_id + "\nPlan path: " + r.plan_path + "\nPhase directory: " + r.phase_dir + "\n\n";
  s += "Findings to fix (new or changed severity, high and medium):\n";
  list_findings(s, r.delta);
  s += "\nAll open findings of this cycle:\n";
  list_findings(s, r.open_findings);
  s += "\nEdit the plan file itself; keep its frontmatter valid (phase, plan, title, wave, depends_on, must_haves).\n";
  return s;
}

namespace {

std::string plan_id_for(const PlanTarget& t, const StructuralReview& s1) {
  if (!t.plan_id.empty()) return t.plan_id;
  if (!s1.plan_id.empty()) return s1.plan_id;
  std::string stem = t.plan_path.filename().string();
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == ".md") stem.resize(stem.size() - 3);
  return stem;
}

std::vector<ReviewerFinding> stage1_findings(const StructuralReview& s1) {
  std::vector<ReviewerFinding> v;
  for (const auto& f : s1.findings) v.push_back(from_stage1(f));
  return v;
}

}  // namespace

PlanLoopResult run_plan_loop(const World& w, const PlanTarget& target, const LoopOptions& opts, ReviewerPort& reviewer,
                             ArchitectPort& architect, LoopObserver& observer) {
  PlanLoopResult res;
  res.max_cycles = std::max(1, opts.max_cycles);
  res.plan_path = target.plan_path.string();
  res.phase_dir = target.phase_dir ? target.phase_dir->string() : target.plan_path.parent_path().string();
  std::map<std::string, int> high_cycles;  // finding id -> cycles in which it was high

  for (int cycle = 1; cycle <= res.max_cycles; ++cycle) {
    CycleResult c;
    c.cycle = cycle;
    c.hash = file_hash(w, target.plan_path);
    c.stage1 = stage1_plan_file(w, target.plan_path, target.phase_dir, opts.stage1);
    c.stage1_verdict = c.stage1.verdict();
    if (cycle == 1) {
      res.plan_id = plan_id_for(target, c.stage1);
      observer.plan_start(target, res.plan_id, res.max_cycles);
    }
    observer.cycle_start(res, cycle);
    observer.stage1_done(res, c);
    auto s1 = stage1_findings(c.stage1);

    if (c.stage1_verdict == Verdict::Reject) {
      c.source = Source::Stage1Reject;
      c.reviewer_verdict = Verdict::Reject;
      c.findings = s1;
      c.reason = "Stage 1 structural pre-check rejected the plan; reviewer not spawned";
    } else {
      AgentRun run;
      if (reviewer.configured()) {
        ReviewerRequest rq;
        rq.plan_path = res.plan_path;
        rq.phase_dir = res.phase_dir;
        rq.plan_id = res.plan_id;
        rq.cycle = cycle;
        rq.max_cycles = res.max_cycles;
        rq.stage1_findings = s1;
        if (!res.cycles.empty()) rq.previous_findings = res.cycles.back().findings;
        rq.prompt = reviewer_prompt(rq);
        run = reviewer.review(rq);
        c.reviewer_info = run.info;
      } else {
        run.status = AgentRun::Status::Unavailable;
        run.reason = "no reviewer command configured";
      }
      if (run.status == AgentRun::Status::Interrupted) {
        res.interrupted = true;
        res.stop_reason = "interrupted";
        break;
      }
      if (!run.refused.empty()) {  // whatever it answered: it tried to leave its sandbox
        c.source = Source::SandboxRefused;
        c.reviewer_verdict = Verdict::Reject;
        std::string what;
        for (const auto& r : run.refused) what += (what.empty() ? "" : "; ") + r;
        ReviewerFinding f;
        f.id = "sandbox-refused";
        f.severity = Severity::High;
        f.title = "The reviewer tried what its sandbox refuses";
        f.description = what;
        f.status = "new";
        c.findings = {f};
        c.reason = "the sandbox refused the reviewer " + what;
      } else if (run.status == AgentRun::Status::Unavailable) {
        c.source = Source::Fallback;
        c.reviewer_verdict = c.stage1_verdict;
        c.findings = s1;
        c.reason = run.reason;
        if (opts.reviewer_required) {  // a real review is required: no approval without one
          c.reviewer_verdict = Verdict::Reject;
          c.reason = run.reason + " (reviewer_required: no fallback to the Stage 1 verdict)";
        }
      } else {
        ReviewerOutput parsed = parse_reviewer_output(run.output);
        c.unparsed = parsed.unparsed;
        for (const auto& u : parsed.unparsed) {
          ReviewerFinding f;
          f.id = "unparsed-" + sha256_hex(u.text).substr(0, 8);
          f.severity = Severity::Low;
          f.title = "Unparseable finding line from the reviewer (line " + std::to_string(u.line) + ")";
          f.description = u.text + " (" + u.reason + ")";
          f.status = "unparsed";
          parsed.findings.push_back(std::move(f));
        }
        c.findings = std::move(parsed.findings);
        if (!parsed.ok()) {
          c.source = Source::ParseFailure;
          c.reviewer_verdict = Verdict::Reject;
          c.reason = parsed.why_no_verdict() + (run.output_truncated ? " (output was truncated to its tail)" : "");
          c.output_tail = text::tail_lines(run.output, 20);
        } else {
          c.source = Source::Reviewer;
          c.reviewer_verdict = *parsed.verdict;
        }
      }
    }
    c.verdict = c.reviewer_verdict;
    // Escalation: a high finding id present in 2+ cycles.
    std::set<std::string> seen_now;
    for (const auto& f : c.findings)
      if (f.severity == Severity::High && seen_now.insert(f.id).second && ++high_cycles[f.id] >= 2)
        c.escalated.push_back(f.id);
    if (!c.escalated.empty()) c.verdict = Verdict::Reject;
    res.cycles.push_back(std::move(c));
    const CycleResult& cur = res.cycles.back();
    res.verdict = cur.verdict;
    res.hash = cur.hash;
    observer.cycle_done(res, cur);

    if (cur.verdict != Verdict::Reject) {
      res.stop_reason = cur.verdict == Verdict::Approve ? "approved" : "conditional";
      break;
    }
    if (cur.source == Source::ParseFailure) {
      res.stop_reason = "reviewer output could not be parsed (fail closed)";
      break;
    }
    if (cur.source == Source::SandboxRefused) {  // no architect fixes a reviewer's escape attempt
      res.stop_reason = cur.reason + " (fail closed)";
      break;
    }
    if (cycle == res.max_cycles) {
      res.stop_reason = "max cycles reached (" + std::to_string(res.max_cycles) + ")";
      break;
    }
    if (!cur.escalated.empty()) {  // never approved whatever the architect does: a person decides
      res.stop_reason = "escalated: high finding(s) present in 2+ cycles; the architect is not called again";
      break;
    }
    if (!architect.configured()) {
      res.stop_reason = "no architect command configured to revise the plan";
      break;
    }
    ArchitectRequest aq;
    aq.plan_path = res.plan_path;
    aq.phase_dir = res.phase_dir;
    aq.plan_id = res.plan_id;
    aq.cycle = cycle;
    aq.max_cycles = res.max_cycles;
    aq.open_findings = cur.findings;
    aq.delta = delta_findings(cur.findings, res.cycles.size() >= 2 ? res.cycles[res.cycles.size() - 2].findings
                                                                   : std::vector<ReviewerFinding>{});
    if (aq.delta.empty()) {  // nothing new to fix: calling it with "Findings to fix: (none)" helps no one
      res.stop_reason = "no new or changed high or medium finding for the architect to fix";
      break;
    }
    aq.prompt = architect_prompt(aq);
    if (!res.loop_entered) {
      res.loop_entered = true;
      observer.loop_start(res);
    }
    observer.architect_start(res, aq);
    AgentRun arun = architect.revise(aq);
    if (arun.status == AgentRun::Status::Interrupted) {
      res.interrupted = true;
      res.stop_reason = "interrupted";
      break;
    }
    ArchitectAttempt att;
    att.after_cycle = cycle;
    att.delta_count = aq.delta.size();
    att.ran = arun.status == AgentRun::Status::Ran;
    att.info = arun.info;
    std::string new_hash = file_hash(w, target.plan_path);
    att.changed = new_hash != cur.hash;
    att.reason = att.ran ? "" : arun.reason;
    res.architect.push_back(att);
    observer.architect_done(res, res.architect.back());
    if (!att.ran) {
      res.stop_reason = "architect unavailable: " + arun.reason;
      break;
    }
    if (!att.changed) {
      res.stop_reason = "architect left the plan unchanged (same content hash)";
      break;
    }
  }
  if (res.cycles.empty()) res.verdict = Verdict::Reject;
  observer.plan_end(res);
  return res;
}

PhaseLoopResult run_phase_loops(const World& w, const std::vector<PlanTarget>& targets, const LoopOptions& opts,
                                ReviewerPort& reviewer, ArchitectPort& architect, LoopObserver& observer) {
  PhaseLoopResult out;
  for (const auto& t : targets) {
    out.plans.push_back(run_plan_loop(w, t, opts, reviewer, architect, observer));
    const auto& p = out.plans.back();
    out.worst = worst(out.worst, p.verdict);
    if (p.interrupted) {
      out.interrupted = true;
      break;
    }
  }
  out.halted = out.worst == Verdict::Reject;
  return out;
}

}  // namespace yolo::review
