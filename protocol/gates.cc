#include "protocol/gates.h"

#include <algorithm>
#include <set>

#include "protocol/audit.h"
#include "protocol/clock.h"
#include "protocol/contain.h"
#include "protocol/fs.h"
#include "protocol/json_field.h"
#include "protocol/seal.h"
#include "protocol/sha256.h"
#include "protocol/state.h"
#include "protocol/text.h"

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

std::string_view to_string(GateStatus s) {
  switch (s) {
    case GateStatus::Open:
      return "OPEN";
    case GateStatus::Approved:
      return "APPROVED";
    case GateStatus::Rejected:
      return "REJECTED";
  }
  return "OPEN";
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

namespace {

constexpr const char* kOpen = "OPEN";
constexpr const char* kApproved = "APPROVED";
constexpr const char* kRejected = "REJECTED";
constexpr const char* kAwaiting = "awaiting_approval";

using json_field::str;

bool is_open(const json& g) { return str(g, "status") == kOpen; }

std::string now_or(const std::string& now) { return now.empty() ? now_iso8601() : now; }

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
  return {{"status", "paused"},
          {"approval",
           {{"requested_at", str(g, "created_at")}, {"plan_path", str(g, "plan_path")}, {"state_file", state_file}}},
          {"gate_id", str(g, "id")},
          {"gate_type", str(g, "gate_type")}};
}

// Finds the gate a resolution is about; error sentence when there is none to resolve.
json* resolve_target(json& doc, const std::string& gate_id, std::string& err) {
  if (gate_id.empty()) {
    for (auto& g : gates_array(doc))
      if (is_open(g)) return &g;
    err = "No pending approval to resolve";
    return nullptr;
  }
  json* g = find_gate_mut(doc, gate_id);
  if (!g) {
    const json* open = open_gate(doc);
    err = "No pending approval to resolve: there is no gate '" + gate_id + "'";
    if (open) err += " (the open gate is " + str(*open, "id") + ")";
    return nullptr;
  }
  if (!is_open(*g)) {
    err = "No pending approval to resolve: gate " + gate_id + " is " + str(*g, "status");
    if (!str(*g, "resolved_at").empty()) err += " since " + str(*g, "resolved_at");
    if (!str(*g, "approved_by").empty()) err += " (by " + str(*g, "approved_by") + ")";
    return nullptr;
  }
  return g;
}

}  // namespace

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
  adopt_legacy_approval(doc);  // a pending approval of another tool shows as a gate
  if (auto it = doc.find("gates"); it != doc.end() && it->is_array())
    for (const auto& g : *it)
      if (!open_only || is_open(g)) r.push_back(g);
  return r;
}

// ---- what a gate covers ----------------------------------------------------------------

const std::vector<std::string>& gate_config_keys() {
  static const std::vector<std::string> keys = {
      "approvers",      "review_gate",     "reviewer",      "architect",         "executor",
      "summary_checks", "mcp_can_approve", "wave_approval", "review_max_cycles", "command_timeout_ms"};
  return keys;
}

