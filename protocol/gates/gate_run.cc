#include "protocol/gates/gate_run.h"

#include <algorithm>
#include <optional>

#include "protocol/gates/approvals.h"
#include "protocol/state/audit.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gates_detail.h"
#include "protocol/base/json_field.h"
#include "protocol/state/state.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;
using json_field::str;
using namespace detail;

// ---- against a project -----------------------------------------------------------------

namespace {

void absorb(GateRun& r, Transition& t) {
  for (auto& e : t.events) r.events.push_back(std::move(e));
  if (!t.message.empty()) r.messages.push_back({t.outcome, t.message, str(t.gate, "id")});
  if (!t.gate.is_null()) r.gate = t.gate;
}

// Runs fn under the state lock; t receives the transition; events are logged after.
bool locked(const World& w, const stdfs::path& root, GateRun& r, const std::function<Transition(json&)>& fn) {
  Transition t;
  std::string audit_err;
  bool audited = false;
  auto u = state::update(w, root, [&](json& doc) -> state::Change {
    t = fn(doc);
    if (!t.ok()) return Status::fail(t.error);
    if (t.events.empty()) return t.changed;
    // The transition goes to the audit log under the state's lock, and the state records
    // where the chain ends now: a line later cut from the log's end, or a gate removed from
    // the state, no longer agrees with it (audit::check_anchor).
    audit_err = audit::append_anchored(w, root, doc, t.events).error;
    audited = true;
    return true;
  });
  r.state = u.doc;
  r.stamp = u.ok() ? u.stamp : std::string();
  if (!u.ok()) {
    r.error = u.error;
    return false;
  }
  if (!audit_err.empty()) audit_err = "audit log: " + audit_err;
  if (Status s = log_events(w, root, t.events, !audited); !s.ok() && audit_err.empty()) audit_err = s.error;
  if (!audit_err.empty())
    r.messages.push_back({Outcome::Warning, "warning: event not logged: " + audit_err, str(t.gate, "id")});
  absorb(r, t);
  return true;
}

// approvers.<type>: skip: the gate is approved at once, by "skip".
ApproverVerdict skip_verdict(GateType type) {
  ApproverVerdict v;
  v.decision = Decision::Approved;
  v.feedback = "skipped (approvers." + std::string(to_string(type)) + ": skip)";
  return v;
}

std::string approver_name(const ApproverSpec& s) {
  if (s.kind == ApproverSpec::Kind::Command && !s.argv.empty())
    return "approver:" + stdfs::path(s.argv[0]).filename().string();
  return "approver";
}

// The state as it is now, a legacy approval object adopted as a gate; nullopt (r.error set)
// when it cannot be read.
std::optional<json> current_state(const World& w, const stdfs::path& root, GateRun& r, bool adopt = true) {
  auto snap = state::load(w, root);
  if (!snap.ok()) {
    r.error = snap.error;
    return std::nullopt;
  }
  r.state = snap.doc;
  r.stamp.clear();  // read, not written here: its identity is not known
  json doc = std::move(snap.doc);
  if (adopt) adopt_legacy_approval(doc, w.now());
  return doc;
}

// The values of the config keys a vision approval covered, kept beside its covers so that
// the next `yolo approve` can show what a key was and is (shown only where the value still
// hashes to the sealed covers' digest: coverage.h config_value_digest).
json config_values(const World& w, const stdfs::path& root, const json& covers) {
  json out = json::object();
  auto r = w.files().read(root / ".yolo-planning" / "config.json", 16u << 20, /*text=*/false);
  if (!r.ok()) return out;
  JsonParse parsed = parse_json_bounded(r.content);
  if (!parsed.ok() || !parsed.doc.is_object()) return out;
  for (auto& [k, v] : parsed.doc.items())
    if (covers.contains("config:" + k) && v.dump().size() <= 2048) out[k] = v;
  return out;
}

}  // namespace

