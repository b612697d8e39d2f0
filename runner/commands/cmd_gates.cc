// yolo request-approval | approve | reject | gates: PROTOCOL.md section 6.
// What a person is shown before deciding is in gate_show.cc.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/approvals.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/gate_run.h"
#include "protocol/state/state.h"
#include "protocol/base/text.h"
#include "protocol/base/text_diff.h"
#include "runner/approvers.h"
#include "runner/command.h"
#include "runner/commands/gate_show.h"
#include "runner/gates_view.h"
#include "runner/identity.h"
#include "runner/output.h"
#include "runner/sandbox.h"
#include "runner/config_report.h"
#include "runner/person.h"
#include "runner/signing.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo;
  bool json = false;
  // request-approval
  std::string plan_path, gate_type = "vision", reason;
  int wave = 0;
  // approve / reject
  std::string gate_id, by, feedback;
  bool override_approver = false;
  bool yes = false;      // approve / reject: no question (the terminal check stays)
  bool verbose = false;  // approve / reject: the digests of what the gate covers
};

using gate_show::safe;
using gate_show::show_gate;

int fail(const std::string& cmd, const Options& o, const std::string& error, int code = kExitFail) {
  if (o.json) out::json_line({{"ok", false}, {"cmd", cmd}, {"error", error}});
  out::err(out::sym(out::Sym::Fail) + " " + cmd + ": " + safe(error));
  return code;
}

Config load_cfg(const World& w, const stdfs::path& root) {
  auto c = load_config_reported(w, root);
  if (!c.ok()) out::err(out::sym(out::Sym::Warn) + " " + safe(c.error) + " (using defaults)");
  return c.config;
}

out::Sym sym_for(gates::Outcome o) {
  using gates::Outcome;
  switch (o) {
    case Outcome::Cleared:
      return out::Sym::Ok;
    case Outcome::Rejected:
    case Outcome::ApproverFailed:
      return out::Sym::Fail;
    case Outcome::Paused:
    case Outcome::Pending:
    case Outcome::Waiting:
      return out::Sym::Pause;
    case Outcome::Retrying:
      return out::Sym::Diamond;
    case Outcome::NotApplied:
    case Outcome::Warning:
      return out::Sym::Warn;
  }
  return out::Sym::Diamond;
}

// The next step for a person, after a gate's last message (protocol/ messages name none:
// MCP clients read them too).
std::string next_step(const gates::Message& m) {
  using gates::Outcome;
  if (m.gate_id.empty()) return {};
  std::string id = safe(m.gate_id);
  switch (m.kind) {
    case Outcome::Paused:
    case Outcome::Pending:
    case Outcome::Waiting:
      return "approve: yolo approve " + id + " --by NAME    reject: yolo reject " + id + " --feedback TEXT";
    case Outcome::ApproverFailed:
      return "`yolo approve " + id + "` retries the approver; `yolo approve " + id +
             " --override` decides in its place";
    default:
      return {};
  }
}

// Each message with the symbol of its kind; then the next step after the last one. To
// stderr (stdout carries the JSON answer), or to stdout.
void tell(const gates::GateRun& r, bool to_stdout = false) {
  auto put = [&](const std::string& s) { to_stdout ? out::line(s) : out::err(s); };
  for (const auto& m : r.messages) put(out::sym(sym_for(m.kind)) + " " + safe(m.text));
  if (!r.messages.empty())
    if (std::string n = next_step(r.messages.back()); !n.empty()) put("  " + out::dim(n));
}