json coverage(const stdfs::path& root, GateType type, const std::vector<std::string>& files) {
  json c = json::object();
  for (const auto& f : files) {
    if (f.empty()) continue;
    std::string err;
    std::string rel = normalize_plan_path(root, f, err);
    std::string d = rel.empty() ? std::string() : file_digest(root, rel, err);
    c["file:" + (rel.empty() ? f : rel)] = d.empty() ? "absent" : d;
  }
  if (type == GateType::Vision) {
    auto r = fs::read_bytes(root / ".yolo-planning" / "config.json", 16u << 20);
    json cfg = json::object();
    if (r.ok()) {
      JsonParse parsed = parse_json_bounded(r.content);
      if (!parsed.ok() || !parsed.doc.is_object()) {
        c["config:config.json"] = sha256_digest(r.content);
        return c;
      }
      cfg = std::move(parsed.doc);
    }
    for (const auto& k : gate_config_keys()) {
      auto it = cfg.find(k);
      c["config:" + k] = it == cfg.end() ? std::string("absent")
                                         : sha256_digest(it->dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  return c;
}

std::vector<std::string> covered_files(const json& gate) {
  std::vector<std::string> files;
  std::string plan = str(gate, "plan_path");
  if (!plan.empty()) files.push_back(plan);
  if (gate.is_object())
    if (auto it = gate.find("covers"); it != gate.end() && it->is_object())
      for (auto& [k, v] : it->items())
        if (k.rfind("file:", 0) == 0 && k.substr(5) != plan) files.push_back(k.substr(5));
  return files;
}

std::vector<std::string> coverage_changes(const json& before, const json& after) {
  std::vector<std::string> out;
  json b = before.is_object() ? before : json::object(), a = after.is_object() ? after : json::object();
  auto name = [](const std::string& k) {
    if (k.rfind("file:", 0) == 0) return k.substr(5);
    if (k.rfind("config:", 0) == 0) return "config key " + k.substr(7);
    return k;
  };
  auto val = [](const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  for (auto& [k, v] : a.items()) {
    auto it = b.find(k);
    if (it == b.end())
      out.push_back(name(k) + " added (" + short_digest(val(v)) + ")");
    else if (*it != v) {
      std::string was = val(*it), now = val(v);
      if (now == "absent")
        out.push_back(name(k) + " removed");
      else if (was == "absent")
        out.push_back(name(k) + " set (" + short_digest(now) + ")");
      else
        out.push_back(name(k) + " changed (" + short_digest(was) + " -> " + short_digest(now) + ")");
    }
  }
  for (auto& [k, v] : b.items())
    if (!a.contains(k)) out.push_back(name(k) + " no longer covered");
  return out;
}

std::string project_id(const stdfs::path& root) {
  std::error_code ec;
  stdfs::path p = stdfs::weakly_canonical(root, ec);
  if (ec) p = stdfs::absolute(root, ec).lexically_normal();
  return p.generic_string();
}

namespace {
std::function<bool(const stdfs::path&)>& sig_required() {
  static std::function<bool(const stdfs::path&)> f;
  return f;
}
std::function<std::string(const stdfs::path&, const json&)>& sig_check() {
  static std::function<std::string(const stdfs::path&, const json&)> f;
  return f;
}
}  // namespace

void use_signatures(std::function<bool(const stdfs::path& root)> required,
                    std::function<std::string(const stdfs::path& root, const json& gate)> check) {
  sig_required() = std::move(required);
  sig_check() = std::move(check);
}

Now now_of(const stdfs::path& root) {
  Now n;
  n.project = project_id(root);
  n.covers = [root](GateType t, const std::vector<std::string>& files) { return coverage(root, t, files); };
  if (sig_required() && sig_check()) {
    n.signatures_required = sig_required()(root);
    auto check = sig_check();
    n.signature_problem = [root, check](const json& g) { return check(root, g); };
  }
  return n;
}

Now now_with_digest(const std::string& plan_path, const std::string& digest) {
  Now n;
  n.covers = [plan_path, digest](GateType, const std::vector<std::string>&) {
    return json{{"file:" + plan_path, digest.empty() ? std::string("absent") : digest}};
  };
  return n;
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

std::string log_events(const stdfs::path& root, const std::vector<events::Event>& evs) {
  // Every gate transition also goes to the hash-chained audit log (protocol/audit.h).
  std::string first = audit::append(root, evs);
  if (!first.empty()) first = "audit log: " + first;
  for (const auto& e : evs) {
    auto w = events::log_always(root, e);
    if (!w.written && first.empty()) first = w.reason;
  }
  return first;
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
  if (created.empty()) created = now_or(now);
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
  json doc = state.is_object() ? state : json::object();
  std::string now = now_or(in.now);
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

Transition approve(json& state, const ResolveInput& in) {
  Transition t;
  json doc = state.is_object() ? state : json::object();
  std::string now = now_or(in.now);
  adopt_legacy_approval(doc, now);
  json* g = resolve_target(doc, in.gate_id, t.error);
  if (!g) return t;
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
    for (const auto& c : coverage_changes(*it, covers)) changes += (changes.empty() ? "" : "; ") + c;
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
  if (const seal::Key& k = seal::key(); !k.ok()) {
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
  (*g)["seal"] = seal::compute(*g);
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
  json doc = state.is_object() ? state : json::object();
  std::string now = now_or(in.now);
  adopt_legacy_approval(doc, now);
  json* g = resolve_target(doc, in.gate_id, t.error);
  if (!g) return t;
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

// ---- resume rules ---------------------------------------------------------------------

RunState resume(json& state, const std::string& new_correlation_id) {
  if (!state.is_object()) state = json::object();
  if (str(state, "correlation_id").empty() && !new_correlation_id.empty()) state["correlation_id"] = new_correlation_id;
  if (str(state, "status").empty()) state["status"] = "running";
  return run_state(state);
}

std::string set_running(json& state) {
  switch (run_state(state)) {
    case RunState::Frozen: {
      const json* g = open_gate(state);
      if (g) return "Cannot resume: awaiting approval of " + describe_gate(*g) + "; only an approval resumes the run";
      return "Cannot resume: the run is awaiting approval; only an approval resumes the run";
    }
    case RunState::Halted:
      return "Cannot resume: the run is halted (a gate was rejected); revise and request approval again";
    case RunState::Complete:
      return "Cannot resume: the run is complete";
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

// ---- approvals and digests ----------------------------------------------------------

namespace {
// An approval yolo did not record (no seal, or one that does not match its fields under
// this machine's key): it does not count, and the gate opens again like a stale one.
ApprovalStatus& unsealed(ApprovalStatus& st, const std::string& tname, const std::string& plan_path,
                         const std::string& who, const std::string& when) {
  st.check = ApprovalCheck::Stale;
  std::string by = who.empty() ? std::string() : " by " + who;
  std::string at = when.empty() ? std::string() : " at " + when;
  st.message = "the approval of " + plan_path + by + at +
               " carries no valid seal: it was not recorded by `yolo approve` " +
               "or an approver on this machine (written by hand or by another tool?), so it does not count and the " +
               tname + " gate is open again";
  return st;
}
}  // namespace

namespace {
// An APPROVED gate against now: sealed, bound to this project and run, covering what it
// covers now. `files`: the files it must cover (empty: the ones it covered).
ApprovalStatus check_approved(const json& state, const json& g, const Now& now, const std::vector<std::string>& files) {
  ApprovalStatus st;
  st.gate = g;
  std::string tname = str(g, "gate_type"), plan_path = str(g, "plan_path");
  GateType type = parse_gate_type(tname).value_or(GateType::Vision);
  std::string who = str(g, "approved_by"), when = str(g, "resolved_at");
  std::string by = who.empty() ? std::string() : " by " + who;
  std::string at = when.empty() ? std::string() : " at " + when;
  auto stale = [&](const std::string& why) {
    st.check = ApprovalCheck::Stale;
    st.message =
        why + ": the approval of " + plan_path + by + at + " no longer counts and the " + tname + " gate is open again";
    return st;
  };
  bool is_signed = g.contains("ssh_signature") && now.signature_problem;
  if (now.signatures_required && !is_signed)
    return stale("it carries no SSH signature, and this project's .yolo-planning/allowed_signers requires one");
  if (is_signed) {
    // The signature binds the project's first commit: it counts in any clone of it.
    if (std::string why = now.signature_problem(g); !why.empty()) return stale(why);
  } else {
    if (!seal::valid(g)) return unsealed(st, tname, plan_path, who, when);
  }
  auto cit = g.find("covers");
  if (cit == g.end() || !cit->is_object()) return stale("it does not record what it covers (made by an older yolo)");
  if (!is_signed && str(g, "project") != now.project)
    return stale("it was made in another project (" + str(g, "project") + "), not in " + now.project);
  if (str(g, "run") != str(state, "correlation_id"))
    return stale("it was made in another run (" + str(g, "run") + "), not in this one (" +
                 str(state, "correlation_id") + ")");
  json current = now.covers ? now.covers(type, files.empty() ? covered_files(g) : files) : json::object();
  if (current != *cit) {
    st.check = ApprovalCheck::Stale;
    const std::string key = "file:" + plan_path;
    json was = *cit, now_c = current;
    std::string before = was.contains(key) && was[key].is_string() ? was[key].get<std::string>() : std::string();
    std::string after = now_c.contains(key) && now_c[key].is_string() ? now_c[key].get<std::string>() : std::string();
    was.erase(key);
    now_c.erase(key);
    if (was == now_c && after == "absent") {
      st.message = plan_path + " cannot be read any more since it was approved" + by + at +
                   ": the approval no longer counts and the " + tname + " gate is open again";
    } else if (was == now_c) {  // only the gate's own file changed
      st.message = plan_path + " changed after it was approved" + by + at + " (approved " + short_digest(before) +
                   ", now " + short_digest(after) + "): the approval no longer counts and the " + tname +
                   " gate is open again";
    } else {
      std::string changes;
      for (const auto& c : coverage_changes(*cit, current)) changes += (changes.empty() ? "" : "; ") + c;
      st.message = "what it covers changed after it was approved" + by + at + " (" + changes +
                   "): the approval no longer counts and the " + tname + " gate is open again";
    }
    return st;
  }
  st.check = ApprovalCheck::Approved;
  return st;
}
}  // namespace

ApprovalStatus gate_status(const json& state, const json& gate, const Now& now) {
  ApprovalStatus st;
  st.gate = gate;
  std::string s = str(gate, "status"), tname = str(gate, "gate_type"), plan_path = str(gate, "plan_path");
  if (s == kOpen) {
    st.check = ApprovalCheck::Pending;
    st.message = label(tname) + " gate " + str(gate, "id") + " for " + plan_path + " is awaiting approval";
    return st;
  }
  if (s == kRejected) {
    st.check = ApprovalCheck::Rejected;
    st.message =
        label(tname) + " gate " + str(gate, "id") + " for " + plan_path + " was rejected: " + str(gate, "feedback");
    return st;
  }
  return check_approved(state, gate, now, {});
}

ApprovalStatus approval_status(const json& state, GateType type, const std::string& plan_path, const Now& now,
                               const std::vector<std::string>& files) {
  ApprovalStatus st;
  std::string tname(to_string(type));
  const json* latest = nullptr;
  if (state.is_object() && state.contains("gates") && state["gates"].is_array())
    for (const auto& g : state["gates"])
      if (str(g, "gate_type") == tname && str(g, "plan_path") == plan_path) latest = &g;
  if (latest) {
    if (str(*latest, "status") != kApproved) {
      st = gate_status(state, *latest, now);
      if (st.check == ApprovalCheck::Pending && !str(*latest, "last_error").empty())
        st.message += " (approver error: " + str(*latest, "last_error") + ")";
      return st;
    }
    return check_approved(state, *latest, now, files);
  }
  // A legacy approval object (other tools): no gates, approval.plan_path.
  const json* a = nullptr;
  if (state.is_object() && state.contains("approval") && state["approval"].is_object()) a = &state["approval"];
  std::string atype = a ? str(*a, "gate_type") : std::string();
  if (!a || str(*a, "plan_path") != plan_path || (atype.empty() ? type != GateType::Vision : atype != tname)) {
    st.check = ApprovalCheck::Missing;
    st.message = "No " + tname + " approval for " + plan_path + " yet";
    return st;
  }
  if (!a->contains("approved") || !(*a)["approved"].is_boolean() || !(*a)["approved"].get<bool>()) {
    st.check = ApprovalCheck::Pending;
    st.message = label(tname) + " gate for " + plan_path + " is awaiting approval";
    return st;
  }
  // yolo records every approval in a sealed gate: an approved object without one was
  // written by another tool or by hand.
  return unsealed(st, tname, plan_path, str(*a, "approved_by"), str(*a, "approved_at"));
}

ApprovalStatus approval_status(const json& state, GateType type, const std::string& plan_path,
                               const std::string& current_digest) {
  return approval_status(state, type, plan_path, now_with_digest(plan_path, current_digest));
}

std::vector<json> checked_gates(const json& state, const Now& now, bool open_only) {
  std::vector<json> gs = list_gates(state, open_only);
  for (auto& g : gs) {
    if (str(g, "status") != kApproved) continue;
    ApprovalStatus st = gate_status(state, g, now);
    g["counts"] = st.counts();
    if (!st.counts()) g["problem"] = st.message;
  }
  return gs;
}

Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const Now& now,
                           const std::vector<std::string>& files, const std::string& now_time) {
  Transition t;
  ApprovalStatus st = approval_status(state, type, plan_path, now, files);
  if (st.check != ApprovalCheck::Stale) {
    t.message = st.message;
    t.gate = st.gate;
    return t;
  }
  if (const json* g = open_gate(state)) {
    t.error = st.message.substr(0, st.message.find(':')) + ", but " + describe_gate(*g) + " is open: resolve it first";
    return t;
  }
  RequestInput in;
  in.type = type;
  in.plan_path = plan_path;
  in.reason = st.message;
  in.now = now_time;
  in.files = files.empty() && st.gate.is_object() ? covered_files(st.gate) : files;
  if (in.files.empty()) in.files = {plan_path};
  if (now.covers) in.covers = now.covers(type, in.files);
  in.project = now.project;
  if (st.gate.is_object() && st.gate.contains("wave") && st.gate["wave"].is_number_integer())
    in.wave = st.gate["wave"].get<int>();
  json doc = state;
  t = request(doc, in);
  if (!t.ok()) return t;
  json old = st.gate.is_object()
                 ? st.gate
                 : json{{"id", ""}, {"gate_type", std::string(to_string(type))}, {"plan_path", plan_path}};
  json cur = in.covers.is_object() ? in.covers : json(nullptr);
  t.events.insert(t.events.begin(),
                  gate_event(doc, "approval_invalidated", old,
                             {{"reason", st.message}, {"covers", cur}, {"new_gate_id", str(t.gate, "id")}}));
  t.message = st.message;
  t.outcome = Outcome::Paused;
  state = std::move(doc);
  return t;
}

Transition reopen_if_stale(json& state, GateType type, const std::string& plan_path, const std::string& current_digest,
                           const std::string& now) {
  return reopen_if_stale(state, type, plan_path, now_with_digest(plan_path, current_digest), {}, now);
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
  (*g)["covers_changed_at"] = now_or(now);
  t.events.push_back(gate_event(doc, "gate_content_changed", *g, {{"changes", changes}}));
  t.gate = *g;
  t.changed = true;
  std::string list;
  for (const auto& c : changes) list += (list.empty() ? "" : "; ") + c;
  t.message = "what " + describe_gate(*g) + " covers changed since it opened (" + list + ")";
  state = std::move(doc);
  return t;
}

std::string normalize_plan_path(const stdfs::path& root, const std::string& plan_path, std::string& err) {
  if (plan_path.empty()) {
    err = "plan_path is empty";
    return {};
  }
  auto c = fs::contain(root, plan_path, fs::AbsolutePaths::AllowInside);
  if (!c.ok()) {
    if (c.refusal == fs::Contained::Refusal::Symlink)
      err = plan_path + " " + c.why() + " (" + root.string() + ")";
    else
      err = plan_path + " is outside the project " + root.string();
    return {};
  }
  if (c.rel == ".") {
    err = "plan_path '" + plan_path + "' names no file";
    return {};
  }
  return c.rel;
}

std::string file_digest(const stdfs::path& root, const std::string& plan_path, std::string& err) {
  std::string rel = normalize_plan_path(root, plan_path, err);
  if (rel.empty()) return {};
  auto r = fs::read_bytes(root / rel);
  if (!r.ok()) {
    err = r.error->message;
    return {};
  }
  return sha256_digest(r.content);
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
                         const std::string& project) {
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

// ---- against a project -----------------------------------------------------------------

namespace {

void absorb(GateRun& r, Transition& t) {
  for (auto& e : t.events) r.events.push_back(std::move(e));
  if (!t.message.empty()) r.messages.push_back({t.outcome, t.message, str(t.gate, "id")});
  if (!t.gate.is_null()) r.gate = t.gate;
}

// Runs fn under the state lock; t receives the transition; events are logged after.
bool locked(const stdfs::path& root, GateRun& r, const std::function<Transition(json&)>& fn) {
  Transition t;
  auto u = state::update(root, [&](json& doc, std::string& err) {
    t = fn(doc);
    if (!t.ok()) {
      err = t.error;
      return false;
    }
    return t.changed;
  });
  r.state = u.doc;
  if (!u.ok()) {
    r.error = u.error;
    return false;
  }
  if (std::string e = log_events(root, t.events); !e.empty())
    r.messages.push_back({Outcome::Warning, "warning: event not logged: " + e, str(t.gate, "id")});
  absorb(r, t);
  return true;
}

std::string approver_name(const ApproverSpec& s) {
  if (s.kind == ApproverSpec::Kind::Command && !s.argv.empty())
    return "approver:" + stdfs::path(s.argv[0]).filename().string();
  return "approver";
}

}  // namespace

GateRun run_approver(const stdfs::path& root, const Config& cfg, const std::string& gate_id, ApproverPort* port) {
  GateRun r;
  auto snap = state::load(root);
  if (!snap.ok()) {
    r.error = snap.error;
    return r;
  }
  json doc = snap.doc;
  adopt_legacy_approval(doc);
  const json* g = find_gate(doc, gate_id);
  if (!g || !is_open(*g)) {
    r.error = g ? "No pending approval to resolve: gate " + gate_id + " is " + str(*g, "status")
                : "No pending approval to resolve: there is no gate '" + gate_id + "'";
    r.state = snap.doc;
    return r;
  }
  r.gate = *g;
  GateType type = parse_gate_type(str(*g, "gate_type")).value_or(GateType::Vision);
  std::string plan_path = str(*g, "plan_path");
  const std::vector<std::string> files = covered_files(*g);
  if (g->contains("covers")) {
    // An approver is asked about what the gate covers now: the gate shows it first.
    json before = coverage(root, type, files);
    if ((*g)["covers"] != before) {
      GateRun rc;
      if (!locked(root, rc, [&](json& d) { return refresh_covers(d, gate_id, before); })) {
        r.error = rc.error;
        return r;
      }
      for (auto& e : rc.events) r.events.push_back(std::move(e));
      for (auto& m : rc.messages) r.messages.push_back(std::move(m));
    }
  }
  ApproverSpec spec = approver_spec(cfg, type);
  ApproverVerdict v;
  std::string by;
  switch (spec.kind) {
    case ApproverSpec::Kind::Manual:
      r.state = snap.doc;
      r.messages.push_back(
          {Outcome::Waiting,
           label(str(*g, "gate_type")) + " gate " + gate_id + ": waiting for a person (approver: manual)", gate_id});
      return r;
    case ApproverSpec::Kind::Skip:
      v.decision = Decision::Approved;
      v.feedback = "skipped (approvers." + std::string(to_string(type)) + ": skip)";
      by = "skip";
      break;
    case ApproverSpec::Kind::Invalid:
      v.error = spec.error;
      break;
    case ApproverSpec::Kind::Command:
      by = approver_name(spec);
      if (!port) {
        v.error = "no command approver available to run " + spec.argv[0];
        break;
      }
      {
        ApproverRequest req{root,
                            spec.argv,
                            cfg.timeout_for(CommandSpec{spec.argv, spec.timeout_ms}),
                            gate_id,
                            str(*g, "gate_type"),
                            plan_path,
                            str(*g, "reason")};
        v = port->decide(req);
      }
      break;
  }
  std::string digest;
  json covers;
  if (v.error.empty() && v.decision == Decision::Approved) {
    std::string derr;
    digest = file_digest(root, plan_path, derr);
    if (digest.empty()) v.error = "cannot approve: " + derr;
    covers = coverage(root, type, files);
  }
  const std::string project = project_id(root);
  locked(root, r, [&](json& d) {
    adopt_legacy_approval(d);
    return apply_verdict(d, gate_id, v, by, digest, {}, covers, project);
  });
  return r;
}

GateRun request_gate(const stdfs::path& root, const Config& cfg, RequestInput in, ApproverPort* port) {
  GateRun r;
  std::string err;
  std::string rel = normalize_plan_path(root, in.plan_path, err);
  if (rel.empty()) {
    r.error = "Cannot request approval: " + err;
    return r;
  }
  in.plan_path = rel;
  if (file_digest(root, rel, err).empty()) {
    r.error = "Cannot request approval: " + err;
    return r;
  }
  if (in.state_file.empty()) in.state_file = state::state_path(root).string();
  std::vector<std::string> files = {rel};
  for (const auto& f : in.files) {
    std::string frel = normalize_plan_path(root, f, err);
    if (frel.empty()) {
      r.error = "Cannot request approval: " + err;
      return r;
    }
    if (std::find(files.begin(), files.end(), frel) == files.end()) files.push_back(frel);
  }
  in.files = files;
  in.covers = coverage(root, in.type, files);
  in.project = project_id(root);
  bool created = false;
  json answer;
  if (!locked(root, r, [&](json& d) {
        Transition t = request(d, in);
        created = t.changed;
        answer = t.answer;
        return t;
      }))
    return r;
  r.answer = answer;
  if (!created) {
    if (!str(r.gate, "last_error").empty()) r.answer["last_error"] = str(r.gate, "last_error");
    return r;
  }
  std::string gid = str(r.gate, "id");
  GateRun a = run_approver(root, cfg, gid, port);
  for (auto& e : a.events) r.events.push_back(std::move(e));
  for (auto& m : a.messages) r.messages.push_back(std::move(m));
  if (!a.ok()) {
    r.messages.push_back({Outcome::Warning, "warning: approver not run: " + a.error, gid});
    return r;
  }
  if (!a.state.is_null()) r.state = a.state;
  if (const json* g = find_gate(r.state, gid)) {
    r.gate = *g;
    std::string s = str(*g, "status");
    if (s == kApproved)
      r.answer["status"] = "approved";
    else if (s == kRejected) {
      r.answer["status"] = "rejected";
      r.answer["feedback"] = (*g)["feedback"];
    }
    if (!str(*g, "last_error").empty()) r.answer["last_error"] = str(*g, "last_error");
  }
  return r;
}

GateRun approve_gate(const stdfs::path& root, const Config& cfg, const std::string& gate_id, const std::string& by,
                     ApproverPort* port, bool override_approver, const json& shown) {
  GateRun r;
  auto snap = state::load(root);
  if (!snap.ok()) {
    r.error = snap.error;
    return r;
  }
  json doc = snap.doc;
  adopt_legacy_approval(doc);
  std::string err;
  json* g = resolve_target(doc, gate_id, err);
  if (!g) {
    r.error = err;
    r.state = snap.doc;
    return r;
  }
  const std::string id = str(*g, "id");
  auto failed_command = [&](const json& gate) {
    GateType t = parse_gate_type(str(gate, "gate_type")).value_or(GateType::Vision);
    return !str(gate, "last_error").empty() && approver_spec(cfg, t).kind == ApproverSpec::Kind::Command;
  };
  if (failed_command(*g) && !override_approver) {
    r.messages.push_back(
        {Outcome::Retrying, "Retrying the approver of gate " + id + " (it failed: " + str(*g, "last_error") + ")", id});
    GateRun a = run_approver(root, cfg, id, port);
    a.messages.insert(a.messages.begin(), r.messages.begin(), r.messages.end());
    return a;
  }
  // The target is resolved again under the lock (without an id: the gate open then), and
  // what it covers is read as it is at that moment. Content that changed since the gate
  // opened is not approved: the gate shows the new content (refresh_covers) and the person
  // approves again after reading it.
  std::string refused;
  locked(root, r, [&](json& d) {
    json cur = d;
    adopt_legacy_approval(cur);
    Transition t;
    json* target = resolve_target(cur, gate_id, t.error);
    if (!target) return t;
    const std::string tid = str(*target, "id");
    GateType type = parse_gate_type(str(*target, "gate_type")).value_or(GateType::Vision);
    std::string derr;
    std::string digest = file_digest(root, str(*target, "plan_path"), derr);
    if (digest.empty()) {
      t.error = "Cannot approve gate " + tid + ": " + derr;
      return t;
    }
    json covers = coverage(root, type, covered_files(*target));
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& c : v) s += (s.empty() ? "" : "; ") + c;
      return s;
    };
    if (target->contains("covers") && (*target)["covers"] != covers) {
      refused = "Not approved: what gate " + tid + " covers changed since it opened (" +
                list(coverage_changes((*target)["covers"], covers)) +
                "). The gate now shows the new content: read it, then approve again";
      adopt_legacy_approval(d);
      return refresh_covers(d, tid, covers);
    }
    if (shown.is_object() && shown != covers) {
      t.error = "Not approved: what gate " + tid + " covers changed while it was shown (" +
                list(coverage_changes(shown, covers)) + "): read it again, then approve";
      return t;
    }
    ResolveInput in{tid, by, digest, {}, {}};
    in.covers = covers;
    in.project = project_id(root);
    in.override_approver = override_approver && failed_command(*target);  // decided on the gate as it is under the lock
    return approve(d, in);
  });
  if (!refused.empty() && r.error.empty()) r.error = refused;
  return r;
}

GateRun reject_gate(const stdfs::path& root, const std::string& gate_id, const std::string& by,
                    const std::string& feedback) {
  GateRun r;
  locked(root, r, [&](json& d) { return reject(d, ResolveInput{gate_id, by, {}, feedback, {}}); });
  return r;
}

}  // namespace yolo::gates
