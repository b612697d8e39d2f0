#include "protocol/gates/gates.h"

#include <algorithm>
#include <set>

#include "protocol/gates/gates_detail.h"
#include "protocol/ports/clock.h"  // new_uuid
#include "protocol/base/json_field.h"
#include "protocol/base/seal.h"
#include "protocol/state/audit.h"
#include "protocol/base/text.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;

// ---- vocabulary --------------------------------------------------------------------

namespace {

struct GateTypeInfo {
  GateType type;
  std::string_view name, label;
};
// Every gate kind, once.
constexpr GateTypeInfo kGateTypes[] = {
    {GateType::Vision, "vision", "Vision"},
    {GateType::Wave, "wave", "Wave"},
    {GateType::Security, "security", "Security"},
    {GateType::ScopeChange, "scope_change", "Scope change"},
    {GateType::Budget, "budget", "Budget"},
};

const GateTypeInfo& info(GateType t) {
  for (const auto& i : kGateTypes)
    if (i.type == t) return i;
  return kGateTypes[0];
}

}  // namespace

std::string_view to_string(GateType t) { return info(t).name; }
std::string_view label(GateType t) { return info(t).label; }

std::optional<GateType> parse_gate_type(std::string_view s) {
  for (const auto& i : kGateTypes)
    if (i.name == s) return i.type;
  return std::nullopt;
}

std::string_view label_of(std::string_view gate_type) {
  auto t = parse_gate_type(gate_type);
  return t ? label(*t) : std::string_view("Approval");
}

std::string gate_type_names() {
  std::string out;
  size_t n = std::size(kGateTypes);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    out += kGateTypes[i].name;
  }
  return out;
}

const char* answer_name(Answer a) {
  switch (a) {
    case Answer::Paused: return "paused";
    case Answer::Approved: return "approved";
    case Answer::Rejected: return "rejected";
  }
  return "rejected";
}

Answer answer_of(const json& answer) {
  const std::string s = answer.is_object() ? json_field::str(answer, "status") : std::string();
  return s == answer_name(Answer::Paused) ? Answer::Paused : s == answer_name(Answer::Approved) ? Answer::Approved : Answer::Rejected;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::Paused:
      return "paused";
    case Outcome::Cleared:
      return "cleared";
    case Outcome::Rejected:
      return "rejected";
    case Outcome::Pending:
      return "pending";
    case Outcome::Waiting:
      return "waiting";
    case Outcome::ApproverFailed:
      return "approver_failed";
    case Outcome::Retrying:
      return "retrying";
    case Outcome::NotApplied:
      return "not_applied";
    case Outcome::Warning:
      return "warning";
  }
  return "warning";
}

std::vector<std::string> texts(const std::vector<Message>& messages) {
  std::vector<std::string> out;
  out.reserve(messages.size());
  for (const auto& m : messages) out.push_back(m.text);
  return out;
}

std::string_view to_string(RunState s) {
  switch (s) {
    case RunState::Running:
      return "RUNNING";
    case RunState::Frozen:
      return "FROZEN";
    case RunState::Halted:
      return "HALTED";
    case RunState::Complete:
      return "COMPLETE";
  }
  return "RUNNING";
}

// ---- shared by the gate modules (gates_detail.h) ----------------------------------------