int request_approval(const Context& ctx, const Options& o) {
  const std::string cmd = "request-approval";
  auto type = gates::parse_gate_type(o.gate_type);
  if (!type)
    return fail(cmd, o, "--gate-type must be " + gates::gate_type_names() + ", got '" + o.gate_type + "'", kExitUsage);
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) return fail(cmd, o, err);
  // Inside a sandbox the state cannot be written: the request goes to the folder yolo gave
  // this agent, and yolo opens the gate itself when the agent ends.
  if (const char* dir = std::getenv("YOLO_GATE_REQUESTS"); dir && *dir && inside_sandbox()) {
    json req = {{"gate_type", o.gate_type}, {"plan_path", o.plan_path}, {"reason", o.reason}};
    if (o.wave > 0) req["wave"] = o.wave;
    char name[64];
    std::snprintf(name, sizeof name, "req-%d-%ld.json", static_cast<int>(::getpid()), static_cast<long>(::time(nullptr)));
    if (std::string e = ctx.world.files().write_atomic(stdfs::path(dir) / name, req.dump()).error; !e.empty())
      return fail(cmd, o, e);
    out::err(out::sym(out::Sym::Diamond) + " " + o.gate_type + " gate requested for " + safe(o.plan_path) +
             ": yolo opens it when this agent ends, and the run waits for a person there");
    out::json_line({{"ok", true}, {"cmd", cmd}, {"status", "requested"}, {"gate_type", o.gate_type}});
    return kExitOk;
  }
  Config cfg = load_cfg(ctx.world, *root);
  gates::RequestInput in;
  in.type = *type;
  in.plan_path = o.plan_path;
  in.reason = o.reason;
  if (o.wave > 0) in.wave = o.wave;
  CommandApprover approver(ctx.world);
  auto r = gates::request_gate(ctx.world, *root, cfg, in, &approver);
  if (!r.ok()) return fail(cmd, o, r.error);
  tell(r);
  out::json_line(r.answer);  // the answer agents read, also without --json
  return kExitOk;
}

json run_json(const std::string& cmd, const gates::GateRun& r) {
  json outcomes = json::array();
  for (const auto& m : r.messages) outcomes.push_back(std::string(gates::to_string(m.kind)));
  json j = {
      {"ok", r.ok()}, {"cmd", cmd}, {"gate", r.gate}, {"messages", gates::texts(r.messages)}, {"outcomes", outcomes}};
  j["status"] = r.state.is_object() && r.state.contains("status") ? r.state["status"] : json(nullptr);
  j["run_state"] = std::string(gates::to_string(gates::run_state(r.state)));
  if (!r.ok()) j["error"] = r.error;
  return j;
}

// A gate is decided by a person at a terminal: never by a process yolo started, never
// without a terminal. The message says what a person does.
bool refuse_unless_person(const std::string& cmd, const Options& o, int& code) {
  PersonCheck p = person_at_terminal();
  if (p.ok) return false;
  std::string target = o.gate_id.empty() ? std::string() : " " + o.gate_id;
  code = fail(cmd, o,
              "refused: a gate is " + std::string(cmd == "approve" ? "approved" : "rejected") +
                  " by a person at a terminal, and " + p.problem + ". Ask the person responsible to run `yolo " + cmd +
                  target + "` in their own terminal, read what it shows and answer the question.");
  return true;
}

// The gate a decision is about (the open one when no id is given), as loaded now.
json target_gate(const World& w, const stdfs::path& root, const std::string& gate_id) {
  auto snap = state::load(w, root);
  if (!snap.ok()) return nullptr;
  for (const auto& g : gates::list_gates(snap.doc)) {
    if (gate_id.empty() ? gates::has_status(g, gates::GateStatus::Open) : g.value("id", "") == gate_id) return g;
  }
  return nullptr;
}

