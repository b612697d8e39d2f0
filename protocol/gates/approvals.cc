#include "protocol/gates/approvals.h"

#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gates_detail.h"
#include "protocol/base/json_field.h"
#include "protocol/base/seal.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;
using json_field::str;
using namespace detail;

Now now_of(const World& w, const stdfs::path& root) {
  Now n;
  n.project = project_id(w, root);
  n.covers = [w, root](GateType t, const std::vector<std::string>& files) { return coverage(w, root, t, files); };
  n.key = w.key;
  n.keys = w.key ? nullptr : w.keys;
  if (const SignatureVerifier* v = w.signatures) {
    n.signatures_required = v->required(root);
    n.verify_signature = [v, root](const json& g, bool project_file) { return v->verify(root, g, project_file); };
  }
  return n;
}

Now now_with_digest(const std::string& plan_path, const std::string& digest, const seal::Key& key) {
  Now n;
  n.key = &key;
  n.covers = [plan_path, digest](GateType, const std::vector<std::string>&) {
    return json{{"file:" + plan_path, digest.empty() ? std::string("absent") : digest}};
  };
  return n;
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

std::vector<std::string> mirror_problems(const json& state) {
  std::vector<std::string> out;
  if (!state.is_object()) return out;
  auto ait = state.find("approval");
  if (ait == state.end() || !ait->is_object()) return out;
  const json& a = *ait;
  std::string gid = str(a, "gate_id"), plan = str(a, "plan_path");
  std::string type = str(a, "gate_type").empty() ? std::string("vision") : str(a, "gate_type");
  const json* g = nullptr;
  bool any_gates = state.contains("gates") && state["gates"].is_array() && !state["gates"].empty();
  if (any_gates)
    for (const auto& x : state["gates"])
      if (gid.empty() ? (str(x, "plan_path") == plan && str(x, "gate_type") == type) : str(x, "id") == gid) g = &x;
  bool approved = a.contains("approved") && a["approved"].is_boolean() && a["approved"].get<bool>();
  if (!g) {
    // A legacy object with no gates at all is read as it is (approval_status decides).
    if (!gid.empty() || any_gates)
      out.push_back("the approval record names gate " + (gid.empty() ? type + " for " + plan : gid) +
                    ", which is not in the state's gates (removed, or written by hand)");
    return out;
  }
  const std::string id = str(*g, "id");
  auto differs = [&](const char* field, const std::string& mine, const std::string& gates_value) {
    out.push_back("approval." + std::string(field) + " says \"" + mine + "\" but gate " + id + " says \"" +
                  gates_value + "\"");
  };
  if (str(*g, "plan_path") != plan) differs("plan_path", plan, str(*g, "plan_path"));
  if (str(*g, "gate_type") != type) differs("gate_type", type, str(*g, "gate_type"));
  bool gate_approved = str(*g, "status") == kApproved;
  if (approved != gate_approved)
    differs("approved", approved ? "true" : "false", std::string("status ") + str(*g, "status"));
  if (approved && gate_approved) {
    if (str(a, "approved_by") != str(*g, "approved_by"))
      differs("approved_by", str(a, "approved_by"), str(*g, "approved_by"));
    if (str(a, "approved_at") != str(*g, "resolved_at"))
      differs("approved_at", str(a, "approved_at"), str(*g, "resolved_at"));
    if (a.contains("digest") && !a["digest"].is_null() && str(a, "digest") != str(*g, "digest"))
      differs("digest", str(a, "digest"), str(*g, "digest"));
  }
  return out;
}

bool project_signers_pinned(const json& state, const Now& now) {
  if (!now.covers || !state.is_object() || !state.contains("gates") || !state["gates"].is_array()) return false;
  const std::string key = "file:" + signers_file();
  json cur = now.covers(GateType::Vision, {});
  std::string digest = cur.contains(key) && cur[key].is_string() ? cur[key].get<std::string>() : std::string();
  if (digest.empty() || digest == "absent") return false;
  const seal::Key* k = now.key ? now.key : now.keys ? &now.keys->checking() : nullptr;
  for (const auto& g : state["gates"]) {
    if (str(g, "gate_type") != "vision" || str(g, "status") != kApproved) continue;
    auto c = g.find("covers");
    if (c == g.end() || !c->is_object() || !c->contains(key) || (*c)[key] != digest) continue;
    // Made under another root: sealed here by a person's `yolo approve` in this project, or
    // signed by a key of the person's own allowed-signers file.
    if (k && seal::valid(g, *k) && str(g, "project") == now.project) return true;
    if (g.contains("ssh_signature") && now.verify_signature && now.verify_signature(g, false).ok()) return true;
  }
  return false;
}

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
  bool is_signed = g.contains("ssh_signature") && now.verify_signature;
  if (now.signatures_required && !is_signed)
    return stale("it carries no SSH signature, and this project's .yolo-planning/allowed_signers requires one");
  if (is_signed) {
    // The signature binds the project's first commit: it counts in any clone of it. Its
    // trust root is never the working tree's allowed_signers as it is now, only as an
    // approval made under another root pinned it.
    if (Status v = now.verify_signature(g, project_signers_pinned(state, now)); !v.ok()) return stale(v.error);
    // Where it was approved (this project), the seal yolo put on it must still hold: a
    // signed gate is bound like a sealed one, not instead of it.
    const seal::Key* k = now.key ? now.key : now.keys ? &now.keys->checking() : nullptr;
    if (str(g, "project") == now.project && k && k->ok() && !seal::valid(g, *k))
      return unsealed(st, tname, plan_path, who, when);
  } else {
    const seal::Key* k = now.key ? now.key : now.keys ? &now.keys->checking() : nullptr;
    if (!k || !seal::valid(g, *k)) return unsealed(st, tname, plan_path, who, when);
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
    std::string after = now_c.contains(key) && now_c[key].is_string() ? now_c[key].get<std::string>() : std::string();
    was.erase(key);
    now_c.erase(key);
    if (was == now_c && after == "absent") {
      st.message = plan_path + " cannot be read any more since it was approved" + by + at +
                   ": the approval no longer counts and the " + tname + " gate is open again";
    } else if (was == now_c) {  // only the gate's own file changed
      st.message = plan_path + " changed after it was approved" + by + at + ": the approval no longer counts and the " +
                   tname + " gate is open again";
    } else {
      std::string changes;
      for (const auto& c : coverage_changes(*cit, current, /*digests=*/false))
        changes += (changes.empty() ? "" : "; ") + c;
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
                               const std::string& current_digest, const seal::Key& key) {
  return approval_status(state, type, plan_path, now_with_digest(plan_path, current_digest, key));
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
                           const seal::Key& key, const std::string& now) {
  return reopen_if_stale(state, type, plan_path, now_with_digest(plan_path, current_digest, key), {}, now);
}

ApprovalStatus config_approval(const json& state, const Now& now) {
  return approval_status(state, GateType::Vision, kRoadmapPath, now);
}

McpResolution mcp_may_resolve(const json& state, const json& gate, const json& config, const Now& now) {
  if (str(gate, "gate_type") == to_string(GateType::Vision)) return {false, "the vision gate is never resolved over MCP"};
  if (!config.is_object() || !config.contains("mcp_can_approve") || config["mcp_can_approve"] != true) return {};
  ApprovalStatus st = config_approval(state, now);
  if (!st.counts()) return {false, "mcp_can_approve is not covered by a vision approval that counts"};
  const json& covers = st.gate.is_object() && st.gate.contains("covers") ? st.gate["covers"] : json();
  if (!covers.is_object() ||
      covers.value("config:mcp_can_approve", std::string()) != config_value_digest(config["mcp_can_approve"]))
    return {false, "the vision approval did not cover mcp_can_approve: true"};
  return {true, ""};
}

}  // namespace yolo::gates