namespace detail {

using json_field::str;

bool is_open(const json& g) { return str(g, "status") == kOpen; }

// "Vision", "Security", "Scope change" for messages (an empty type is a legacy vision gate).
std::string label(const std::string& type) {
  return std::string(type.empty() ? gates::label(GateType::Vision) : label_of(type));
}

json& gates_array(json& doc) {
  if (!doc.is_object()) doc = json::object();
  auto it = doc.find("gates");
  if (it == doc.end() || !it->is_array()) doc["gates"] = json::array();
  return doc["gates"];
}

json* find_gate_mut(json& doc, const std::string& id) {
  auto& gs = gates_array(doc);
  for (auto& g : gs)
    if (str(g, "id") == id) return &g;
  return nullptr;
}

std::string describe_gate(const json& g) {
  std::string s = "gate " + str(g, "id") + " (" + str(g, "gate_type");
  if (!str(g, "plan_path").empty()) s += " for " + str(g, "plan_path");
  return s + ")";
}

std::string new_gate_id(const json& doc, GateType t) {
  size_t n = 1;
  if (doc.contains("gates") && doc["gates"].is_array()) n = doc["gates"].size() + 1;
  while (true) {
    std::string id = std::string(to_string(t)) + "-" + std::to_string(n);
    if (!find_gate(doc, id)) return id;
    ++n;
  }
}

bool valid_digest(const std::string& d) {
  if (d.size() != 7 + 64 || d.rfind("sha256:", 0) != 0) return false;
  return std::all_of(d.begin() + 7, d.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string short_digest(const std::string& d) { return d.size() > 19 ? d.substr(0, 19) + "…" : d; }

bool approval_belongs_to(const json& doc, const json& g) {
  auto it = doc.find("approval");
  if (it == doc.end() || !it->is_object()) return false;
  std::string gid = str(*it, "gate_id");
  if (!gid.empty()) return gid == str(g, "id");
  return str(*it, "plan_path") == str(g, "plan_path");
}

json paused_answer(const json& g, const std::string& state_file) {
  return {{"status", answer_name(Answer::Paused)},
          {"approval",
           {{"requested_at", str(g, "created_at")}, {"plan_path", str(g, "plan_path")}, {"state_file", state_file}}},
          {"gate_id", str(g, "id")},
          {"gate_type", str(g, "gate_type")}};
}

// Finds the gate a resolution is about; error sentence when there is none to resolve.
Result<json*> resolve_target(json& doc, const std::string& gate_id) {
  if (gate_id.empty()) {
    for (auto& g : gates_array(doc))
      if (is_open(g)) return &g;
    return Status::fail("No pending approval to resolve");
  }
  json* g = find_gate_mut(doc, gate_id);
  if (!g) {
    const json* open = open_gate(doc);
    std::string err = "No pending approval to resolve: there is no gate '" + gate_id + "'";
    if (open) err += " (the open gate is " + str(*open, "id") + ")";
    return Status::fail(err);
  }
  if (!is_open(*g)) {
    std::string err = "No pending approval to resolve: gate " + gate_id + " is " + str(*g, "status");
    if (!str(*g, "resolved_at").empty()) err += " since " + str(*g, "resolved_at");
    if (!str(*g, "approved_by").empty()) err += " (by " + str(*g, "approved_by") + ")";
    return Status::fail(err);
  }
  return g;
}

}  // namespace detail

using json_field::str;
using namespace detail;

RunState run_state(const json& state) {
  std::string status = str(state, "status");
  if (status == "complete") return RunState::Complete;
  if (open_gate(state)) return RunState::Frozen;
  if (status == "halted") return RunState::Halted;
  if (status == kAwaiting) return RunState::Frozen;
  return RunState::Running;
}

const json* find_gate(const json& state, const std::string& gate_id) {
  if (!state.is_object()) return nullptr;
  auto it = state.find("gates");
  if (it == state.end() || !it->is_array()) return nullptr;
  for (const auto& g : *it)
    if (str(g, "id") == gate_id) return &g;
  return nullptr;
}

const json* open_gate(const json& state) {
  if (!state.is_object()) return nullptr;
  auto it = state.find("gates");
  if (it == state.end() || !it->is_array()) return nullptr;
  for (const auto& g : *it)
    if (is_open(g)) return &g;
  return nullptr;
}

std::vector<json> list_gates(const json& state, bool open_only) {
  std::vector<json> r;
  json doc = state.is_object() ? state : json::object();
  adopt_legacy_approval(doc, "");  // a pending approval of another tool shows as a gate (a copy)
  if (auto it = doc.find("gates"); it != doc.end() && it->is_array())
    for (const auto& g : *it)
      if (!open_only || is_open(g)) r.push_back(g);
  return r;
}

std::vector<std::string> gate_list_problems(const json& state) {
  std::vector<std::string> out;
  if (!state.is_object() || !state.contains("gates") || !state["gates"].is_array()) return out;
  std::set<std::string> seen, dup;
  int open = 0;
  for (const auto& g : state["gates"]) {
    std::string id = str(g, "id");
    if (!seen.insert(id).second && dup.insert(id).second)
      out.push_back("gate id '" + id + "' appears more than once in gates");
    if (is_open(g)) ++open;
  }
  if (open > 1) out.push_back(std::to_string(open) + " gates are OPEN at once (at most one can be)");
  return out;
}

// ---- events --------------------------------------------------------------------------

events::Event gate_event(const json& state, const std::string& type, const json& gate, json extra) {
  events::Event e;
  e.type = type;
  if (state.is_object() && state.contains("phase") && state["phase"].is_number_integer())
    e.phase = state["phase"].get<long long>();
  e.correlation_id = str(state, "correlation_id");
  e.data = {{"gate_id", str(gate, "id")}, {"gate_type", str(gate, "gate_type")}, {"plan_path", str(gate, "plan_path")}};
  if (extra.is_object())
    for (auto& [k, v] : extra.items()) e.data[k] = v;
  return e;
}

Status log_events(const World& w, const stdfs::path& root, const std::vector<events::Event>& evs, bool to_audit) {
  // Every gate transition also goes to the hash-chained audit log (protocol/state/audit.h), unless
  // the caller appended them there already (with the state's update, to anchor its head).
  std::string first = to_audit ? audit::append(w, root, evs).error : std::string();
  if (!first.empty()) first = "audit log: " + first;
  for (const auto& e : evs) {
    auto r = events::log_always(w, root, e);
    if (!r.written && first.empty()) first = r.reason;
  }
  return Status{first};
}

// ---- transitions -------------------------------------------------------------------------

bool adopt_legacy_approval(json& state, const std::string& now) {
  if (!state.is_object()) return false;
  auto it = state.find("approval");
  if (it == state.end() || !it->is_object()) return false;
  const json& a = *it;
  if (!a.contains("approved") || !a["approved"].is_boolean() || a["approved"].get<bool>()) return false;
  if (str(a, "plan_path").empty()) return false;
  if (open_gate(state)) return false;
  std::string gid = str(a, "gate_id");
  if (!gid.empty() && find_gate(state, gid)) return false;  // already tracked (e.g. rejected)
  GateType t = parse_gate_type(str(a, "gate_type")).value_or(GateType::Vision);
  if (gid.empty()) gid = new_gate_id(state, t);
  std::string created = str(a, "requested_at");
  if (created.empty()) created = now;
  json g = {{"id", gid},
            {"gate_type", std::string(to_string(t))},
            {"plan_path", str(a, "plan_path")},
            {"status", kOpen},
            {"created_at", created},
            {"resolved_at", nullptr},
            {"feedback", nullptr},
            {"approved_by", nullptr},
            {"digest", nullptr},
            {"last_error", nullptr}};
  gates_array(state).push_back(std::move(g));
  state["approval"]["gate_id"] = gid;
  if (!state["approval"].contains("gate_type")) state["approval"]["gate_type"] = std::string(to_string(t));
  return true;
}

Transition request(json& state, const RequestInput& in) {
  Transition t;
  if (in.plan_path.empty()) {
    t.error = "Cannot request approval: plan_path is empty";
    return t;
  }
  if (in.now.empty()) {
    t.error = "Cannot request approval: no time was given";
    return t;
  }
  json doc = state.is_object() ? state : json::object();
  const std::string& now = in.now;
  adopt_legacy_approval(doc, now);
  std::string type(to_string(in.type));
  if (run_state(doc) == RunState::Complete) {
    t.error = "Cannot freeze: the run is complete (status: complete)";
    return t;
  }
  if (const json* g = open_gate(doc)) {
    if (str(*g, "gate_type") == type && str(*g, "plan_path") == in.plan_path) {
      t.gate = *g;
      t.answer = paused_answer(*g, in.state_file);
      t.message = label(type) + " gate: Awaiting human approval for " + in.plan_path + ". Execution paused.";
      t.outcome = Outcome::Paused;
      state = std::move(doc);  // an adopted legacy approval is kept (harmless, idempotent)
      return t;
    }
    t.error = "Cannot freeze: already frozen: " + describe_gate(*g) + " is open; approve or reject it first";
    return t;
  }
  json g = {{"id", new_gate_id(doc, in.type)},
            {"gate_type", type},
            {"plan_path", in.plan_path},
            {"status", kOpen},
            {"created_at", now},
            {"resolved_at", nullptr},
            {"feedback", nullptr},
            {"approved_by", nullptr},
            {"digest", nullptr},
            {"last_error", nullptr}};
  if (!in.reason.empty()) g["reason"] = in.reason;
  if (in.wave && *in.wave >= 1) g["wave"] = *in.wave;
  if (str(doc, "correlation_id").empty()) doc["correlation_id"] = new_uuid();
  if (in.covers.is_object()) {
    g["covers"] = in.covers;
    g["project"] = in.project;
    g["run"] = str(doc, "correlation_id");
  }
  gates_array(doc).push_back(g);
  doc["status"] = kAwaiting;
  doc["approval"] = {{"requested_at", now},    {"plan_path", in.plan_path}, {"approved", false},
                     {"approved_at", nullptr}, {"approved_by", nullptr},    {"gate_type", type},
                     {"digest", nullptr},      {"gate_id", str(g, "id")}};
  if (str(doc, "correlation_id").empty()) doc["correlation_id"] = new_uuid();
  json extra = json::object();
  if (!in.reason.empty()) extra["reason"] = in.reason;
  if (g.contains("covers")) extra["covers"] = g["covers"];
  t.events.push_back(gate_event(doc, "gate_frozen", g, extra));
  t.gate = g;
  t.answer = paused_answer(g, in.state_file);
  t.changed = true;
  t.message = label(type) + " gate: Awaiting human approval for " + in.plan_path + ". Execution paused.";
  t.outcome = Outcome::Paused;
  state = std::move(doc);
  return t;
}

namespace {
// The document an approval or a rejection works on: a copy of the state (an object), a legacy
// approval object adopted as a gate.
json resolution_doc(const json& state, const std::string& now) {
  json doc = state.is_object() ? state : json::object();
  adopt_legacy_approval(doc, now);
  return doc;
}
}  // namespace

Transition approve(json& state, const ResolveInput& in) {
  Transition t;
  if (in.now.empty()) {
    t.error = "Cannot resolve the gate: no time was given";
    return t;
  }
  const std::string& now = in.now;
  json doc = resolution_doc(state, now);
  auto target = resolve_target(doc, in.gate_id);
  if (!target.ok()) {
    t.error = target.error;
    return t;
  }
  json* g = *target;
  if (in.by.empty()) {
    t.error = "Cannot approve " + describe_gate(*g) + ": who approves is unknown (approved_by is empty)";
    return t;
  }
  if (!valid_digest(in.digest)) {
    t.error = "Cannot approve " + describe_gate(*g) + ": no valid digest of " + str(*g, "plan_path") +
              (in.digest.empty() ? std::string(" (the file could not be read)") : " (got '" + in.digest + "')");
    return t;
  }
  json covers = in.covers.is_object() ? in.covers : json{{"file:" + str(*g, "plan_path"), in.digest}};
  if (auto it = g->find("covers"); it != g->end() && it->is_object() && *it != covers) {
    std::string changes;
    for (const auto& c : coverage_changes(*it, covers, /*digests=*/false)) changes += (changes.empty() ? "" : "; ") + c;
    t.error = "Not approved: what " + describe_gate(*g) + " covers changed since it opened (" + changes +
              "): read it again and approve what it holds now";
    return t;
  }
  if (!in.project.empty() && !str(*g, "project").empty() && str(*g, "project") != in.project) {
    t.error = "Not approved: " + describe_gate(*g) + " was opened in another project (" + str(*g, "project") + ")";
    return t;
  }
  if (!str(*g, "run").empty() && str(*g, "run") != str(doc, "correlation_id")) {
    t.error = "Not approved: " + describe_gate(*g) + " was opened in another run (" + str(*g, "run") + ")";
    return t;
  }
  static const seal::Key none{{}, "no approval key was given"};
  const seal::Key& k = in.key ? *in.key : none;
  if (!k.ok()) {
    t.error = "Cannot approve " + describe_gate(*g) + ": an approval must be sealed and " + k.error;
    return t;
  }
  if (str(doc, "correlation_id").empty()) doc["correlation_id"] = new_uuid();
  (*g)["covers"] = covers;
  if (str(*g, "project").empty()) (*g)["project"] = in.project;
  (*g)["run"] = str(doc, "correlation_id");
  (*g)["status"] = kApproved;
  (*g)["resolved_at"] = now;
  (*g)["approved_by"] = in.by;
  (*g)["digest"] = in.digest;
  (*g)["last_error"] = nullptr;
  if (!in.feedback.empty()) (*g)["feedback"] = in.feedback;
  if (in.override_approver) (*g)["override"] = true;
  (*g)["seal"] = seal::compute(*g, k);
  json gate = *g;
  if (approval_belongs_to(doc, gate)) {
    json& a = doc["approval"];
    a["approved"] = true;
    a["approved_at"] = now;
    a["approved_by"] = in.by;
    a["digest"] = in.digest;
  }
  std::string status = str(doc, "status");
  if (status == kAwaiting || status == "halted" || status.empty()) doc["status"] = "running";
  t.events.push_back(
      gate_event(doc, "gate_resumed", gate,
                 {{"approved_by", in.by}, {"digest", in.digest}, {"covers", gate["covers"]}, {"seal", gate["seal"]}}));
  t.gate = gate;
  t.changed = true;
  t.message = label(str(gate, "gate_type")) + " gate: cleared (" + str(gate, "id") + " approved by " + in.by +
              (in.override_approver ? " in place of its failing approver" : "") + ")";
  t.outcome = Outcome::Cleared;
  state = std::move(doc);
  return t;
}

Transition reject(json& state, const ResolveInput& in) {
  Transition t;
  if (in.now.empty()) {
    t.error = "Cannot resolve the gate: no time was given";
    return t;
  }
  const std::string& now = in.now;
  json doc = resolution_doc(state, now);
  auto target = resolve_target(doc, in.gate_id);
  if (!target.ok()) {
    t.error = target.error;
    return t;
  }
  json* g = *target;
  std::string feedback(text::trim(in.feedback));
  if (feedback.empty()) {
    t.error = "Cannot reject " + describe_gate(*g) + " without feedback: say what to change";
    return t;
  }
  (*g)["status"] = kRejected;
  (*g)["resolved_at"] = now;
  (*g)["feedback"] = feedback;
  (*g)["last_error"] = nullptr;
  if (!in.by.empty()) (*g)["rejected_by"] = in.by;
  json gate = *g;
  if (approval_belongs_to(doc, gate)) doc["approval"]["approved"] = false;
  doc["status"] = "halted";
  json extra = {{"feedback", feedback}};
  if (!in.by.empty()) extra["rejected_by"] = in.by;
  t.events.push_back(gate_event(doc, "gate_rejected", gate, extra));
  t.gate = gate;
  t.changed = true;
  t.message = label(str(gate, "gate_type")) + " gate: rejected (" + str(gate, "id") +
              (in.by.empty() ? "" : " by " + in.by) + "); run halted. Feedback: " + feedback;
  t.outcome = Outcome::Rejected;
  state = std::move(doc);
  return t;
}

Transition refresh_covers(json& state, const std::string& gate_id, const json& covers, const std::string& now) {
  Transition t;
  json doc = state;
  json* g = find_gate_mut(doc, gate_id);
  if (!g || !is_open(*g)) {
    t.error = "No pending approval to resolve: " +
              (g ? "gate " + gate_id + " is " + str(*g, "status") : "there is no gate '" + gate_id + "'");
    return t;
  }
  t.gate = *g;
  json before = g->contains("covers") ? (*g)["covers"] : json(nullptr);
  if (before == covers) return t;
  auto changes = coverage_changes(before, covers);
  (*g)["covers"] = covers;
  (*g)["covers_changed_at"] = now;
  t.events.push_back(gate_event(doc, "gate_content_changed", *g, {{"changes", changes}}));
  t.gate = *g;
  t.changed = true;
  std::string list;
  for (const auto& c : changes) list += (list.empty() ? "" : "; ") + c;
  t.message = "what " + describe_gate(*g) + " covers changed since it opened (" + list + ")";
  state = std::move(doc);
  return t;
}

// ---- resume rules ---------------------------------------------------------------------

RunState resume(json& state, const std::string& new_correlation_id) {
  if (!state.is_object()) state = json::object();
  if (str(state, "correlation_id").empty() && !new_correlation_id.empty()) state["correlation_id"] = new_correlation_id;
  if (str(state, "status").empty()) state["status"] = "running";
  return run_state(state);
}

Status set_running(json& state) {
  switch (run_state(state)) {
    case RunState::Frozen: {
      const json* g = open_gate(state);
      if (g)
        return Status::fail("Cannot resume: awaiting approval of " + describe_gate(*g) +
                            "; only an approval resumes the run");
      return Status::fail("Cannot resume: the run is awaiting approval; only an approval resumes the run");
    }
    case RunState::Halted:
      return Status::fail(
          "Cannot resume: the run is halted (a gate was rejected); revise and request approval again");
    case RunState::Complete:
      return Status::fail("Cannot resume: the run is complete");
    case RunState::Running:
      break;
  }
  if (!state.is_object()) state = json::object();
  state["status"] = "running";
  return {};
}

bool waves_may_advance(const json& state) {
  if (!state.is_object()) return false;
  auto it = state.find("approval");
  if (it == state.end() || !it->is_object()) return false;
  auto a = it->find("approved");
  if (a == it->end() || !a->is_boolean() || !a->get<bool>()) return false;
  return run_state(state) == RunState::Running;
}

std::vector<std::string> coverage_changes(const json& before, const json& after, bool digests) {
  std::vector<std::string> out;
  json b = before.is_object() ? before : json::object(), a = after.is_object() ? after : json::object();
  auto name = [](const std::string& k) {
    if (k.rfind("file:", 0) == 0) return k.substr(5);
    if (k.rfind("config:", 0) == 0) return "config key " + k.substr(7);
    if (k.rfind("waves:", 0) == 0) return "the plan -> wave map of phase " + k.substr(6);
    return k;
  };
  auto val = [](const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  auto d = [&](const std::string& s) { return digests ? " (" + short_digest(s) + ")" : std::string(); };
  for (auto& [k, v] : a.items()) {
    auto it = b.find(k);
    if (it == b.end())
      out.push_back(name(k) + " added" + d(val(v)));
    else if (*it != v) {
      std::string was = val(*it), now = val(v);
      if (now == "absent")
        out.push_back(name(k) + " removed");
      else if (was == "absent")
        out.push_back(name(k) + " set" + d(now));
      else
        out.push_back(name(k) + " changed" +
                      (digests ? " (" + short_digest(was) + " -> " + short_digest(now) + ")" : std::string()));
    }
  }
  for (auto& [k, v] : b.items())
    if (!a.contains(k)) out.push_back(name(k) + " no longer covered");
  return out;
}

}  // namespace yolo::gates
