#include "protocol/gates/approver_policy.h"

#include "protocol/gates/gates_detail.h"
#include "protocol/base/json_field.h"
#include "protocol/base/text.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;
using json_field::str;
using namespace detail;

std::string_view to_string(Decision d) {
  switch (d) {
    case Decision::Approved:
      return "approved";
    case Decision::Rejected:
      return "rejected";
    case Decision::Pending:
      return "pending";
  }
  return "pending";
}

// ---- approvers ----------------------------------------------------------------------------

ApproverSpec approver_spec(const Config& cfg, GateType type) {
  ApproverSpec s;
  std::string where = "approvers." + std::string(to_string(type));
  json j = cfg.approver_for(std::string(to_string(type)));
  const json* cmd = nullptr;
  if (j.is_string()) {
    std::string v = j.get<std::string>();
    if (v == "manual") return s;
    if (v == "skip") {
      s.kind = ApproverSpec::Kind::Skip;
      return s;
    }
    s.kind = ApproverSpec::Kind::Invalid;
    s.error = where + ": expected \"manual\", \"skip\" or a command (argv array), got \"" + v + "\"";
    return s;
  }
  if (j.is_array())
    cmd = &j;
  else if (j.is_object()) {
    if (auto it = j.find("command"); it != j.end()) cmd = &*it;
    if (auto it = j.find("timeout_ms"); it != j.end()) {
      if (!it->is_number_integer() || it->get<long long>() < 0) {
        s.kind = ApproverSpec::Kind::Invalid;
        s.error = where + ".timeout_ms: expected a non-negative integer";
        return s;
      }
      s.timeout_ms = it->get<long long>();
    }
  }
  if (!cmd || !cmd->is_array() || cmd->empty()) {
    s.kind = ApproverSpec::Kind::Invalid;
    s.error = where + ": expected \"manual\", \"skip\", a non-empty argv array or {\"command\": [...]}";
    return s;
  }
  for (const auto& a : *cmd) {
    if (!a.is_string()) {
      s.kind = ApproverSpec::Kind::Invalid;
      s.error = where + ": every argv element must be a string";
      s.argv.clear();
      return s;
    }
    s.argv.push_back(a.get<std::string>());
  }
  s.kind = ApproverSpec::Kind::Command;
  return s;
}

ApproverVerdict parse_verdict(std::string_view out) {
  ApproverVerdict v;
  std::string_view t = text::trim(out);
  auto snippet = [&] {
    std::string s(t.substr(0, 200));
    if (t.size() > 200) s += "…";
    return s.empty() ? std::string("(nothing)") : "'" + s + "'";
  };
  JsonParse parsed = parse_json_bounded(t);
  if (parsed.problem == JsonParse::Problem::TooDeep) {
    v.error = "approver verdict refused: " + parsed.message;
    return v;
  }
  const json& j = parsed.doc;
  if (!parsed.ok() || !j.is_object()) {
    v.error = "approver printed no JSON verdict {\"decision\": ...}: " + snippet();
    return v;
  }
  auto d = j.find("decision");
  if (d == j.end() || !d->is_string()) {
    v.error = "approver verdict has no \"decision\" string: " + snippet();
    return v;
  }
  std::string ds = d->get<std::string>();
  if (ds == "approved")
    v.decision = Decision::Approved;
  else if (ds == "rejected")
    v.decision = Decision::Rejected;
  else if (ds == "pending")
    v.decision = Decision::Pending;
  else {
    v.error = "approver decision must be approved, rejected or pending, got '" + ds.substr(0, 100) + "'";
    return v;
  }
  if (auto f = j.find("feedback"); f != j.end() && !f->is_null()) {
    if (!f->is_string()) {
      v.error = "approver verdict \"feedback\" must be a string";
      return v;
    }
    v.feedback = f->get<std::string>();
  }
  return v;
}

Transition apply_verdict(json& state, const std::string& gate_id, const ApproverVerdict& v, const std::string& by,
                         const std::string& digest, const std::string& now, const json& covers,
                         const std::string& project, const seal::Key* key) {
  Transition t;
  const json* cur = find_gate(state, gate_id);
  if (!cur) {
    t.error = "No gate '" + gate_id + "'";
    return t;
  }
  if (!is_open(*cur)) {
    t.gate = *cur;
    t.message = "Gate " + gate_id + " is already " + str(*cur, "status") + "; the approver's verdict was not applied";
    t.outcome = Outcome::NotApplied;
    return t;
  }
  std::string type = str(*cur, "gate_type");
  auto record_error = [&](const std::string& error) {
    Transition e;
    json doc = state;
    json* g = find_gate_mut(doc, gate_id);
    (*g)["last_error"] = error;
    e.gate = *g;
    e.events.push_back(gate_event(doc, "gate_error", *g, {{"error", error}}));
    e.changed = true;
    e.message = label(type) + " gate " + gate_id + ": approver failed: " + error +
                " (the gate stays pending; approving it retries the approver)";
    e.outcome = Outcome::ApproverFailed;
    state = std::move(doc);
    return e;
  };
  if (!v.error.empty()) return record_error(v.error);
  ResolveInput in{gate_id, by, digest, v.feedback, now};
  in.covers = covers;
  in.project = project;
  in.key = key;
  switch (v.decision) {
    case Decision::Approved: {
      t = approve(state, in);
      if (!t.ok()) return record_error(t.error);
      return t;
    }
    case Decision::Rejected: {
      if (text::trim(in.feedback).empty()) in.feedback = "rejected by " + by;
      t = reject(state, in);
      if (!t.ok()) return record_error(t.error);
      return t;
    }
    case Decision::Pending:
      break;
  }
  json doc = state;
  json* g = find_gate_mut(doc, gate_id);
  bool changed = !(*g)["last_error"].is_null();
  (*g)["last_error"] = nullptr;
  if (!v.feedback.empty()) {
    changed = changed || str(*g, "feedback") != v.feedback;
    (*g)["feedback"] = v.feedback;
  }
  t.gate = *g;
  t.changed = changed;
  t.message = label(type) + " gate " + gate_id + ": approver says pending" +
              (v.feedback.empty() ? "" : " (" + v.feedback + ")") + "; waiting for a person";
  t.outcome = Outcome::Pending;
  if (changed) state = std::move(doc);
  return t;
}

}  // namespace yolo::gates