int approve(const Context& ctx, const Options& o) {
  const std::string cmd = "approve";
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) return fail(cmd, o, err);
  if (int code = 0; refuse_unless_person(cmd, o, code)) return code;
  Config cfg = load_cfg(ctx.world, *root);
  std::string by = approver_identity(o.by, *root);
  json shown = nullptr;
  std::string gate_id = o.gate_id;
  if (json g = target_gate(ctx.world, *root, o.gate_id); gates::has_status(g, gates::GateStatus::Open)) {
    shown = show_gate(ctx.world, *root, g, o.verbose);
    if (sandbox_off(cfg))
      out::err(out::sym(out::Sym::Warn) + " the config says \"sandbox\": \"off\": agents, executors, approvers and "
               "checks run with your full power (they can read the approval key and write the gates)");
    gate_id = g.value("id", "");  // the gate shown is the one approved, never another opened meanwhile
    if (!o.yes && !confirm("Approve exactly this as " + safe(by) + "? [y/N] "))
      return fail(cmd, o, "not approved (the answer was not y or yes); the gate stays open");
  }
  // A project that wants approvals that travel gets this one signed with the person's SSH key,
  // in the same locked write that records it.
  const gates::ApprovalSigner& signer = ssh_signer();
  CommandApprover approver(ctx.world);
  auto r = gates::approve_gate(ctx.world, *root, cfg, gate_id, by, &approver, o.override_approver, shown, {}, &signer);
  if (!r.ok()) return fail(cmd, o, r.error);
  remember_person_namespaces();
  std::string status = r.gate.is_object() ? r.gate.value("status", "") : "";
  bool approved = gates::has_status(r.gate, gates::GateStatus::Approved);
  if (approved && signer.wanted(*root)) {
    std::string id = r.gate.value("id", "");
    // Whether it counts is asked as every later check asks it: signature against the trust
    // root (the person's allowed signers, or the project's file as a vision approval pinned
    // it), seal, project, run and covers.
    std::string why;
    if (!r.gate.contains("ssh_signature")) {
      why = "it is not signed";
      const std::string said = "could not be signed: ";
      for (const auto& m : r.messages)
        if (auto at = m.text.find(said); at != std::string::npos) why += " (" + m.text.substr(at + said.size()) + ")";
    }
    if (why.empty()) {
      auto snap = state::load(ctx.world, *root);
      auto st =
          snap.ok() ? gates::gate_status(snap.doc, r.gate, gates::now_of(ctx.world, *root)) : gates::ApprovalStatus{};
      if (!snap.ok())
        why = snap.error;
      else if (!st.counts())
        why = st.message;
    }
    if (!why.empty()) {
      r.messages.push_back(
          {gates::Outcome::Warning, "the approval of gate " + id + " is recorded but does not count: " + why, id});
      approved = false;
    } else {
      r.messages.push_back({gates::Outcome::Cleared,
                            "gate " + id + " signed with your SSH key (" +
                                allowed_signers_path(*root).filename().string() + " allows it)",
                            id});
    }
  }
  if (o.json) {
    json j = run_json(cmd, r);
    j["ok"] = approved;
    if (!approved)
      j["error"] = r.messages.empty() ? "gate " + r.gate.value("id", "") + " is " + status : r.messages.back().text;
    out::json_line(j);
    tell(r);
  } else {
    tell(r, /*to_stdout=*/true);
  }
  return approved ? kExitOk : kExitFail;
}

int reject(const Context& ctx, const Options& o) {
  const std::string cmd = "reject";
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) return fail(cmd, o, err);
  if (int code = 0; refuse_unless_person(cmd, o, code)) return code;
  std::string by = approver_identity(o.by, *root);
  std::string gate_id = o.gate_id;
  if (json g = target_gate(ctx.world, *root, o.gate_id); gates::has_status(g, gates::GateStatus::Open)) {
    show_gate(ctx.world, *root, g, o.verbose);
    gate_id = g.value("id", "");  // the gate shown is the one rejected
    if (!o.yes && !confirm("Reject it as " + safe(by) + "? [y/N] "))
      return fail(cmd, o, "not rejected (the answer was not y or yes); the gate stays open");
  }
  auto r = gates::reject_gate(ctx.world, *root, gate_id, by, o.feedback);
  if (!r.ok()) return fail(cmd, o, r.error);
  if (o.json)
    out::json_line(run_json(cmd, r));
  else
    tell(r, /*to_stdout=*/true);
  return kExitOk;
}

