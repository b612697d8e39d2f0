#include "runner/review_gate.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "protocol/ports/clock.h"
#include "protocol/state/events.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/reviewed.h"
#include "protocol/run/run_loops.h"
#include "protocol/state/state.h"
#include "protocol/base/text.h"
#include "protocol/base/text_diff.h"
#include "protocol/ports/fs.h"
#include "protocol/review/stage1.h"
#include "runner/agent_progress.h"
#include "runner/agents.h"
#include "runner/output.h"
#include "runner/world.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

std::string gate_plan_id(const stdfs::path& plan_path) {
  auto loaded = load_plan(world(), plan_path);
  if (loaded.plan && (!loaded.plan->phase.empty() || !loaded.plan->plan.empty())) return loaded.plan->id();
  std::string stem = plan_path.filename().string();
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == ".md") stem.resize(stem.size() - 3);
  return stem;
}

namespace {

using review::leading_number;

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
class GateObserver : public review::LoopObserver {
 public:
  GateObserver(const ReviewGateOptions& o, std::string cid, ReviewGateResult& result, PhaseSnapshots& snapshots)
      : o_(o), cid_(std::move(cid)), result_(result), snapshots_(snapshots), last_flush_(Clock::now()) {}

  // Writes what is pending (state, then ledgers), then prints the JSON lines it held back.
  void flush() {
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
      if (std::string e = review_ledger::record_many(world(), o_.root, dir, std::move(recs)).error; !e.empty())
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
      if (auto t = fs::read_text(a.plan_path, Stage1Options{}.max_file_bytes); t.ok()) before_arch_ = t.content;
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
        if (auto now = fs::read_text(arch_path_, Stage1Options{}.max_file_bytes); now.ok()) {
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
    events::log(world(), o_.root, o_.config.raw, e);
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
    auto r = state::update(world(), o_.root, [&](json& doc) { return fn(doc); });
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
                {"reviewed_at", now_iso8601()},
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

std::string correlation_id_for(const ReviewGateOptions& o, const json& st) {
  if (!o.correlation_id.empty()) return o.correlation_id;
  if (const char* c = std::getenv("YOLO_CORRELATION_ID"); c && *c) return c;
  if (st.is_object())
    if (auto it = st.find("correlation_id"); it != st.end() && it->is_string() && !it->get<std::string>().empty())
      return it->get<std::string>();
  return new_uuid();
}

}  // namespace

ReviewGateResult run_review_gate(const ReviewGateOptions& o, const std::vector<review::PlanTarget>& plans,
                                 bool is_phase) {
  ReviewGateResult res;
  auto snapshot = state::load(world(), o.root);
  auto warn = [&](const std::string& e) {
    if (!o.quiet) out::err(out::sym(out::Sym::Warn) + " " + safe(e));
    res.state_errors.push_back(e);
  };
  if (!snapshot.ok()) warn(snapshot.error);
  std::string cid = correlation_id_for(o, snapshot.doc);
  // One pass: each phase folder loaded and cross-checked once, siblings through the
  // caller's cache when it has one, else through this pass's own.
  PlanCache own_cache;
  PhaseSnapshots own_snapshots(o.plan_cache ? o.plan_cache : &own_cache);
  PhaseSnapshots& snapshots = o.snapshots ? *o.snapshots : own_snapshots;
  GateObserver obs(o, cid, res, snapshots);
  ReviewerAgent reviewer(o.root, o.config, cid);
  ArchitectAgent architect(o.root, o.config, cid);
  // A live line per agent call on a terminal; events for execute's review gate (agent_progress.h).
  AgentProgress progress = o.progress ? o.progress : agent_progress(out::live_enabled() && !o.json && !o.quiet);
  reviewer.set_progress(progress);
  architect.set_progress(progress);
  review::LoopOptions lo;
  lo.max_cycles = o.max_cycles > 0 ? o.max_cycles : o.config.review_max_cycles;
  lo.stage1.max_tasks = o.config.max_tasks_per_plan;
  lo.reviewer_required = o.config.reviewer_required;
  lo.stage1.cache = o.plan_cache;
  lo.stage1.snapshots = &snapshots;

  std::vector<review::PlanTarget> todo;
  std::map<stdfs::path, std::optional<state::LoadResult>> ledgers;  // phase folder -> its ledger
  for (const auto& t : plans) {
    if (o.changed_only) {
      std::string id = t.plan_id.empty() ? gate_plan_id(t.plan_path) : t.plan_id;
      std::string hash = review::file_hash(world(), t.plan_path);
      stdfs::path pd = t.phase_dir ? *t.phase_dir : t.plan_path.parent_path();
      auto& ledger = ledgers[pd];
      if (!ledger) {
        ledger = review_ledger::load(world(), o.root, pd);
        if (!ledger->ok()) warn(ledger->error);
      }
      const json* prev = ledger->ok() ? review_ledger::find(ledger->doc, id) : nullptr;
      if (review::reviewed_as_is(prev, hash)) {
        std::string v = prev->value("verdict", "reject");
        auto verdict = parse_verdict(v).value_or(Verdict::Reject);
        res.worst = worst(res.worst, verdict);
        json j = {{"cmd", "review"},
                  {"type", "plan"},
                  {"plan_id", id},
                  {"plan", rel(o.root, t.plan_path.string())},
                  {"hash", hash},
                  {"verdict", to_string(verdict)},
                  {"ok", verdict != Verdict::Reject},
                  {"source", "unchanged"},
                  {"skipped", true},
                  {"stage1", nullptr},
                  {"findings", prev->value("findings", json::array())},
                  {"cycles", 0}};
        if (o.quiet) {
          // the caller reads the rows
        } else if (!o.json)
          out::line(out::sym(out::Sym::Skip) + " " + out::bold(safe(id)) + ": unchanged since its last review (" +
                    to_string(verdict) + ")  " + out::dim(safe(rel(o.root, t.plan_path.string()))));
        else
          out::json_line(j);
        review::PlanReview row;
        row.plan_id = id;
        row.plan = j["plan"].get<std::string>();
        row.hash = hash;
        row.verdict = verdict;
        row.skipped = true;
        row.findings = review::findings_from_json(j["findings"]);
        res.rows.push_back(std::move(row));
        continue;
      }
    }
    todo.push_back(t);
  }

  res.loops = review::run_phase_loops(world(), todo, lo, reviewer, architect, obs);
  obs.flush();
  res.interrupt_signal = reviewer.interrupt_signal() ? reviewer.interrupt_signal() : architect.interrupt_signal();
  res.worst = worst(res.worst, res.loops.worst);
  res.halted = res.worst == Verdict::Reject;
  if (res.loops.interrupted) return res;

  // The phase summary: every plan's outcome, the accumulated findings de-duplicated by id.
  json rows = json::array();
  for (const auto& row : res.rows)
    rows.push_back({{"plan_id", row.plan_id},
                    {"verdict", to_string(row.verdict)},
                    {"cycles", row.cycles},
                    {"source", row.source_name()},
                    {"stop_reason", row.stop_reason}});
  json acc = res.loops.accumulated_findings();
  for (const auto& row : res.rows)
    if (row.skipped)
      for (const auto& f : row.findings) {
        json g = f.to_json();
        g["plan_id"] = row.plan_id;
        acc.push_back(std::move(g));
      }
  std::string phase_dir =
      plans.empty()
          ? std::string()
          : rel(o.root,
                (plans.front().phase_dir ? *plans.front().phase_dir : plans.front().plan_path.parent_path()).string());
  res.summary = {
      {"cmd", "review"},      {"type", "phase_summary"}, {"phase_dir", phase_dir}, {"verdict", to_string(res.worst)},
      {"halted", res.halted}, {"plans", rows},           {"findings", acc}};
  if (!is_phase) return res;

  if (res.halted) {
    json rejected = json::array();
    for (const auto& row : rows)
      if (row["verdict"] == "reject") rejected.push_back(row["plan_id"]);
    events::Event e;
    e.type = "review_halt";
    if (auto n = leading_number(stdfs::path(phase_dir).filename().string())) e.phase = *n;
    e.data = {{"phase_dir", phase_dir}, {"rejected", rejected}};
    e.correlation_id = cid;
    events::log(world(), o.root, o.config.raw, e);
  }
  if (o.quiet) return res;
  if (o.json) {
    out::json_line(res.summary);
    return res;
  }
  out::line("");
  out::line(out::bold("Review summary") + "  " + out::dim(safe(phase_dir)));
  for (const auto& row : rows) {
    auto v = parse_verdict(row["verdict"].get<std::string>()).value_or(Verdict::Reject);
    std::string id = safe(row["plan_id"].get<std::string>());
    std::string l = "  " + out::sym(out::sym_for(v)) + " " + id + std::string(id.size() < 8 ? 8 - id.size() : 1, ' ') +
                    to_string(v) + std::string(13 - std::string(to_string(v)).size(), ' ') +
                    plural(row["cycles"].get<size_t>(), "cycle") + "  " + row["source"].get<std::string>();
    if (v == Verdict::Reject && !row["stop_reason"].get<std::string>().empty())
      l += "  " + out::dim(safe(row["stop_reason"].get<std::string>()));
    out::line(l);
  }
  size_t rejected = 0;
  for (const auto& row : rows) rejected += row["verdict"] == "reject" ? 1 : 0;
  if (res.halted)
    out::line(out::sym(out::Sym::Fail) + " Phase halted: " + std::to_string(rejected) + " of " +
              plural(rows.size(), "plan") + " rejected — no plan of this phase executes");
  else
    out::line(out::sym(out::sym_for(res.worst)) + " Phase review passed (" + to_string(res.worst) + ")");
  if (!acc.empty()) {
    out::line("Accumulated findings (" + std::to_string(acc.size()) + ", de-duplicated by id):");
    for (const auto& f : acc)
      out::line("  " + safe(f.value("plan_id", "")) + " [" + safe(f.value("severity", "")) + "] " +
                safe(f.value("id", "")) + " — " + safe(f.value("title", "")));
  }
  // The next step last, after the findings (800 plans' findings scrolled the verdict away).
  if (res.halted) {
    std::string first;
    for (const auto& row : rows)
      if (row["verdict"] == "reject") {
        first = safe(row["plan_id"].get<std::string>());
        break;
      }
    out::line("Next: revise " +
              (rejected > 1 ? "the " + std::to_string(rejected) + " rejected plans (" + first + " first) as their"
                            : "the rejected plan " + first + " as its") +
              " findings say, then `yolo review " + safe(phase_dir) + "` again");
  } else {
    out::line("Next: `yolo execute` runs the phase" +
              std::string(res.worst == Verdict::Conditional ? " (its findings ride along with the plans)" : ""));
  }
  return res;
}

}  // namespace yolo::runner
