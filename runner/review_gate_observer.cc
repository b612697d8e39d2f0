// The review gate's observer: what a person sees while the loops run, and the records
// (state, ledgers, events) each plan's loop leaves (review_gate_observer.h).
#include "runner/review_gate_observer.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "protocol/state/events.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/reviewed.h"
#include "protocol/run/run_loops.h"
#include "protocol/plan/plan.h"
#include "protocol/ports/fs.h"
#include "protocol/state/state.h"
#include "protocol/base/text.h"
#include "protocol/base/text_diff.h"
#include "protocol/review/stage1.h"
#include "runner/output.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

namespace gate_text {

// Plan ids, paths, reasons and reviewer/architect text come from plans and agents: shown to
// people without control characters (no terminal escape sequences get through).
std::string safe(std::string_view s) { return text::sanitize_for_terminal(s); }

std::string rel(const stdfs::path& root, const std::string& p) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(p, ec);
  stdfs::path r = abs.lexically_normal().lexically_relative(root.lexically_normal());
  if (r.empty() || *r.begin() == "..") return p;
  return r.string();
}

std::string plural(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace gate_text

namespace {

using gate_text::plural;
using gate_text::rel;
using gate_text::safe;
using review::leading_number;

json findings_json(const std::vector<review::ReviewerFinding>& fs) {
  json a = json::array();
  for (const auto& f : fs) a.push_back(f.to_json());
  return a;
}

// Records are written in batches: a pass over 400 plans used to rewrite (and fsync) the
// phase's ledger and the state 400 times each, the whole files every time. The observer
// keeps what is to be recorded and writes it (one state update, one ledger update per phase,
// each under the lock and atomic as before) when the pass ends, or while it runs once the
// last write is a second old, so a pass with slow agents still records each plan soon
// after it finishes. A plan's JSON line is printed only after its records are written:
// whoever reads the lines (and a `kill -9` in the middle) finds the record of every plan
// that was reported.
class GateObserverImpl final : public GateObserver {
 public:
  GateObserverImpl(const World& w, const ReviewGateOptions& o, std::string cid, ReviewGateResult& result,
               PhaseSnapshots& snapshots)
      : w_(w),
        o_(o), cid_(std::move(cid)), result_(result), snapshots_(snapshots), last_flush_(Clock::now()) {}

  void flush() override {
    auto start = Clock::now();
    if (!pending_loops_.empty()) {
      update_state([&](json& doc) {
        bool changed = false;
        for (auto& [phase, id, entry] : pending_loops_)
          changed = review::put_run_loop(doc, phase, id, entry) || changed;
        return changed;
      });
      pending_loops_.clear();
    }
    for (auto& [dir, recs] : pending_records_)
      if (std::string e = review_ledger::record_many(w_, o_.root, dir, std::move(recs)).error; !e.empty())
        not_recorded(e);
    pending_records_.clear();
    for (const auto& j : pending_lines_) out::json_line(j);
    pending_lines_.clear();
    last_flush_ = Clock::now();
    last_flush_cost_ = last_flush_ - start;
  }

  void plan_start(const review::PlanTarget& t, const std::string& plan_id, int max_cycles) override {
    phase_dir_ = t.phase_dir ? *t.phase_dir : t.plan_path.parent_path();
    phase_ = 0;
    plan_.reset();
    // "01-03" -> phase 1, plan 3; else the phase folder's number.
    size_t dash = plan_id.find('-');
    if (auto ph = leading_number(plan_id); ph && dash != std::string::npos) {
      phase_ = *ph;
      plan_ = leading_number(plan_id.substr(dash + 1));
    } else if (auto pd = leading_number((t.phase_dir ? *t.phase_dir : t.plan_path.parent_path()).filename().string())) {
      phase_ = *pd;
    }
    event("review_start", plan_id, {{"plan_path", rel(o_.root, t.plan_path.string())}, {"max_cycles", max_cycles}});
  }

  void cycle_start(const review::PlanLoopResult& r, int cycle) override {
    say(out::sym(out::Sym::Diamond) + " Reviewing plan " + out::bold(safe(r.plan_id)) + " (cycle " +
        std::to_string(cycle) + "/" + std::to_string(r.max_cycles) + ")  " + out::dim(safe(rel(o_.root, r.plan_path))));
  }

  void stage1_done(const review::PlanLoopResult&, const review::CycleResult& c) override {
    say("  " + out::sym(out::sym_for(c.stage1_verdict)) + " Stage 1: " + to_string(c.stage1_verdict) +
        (c.stage1.findings.empty() ? "" : " (" + plural(c.stage1.findings.size(), "finding") + ")"));
    // Say what runs now and how long it may take: an agent call can take minutes.
    if (c.stage1_verdict != Verdict::Reject && !o_.config.reviewer.argv.empty())
      say("  " + out::sym(out::Sym::Diamond) + " Reviewer " + safe(o_.config.reviewer.argv.front()) +
          " running (timeout " + std::to_string(o_.config.timeout_for(o_.config.reviewer) / 1000) + " s)…");
  }

  void cycle_done(const review::PlanLoopResult& r, const review::CycleResult& c) override {
    using review::Source;
    switch (c.source) {
      case Source::Stage1Reject:
        say("  " + out::sym(out::Sym::Fail) + " Stage 1 rejected the plan; the reviewer is not spawned");
        list(c.findings);
        break;
      case Source::Fallback:
        warn(out::sym(out::Sym::Warn) + " Reviewer agent unavailable — falling back to CLI review for plan " +
             safe(r.plan_id));
        warn("  " + out::dim(safe(c.reason)));
        warn("  Next: " + agent_next_step(c.reviewer_info, r.plan_id));
        event("review_agent_fallback", r.plan_id, {{"cycle", c.cycle}, {"reason", c.reason}});
        list(c.findings);
        break;
      case Source::ParseFailure: {
        warn(out::sym(out::Sym::Fail) + " Reviewer output for plan " + safe(r.plan_id) +
             " has no valid VERDICT line — failing closed (reject)");
        warn("  " + safe(c.reason));
        warn("  Last 20 lines of the reviewer's output:");
        for (auto l : text::lines(c.output_tail)) warn("  │ " + safe(l));
        event("review_parse_failure", r.plan_id, {{"cycle", c.cycle}, {"reason", c.reason}});
        break;
      }
      case Source::SandboxRefused:
        warn(out::sym(out::Sym::Fail) + " The reviewer of plan " + safe(r.plan_id) +
             " tried what its sandbox refuses — failing closed (reject)");
        warn("  " + safe(c.reason));
        warn("  Next: `yolo logs " + safe(r.plan_id) + "` shows what it did; check the reviewer command in config.json");
        event("sandbox_refused", r.plan_id, {{"cycle", c.cycle}, {"agent", "reviewer"}, {"reason", c.reason}});
        break;
      case Source::Reviewer:
        say("  " + out::sym(out::sym_for(c.reviewer_verdict)) + " Reviewer: " + to_string(c.reviewer_verdict) + " (" +
            plural(c.findings.size(), "finding") + ", " + std::to_string(c.high()) + " high)");
        list(c.findings);
        break;
    }
    if (!c.unparsed.empty()) {
      warn("  " + out::sym(out::Sym::Warn) + " " + plural(c.unparsed.size(), "finding line") +
           " of the reviewer could not be read:");
      for (const auto& u : c.unparsed)
        warn("      line " + std::to_string(u.line) + ": " + safe(u.text) + out::dim("  (" + safe(u.reason) + ")"));
    }
    if (!c.escalated.empty()) {
      std::string ids;
      for (const auto& id : c.escalated) ids += (ids.empty() ? "" : ", ") + id;
      say("  " + out::sym(out::Sym::Fail) + " Escalated (high in 2+ cycles, never approved): " + safe(ids));
    }
    if (r.loop_entered) {
      cycle_event(r, c);
      record_loop(r, false);
    }
  }

  void cycle_event(const review::PlanLoopResult& r, const review::CycleResult& c) {
    event("review_loop_cycle", r.plan_id,
          {{"cycle", c.cycle},
           {"max", r.max_cycles},
           {"verdict", to_string(c.verdict)},
           {"finding_count", c.findings.size()},
           {"high", c.high()},
           {"source", review::to_string(c.source)}});
  }

  void loop_start(const review::PlanLoopResult& r) override {
    event("review_loop_start", r.plan_id, {{"max", r.max_cycles}, {"verdict", to_string(r.last().verdict)}});
    // The first cycle happened before the loop was known to start.
    cycle_event(r, r.last());
    record_loop(r, false);
  }

  void architect_start(const review::PlanLoopResult& r, const review::ArchitectRequest& a) override {
    say("  " + out::sym(out::Sym::Diamond) + " Architect revising plan " + safe(r.plan_id) + " (" +
        plural(a.delta.size(), "delta finding") + ")");
    // The plan as the architect found it: its revision is shown as a diff, as `watch --fix` does.
    before_arch_.reset();
    if (!o_.json && !o_.quiet)
      if (auto t = w_.files().read(a.plan_path, Stage1Options{}.max_file_bytes, /*text=*/true); t.ok())
        before_arch_ = t.content;
    arch_path_ = a.plan_path;
  }

  void architect_done(const review::PlanLoopResult& r, const review::ArchitectAttempt& a) override {
    snapshots_.invalidate();  // the architect may have rewritten any plan of the phase
    if (!a.ran) {
      warn("  " + out::sym(out::Sym::Warn) + " Architect unavailable for plan " + safe(r.plan_id) + ": " +
           safe(a.reason));
      warn("  Next: " + agent_next_step(a.info, r.plan_id));
    } else if (!a.changed)
      warn("  " + out::sym(out::Sym::Warn) + " Architect left plan " + safe(r.plan_id) +
           " unchanged (same content hash) — stopping the loop");
    else {
      std::string diff;
      if (before_arch_)
        if (auto now = w_.files().read(arch_path_, Stage1Options{}.max_file_bytes, /*text=*/true); now.ok()) {
          std::string rp = rel(o_.root, arch_path_);
          diff = text::unified_diff(*before_arch_, now.content, "a/" + rp, "b/" + rp);
        }
      say("  " + out::sym(out::Sym::Ok) + " Plan revised" +
          (diff.empty() ? std::string() : ":\n" + text::sanitize_for_terminal(diff)));
    }
    before_arch_.reset();
  }

  void plan_end(const review::PlanLoopResult& r) override {
    if (r.interrupted) {
      warn(out::sym(out::Sym::Fail) + " Review of plan " + safe(r.plan_id) + " interrupted");
      return;
    }
    if (r.loop_entered)
      event("review_loop_end", r.plan_id,
            {{"status", r.loop_status()},
             {"cycles", r.cycles.size()},
             {"verdict", to_string(r.verdict)},
             {"reason", r.stop_reason}});
    const auto& c = r.last();
    event("review_end", r.plan_id,
          {{"verdict", to_string(r.verdict)}, {"source", review::to_string(c.source)}, {"cycles", r.cycles.size()}});
    std::string line = out::sym(out::sym_for(r.verdict)) + " " + out::bold(safe(r.plan_id)) + ": " +
                       to_string(r.verdict) + " after " + plural(r.cycles.size(), "cycle") + " (" +
                       review::to_string(c.source) + ")";
    if (!r.passed()) line += " — " + safe(r.stop_reason);
    const bool fallback = c.source == review::Source::Fallback && r.passed() && !o_.config.reviewer.argv.empty();
    if (fallback) {
      // The configured reviewer did not run: the plan passed on Stage 1 alone, which the
      // person allowed (reviewer_required: false). Said on the verdict's own line, with why.
      // With no reviewer configured, the Stage 1 verdict is the rule, not a fallback.
      result_.fallback = true;
      line += " " + out::sym(out::Sym::Warn) + " no real review: " + safe(c.reason);
    }
    say(line);
    review::PlanReview row = review::plan_review(r, rel(o_.root, r.plan_path));
    row.fallback = fallback;
    record_final(r, row);
    if (o_.json && !o_.quiet) pending_lines_.push_back(plan_json(r));
    result_.rows.push_back(std::move(row));
    // A write at most every second, and never more than a fifth of the time: the cost of a
    // write grows with the ledger, so a fixed rate would make a long pass quadratic again.
    auto since = Clock::now() - last_flush_;
    if (since >= std::chrono::seconds(1) && since >= 4 * last_flush_cost_) flush();
  }

  json plan_json(const review::PlanLoopResult& r) const {
    const auto& c = r.last();
    json s1f = json::array();
    for (const auto& f : c.stage1.findings) s1f.push_back(f.to_json());
    json history = json::array();
    for (const auto& h : r.cycles) history.push_back(h.to_json());
    json arch = json::array();
    for (const auto& a : r.architect)
      arch.push_back({{"after_cycle", a.after_cycle},
                      {"delta_count", a.delta_count},
                      {"ran", a.ran},
                      {"changed", a.changed},
                      {"reason", a.reason}});
    json unparsed = json::array();
    for (const auto& u : c.unparsed) unparsed.push_back({{"line", u.line}, {"text", u.text}, {"reason", u.reason}});
    json j = {{"cmd", "review"},
              {"type", "plan"},
              {"plan_id", r.plan_id},
              {"plan", rel(o_.root, r.plan_path)},
              {"hash", r.hash},
              {"verdict", to_string(r.verdict)},
              {"ok", r.passed()},
              {"source", review::to_string(c.source)},
              {"stage1", {{"verdict", to_string(c.stage1_verdict)}, {"findings", std::move(s1f)}}},
              {"findings", findings_json(c.findings)},
              {"accumulated_findings", findings_json(r.accumulated())},
              {"cycles", r.cycles.size()},
              {"max_cycles", r.max_cycles},
              {"loop_status", r.loop_status()},
              {"stop_reason", r.stop_reason},
              {"escalated", c.escalated},
              {"unparsed", std::move(unparsed)},
              {"history", std::move(history)},
              {"architect", std::move(arch)},
              {"reviewer", c.reviewer_info}};
    if (!c.reason.empty()) j["reason"] = c.reason;
    if (c.source == review::Source::ParseFailure) j["output_tail"] = c.output_tail;
    return j;
  }

  std::optional<std::string> before_arch_;  // the plan before the architect's revision
  std::string arch_path_;
  void say(const std::string& s) const {
    if (!o_.json && !o_.quiet) out::line(s);
  }
  void warn(const std::string& s) const {
    if (o_.quiet) return;
    if (o_.json)
      out::err(s);
    else
      out::line(s);
  }

  void event(const std::string& type, const std::string& plan_id, json data) {
    events::Event e;
    e.type = type;
    e.phase = phase_;
    e.plan = plan_;
    data["plan_id"] = plan_id;
    e.data = std::move(data);
    e.correlation_id = cid_;
    events::log(w_, o_.root, o_.config.raw, e);
  }

 private:
  void list(const std::vector<review::ReviewerFinding>& fs) const {
    for (const auto& f : fs) {
      std::string s = "      [" + std::string(to_string(f.severity)) + "] " + safe(f.id);
      if (!f.file.empty()) s += " " + safe(f.file);
      s += " — " + safe(f.description);
      if (!f.suggestion.empty()) s += out::dim("  → " + safe(f.suggestion));
      say(s);
    }
  }

  // fn returns false to leave the state as it is (nothing to write there: no run, or
  // another phase's). A review never creates or marks a run.
  void update_state(const std::function<bool(json&)>& fn) {
    if (!o_.record_state) return;
    auto r = state::update(w_, o_.root, [&](json& doc) { return fn(doc); });
    if (!r.ok()) not_recorded(r.error);
  }

  // A loop in progress (agents at work, seconds apart): written at once.
  void record_loop(const review::PlanLoopResult& r, bool finished) {
    if (!o_.record_state) return;
    pending_loops_.emplace_back(phase_, r.plan_id, r.review_loop_entry(finished));
    flush();
  }

  void record_final(const review::PlanLoopResult& r, const review::PlanReview& row) {
    if (!o_.record_state) return;
    pending_loops_.emplace_back(phase_, r.plan_id, r.review_loop_entry(true));
    if (r.hash.empty()) return;  // the plan could not be read: nothing to reconcile against
    json rec = {{"hash", r.hash},
                {"verdict", to_string(r.verdict)},
                {"path", row.plan},
                {"reviewed_at", w_.now()},
                {"source", row.source_name()},
                {"findings", findings_json(row.findings)},
                {"loop", r.review_loop_entry(true)}};
    // What the reviewer ran under (role, mechanism, Landlock ABI, policy digest), sealed with
    // the record.
    if (row.reviewer.is_object() && row.reviewer.contains("sandbox")) rec["sandbox"] = row.reviewer["sandbox"];
    pending_records_[phase_dir_].emplace_back(r.plan_id, std::move(rec));
  }

  void not_recorded(const std::string& e) {
    if (!o_.quiet) out::err(out::sym(out::Sym::Warn) + " review result not recorded: " + safe(e));
    result_.state_errors.push_back(e);
  }

  using Clock = std::chrono::steady_clock;
  const World& w_;
  const ReviewGateOptions& o_;
  std::string cid_;
  ReviewGateResult& result_;
  PhaseSnapshots& snapshots_;
  std::vector<std::tuple<long long, std::string, json>> pending_loops_;  // phase, plan id, review_loops entry
  std::map<stdfs::path, std::vector<std::pair<std::string, json>>> pending_records_;  // phase folder -> (id, record)
  std::vector<json> pending_lines_;
  Clock::time_point last_flush_;
  Clock::duration last_flush_cost_{};
  stdfs::path phase_dir_;
  long long phase_ = 0;
  std::optional<long long> plan_;
};

}  // namespace

std::unique_ptr<GateObserver> make_gate_observer(const World& w, const ReviewGateOptions& o, std::string cid,
                                                 ReviewGateResult& result, PhaseSnapshots& snapshots) {
  return std::make_unique<GateObserverImpl>(w, o, std::move(cid), result, snapshots);
}

}  // namespace yolo::runner
