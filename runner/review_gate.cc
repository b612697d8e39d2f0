#include "runner/review_gate.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
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
#include "runner/review_gate_observer.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

std::string gate_plan_id(const World& w, const stdfs::path& plan_path) {
  auto loaded = load_plan(w, plan_path);
  if (loaded.plan && (!loaded.plan->phase.empty() || !loaded.plan->plan.empty())) return loaded.plan->id();
  std::string stem = plan_path.filename().string();
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == ".md") stem.resize(stem.size() - 3);
  return stem;
}

namespace {

using gate_text::plural;
using gate_text::rel;
using gate_text::safe;
using review::leading_number;

std::string correlation_id_for(const ReviewGateOptions& o, const json& st) {
  if (!o.correlation_id.empty()) return o.correlation_id;
  if (const char* c = std::getenv("YOLO_CORRELATION_ID"); c && *c) return c;
  if (st.is_object())
    if (auto it = st.find("correlation_id"); it != st.end() && it->is_string() && !it->get<std::string>().empty())
      return it->get<std::string>();
  return new_uuid();
}

}  // namespace

ReviewGateResult run_review_gate(const World& w, const ReviewGateOptions& o, const std::vector<review::PlanTarget>& plans,
                                 bool is_phase) {
  ReviewGateResult res;
  auto snapshot = state::load(w, o.root);
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
  std::unique_ptr<GateObserver> observer = make_gate_observer(w, o, cid, res, snapshots);
  GateObserver& obs = *observer;
  ReviewerAgent reviewer(w, o.root, o.config, cid);
  ArchitectAgent architect(w, o.root, o.config, cid);
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
      std::string id = t.plan_id.empty() ? gate_plan_id(w, t.plan_path) : t.plan_id;
      std::string hash = review::file_hash(w, t.plan_path);
      stdfs::path pd = t.phase_dir ? *t.phase_dir : t.plan_path.parent_path();
      auto& ledger = ledgers[pd];
      if (!ledger) {
        ledger = review_ledger::load(w, o.root, pd);
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

  res.loops = review::run_phase_loops(w, todo, lo, reviewer, architect, obs);
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
    for (const auto& row : res.rows)
      if (row.verdict == Verdict::Reject) rejected.push_back(row.plan_id);
    events::Event e;
    e.type = "review_halt";
    if (auto n = leading_number(stdfs::path(phase_dir).filename().string())) e.phase = *n;
    e.data = {{"phase_dir", phase_dir}, {"rejected", rejected}};
    e.correlation_id = cid;
    events::log(w, o.root, o.config.raw, e);
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
