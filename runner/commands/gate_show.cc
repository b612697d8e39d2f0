// The display half of approve and reject: what the gate covers now against what was
// approved, as diffs and values for a person at a terminal. Apart from cmd_gates.cc, which
// decides (request, approve, reject, list), because this part only reads and prints.
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

namespace yolo::runner::gate_show {

namespace stdfs = std::filesystem;

// Gate messages and errors carry plan paths, feedback and approver output: no control
// characters reach the terminal.
std::string safe(const std::string& s) { return text::sanitize_for_terminal(s); }

namespace {

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
void show_file(const World& w, const stdfs::path& root, const std::string& rel, const json* approved_digest) {
  auto now = w.files().read(root / rel, 16u << 20, /*text=*/true);
  if (approved_digest && *approved_digest == "absent") {
    if (!now.ok()) return;
    out::err("    " + safe(rel) + " added (absent when approved):");
    print_text(now.content, 120);
    return;
  }
  if (approved_digest && approved_digest->is_string()) {
    auto before = gates::approved_copy(w, root, approved_digest->get<std::string>());
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

}  // namespace

// Shows the person what the gate covers (now) and what changed since it opened, as content:
// each covered file's diff against what the last approval of this gate approved (its text when
// there was none), the config keys with their values then and now, and the agents' argv. The
// digests only with --verbose (and in `yolo gates --json`). Returns the covers shown.
json show_gate(const World& w, const stdfs::path& root, const json& g, bool verbose) {
  auto type = gates::parse_gate_type(g.value("gate_type", "vision")).value_or(gates::GateType::Vision);
  json now = gates::coverage(w, root, type, gates::covered_files(g));
  out::err(out::sym(out::Sym::Diamond) + " gate " + safe(g.value("id", "")) + " (" + safe(g.value("gate_type", "")) +
           ") for " + safe(g.value("plan_path", "")) +
           (g.contains("reason") && g["reason"].is_string() ? ": " + safe(g["reason"].get<std::string>()) : ""));
  out::err("  project: " + safe(gates::project_id(w, root)));
  auto snap = state::load(w, root);
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
      if (gates::has_status(x, gates::GateStatus::Approved) && x.value("gate_type", "") == g.value("gate_type", "") &&
          x.value("plan_path", "") == g.value("plan_path", "") && x.contains("covers") && x["covers"].is_object())
        prev = &x;
  const json no_covers = json::object();
  const json& before = prev ? (*prev)["covers"] : no_covers;
  json cfg = json::object();
  if (auto r = w.files().read(root / ".yolo-planning" / "config.json", fs::kDefaultMaxFileBytes, true); r.ok()) {
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
    show_file(w, root, rel, it != before.end() ? &*it : nullptr);
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

}  // namespace yolo::runner::gate_show
