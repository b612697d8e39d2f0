// yolo request-approval | approve | reject | gates: PROTOCOL.md section 6.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "protocol/config.h"
#include "protocol/fs.h"
#include "protocol/approvals.h"
#include "protocol/gate_coverage.h"
#include "protocol/fs.h"
#include "protocol/gate_run.h"
#include "protocol/state.h"
#include "protocol/text.h"
#include "protocol/text_diff.h"
#include "runner/approvers.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/identity.h"
#include "runner/output.h"
#include "runner/sandbox.h"
#include "runner/config_report.h"
#include "runner/person.h"
#include "runner/signing.h"
#include "runner/world.h"

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

// Gate messages and errors carry plan paths, feedback and approver output: no control
// characters reach the terminal.
std::string safe(const std::string& s) { return text::sanitize_for_terminal(s); }

int fail(const std::string& cmd, const Options& o, const std::string& error, int code = kExitFail) {
  if (o.json) out::json_line({{"ok", false}, {"cmd", cmd}, {"error", error}});
  out::err(out::sym(out::Sym::Fail) + " " + cmd + ": " + safe(error));
  return code;
}

Config load_cfg(const stdfs::path& root) {
  auto c = load_config_reported(root);
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

int request_approval(const Options& o) {
  const std::string cmd = "request-approval";
  auto type = gates::parse_gate_type(o.gate_type);
  if (!type)
    return fail(cmd, o, "--gate-type must be " + gates::gate_type_names() + ", got '" + o.gate_type + "'", kExitUsage);
  std::string err;
  auto root = find_project(o.repo, err);
  if (!root) return fail(cmd, o, err);
  // Inside a sandbox the state cannot be written: the request goes to the folder yolo gave
  // this agent, and yolo opens the gate itself when the agent ends.
  if (const char* dir = std::getenv("YOLO_GATE_REQUESTS"); dir && *dir && inside_sandbox()) {
    json req = {{"gate_type", o.gate_type}, {"plan_path", o.plan_path}, {"reason", o.reason}};
    if (o.wave > 0) req["wave"] = o.wave;
    char name[64];
    std::snprintf(name, sizeof name, "req-%d-%ld.json", static_cast<int>(::getpid()), static_cast<long>(::time(nullptr)));
    if (std::string e = fs::write_atomic(stdfs::path(dir) / name, req.dump()); !e.empty()) return fail(cmd, o, e);
    out::err(out::sym(out::Sym::Diamond) + " " + o.gate_type + " gate requested for " + safe(o.plan_path) +
             ": yolo opens it when this agent ends, and the run waits for a person there");
    out::json_line({{"ok", true}, {"cmd", cmd}, {"status", "requested"}, {"gate_type", o.gate_type}});
    return kExitOk;
  }
  Config cfg = load_cfg(*root);
  gates::RequestInput in;
  in.type = *type;
  in.plan_path = o.plan_path;
  in.reason = o.reason;
  if (o.wave > 0) in.wave = o.wave;
  auto r = gates::request_gate(world(), *root, cfg, in, &command_approver());
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
json target_gate(const stdfs::path& root, const std::string& gate_id) {
  auto snap = state::load(world(), root);
  if (!snap.ok()) return nullptr;
  for (const auto& g : gates::list_gates(snap.doc)) {
    if (gate_id.empty() ? g.value("status", "") == "OPEN" : g.value("id", "") == gate_id) return g;
  }
  return nullptr;
}

// A JSON value on one line, at most 160 characters.
std::string one_line_json(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

// Text for the terminal, indented, at most max_lines lines (the rest counted).
void print_text(const std::string& text, size_t max_lines, const std::string& indent = "      ") {
  size_t n = 0, start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    if (++n <= max_lines) out::err(indent + safe(line));
  }
  if (n > max_lines) out::err(indent + "... (" + std::to_string(n - max_lines) + " more lines)");
}

// What a covered file is now against what the last approval approved: a unified diff (from
// the approved copy, gate_coverage.h), else its text when nothing of it was approved before.
void show_file(const stdfs::path& root, const std::string& rel, const json* approved_digest) {
  auto now = fs::read_text(root / rel, 16u << 20);
  if (approved_digest && *approved_digest == "absent") {
    if (!now.ok()) return;
    out::err("    " + safe(rel) + " added (absent when approved):");
    print_text(now.content, 120);
    return;
  }
  if (approved_digest && approved_digest->is_string()) {
    auto before = gates::approved_copy(world(), root, approved_digest->get<std::string>());
    if (!before) {
      out::err("    " + safe(rel) + " changed (the text approved then was not kept: approved by an older yolo)");
      return;
    }
    std::string diff =
        text::unified_diff(*before, now.ok() ? now.content : std::string(), "approved/" + rel, "now/" + rel, 3);
    out::err("    " + safe(rel) + (now.ok() ? " changed:" : " removed:"));
    print_text(diff, 400);
    return;
  }
  if (!now.ok()) {
    out::err("    " + safe(rel) + " (absent)");
    return;
  }
  out::err("    " + safe(rel) + " (not approved before):");
  print_text(now.content, 120);
}

// Shows the person what the gate covers (now) and what changed since it opened, as content:
// each covered file's diff against what the last approval of this gate approved (its text when
// there was none), the config keys with their values then and now, and the agents' argv. The
// digests only with --verbose (and in `yolo gates --json`). Returns the covers shown.
json show_gate(const stdfs::path& root, const json& g, bool verbose) {
  auto type = gates::parse_gate_type(g.value("gate_type", "vision")).value_or(gates::GateType::Vision);
  json now = gates::coverage(world(), root, type, gates::covered_files(g));
  out::err(out::sym(out::Sym::Diamond) + " gate " + safe(g.value("id", "")) + " (" + safe(g.value("gate_type", "")) +
           ") for " + safe(g.value("plan_path", "")) +
           (g.contains("reason") && g["reason"].is_string() ? ": " + safe(g["reason"].get<std::string>()) : ""));
  out::err("  project: " + safe(gates::project_id(world(), root)));
  auto snap = state::load(world(), root);
  if (snap.ok() && snap.doc.contains("correlation_id") && snap.doc["correlation_id"].is_string())
    out::err("  run:     " + safe(snap.doc["correlation_id"].get<std::string>()));
  if (verbose) {
    out::err("  covers (" + std::to_string(now.size()) + "):");
    for (auto& [k, v] : now.items())
      out::err("    " + safe(k) + " " + safe(v.is_string() ? v.get<std::string>() : v.dump()));
  } else {
    // What it covers, by name: a person reads the names and the content, not a column of hashes.
    std::string names, row;
    for (auto& [k, v] : now.items()) {
      std::string item = safe(k) + (v == "absent" ? " (absent)" : "");
      if (!row.empty() && row.size() + item.size() > 96) {
        names += "\n    " + row;
        row.clear();
      }
      row += (row.empty() ? "" : ", ") + item;
    }
    if (!row.empty()) names += "\n    " + row;
    out::err("  covers (" + std::to_string(now.size()) + "):" + names);
  }
  if (g.contains("covers") && g["covers"].is_object() && g["covers"] != now) {
    out::err(out::sym(out::Sym::Warn) + " changed since the gate opened:");
    for (const auto& c : gates::coverage_changes(g["covers"], now, verbose)) out::err("    " + safe(c));
  }
  // The last approval of this gate type and file: what the person approved then.
  const json* prev = nullptr;
  if (snap.ok() && snap.doc.contains("gates") && snap.doc["gates"].is_array())
    for (const auto& x : snap.doc["gates"])
      if (x.value("status", "") == "APPROVED" && x.value("gate_type", "") == g.value("gate_type", "") &&
          x.value("plan_path", "") == g.value("plan_path", "") && x.contains("covers") && x["covers"].is_object())
        prev = &x;
  const json no_covers = json::object();
  const json& before = prev ? (*prev)["covers"] : no_covers;
  json cfg = json::object();
  if (auto r = fs::read_text(root / ".yolo-planning" / "config.json"); r.ok()) {
    cfg = json::parse(r.content, nullptr, false);
    if (!cfg.is_object()) cfg = json::object();
  }
  auto brief = [](const json& v) { return text::sanitize_for_terminal(one_line_json(v)); };
  if (prev) {
    auto changes = gates::coverage_changes(before, now, verbose);
    out::err(
        out::sym(out::Sym::Diamond) + " since the last approval (gate " + safe(prev->value("id", "")) + " by " +
        safe(prev->value("approved_by", "")) + " at " + safe(prev->value("resolved_at", "")) + "): " +
        (changes.empty() ? std::string("nothing it covers changed") : std::to_string(changes.size()) + " change(s)"));
  } else {
    out::err(out::sym(out::Sym::Diamond) + " no earlier approval of this gate: everything it covers is new to you");
  }
  // Files: a diff against the approved text, or the text.
  for (const auto& [k, v] : now.items()) {
    if (k.rfind("file:", 0) != 0) continue;
    const std::string rel = k.substr(5);
    auto it = before.find(k);
    if (it != before.end() && *it == v) continue;  // as approved
    // Only the gate's own files are shown as text when new (the roadmap, the wave's plans);
    // the programs, profiles and signers a vision gate also covers are named.
    bool own = rel == g.value("plan_path", "") || type == gates::GateType::Wave;
    if (it == before.end() && !own) {
      out::err("    " + safe(rel) + (prev ? " newly covered" : ""));
      continue;
    }
    show_file(root, rel, it != before.end() ? &*it : nullptr);
  }
  // Config keys: the value then (where it still hashes to what was approved) and now.
  const json& vals = prev && prev->contains("config_values") && (*prev)["config_values"].is_object()
                         ? (*prev)["config_values"]
                         : no_covers;
  for (const auto& [k, v] : now.items()) {
    if (k.rfind("config:", 0) != 0) continue;
    auto it = before.find(k);
    if (!prev || (it != before.end() && *it == v)) continue;
    const std::string key = k.substr(7);
    std::string line = "    config key " + safe(key) + (it == before.end() ? " newly covered" : " changed");
    if (it != before.end() && vals.contains(key) && it->is_string() &&
        gates::config_value_digest(vals[key]) == it->get<std::string>())
      line += "\n        was: " + brief(vals[key]);
    line += "\n        now: " + (cfg.contains(key) ? brief(cfg[key]) : std::string("(not set)"));
    out::err(line);
  }
  // The rest (a phase's plan -> wave map), by name.
  for (const auto& [k, v] : now.items()) {
    if (k.rfind("file:", 0) == 0 || k.rfind("config:", 0) == 0) continue;
    json was = before.contains(k) ? before[k] : json("absent");
    if (prev && was != v)
      for (const auto& c : gates::coverage_changes(json{{k, was}}, json{{k, v}}, verbose)) out::err("    " + safe(c));
  }
  for (const auto& [k, v] : before.items())
    if (!now.contains(k)) out::err("    " + safe(k) + " no longer covered");
  // The agents the approval lets run, as they will be started.
  if (type == gates::GateType::Vision) {
    bool any = false;
    for (const char* agent : {"reviewer", "architect", "executor", "approvers"}) {
      if (!cfg.contains(agent) || cfg[agent].is_null()) continue;
      if (!any) out::err(out::sym(out::Sym::Diamond) + " the agents it lets run:");
      any = true;
      const json& a = cfg[agent];
      out::err("    " + std::string(agent) + ": " + brief(a.is_object() && a.contains("command") ? a["command"] : a));
    }
  }
  return now;
}

int approve(const Options& o) {
  const std::string cmd = "approve";
  std::string err;
  auto root = find_project(o.repo, err);
  if (!root) return fail(cmd, o, err);
  if (int code = 0; refuse_unless_person(cmd, o, code)) return code;
  Config cfg = load_cfg(*root);
  std::string by = approver_identity(o.by, *root);
  json shown = nullptr;
  std::string gate_id = o.gate_id;
  if (json g = target_gate(*root, o.gate_id); g.is_object() && g.value("status", "") == "OPEN") {
    shown = show_gate(*root, g, o.verbose);
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
  auto r = gates::approve_gate(world(), *root, cfg, gate_id, by, &command_approver(), o.override_approver, shown, {},
                               &signer);
  if (!r.ok()) return fail(cmd, o, r.error);
  remember_person_namespaces();
  std::string status = r.gate.is_object() ? r.gate.value("status", "") : "";
  bool approved = status == "APPROVED";
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
      auto snap = state::load(world(), *root);
      auto st =
          snap.ok() ? gates::gate_status(snap.doc, r.gate, gates::now_of(world(), *root)) : gates::ApprovalStatus{};
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

int reject(const Options& o) {
  const std::string cmd = "reject";
  std::string err;
  auto root = find_project(o.repo, err);
  if (!root) return fail(cmd, o, err);
  if (int code = 0; refuse_unless_person(cmd, o, code)) return code;
  std::string by = approver_identity(o.by, *root);
  std::string gate_id = o.gate_id;
  if (json g = target_gate(*root, o.gate_id); g.is_object() && g.value("status", "") == "OPEN") {
    show_gate(*root, g, o.verbose);
    gate_id = g.value("id", "");  // the gate shown is the one rejected
    if (!o.yes && !confirm("Reject it as " + safe(by) + "? [y/N] "))
      return fail(cmd, o, "not rejected (the answer was not y or yes); the gate stays open");
  }
  auto r = gates::reject_gate(world(), *root, gate_id, by, o.feedback);
  if (!r.ok()) return fail(cmd, o, r.error);
  if (o.json)
    out::json_line(run_json(cmd, r));
  else
    tell(r, /*to_stdout=*/true);
  return kExitOk;
}

int list(const Options& o) {
  const std::string cmd = "gates";
  std::string err;
  auto root = find_project(o.repo, err);
  if (!root) return fail(cmd, o, err);
  auto snap = state::load(world(), *root);
  if (!snap.ok()) return fail(cmd, o, snap.error);
  json all = json::array(), open = json::array();
  for (auto& g : gates::checked_gates(snap.doc, gates::now_of(world(), *root))) {
    if (g.value("status", "") == "OPEN") open.push_back(g);
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
      return [o] { return request_approval(*o); };
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
      return [o] { return approve(*o); };
    }}};

const CommandRegistrar reg_reject{
    Command{"reject", "Reject the open gate (or GATE_ID) with feedback; the run halts", [](CLI::App& sub) {
              auto o = std::make_shared<Options>();
              sub.add_option("GATE_ID", o->gate_id, "The gate (default: the open one)");
              sub.add_option("--feedback", o->feedback, "What to change")->required();
              sub.add_option("--by", o->by, "Who rejects (default: git user.name, else the OS user)");
              sub.add_flag("--yes", o->yes, "Do not ask for confirmation (a terminal is still needed)");
              common(sub, *o);
              return [o] { return reject(*o); };
            }}};

const CommandRegistrar reg_gates{
    Command{"gates", "List the gates of the run (open first in the JSON's open_gates)", [](CLI::App& sub) {
              auto o = std::make_shared<Options>();
              common(sub, *o);
              return [o] { return list(*o); };
            }}};

}  // namespace
}  // namespace yolo::runner