GateRun run_approver(const World& w, const stdfs::path& root, const Config& cfg, const std::string& gate_id,
                     ApproverPort* port) {
  GateRun r;
  auto loaded = current_state(w, root, r);
  if (!loaded) return r;
  json& doc = *loaded;
  const json* g = find_gate(doc, gate_id);
  if (!g || !is_open(*g)) {
    r.error = g ? "No pending approval to resolve: gate " + gate_id + " is " + str(*g, "status")
                : "No pending approval to resolve: there is no gate '" + gate_id + "'";
    return r;
  }
  r.gate = *g;
  GateType type = parse_gate_type(str(*g, "gate_type")).value_or(GateType::Vision);
  std::string plan_path = str(*g, "plan_path");
  const std::vector<std::string> files = covered_files(*g);
  if (g->contains("covers")) {
    // An approver is asked about what the gate covers now: the gate shows it first.
    json before = coverage(w, root, type, files);
    if ((*g)["covers"] != before) {
      GateRun rc;
      if (!locked(w, root, rc, [&](json& d) { return refresh_covers(d, gate_id, before, w.now()); })) {
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
      r.messages.push_back(
          {Outcome::Waiting,
           label(str(*g, "gate_type")) + " gate " + gate_id + ": waiting for a person (approver: manual)", gate_id});
      return r;
    case ApproverSpec::Kind::Skip:
      v = skip_verdict(type);
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
    auto d = file_digest(w, root, plan_path);
    if (d.ok()) digest = *d;
    else v.error = "cannot approve: " + d.error;
    covers = coverage(w, root, type, files);
  }
  const std::string project = project_id(w, root);
  locked(w, root, r, [&](json& d) {
    adopt_legacy_approval(d, w.now());
    return apply_verdict(d, gate_id, v, by, digest, w.now(), covers, project, &w.sealing_key());
  });
  return r;
}

GateRun request_gate(const World& w, const stdfs::path& root, const Config& cfg, RequestInput in, ApproverPort* port) {
  GateRun r;
  auto normal = normalize_plan_path(w, root, in.plan_path);
  if (!normal.ok()) {
    r.error = "Cannot request approval: " + normal.error;
    return r;
  }
  const std::string rel = *normal;
  in.plan_path = rel;
  auto digested = file_digest(w, root, rel);
  if (!digested.ok()) {
    r.error = "Cannot request approval: " + digested.error;
    return r;
  }
  const std::string digest = *digested;
  if (in.state_file.empty()) in.state_file = state::state_path(root).string();
  std::vector<std::string> files = {rel};
  for (const auto& f : in.files) {
    auto fnormal = normalize_plan_path(w, root, f);
    if (!fnormal.ok()) {
      r.error = "Cannot request approval: " + fnormal.error;
      return r;
    }
    const std::string frel = *fnormal;
    if (std::find(files.begin(), files.end(), frel) == files.end()) files.push_back(frel);
  }
  in.files = files;
  in.covers = coverage(w, root, in.type, files);
  if (in.now.empty()) in.now = w.now();
  in.project = project_id(w, root);
  // approvers.<type>: skip decides nothing a person or a command would: the new gate is
  // approved in the same locked write that opens it, with what the request captured (one
  // write of the state and one audit append, not two; the audit log has both entries).
  const bool skip = approver_spec(cfg, in.type).kind == ApproverSpec::Kind::Skip;
  bool created = false;
  json answer;
  Transition skipped;
  if (!locked(w, root, r, [&](json& d) {
        Transition t = request(d, in);
        created = t.changed;
        answer = t.answer;
        if (created && skip) {
          skipped = apply_verdict(d, str(t.gate, "id"), skip_verdict(in.type), "skip", digest, in.now, in.covers,
                                  in.project, &w.sealing_key());
          for (auto& e : skipped.events) t.events.push_back(std::move(e));
          skipped.events.clear();
        }
        return t;
      }))
    return r;
  r.answer = answer;
  if (!created) {
    if (!str(r.gate, "last_error").empty()) r.answer["last_error"] = str(r.gate, "last_error");
    return r;
  }
  if (skip) {
    std::string gid = str(r.gate, "id");
    if (!skipped.message.empty()) r.messages.push_back({skipped.outcome, skipped.message, gid});
    if (const json* g = find_gate(r.state, gid)) {
      r.gate = *g;
      if (str(*g, "status") == kApproved) r.answer["status"] = answer_name(Answer::Approved);
      if (!str(*g, "last_error").empty()) r.answer["last_error"] = str(*g, "last_error");
    }
    return r;
  }
  std::string gid = str(r.gate, "id");
  GateRun a = run_approver(w, root, cfg, gid, port);
  for (auto& e : a.events) r.events.push_back(std::move(e));
  for (auto& m : a.messages) r.messages.push_back(std::move(m));
  if (!a.ok()) {
    r.messages.push_back({Outcome::Warning, "warning: approver not run: " + a.error, gid});
    return r;
  }
  if (!a.state.is_null()) {
    r.state = a.state;
    r.stamp = a.stamp;
  }
  if (const json* g = find_gate(r.state, gid)) {
    r.gate = *g;
    std::string s = str(*g, "status");
    if (s == kApproved)
      r.answer["status"] = answer_name(Answer::Approved);
    else if (s == kRejected) {
      r.answer["status"] = answer_name(Answer::Rejected);
      r.answer["feedback"] = (*g)["feedback"];
    }
    if (!str(*g, "last_error").empty()) r.answer["last_error"] = str(*g, "last_error");
  }
  return r;
}

GateRun approve_gate(const World& w, const stdfs::path& root, const Config& cfg, const std::string& gate_id,
                     const std::string& by, ApproverPort* port, bool override_approver, const json& shown,
                     const Authorize& authorize, const ApprovalSigner* signer) {
  GateRun r;
  auto loaded = current_state(w, root, r, /*adopt=*/!authorize);
  if (!loaded) return r;
  json& doc = *loaded;
  auto found = resolve_target(doc, gate_id);
  if (!found.ok()) {
    r.error = found.error;
    return r;
  }
  json* g = *found;
  const std::string id = str(*g, "id");
  auto failed_command = [&](const json& gate) {
    GateType t = parse_gate_type(str(gate, "gate_type")).value_or(GateType::Vision);
    return !str(gate, "last_error").empty() && approver_spec(cfg, t).kind == ApproverSpec::Kind::Command;
  };
  if (authorize) {
    // Checked again under the lock below; refused here so no approver is retried for it.
    if (std::string why = authorize(doc, *g); !why.empty()) {
      r.error = why;
      return r;
    }
  }
  if (failed_command(*g) && !override_approver) {
    r.messages.push_back(
        {Outcome::Retrying, "Retrying the approver of gate " + id + " (it failed: " + str(*g, "last_error") + ")", id});
    GateRun a = run_approver(w, root, cfg, id, port);
    a.messages.insert(a.messages.begin(), r.messages.begin(), r.messages.end());
    return a;
  }
  // The target is resolved again under the lock (without an id: the gate open then), and
  // what it covers is read as it is at that moment. Content that changed since the gate
  // opened is not approved: the gate shows the new content (refresh_covers) and the person
  // approves again after reading it.
  std::string refused, sign_error;
  const bool sign = signer && signer->wanted(root);
  locked(w, root, r, [&](json& d) {
    json cur = d;
    if (!authorize) adopt_legacy_approval(cur, w.now());
    Transition t;
    auto resolved = resolve_target(cur, gate_id);
    if (!resolved.ok()) {
      t.error = resolved.error;
      return t;
    }
    json* target = *resolved;
    const std::string tid = str(*target, "id");
    // The authorisation, on this gate and this state, under the lock that writes it.
    if (authorize)
      if (std::string why = authorize(d, *target); !why.empty()) {
        t.error = why;
        return t;
      }
    GateType type = parse_gate_type(str(*target, "gate_type")).value_or(GateType::Vision);
    auto digested = file_digest(w, root, str(*target, "plan_path"));
    if (!digested.ok()) {
      t.error = "Cannot approve gate " + tid + ": " + digested.error;
      return t;
    }
    const std::string digest = *digested;
    json covers = coverage(w, root, type, covered_files(*target));
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& c : v) s += (s.empty() ? "" : "; ") + c;
      return s;
    };
    if (target->contains("covers") && (*target)["covers"] != covers) {
      refused = "Not approved: what gate " + tid + " covers changed since it opened (" +
                list(coverage_changes((*target)["covers"], covers, /*digests=*/false)) +
                "). The gate now shows the new content: read it, then approve again";
      if (!authorize) adopt_legacy_approval(d, w.now());
      return refresh_covers(d, tid, covers, w.now());
    }
    if (shown.is_object() && shown != covers) {
      t.error = "Not approved: what gate " + tid + " covers changed while it was shown (" +
                list(coverage_changes(shown, covers, /*digests=*/false)) + "): read it again, then approve";
      return t;
    }
    ResolveInput in{tid, by, digest, {}, w.now()};
    in.covers = covers;
    in.key = &w.sealing_key();
    in.project = project_id(w, root);
    in.override_approver = override_approver && failed_command(*target);  // decided on the gate as it is under the lock
    Transition done = approve(d, in);
    if (done.ok() && type == GateType::Vision)
      if (json* approved = find_gate_mut(d, tid)) (*approved)["config_values"] = config_values(w, root, covers);
    if (done.ok() && sign)
      if (json* approved = find_gate_mut(d, tid); approved && has_status(*approved, GateStatus::Approved)) {
        auto signature = signer->sign(root, *approved);
        if (!signature.ok()) sign_error = signature.error;
        if (std::string sig = signature.value_or(""); !sig.empty()) {
          (*approved)["ssh_signature"] = sig;
          if (done.gate.is_object()) done.gate["ssh_signature"] = sig;
        }
      }
    return done;
  });
  if (!refused.empty() && r.error.empty()) r.error = refused;
  if (r.ok() && !sign_error.empty())
    r.messages.push_back(Message{Outcome::Warning, "gate " + str(r.gate, "id") + " could not be signed: " + sign_error,
                                 str(r.gate, "id")});
  // What was approved, kept for the next approval's diff (gate_coverage.h).
  if (r.ok() && r.gate.is_object() && has_status(r.gate, GateStatus::Approved) && r.gate.contains("covers"))
    for (const auto& e : keep_approved_copies(w, root, r.gate["covers"]))
      r.messages.push_back(Message{Outcome::Warning, e, ""});
  return r;
}

