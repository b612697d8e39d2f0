#include "protocol/run/execution.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "protocol/base/json_field.h"
#include "protocol/findings/make_finding.h"

namespace yolo::execution {
namespace {

using json_field::str;

bool same_phase(const json& doc, const PhaseInfo& phase) {
  if (!doc.is_object()) return false;
  std::string dir = str(doc, "phase_dir");
  if (!dir.empty()) return dir == phase.dir;
  // Older files (other tools) carry only phase and phase_name.
  auto it = doc.find("phase");
  return it != doc.end() && it->is_number_integer() && it->get<long long>() == phase.number &&
         str(doc, "phase_name") == phase.name;
}

}  // namespace

bool has_run(const json& state) {
  if (!state.is_object()) return false;
  if (!str(state, "phase_dir").empty()) return true;
  auto it = state.find("phase");
  return it != state.end() && it->is_number_integer();
}

PlanEnd end_after_merge(MergeState after, const std::string& error, const json& findings) {
  if (status_after_merge(after) == PlanStatus::Failed) return {PlanStatus::Failed, error, findings};
  return {PlanStatus::Complete, "", json::array()};
}

json merge_conflict_finding(const std::string& branch, const std::vector<std::string>& files,
                            const std::string& error) {
  Finding f = make_finding(Severity::High, "merge", error,
                           "keep the plan to its files_modified; the branch " + branch +
                               " is kept for inspection; `yolo execute` runs the plan again in a fresh worktree");
  f.extra["files"] = files;
  return f.to_json();
}

bool run_in_progress(const json& state) {
  if (!has_run(state)) return false;
  auto s = run_status(state);
  return s == RunStatus::Running || s == RunStatus::AwaitingApproval;
}

bool halted_by_gate(const json& doc) {
  if (run_status(doc) != RunStatus::Halted) return false;
  auto it = doc.find("gates");
  if (it == doc.end() || !it->is_array() || it->empty()) return false;
  return gates::status_of(it->back()) == gates::GateStatus::Rejected;
}

void mark_step(json& doc, const std::string& step) {
  if (!doc.contains("steps_completed") || !doc["steps_completed"].is_array()) doc["steps_completed"] = json::array();
  if (!has_step(doc, step)) doc["steps_completed"].push_back(step);
}

bool has_step(const json& doc, const std::string& step) {
  if (!doc.is_object()) return false;
  auto it = doc.find("steps_completed");
  if (it == doc.end() || !it->is_array()) return false;
  return std::find(it->begin(), it->end(), json(step)) != it->end();
}

json* find_plan(json& doc, const std::string& id) {
  if (!doc.is_object() || !doc.contains("plans") || !doc["plans"].is_array()) return nullptr;
  for (auto& p : doc["plans"])
    if (str(p, "id") == id) return &p;
  return nullptr;
}

const json* find_plan(const json& doc, const std::string& id) { return find_plan(const_cast<json&>(doc), id); }

std::optional<UsageError> unknown_plan(const std::vector<PlanEntry>& plans, const std::string& only,
                                       const std::string& phase_dir) {
  if (only.empty()) return std::nullopt;
  std::vector<waves::PlanNode> nodes;
  nodes.reserve(plans.size());
  for (const auto& e : plans) nodes.push_back({e.id, e.plan, e.wave, e.depends_on, waves::PlanStatus::Pending, {}});
  if (waves::resolve_dependency(nodes, only) >= 0) return std::nullopt;
  std::string ids;
  for (const auto& e : plans) ids += (ids.empty() ? "" : ", ") + e.id;
  return UsageError{"no plan '" + only + "' in " + phase_dir,
                    "`yolo execute --plan ID` with one of: " + (ids.empty() ? std::string("(no plans)") : ids)};
}

std::vector<waves::PlanNode> nodes(const json& doc, const std::vector<PlanEntry>& plans) {
  std::vector<waves::PlanNode> out;
  out.reserve(plans.size());
  // doc.plans by id (the first of an id, as find_plan): one pass, not one search per plan.
  std::unordered_map<std::string_view, const json*> by_id;
  if (doc.is_object())
    if (auto it = doc.find("plans"); it != doc.end() && it->is_array())
      for (const auto& p : *it)
        if (auto id = p.find("id"); p.is_object() && id != p.end() && id->is_string())
          by_id.emplace(id->get_ref<const std::string&>(), &p);
  for (const auto& e : plans) {
    waves::PlanNode n;
    n.id = e.id;
    n.plan = e.plan;
    n.wave = e.wave;
    n.depends_on = e.depends_on;
    if (auto f = by_id.find(e.id); f != by_id.end())
      n.status = waves::parse_status(str(*f->second, "status")).value_or(waves::PlanStatus::Pending);
    out.push_back(std::move(n));
  }
  return out;
}

json plan_statuses(const json& doc, const std::vector<PlanEntry>& plans) {
  json out = json::array();
  const auto statuses = nodes(doc, plans);  // one pass over the state's plans
  for (size_t i = 0; i < plans.size(); ++i)
    out.push_back({{"id", plans[i].id}, {"status", std::string(waves::to_string(statuses[i].status))}});
  return out;
}

void update_wave(json& doc) {
  long long total = 0, current = 0;
  if (doc.contains("plans") && doc["plans"].is_array())
    for (const auto& p : doc["plans"]) {
      long long w = p.contains("wave") && p["wave"].is_number_integer() ? p["wave"].get<long long>() : 0;
      if (w < 1) continue;
      total = std::max(total, w);
      auto st = p.find("status");
      const bool complete = st != p.end() && st->is_string() &&
                            waves::parse_status(st->get_ref<const std::string&>()) == PlanStatus::Complete;
      if (!complete && (current == 0 || w < current)) current = w;
    }
  doc["total_waves"] = total;
  doc["wave"] = current == 0 ? total : current;
}

std::string slot_to_take_up(const json& plan_record, const std::string& branch) {
  if (!plan_record.is_object()) return {};
  auto wt = plan_record.find("worktree");
  if (wt == plan_record.end() || !wt->is_object() || branch.empty()) return {};
  if (str(*wt, "branch") != branch || str(*wt, "merge") != to_string(MergeState::None)) return {};
  return str(*wt, "path");
}

Prepared prepare(json& doc, const PhaseInfo& phase, const std::vector<PlanEntry>& plans, const PrepareOptions& opts) {
  Prepared r;
  if (!doc.is_object()) doc = json::object();
  r.new_run = !same_phase(doc, phase);
  json old_plans = json::array();
  if (!r.new_run && doc.contains("plans") && doc["plans"].is_array()) old_plans = doc["plans"];

  if (str(doc, "correlation_id").empty()) doc["correlation_id"] = opts.correlation_id;
  doc["phase"] = phase.number;
  doc["phase_name"] = phase.name;
  doc["phase_dir"] = phase.dir;
  if (r.new_run) {
    doc["started_at"] = opts.now;
    doc["completed_at"] = nullptr;
    doc["steps_completed"] = json::array();
  } else if (!doc.contains("started_at")) {
    doc["started_at"] = opts.now;
  }
  mark_step(doc, "step_2");

  json out = json::array();
  bool all_complete = !plans.empty();
  std::unordered_map<std::string, const json*> old_by_id;  // the last of an id, as before
  for (const auto& p : old_plans) old_by_id[str(p, "id")] = &p;
  for (const auto& e : plans) {
    const json* prior = nullptr;
    if (auto f = old_by_id.find(e.id); f != old_by_id.end()) prior = f->second;
    // No record, or a word not in the vocabulary: as pending (never started).
    const PlanStatus before = prior ? plan_status(*prior).value_or(PlanStatus::Pending) : PlanStatus::Pending;
    json p = {{"id", e.id}, {"title", e.title}, {"path", e.path}};
    if (e.wave >= 1) p["wave"] = e.wave;
    PlanStatus status;
    // A run that resumes counts a passing SUMMARY for a plan it knew only when the plan was
    // complete when the run began, was started by it (its own executor wrote it) or was
    // handed out by it (`ready`: no executor is configured, someone outside writes it).
    const bool started = before != PlanStatus::Pending ||
                         (prior && (prior->contains("started_at") || prior->value("was_complete", false)));
    const bool counted = e.summary == SummaryState::Passed && (r.new_run || started);
    if (e.summary == SummaryState::Passed && !counted) {
      status = PlanStatus::Pending;
      p["summary_not_counted"] = "its SUMMARY appeared after this run began, written by no executor of this plan";
      r.summary_not_counted.push_back(e.id);
    } else if (counted)
      status = PlanStatus::Complete;
    else if (e.summary == SummaryState::Failed && !opts.retry_failed)
      status = PlanStatus::Failed;
    else if (before == PlanStatus::Ready)
      status = PlanStatus::Ready;
    else
      status = PlanStatus::Pending;
    if (before == PlanStatus::Running) r.was_running = true;
    p["status"] = waves::to_string(status);
    if (prior && prior->contains("started_at") && status == PlanStatus::Complete)
      p["started_at"] = (*prior)["started_at"];
    if (status == PlanStatus::Complete)
      p["completed_at"] = prior && str(*prior, "completed_at").size() ? (*prior)["completed_at"] : json(opts.now);
    // Worktree isolation: the plan's worktree and merge state, scope fence and
    // checks are kept: a resumed run merges what passed and was not merged yet.
    if (prior)
      for (const char* k : {"worktree", "scope", "checks", "dispatch"})
        if (auto it = prior->find(k); it != prior->end()) p[k] = *it;
    if (status == PlanStatus::Failed) {
      p["findings"] = e.summary_findings.is_array() ? e.summary_findings : json::array();
      p["error"] = "its SUMMARY does not pass the SUMMARY gate";
    }
    // Complete once in this run (its SUMMARY gone since, a checkout of another branch say):
    // when the SUMMARY is back, it counts again.
    if (status != PlanStatus::Complete &&
        (before == PlanStatus::Complete || (prior && prior->value("was_complete", false))))
      p["was_complete"] = true;
    if (status != PlanStatus::Complete) all_complete = false;
    out.push_back(std::move(p));
  }
  doc["plans"] = std::move(out);
  update_wave(doc);
  r.wave = doc["wave"].get<long long>();
  r.total_waves = doc["total_waves"].get<long long>();

  auto status = run_status(doc);
  if (status == RunStatus::AwaitingApproval || halted_by_gate(doc)) {
    // kept: only an approval (or a new request) moves the run on
  } else if (all_complete) {
    if (status != RunStatus::Complete) doc["completed_at"] = opts.now;
    doc["status"] = to_string(RunStatus::Complete);
  } else {
    doc["status"] = to_string(RunStatus::Running);
    doc["completed_at"] = nullptr;
  }
  return r;
}

void mark_ready(json& doc, const std::vector<std::string>& ids) {
  for (const auto& id : ids)
    if (json* p = find_plan(doc, id)) (*p)["status"] = waves::to_string(PlanStatus::Ready);
}

PlanUpdate started(std::optional<std::string> now) {
  PlanUpdate u;
  u.status = PlanStatus::Running;
  u.started_at = std::move(now);
  u.completed_at = nullptr;
  return u;
}

PlanUpdate ended(const PlanEnd& end, const std::string& now) {
  PlanUpdate u;
  u.status = end.status;
  u.completed_at = end.status == PlanStatus::Pending ? json(nullptr) : json(now);
  u.error = end.error;
  if (end.status == PlanStatus::Failed) u.findings = end.findings.is_array() ? end.findings : json::array();
  return u;
}

Status start_plans(json& doc, const std::vector<std::string>& ids, const std::string& now) {
  std::vector<std::pair<std::string, PlanUpdate>> ups;
  for (const auto& id : ids) {
    if (!find_plan(doc, id)) return Status::fail("plan " + id + " is missing from the state");
    ups.emplace_back(id, started(now));
  }
  apply_plan_updates(doc, ups);
  return {};
}

void end_plan(json& doc, const std::string& id, const PlanEnd& end, const std::string& now) {
  apply_plan_updates(doc, {{id, ended(end, now)}});
}

void complete_phase(json& doc, const std::string& now) {
  update_wave(doc);
  mark_step(doc, "step_3");
  auto s = run_status(doc);
  if (s == RunStatus::AwaitingApproval) return;
  if (s != RunStatus::Complete) doc["completed_at"] = now;
  doc["status"] = to_string(RunStatus::Complete);
}

bool halt(json& doc) {
  auto s = run_status(doc);
  if (s == RunStatus::AwaitingApproval || s == RunStatus::Halted) return false;
  doc["status"] = to_string(RunStatus::Halted);
  return true;
}

PlanUpdate merge_updates(const PlanUpdate& earlier, PlanUpdate later) {
  if (!later.started_at) later.started_at = earlier.started_at;
  json set = earlier.set.is_object() ? earlier.set : json::object();
  if (later.set.is_object())
    for (auto& [k, v] : later.set.items()) set[k] = v;
  later.set = std::move(set);
  return later;
}

std::vector<size_t> apply_plan_updates(json& doc, const std::vector<std::pair<std::string, PlanUpdate>>& updates) {
  std::vector<size_t> changed;
  if (!doc.is_object()) return changed;
  auto plans = doc.find("plans");
  if (plans != doc.end() && plans->is_array()) {
    // Every update's record is found before any is changed: the index views the records' ids,
    // which a change (an update's `set`) could otherwise replace under it.
    std::vector<std::pair<size_t, const PlanUpdate*>> found;
    {
      std::unordered_map<std::string_view, size_t> by_id;  // the first of an id, as find_plan
      by_id.reserve(plans->size());
      for (size_t k = 0; k < plans->size(); ++k) {
        const json& p = (*plans)[k];
        auto id = p.is_object() ? p.find("id") : p.end();
        by_id.emplace(
            id != p.end() && id->is_string() ? std::string_view(id->get_ref<const std::string&>()) : std::string_view(),
            k);
      }
      for (const auto& [id, u] : updates)
        if (auto f = by_id.find(id); f != by_id.end()) found.emplace_back(f->second, &u);
    }
    for (const auto& [at, up] : found) {
      const PlanUpdate& u = *up;
      changed.push_back(at);
      json& p = (*plans)[at];
      p["status"] = waves::to_string(u.status);
      if (u.started_at) p["started_at"] = *u.started_at;
      p["completed_at"] = u.completed_at;
      if (!u.error.empty())
        p["error"] = u.error;
      else
        p.erase("error");
      if (!u.findings.is_null())
        p["findings"] = u.findings;
      else
        p.erase("findings");
      if (u.set.is_object())
        for (const auto& [k, v] : u.set.items()) {
          if (v.is_null())
            p.erase(k);
          else
            p[k] = v;
        }
      if (u.status != PlanStatus::Running) p.erase("executor");  // ended: its executor's pid/pgid/start no longer matter
    }
  }
  update_wave(doc);
  return changed;
}

std::string journal_line(const std::string& plan_id, const json& executor) {
  return json{{"plan", plan_id}, {"executor", executor}}.dump() + "\n";
}

json journal_plans(std::string_view text) {
  json plans = json::array();
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    JsonParse parsed = parse_json_bounded(line);
    const json& j = parsed.doc;
    if (!parsed.ok() || !j.is_object() || !j.contains("plan") || !j["plan"].is_string() ||
        j["plan"].get<std::string>().empty() || !j.contains("executor") || !j["executor"].is_object())
      continue;
    plans.push_back({{"id", j["plan"]}, {"status", waves::to_string(PlanStatus::Running)}, {"executor", j["executor"]}});
  }
  return {{"plans", plans}};
}

}  // namespace yolo::execution
