#include "runner/gates_view.h"

#include "protocol/gates/gates.h"
#include "protocol/run/dispatch.h"
#include "protocol/run/execution.h"
#include "protocol/ports/fs.h"
#include "protocol/base/text.h"
#include "runner/output.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

namespace {

// A value for display. State and gates hold plan-derived text (titles, paths, feedback,
// approver errors): control characters are made visible, never sent to the terminal.
std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return text::sanitize_for_terminal(it->is_string() ? it->get<std::string>()
                                                     : it->dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string pad(std::string s, size_t n) {
  if (s.size() < n) s.append(n - s.size(), ' ');
  return s;
}

std::string one_line(std::string s, size_t max = 100) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text::cut(s, max);
}

// Columns on a terminal: one per UTF-8 character (continuation bytes take none).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80 ? 1 : 0;
  return w;
}

// A column of exactly n characters: cut with "…" when longer, then padded; never runs into
// the next column.
std::string column(std::string s, size_t n) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (width(s) > n) {
    size_t keep = n - 1, seen = 0, i = 0;
    for (; i < s.size(); ++i) {
      if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
        if (seen == keep) break;
        ++seen;
      }
    }
    s = s.substr(0, i) + "…";
  }
  size_t w = width(s);
  if (w < n) s.append(n - w, ' ');
  return s;
}

// An approval that does not count (unsealed, copied, stale: "counts": false) is never ✓.
bool does_not_count(const json& g) { return g.is_object() && g.contains("counts") && g["counts"] == false; }

out::Sym gate_sym(const json& g) {
  if (::yolo::gates::has_status(g, ::yolo::gates::GateStatus::Approved)) return does_not_count(g) ? out::Sym::Warn : out::Sym::Ok;
  if (::yolo::gates::has_status(g, ::yolo::gates::GateStatus::Rejected)) return out::Sym::Fail;
  if (!str(g, "last_error").empty()) return out::Sym::Warn;
  return out::Sym::Pause;
}

out::Sym plan_sym(std::optional<waves::PlanStatus> s) {
  using waves::PlanStatus;
  if (s == PlanStatus::Complete) return out::Sym::Ok;
  if (s == PlanStatus::Failed) return out::Sym::Fail;
  if (s == PlanStatus::Running) return out::Sym::Diamond;
  return out::Sym::Skip;  // pending, ready
}

std::string review_text(const json& r) {
  if (!r.is_object()) return out::dim("review —");
  std::string v = str(r, "verdict");
  out::Sym s = v == "approve"       ? out::Sym::Ok
               : v == "reject"      ? out::Sym::Fail
               : v == "conditional" ? out::Sym::Warn
                                    : out::Sym::Skip;
  std::string t = "review " + out::sym(s) + " " + (v.empty() ? "—" : v);
  if (r.contains("cycle") && r["cycle"].is_number() && r.contains("max") && r["max"].is_number())
    t += " (cycle " + r["cycle"].dump() + "/" + r["max"].dump() + ")";
  if (r.contains("findings") && r["findings"].is_number() && r["findings"].get<long long>() > 0)
    t += ", " + r["findings"].dump() + " finding(s)";
  if (str(r, "source") == "fallback")
    t += " " + out::sym(out::Sym::Warn) + " no real review (Stage 1 only: the reviewer did not run)";
  if (!str(r, "reason").empty()) t += "\n      " + out::sym(out::Sym::Fail) + " " + one_line(str(r, "reason"), 160);
  return t;
}

}  // namespace

std::optional<stdfs::path> find_project(const Context& ctx, const std::string& repo, std::string& err,
                                        bool* repo_not_folder) {
  std::error_code ec;
  if (repo.empty() && !ctx.root.empty()) return ctx.root;
  stdfs::path start = repo.empty() ? stdfs::current_path(ec) : stdfs::path(repo);
  if (repo_not_folder) *repo_not_folder = false;
  if (!repo.empty() && !stdfs::is_directory(start, ec)) {
    err = "--repo " + repo + " is not a folder";
    if (repo_not_folder) *repo_not_folder = true;
    return std::nullopt;
  }
  auto root = ctx.world.files().project_root(start);
  if (!root)
    err = "no .yolo-planning/ folder in " + stdfs::absolute(start, ec).string() +
          " or above (not a yolo project; `yolo init` starts one here)";
  return root;
}