GateRun reject_gate(const World& w, const stdfs::path& root, const std::string& gate_id, const std::string& by,
                    const std::string& feedback, const Authorize& authorize) {
  GateRun r;
  locked(w, root, r, [&](json& d) {
    if (authorize) {
      Transition t;
      const json* target = gate_id.empty() ? open_gate(d) : find_gate(d, gate_id);
      if (!target) {
        t.error = gate_id.empty() ? "No pending approval to resolve" : "there is no gate '" + gate_id + "'";
        return t;
      }
      if (std::string why = authorize(d, *target); !why.empty()) {
        t.error = why;
        return t;
      }
    }
    return reject(d, ResolveInput{gate_id, by, {}, feedback, w.now()});
  });
  return r;
}

GateRun reopen_stale_gate(const World& w, const stdfs::path& root, const Config& cfg, GateType type,
                          const std::string& plan_path, const Now& now, const std::vector<std::string>& files,
                          ApproverPort* port) {
  GateRun r;
  bool reopened = false;
  if (!locked(w, root, r, [&](json& d) {
        Transition t = reopen_if_stale(d, type, plan_path, now, files, w.now());
        reopened = t.ok() && t.changed;
        return t;
      }))
    return r;
  if (!reopened) {
    r.gate = nullptr;
    r.messages.clear();  // why it still counts (or was never given): nothing for the caller to say
    return r;
  }
  const std::string gid = str(r.gate, "id");
  GateRun a = run_approver(w, root, cfg, gid, port);
  for (auto& e : a.events) r.events.push_back(std::move(e));
  for (auto& m : a.messages) r.messages.push_back(std::move(m));
  if (!a.ok()) {
    r.messages.push_back({Outcome::Warning, "approver: " + a.error, gid});
    return r;
  }
  if (!a.state.is_null()) {
    r.state = a.state;
    r.stamp = a.stamp;
  }
  if (const json* g = find_gate(r.state, gid)) r.gate = *g;
  return r;
}

}  // namespace yolo::gates