int list(const Context& ctx, const Options& o) {
  const std::string cmd = "gates";
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) return fail(cmd, o, err);
  auto snap = state::load(ctx.world, *root);
  if (!snap.ok()) return fail(cmd, o, snap.error);
  json all = json::array(), open = json::array();
  for (auto& g : gates::checked_gates(snap.doc, gates::now_of(ctx.world, *root))) {
    if (gates::has_status(g, gates::GateStatus::Open)) open.push_back(g);
    all.push_back(std::move(g));
  }
  // The approval object mirrors a gate; where it disagrees, that is a finding.
  std::vector<std::string> mirror = gates::mirror_problems(snap.doc);
  if (o.json) {
    out::json_line({{"ok", true},
                    {"cmd", cmd},
                    {"run_state", std::string(gates::to_string(gates::run_state(snap.doc)))},
                    {"status", snap.doc.value("status", json(nullptr))},
                    {"gates", all},
                    {"open_gates", open},
                    {"approval_mirror_problems", mirror}});
  } else {
    out::line(render_gates(all));
    for (const auto& m : mirror)
      out::line(out::sym(out::Sym::Warn) + " " + safe(m) +
                " (the gates above are the record; `yolo verify` lists every such finding)");
  }
  return kExitOk;
}

void common(CLI::App& sub, Options& o) {
  sub.add_option("--repo", o.repo,
                 "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
  sub.add_flag("--json", o.json, "One JSON document on stdout");
}

const CommandRegistrar reg_request{Command{
    "request-approval",
    "Open a gate (vision by default) and run its approver; prints {\"status\":\"paused\",\"approval\":{...}}",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--plan-path", o->plan_path, "The file to approve (e.g. .yolo-planning/ROADMAP.md)")->required();
      sub.add_option("--gate-type", o->gate_type, "vision | wave | security | scope_change");
      sub.add_option("--reason", o->reason, "Why the gate is opened");
      sub.add_option("--wave", o->wave, "The wave a wave gate is for")->check(CLI::PositiveNumber);
      common(sub, *o);
      return [o](const Context& ctx) { return request_approval(ctx, *o); };
    }}};

const CommandRegistrar reg_approve{Command{
    "approve", "Approve the open gate (or GATE_ID); retries an approver that errored", [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("GATE_ID", o->gate_id, "The gate (default: the open one)");
      sub.add_option("--by", o->by, "Who approves (default: git user.name, else the OS user)");
      sub.add_flag(
          "--override", o->override_approver,
          "When the gate's command approver failed, approve as a person instead of retrying it (recorded: override)");
      sub.add_flag("--yes", o->yes, "Do not ask for confirmation (a terminal is still needed)");
      sub.add_flag("--verbose", o->verbose, "Also show the digest of everything the gate covers");
      common(sub, *o);
      return [o](const Context& ctx) { return approve(ctx, *o); };
    }}};

const CommandRegistrar reg_reject{
    Command{"reject", "Reject the open gate (or GATE_ID) with feedback; the run halts", [](CLI::App& sub) {
              auto o = std::make_shared<Options>();
              sub.add_option("GATE_ID", o->gate_id, "The gate (default: the open one)");
              sub.add_option("--feedback", o->feedback, "What to change")->required();
              sub.add_option("--by", o->by, "Who rejects (default: git user.name, else the OS user)");
              sub.add_flag("--yes", o->yes, "Do not ask for confirmation (a terminal is still needed)");
              common(sub, *o);
              return [o](const Context& ctx) { return reject(ctx, *o); };
            }}};

const CommandRegistrar reg_gates{
    Command{"gates", "List the gates of the run (open first in the JSON's open_gates)", [](CLI::App& sub) {
              auto o = std::make_shared<Options>();
              common(sub, *o);
              return [o](const Context& ctx) { return list(ctx, *o); };
            }}};

}  // namespace
}  // namespace yolo::runner