std::string render_gates(const json& gates) {
  if (!gates.is_array() || gates.empty()) return out::sym(out::Sym::Skip) + " No gates";
  std::string r;
  for (const auto& g : gates) {
    if (!r.empty()) r += "\n";
    r += out::sym(gate_sym(g)) + " " + pad(str(g, "id"), 16) + pad(str(g, "gate_type"), 13) + pad(str(g, "status"), 9) +
         str(g, "plan_path");
    if (::yolo::gates::has_status(g, ::yolo::gates::GateStatus::Approved)) {
      r += out::dim("  by " + str(g, "approved_by") + " at " + str(g, "resolved_at"));
      if (does_not_count(g)) r += "\n    does not count: " + one_line(str(g, "problem"), 400);
    } else if (::yolo::gates::has_status(g, ::yolo::gates::GateStatus::Rejected))
      r += out::dim("  at " + str(g, "resolved_at")) + "\n    feedback: " + one_line(str(g, "feedback"), 300);
    else {
      r += out::dim("  since " + str(g, "created_at"));
      if (!str(g, "last_error").empty())
        r += "\n    approver error: " + one_line(str(g, "last_error"), 300) + " (`yolo approve " + str(g, "id") +
             "` retries)";
      else if (!str(g, "feedback").empty())
        r += "\n    " + one_line(str(g, "feedback"), 300);
    }
    if (!str(g, "reason").empty()) r += "\n    reason: " + one_line(str(g, "reason"), 300);
  }
  return r;
}

