#include "runner/gates_view.h"

#include "protocol/fs.h"
#include "protocol/text.h"
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
  if (s.size() > max) s = s.substr(0, max) + "…";
  return s;
}

out::Sym gate_sym(const json& g) {
  std::string s = str(g, "status");
  if (s == "APPROVED") return out::Sym::Ok;
  if (s == "REJECTED") return out::Sym::Fail;
  if (!str(g, "last_error").empty()) return out::Sym::Warn;
  return out::Sym::Pause;
}

out::Sym plan_sym(const std::string& s) {
  if (s == "complete") return out::Sym::Ok;
  if (s == "failed") return out::Sym::Fail;
  if (s == "running") return out::Sym::Diamond;
  return out::Sym::Skip;  // pending, ready
}

std::string review_text(const json& r) {
  if (!r.is_object()) return out::dim("review —");
  std::string v = str(r, "verdict");
  out::Sym s = v == "approve" ? out::Sym::Ok : v == "reject" ? out::Sym::Fail : v == "conditional" ? out::Sym::Warn : out::Sym::Skip;
  std::string t = "review " + out::sym(s) + " " + (v.empty() ? "—" : v);
  if (r.contains("cycle") && r["cycle"].is_number() && r.contains("max") && r["max"].is_number())
    t += " (cycle " + r["cycle"].dump() + "/" + r["max"].dump() + ")";
  if (r.contains("findings") && r["findings"].is_number() && r["findings"].get<long long>() > 0)
    t += ", " + r["findings"].dump() + " finding(s)";
  return t;
}

}  // namespace

std::optional<stdfs::path> find_project(const std::string& repo, std::string& err) {
  std::error_code ec;
  stdfs::path start = repo.empty() ? stdfs::current_path(ec) : stdfs::path(repo);
  if (!repo.empty() && !stdfs::is_directory(start, ec)) {
    err = "--repo " + repo + " is not a folder";
    return std::nullopt;
  }
  auto root = fs::find_project_root(start);
  if (!root) err = "no .yolo-planning/ folder in " + stdfs::absolute(start, ec).string() + " or above (not a yolo project)";
  return root;
}

std::string render_gates(const json& gates) {
  if (!gates.is_array() || gates.empty()) return out::sym(out::Sym::Skip) + " No gates";
  std::string r;
  for (const auto& g : gates) {
    if (!r.empty()) r += "\n";
    r += out::sym(gate_sym(g)) + " " + pad(str(g, "id"), 16) + pad(str(g, "gate_type"), 13) + pad(str(g, "status"), 9) +
         str(g, "plan_path");
    std::string s = str(g, "status");
    if (s == "APPROVED") r += out::dim("  by " + str(g, "approved_by") + " at " + str(g, "resolved_at"));
    else if (s == "REJECTED") r += out::dim("  at " + str(g, "resolved_at")) + "\n    feedback: " + one_line(str(g, "feedback"), 300);
    else {
      r += out::dim("  since " + str(g, "created_at"));
      if (!str(g, "last_error").empty()) r += "\n    approver error: " + one_line(str(g, "last_error"), 300) + " (`yolo approve " + str(g, "id") + "` retries)";
      else if (!str(g, "feedback").empty()) r += "\n    " + one_line(str(g, "feedback"), 300);
    }
    if (!str(g, "reason").empty()) r += "\n    reason: " + one_line(str(g, "reason"), 300);
  }
  return r;
}

std::string render_status(const json& s) {
  std::string r;
  auto add = [&](const std::string& l) {
    if (!r.empty()) r += "\n";
    r += l;
  };
  if (!s.value("exists", true)) {
    add(out::sym(out::Sym::Skip) + " No execution state yet (" + str(s, "state_file") + "): run `yolo execute`");
    return r;
  }
  std::string rs = str(s, "run_state");
  out::Sym rsym = rs == "COMPLETE" ? out::Sym::Ok : rs == "HALTED" ? out::Sym::Fail : rs == "FROZEN" ? out::Sym::Pause : out::Sym::Diamond;
  std::string head = str(s, "phase").empty() ? std::string("Run") : "Phase " + str(s, "phase");
  if (!str(s, "phase_name").empty()) head += " (" + str(s, "phase_name") + ")";
  head += "  " + out::sym(rsym) + " " + out::bold(rs) + " · status " + str(s, "status");
  if (!str(s, "wave").empty()) head += " · wave " + str(s, "wave") + "/" + str(s, "total_waves");
  add(head);
  if (!str(s, "correlation_id").empty()) add(out::dim("  correlation " + str(s, "correlation_id") + (str(s, "started_at").empty() ? "" : " · started " + str(s, "started_at"))));
  const json& a = s.contains("approval") ? s["approval"] : json();
  if (a.is_object()) {
    std::string type = str(a, "gate_type").empty() ? "vision" : str(a, "gate_type");
    if (a.value("approved", false) && !str(s, "approval_problem").empty())
      add(out::sym(out::Sym::Warn) + " Approval: " + one_line(str(s, "approval_problem"), 400));
    else if (a.value("approved", false))
      add(out::sym(out::Sym::Ok) + " Approval: " + type + " approved by " + str(a, "approved_by") + " (" + str(a, "plan_path") + ")");
    else
      add(out::sym(out::Sym::Pause) + " Approval: " + type + " awaiting approval for " + str(a, "plan_path") + " since " + str(a, "requested_at"));
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
      add(out::sym(plan_sym(ws == "ready" ? "pending" : ws)) + " " + out::bold("Wave " + str(w, "wave")) + "  " + ws);
      for (const auto& p : plans) {
        if (p.value("wave", json()).dump() != w.value("wave", json()).dump()) continue;
        std::string ps = str(p, "status");
        std::string line = "  " + out::sym(plan_sym(ps)) + " " + pad(str(p, "id"), 8) + pad(one_line(str(p, "title"), 40), 42) +
                           pad(ps, 10) + review_text(p.value("review", json()));
        if (!str(p, "error").empty()) line += "\n      " + out::sym(out::Sym::Fail) + " " + one_line(str(p, "error"), 200);
        add(line);
      }
    }
  if (!plans.is_array() || plans.empty()) add(out::sym(out::Sym::Skip) + " No plans in the state yet");
  const json& others = s.contains("other_reviews") ? s["other_reviews"] : json();
  if (others.is_object())
    for (auto& [id, rv] : others.items()) add("  " + out::sym(out::Sym::Skip) + " " + pad(text::sanitize_for_terminal(id), 8) + review_text(rv));
  if (s.contains("other_ledgers") && s["other_ledgers"].is_object())
    add(out::dim("Reviews of " + std::to_string(s["other_ledgers"].value("count", 0)) +
                 " other phase(s) are not shown: `yolo status --records`"));
  const json& gl = s.contains("gates") ? s["gates"] : json();
  size_t resolved = 0;
  if (gl.is_array())
    for (const auto& g : gl)
      if (str(g, "status") != "OPEN") ++resolved;
  if (resolved > 0) add(out::dim(std::to_string(resolved) + " resolved gate(s): `yolo gates`"));
  return r;
}

}  // namespace yolo::runner
