#include "protocol/status/status.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "protocol/gates/approvals.h"
#include "protocol/review/finding_rows.h"
#include "protocol/status/overview.h"
#include "protocol/plan/plan.h"
#include "protocol/base/json_field.h"
#include "protocol/review/review_ledger.h"
#include "protocol/run/run_loops.h"
#include "protocol/state/state.h"
#include "protocol/plan/waves.h"

namespace yolo {

namespace {

// The phase rows a status shows without --all (bounded_overview).
constexpr size_t kOverviewRows = 50;

// A member by reference (null when absent): with 10,000 reviews in a state, a copy per
// lookup made `yolo status` quadratic.
const json& get(const json& j, const char* key) {
  static const json null_value = nullptr;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

using json_field::str;

// The review outcome of a plan: its last review (the ledgers' record; in older states,
// state.reviews[id]) and its loop (the run's review_loops[id], else the record's loop).
json review_of(const json& state, const json& reviews, const std::string& id) {
  json r = nullptr;
  const json* rvp = &get(reviews, id.c_str());
  if (!rvp->is_object()) rvp = &get(get(state, "reviews"), id.c_str());
  const json& rv = *rvp;
  if (rv.is_object()) {
    r = json::object();
    r["verdict"] = get(rv, "verdict");
    r["reviewed_at"] = get(rv, "reviewed_at");
    r["hash"] = get(rv, "hash");
    const json& f = get(rv, "findings");
    r["findings"] = f.is_array() ? f.size() : 0;
    if (!str(rv, "source").empty()) r["source"] = str(rv, "source");
    // Why a reject: its most severe finding, so status can say it in one line.
    if (str(rv, "verdict") == "reject")
      if (const json* top = most_severe_finding(f))
        r["reason"] = "[" + str(*top, "severity") + "] " + (str(*top, "id").empty() ? "" : str(*top, "id") + " ") +
                      finding_headline(*top);
  }
  const json* loopp = &get(get(state, "review_loops"), id.c_str());
  if (!loopp->is_object()) loopp = &get(rv, "loop");
  const json& loop = *loopp;
  if (loop.is_object()) {
    if (r.is_null()) r = json::object();
    r["cycle"] = get(loop, "cycle");
    r["max"] = get(loop, "max");
    r["loop_status"] = get(loop, "status");
    const json& per = get(loop, "findings_per_cycle");
    if (per.is_array() && !per.empty()) {
      const json& last = per.back();
      if (r["verdict"].is_null()) r["verdict"] = get(last, "verdict");
      r["last_cycle"] = last;
    }
  }
  return r;
}

// A wave's status is its plans' together, in the plans' words.
std::string wave_status(const std::vector<std::string>& statuses) {
  using waves::PlanStatus;
  bool all_complete = !statuses.empty();
  bool any_failed = false, any_running = false, any_ready = false;
  for (const auto& word : statuses) {
    auto s = waves::parse_status(word);
    if (s != PlanStatus::Complete) all_complete = false;
    if (s == PlanStatus::Failed) any_failed = true;
    if (s == PlanStatus::Running) any_running = true;
    if (s == PlanStatus::Ready) any_ready = true;
  }
  PlanStatus w = all_complete ? PlanStatus::Complete
                 : any_failed ? PlanStatus::Failed
                 : any_running ? PlanStatus::Running
                 : any_ready   ? PlanStatus::Ready
                               : PlanStatus::Pending;
  return waves::to_string(w);
}

}  // namespace

json execution_status_of(const json& state, const json& reviews) {
  json s = {{"ok", true}, {"cmd", "status"}};
  for (const char* k : {"phase", "phase_name", "phase_dir", "status", "wave", "total_waves", "correlation_id",
                        "started_at", "completed_at"})
    s[k] = get(state, k);
  json steps = get(state, "steps_completed");
  s["steps_completed"] = steps.is_array() ? steps : json::array();
  s["run_state"] = std::string(gates::to_string(gates::run_state(state)));
  s["waves_may_advance"] = gates::waves_may_advance(state);

  json plans = json::array();
  std::map<long long, std::pair<std::vector<std::string>, std::vector<std::string>>> waves;  // wave -> ids, statuses
  json counts = json::object();
  json ps = get(state, "plans");
  if (ps.is_array())
    for (const auto& p : ps) {
      if (!p.is_object()) continue;
      std::string id = str(p, "id"), st = str(p, "status");
      json e = {
          {"id", id}, {"title", get(p, "title")}, {"wave", get(p, "wave")}, {"status", st}, {"path", get(p, "path")}};
      e["started_at"] = get(p, "started_at");
      e["completed_at"] = get(p, "completed_at");
      if (!str(p, "error").empty()) e["error"] = str(p, "error");
      json f = get(p, "findings");
      if (f.is_array() && !f.empty()) e["findings"] = f;
      e["review"] = review_of(state, reviews, id);
      // Worktree isolation: worktree, branch and merge state, scope fence, checks.
      for (const char* k : {"worktree", "scope", "checks", "dispatch"})
        if (json v = get(p, k); !v.is_null()) e[k] = v;
      plans.push_back(std::move(e));
      counts[st] = counts.value(st, 0) + 1;
      json w = get(p, "wave");
      long long wn = w.is_number_integer() ? w.get<long long>() : 0;
      waves[wn].first.push_back(id);
      waves[wn].second.push_back(st);
    }
  json wl = json::array();
  for (const auto& [wn, v] : waves) wl.push_back({{"wave", wn}, {"status", wave_status(v.second)}, {"plans", v.first}});
  s["plans"] = std::move(plans);
  s["waves"] = std::move(wl);
  s["counts"] = std::move(counts);
  json approval = get(state, "approval");
  s["approval"] = approval.is_object() ? approval : json(nullptr);
  json gl = json::array(), open = json::array();
  for (auto& g : gates::list_gates(state)) {
    if (str(g, "status") == "OPEN") open.push_back(g);
    gl.push_back(std::move(g));
  }
  s["gates"] = std::move(gl);
  s["open_gates"] = std::move(open);
  // Reviews of ids that are not (yet) plans of the state, so nothing recorded is hidden.
  json extra = json::object();
  std::set<std::string> known;
  for (const auto& p : s["plans"]) known.insert(str(p, "id"));
  for (const json* m : {&reviews, &get(state, "reviews"), &get(state, "review_loops")}) {
    if (!m->is_object()) continue;
    for (auto it = m->begin(); it != m->end(); ++it)
      if (!known.count(it.key()) && !extra.contains(it.key())) extra[it.key()] = review_of(state, reviews, it.key());
  }
  if (!extra.empty()) s["other_reviews"] = std::move(extra);
  return s;
}

namespace {

// The ledgers of the run's phase, read; the others, named. See StatusOptions.
review_ledger::All run_ledgers(const World& w, const std::filesystem::path& root, const json& state, json& others) {
  review_ledger::All all;
  std::string phase_file;  // the run's ledger file name, when the state names a phase folder
  if (std::string pd = str(state, "phase_dir"); !pd.empty())
    phase_file = review_ledger::path_for(root, root / pd).filename().string();
  std::optional<long long> phase_number;
  if (const json& ph = get(state, "phase"); ph.is_number_integer()) phase_number = ph.get<long long>();
  std::vector<std::filesystem::path> mine;
  std::vector<std::string> other;
  for (const std::string& n : w.files().list(review_ledger::dir(root))) {
    const std::filesystem::path p = review_ledger::dir(root) / n;
    if (n.empty() || n.front() == '.' || p.extension() != ".json") continue;  // temp files, kept copies
    bool is_run;
    if (!phase_file.empty())
      is_run = n == phase_file;
    else if (phase_number)
      is_run = review::leading_number(n) == phase_number;
    else
      is_run = false;
    if (is_run)
      mine.push_back(p);
    else
      other.push_back(n);
  }
  std::sort(mine.begin(), mine.end());
  std::sort(other.begin(), other.end());
  for (const auto& f : mine) {
    auto r = review_ledger::load_file(w, f);
    if (!r.ok()) {
      all.errors.push_back(r.error);
      continue;
    }
    for (auto& [id, rec] : r.doc["reviews"].items()) all.reviews[id] = std::move(rec);
  }
  if (!other.empty()) {
    json files = json::array();
    for (size_t i = 0; i < other.size() && i < 20; ++i) files.push_back(other[i]);
    others = {{"count", other.size()},
              {"files", std::move(files)},
              {"hint", "the review records of other phases: yolo status --json --records"}};
  }
  return all;
}

}  // namespace

json execution_status(const World& w, const std::filesystem::path& root, const StatusOptions& opts) {
  auto snap = state::load(w, root);
  std::string file = state::state_path(root).string();
  if (!snap.ok()) {
    json e = {{"ok", false}, {"cmd", "status"}, {"state_file", file}, {"error", snap.error}};
    if (!snap.kept_copy.empty()) e["kept_copy"] = snap.kept_copy;
    return e;
  }
  json others = nullptr;
  auto ledgers = opts.all_records ? review_ledger::load_all(w, root) : run_ledgers(w, root, snap.doc, others);
  json s = execution_status_of(snap.doc, ledgers.reviews);
  s["state_file"] = file;
  {  // each approved gate says whether it counts, as `yolo gates` shows it
    json gl = json::array();
    for (auto& g : gates::checked_gates(snap.doc, gates::now_of(w, root))) gl.push_back(std::move(g));
    s["gates"] = std::move(gl);
  }
  if (!ledgers.errors.empty()) s["review_ledger_errors"] = ledgers.errors;
  if (!others.is_null()) s["other_ledgers"] = std::move(others);
  // Does the approval still count? (its file may have been edited since)
  const json& a = s["approval"];
  if (a.is_object() && a.value("approved", false) && a.contains("plan_path") && a["plan_path"].is_string()) {
    auto type = gates::parse_gate_type(a.value("gate_type", std::string("vision"))).value_or(gates::GateType::Vision);
    auto st = gates::approval_status(snap.doc, type, a["plan_path"].get<std::string>(), gates::now_of(w, root));
    s["approval_counts"] = st.counts();
    if (!st.counts()) s["approval_problem"] = st.message;
  }
  // The approval object only mirrors a gate: where it disagrees, that is said, and the
  // mirror's words (who approved, whether) are not shown as fact.
  if (auto mp = gates::mirror_problems(snap.doc); !mp.empty()) {
    s["approval_mirror_problems"] = mp;
    std::string all;
    for (const auto& m : mp) all += (all.empty() ? "" : "; ") + m;
    if (a.is_object() && a.value("approved", false)) s["approval_counts"] = false;
    s["approval_problem"] = "the approval record disagrees with its gate (" + all + "): it is not evidence of anything";
  }
  // The whole project: `yolo status` and MCP alike; its phase rows bounded unless --all.
  json project = project_overview(w, root, opts.progress);
  s["project"] =
      opts.all_records
          ? std::move(project)
          : bounded_overview(std::move(project), std::filesystem::path(str(snap.doc, "phase_dir")).filename().string(),
                             kOverviewRows);
  // Plan files of the run's phase that the run does not know (added after it started or
  // completed): a complete run is not the phase complete.
  if (snap.exists && !str(snap.doc, "phase_dir").empty()) {
    std::set<std::string> known;
    const json& ps = get(snap.doc, "plans");
    if (ps.is_array())
      for (const auto& p : ps) known.insert(str(p, "path"));
    json added = json::array();
    const std::string dir = str(snap.doc, "phase_dir");
    for (const auto& f : list_plan_files(w, root / dir)) {
      std::string rel = dir + "/" + f.filename().string();
      if (!known.count(rel)) added.push_back(rel);
    }
    if (!added.empty()) s["plans_not_in_run"] = std::move(added);
  }
  s["exists"] = snap.exists;
  if (!snap.exists) {
    s["status"] = nullptr;
    s["run_state"] = nullptr;
  }
  return s;
}

}  // namespace yolo