namespace {

long long num(const json& j, const char* k) {
  auto it = j.is_object() ? j.find(k) : j.end();
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

// One line per phase folder: plans with a SUMMARY of all plans, and the last reviews.
std::string render_project(const json& project) {
  const json& phases = project.is_object() && project.contains("phases") ? project["phases"] : json();
  if (!phases.is_array() || phases.empty())
    return "  " + out::sym(out::Sym::Skip) + " no phase folders under .yolo-planning/phases";
  std::string r;
  for (const auto& p : phases) {
    long long plans = num(p, "plans"), done = num(p, "summaries");
    out::Sym sym = plans > 0 && done == plans ? out::Sym::Ok : done > 0 ? out::Sym::Diamond : out::Sym::Skip;
    std::string l = "  " + out::sym(sym) + " " + column(str(p, "folder"), 34) + " " +
                    column(std::to_string(done) + "/" + std::to_string(plans) + " done", 10) + " ";
    long long reviewed = num(p, "reviewed");
    if (reviewed == 0)
      l += out::dim("not reviewed");
    else {
      l += std::to_string(reviewed) + " reviewed";
      if (num(p, "rejected"))
        l += ", " + out::sym(out::Sym::Fail) + " " + std::to_string(num(p, "rejected")) + " rejected";
      if (num(p, "conditional")) l += ", " + std::to_string(num(p, "conditional")) + " conditional";
      if (num(p, "fallback"))
        l += ", " + out::sym(out::Sym::Warn) + " " + std::to_string(num(p, "fallback")) +
             " with no real review (Stage 1 only: the reviewer did not run)";
    }
    if (!r.empty()) r += "\n";
    r += l;
  }
  if (project.contains("phases_omitted") && project["phases_omitted"].is_object()) {
    const json& o = project["phases_omitted"];
    long long complete = num(o, "complete"), more = num(o, "more");
    std::string what;
    if (complete) what = std::to_string(complete) + " complete phase(s)";
    if (more) what += (what.empty() ? "" : " and ") + std::to_string(more) + " more";
    if (!what.empty()) r += "\n  " + out::dim(what + " not shown: `yolo status --all`");
  }
  return r;
}

// The one line that tells the person what to do now.
std::string status_next(const json& s) {
  std::string next;
  std::string rs = str(s, "run_state");
  const json& open = s.contains("open_gates") ? s["open_gates"] : json();
  const json& plans = s.contains("plans") ? s["plans"] : json();
  auto any_plan = [&](waves::PlanStatus st) {
    if (plans.is_array())
      for (const auto& p : plans)
        if (execution::plan_status(p) == st) return true;
    return false;
  };
  bool rejected_review = false;
  if (plans.is_array())
    for (const auto& p : plans)
      if (p.contains("review") && str(p["review"], "verdict") == "reject") rejected_review = true;
  if (!s.value("exists", true)) {
    const json& project = s.contains("project") && s["project"].is_object() ? s["project"] : json();
    long long phases = project.is_object() && project.contains("totals") ? num(project["totals"], "phases") : 0;
    next = phases == 0
               ? "`yolo init` scaffolds .yolo-planning (ROADMAP, a first phase, a config)"
               : "`yolo execute --dry-run` shows what would run; `yolo execute` starts the first phase not complete";
  } else if (open.is_array() && !open.empty()) {
    std::string id = str(open.front(), "id");
    next = "`yolo approve " + id + "` in a terminal (or `yolo reject " + id + " --feedback TEXT`), then `yolo execute`";
  } else if (rs == "HALTED") {
    if (rejected_review)
      next = "edit the rejected plan(s), then `yolo execute` (only changed plans are reviewed again)";
    else if (any_plan(waves::PlanStatus::Failed))
      next = "`yolo logs PLAN` shows what the failed plan's executor printed; fix it, then `yolo execute`";
    else
      next = "fix what halted the run (above), then `yolo execute`";
  } else if (s.contains("plans_not_in_run") && s["plans_not_in_run"].is_array() && !s["plans_not_in_run"].empty()) {
    next = "`yolo execute` runs the plan(s) added to " + str(s, "phase_dir") + " (`yolo execute --dry-run` shows them)";
  } else if (rs == "COMPLETE") {
    next = "`yolo execute` runs the next phase that is not complete";
  } else if (any_plan(waves::PlanStatus::Ready)) {
    next = "write the SUMMARY files of the ready plans (or configure an `executor`), then `yolo execute`";
  } else {
    next = "`yolo execute` continues the run";
  }
  return "Next: " + next;
}

}  // namespace

// Worktree isolation: "branch yolo/ab12cd34/01-02 · merged", the worktree while
// it exists, the scope fence's findings and each check yolo ran.
static std::string plan_isolation_text(const json& p) {
  std::string t;
  // Dispatch: "job 4711 (attempt 1) · done  slurm:4711".
  if (p.contains("dispatch") && p["dispatch"].is_object()) {
    const json& d = p["dispatch"];
    std::string st = str(d, "state");
    using dispatch::JobState;
    const std::optional<JobState> js = dispatch::job_state(d);
    out::Sym sym = js == JobState::Done        ? out::Sym::Ok
                   : js == JobState::Failed    ? out::Sym::Fail
                   : js == JobState::Cancelled ? out::Sym::Warn
                                               : out::Sym::Diamond;
    long long a = d.contains("attempt") && d["attempt"].is_number_integer() ? d["attempt"].get<long long>() : 0;
    t += "\n      " + out::sym(sym) + " job " +
         one_line(str(d, "handle").empty() ? "(not submitted)" : str(d, "handle"), 80) + " (attempt " +
         std::to_string(a) + ") · " + one_line(st, 20);
    if (!str(d, "url").empty()) t += "  " + one_line(str(d, "url"), 160);
    // What the engine last said while yolo waited (a pending reason, a controller down).
    if ((js == JobState::Submitted || js == JobState::Submitting) && !str(d, "engine_status").empty())
      t += "\n        engine: " + one_line(str(d, "engine_status"), 200);
  }
  if (p.contains("worktree") && p["worktree"].is_object()) {
    const json& w = p["worktree"];
    using execution::MergeState;
    const MergeState m = execution::merge_state(w);
    out::Sym sym = m == MergeState::Merged ? out::Sym::Ok : m == MergeState::Conflict ? out::Sym::Fail : out::Sym::Diamond;
    std::string what = m == MergeState::Merged
                           ? "merged" + (str(w, "merge_commit").empty() ? std::string()
                                                                        : " as " + str(w, "merge_commit").substr(0, 12))
                       : m == MergeState::Pending  ? "gated, not merged yet"
                       : m == MergeState::Conflict ? "merge conflict (nothing merged)"
                                                   : "not gated yet";
    t += "\n      " + out::sym(sym) + " branch " + one_line(str(w, "branch"), 80) + " · " + what;
    if (m != MergeState::Merged) t += "\n        worktree " + one_line(str(w, "path"), 160);
  }
  if (p.contains("scope") && p["scope"].is_object()) {
    const json& sc = p["scope"];
    size_t n = sc.contains("changed") && sc["changed"].is_array() ? sc["changed"].size() : 0;
    const json& fs = sc.contains("findings") && sc["findings"].is_array() ? sc["findings"] : json::array();
    t += "\n      " + out::sym(fs.empty() ? out::Sym::Ok : out::Sym::Warn) + " scope: " + std::to_string(n) +
         " file(s) changed" + (fs.empty() ? ", all planned" : "");
    for (const auto& f : fs) t += "\n        [" + str(f, "severity") + "] " + one_line(str(f, "issue"), 200);
  }
  if (p.contains("checks") && p["checks"].is_array())
    for (const auto& c : p["checks"]) {
      bool ok = c.value("passed", false);
      long long ms =
          c.contains("duration_ms") && c["duration_ms"].is_number_integer() ? c["duration_ms"].get<long long>() : 0;
      t += "\n      " + out::sym(ok ? out::Sym::Ok : out::Sym::Fail) + " check " + one_line(str(c, "name"), 60) + ": " +
           (ok ? std::string("passed") : one_line(str(c, "outcome"), 80)) + " (" + std::to_string(ms) + " ms)";
    }
  return t;
}

std::string render_status(const json& s) {
  std::string r;
  auto add = [&](const std::string& l) {
    if (!r.empty()) r += "\n";
    r += l;
  };
  const json& project = s.contains("project") ? s["project"] : json();
  if (!s.value("exists", true)) {
    add(out::bold("Project") + "  " + out::sym(out::Sym::Skip) + " no run yet");
    add(render_project(project));
    add(status_next(s));
    return r;
  }
  std::string rs = str(s, "run_state");
  const bool added =
      s.contains("plans_not_in_run") && s["plans_not_in_run"].is_array() && !s["plans_not_in_run"].empty();
  out::Sym rsym = rs == "COMPLETE" ? (added ? out::Sym::Warn : out::Sym::Ok)
                  : rs == "HALTED" ? out::Sym::Fail
                  : rs == "FROZEN" ? out::Sym::Pause
                                   : out::Sym::Diamond;
  std::string head = str(s, "phase").empty() ? std::string("Run") : "Phase " + str(s, "phase");
  if (!str(s, "phase_name").empty()) head += " (" + str(s, "phase_name") + ")";
  head += "  " + out::sym(rsym) + " " + out::bold(rs) + " · status " + str(s, "status");
  if (!str(s, "wave").empty()) head += " · wave " + str(s, "wave") + "/" + str(s, "total_waves");
  add(head);
  if (!str(s, "correlation_id").empty())
    add(out::dim("  correlation " + str(s, "correlation_id") +
                 (str(s, "started_at").empty() ? "" : " · started " + str(s, "started_at"))));
  const json& a = s.contains("approval") ? s["approval"] : json();
  if (a.is_object()) {
    std::string type = str(a, "gate_type").empty() ? "vision" : str(a, "gate_type");
    if (s.contains("approval_mirror_problems") || (a.value("approved", false) && !str(s, "approval_problem").empty()))
      add(out::sym(out::Sym::Warn) + " Approval: " + one_line(str(s, "approval_problem"), 400));
    else if (a.value("approved", false))
      add(out::sym(out::Sym::Ok) + " Approval: " + type + " approved by " + str(a, "approved_by") + " (" +
          str(a, "plan_path") + ")");
    else if (rs == "HALTED")
      add(out::sym(out::Sym::Skip) + " Approval: " + type + " not approved (" + str(a, "plan_path") +
          "); the run halted, nothing awaits approval");
    else
      add(out::sym(out::Sym::Pause) + " Approval: " + type + " awaiting approval for " + str(a, "plan_path") +
          " since " + str(a, "requested_at"));
  } else {
    add(out::sym(out::Sym::Skip) + " Approval: none yet (the vision gate has not run)");
  }
  const json& open = s.contains("open_gates") ? s["open_gates"] : json();
  if (open.is_array() && !open.empty()) {
    add(out::bold("Open gates"));
    add(render_gates(open));
  }
  const json& waves = s.contains("waves") ? s["waves"] : json();
  const json& plans = s.contains("plans") ? s["plans"] : json();
  if (waves.is_array())
    for (const auto& w : waves) {
      std::string ws = str(w, "status");
      auto wst = waves::parse_status(ws);  // a wave's word is a plan status: its plans' together
      add(out::sym(plan_sym(wst == waves::PlanStatus::Ready ? waves::PlanStatus::Pending : wst)) + " " +
          out::bold("Wave " + str(w, "wave")) + "  " + ws);
      for (const auto& p : plans) {
        if (p.value("wave", json()).dump() != w.value("wave", json()).dump()) continue;
        std::string ps = str(p, "status");
        std::string line = "  " + out::sym(plan_sym(waves::parse_status(ps))) + " " + column(str(p, "id"), 8) + " " +
                           column(str(p, "title"), 40) + "  " + column(ps, 9) + " " +
                           review_text(p.value("review", json()));
        if (!str(p, "error").empty())
          line += "\n      " + out::sym(out::Sym::Fail) + " " + one_line(str(p, "error"), 200);
        line += plan_isolation_text(p);
        add(line);
      }
    }
  if (!plans.is_array() || plans.empty()) add(out::sym(out::Sym::Skip) + " No plans in the state yet");
  if (added) {
    const json& list = s["plans_not_in_run"];
    add(out::sym(out::Sym::Warn) + " " + std::to_string(list.size()) + " plan(s) in " + str(s, "phase_dir") +
        " not part of this run (added since" + (rs == "COMPLETE" ? ": the phase is not complete" : "") + "):");
    size_t shown = 0;
    for (const auto& item : list) {
      if (++shown > 10) {
        add("    … " + std::to_string(list.size() - 10) + " more");
        break;
      }
      add("  " + out::sym(out::Sym::Skip) + " " +
          text::sanitize_for_terminal(item.is_string() ? item.get<std::string>() : ""));
    }
  }
  const json& others = s.contains("other_reviews") ? s["other_reviews"] : json();
  if (others.is_object() && !others.empty()) {
    add(out::bold("Reviews of plans outside this run"));
    for (auto& [id, rv] : others.items())
      add("  " + out::sym(out::Sym::Skip) + " " + column(text::sanitize_for_terminal(id), 8) + " " + review_text(rv));
  }
  if (s.contains("other_ledgers") && s["other_ledgers"].is_object())
    add(out::dim("Reviews of " + std::to_string(s["other_ledgers"].value("count", 0)) +
                 " other phase(s) are not shown: `yolo status --records`"));
  const json& gl = s.contains("gates") ? s["gates"] : json();
  size_t resolved = 0;
  if (gl.is_array())
    for (const auto& g : gl)
      if (!::yolo::gates::has_status(g, ::yolo::gates::GateStatus::Open)) ++resolved;
  if (resolved > 0) add(out::dim(std::to_string(resolved) + " resolved gate(s): `yolo gates`"));
  if (project.is_object() && project.contains("phases") &&
      (project["phases"].size() > 1 || project.contains("phases_omitted"))) {
    add(out::bold("Project"));
    add(render_project(project));
  }
  add(status_next(s));
  return r;
}

}  // namespace yolo::runner
