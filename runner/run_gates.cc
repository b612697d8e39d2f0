// `yolo execute`'s gates (runner/run_gates.h): protocol's gates::ensure carried out.
#include "runner/run_gates.h"

#include "protocol/base/json_field.h"
#include "protocol/gates/approver_policy.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gate_run.h"
#include "protocol/gates/gate_step.h"
#include "protocol/state/agent_usage.h"
#include "runner/phase_run.h"

namespace yolo::runner::phase {

using execution::Result;
using json_field::str;
using out::Sym;

void RunGates::pause_for(const json& g) {
  std::string type = str(g, "gate_type");
  std::string label(gates::label_of(type));
  std::string path = str(g, "plan_path");
  std::string id = str(g, "id");
  tell_.emit("gate_paused", {{"gate_id", id}, {"gate_type", type}, {"plan_path", path}, {"last_error", str(g, "last_error")}},
       Sym::Pause, label + " gate: Awaiting human approval for " + path + ". Execution paused.");
  if (!str(g, "last_error").empty())
    tell_.note("the approver failed: " + str(g, "last_error") + " (`yolo approve` retries it)");
  if (!id.empty()) tell_.note("approve: yolo approve " + id + " --by NAME    reject: yolo reject " + id + " --feedback TEXT");
  if (!id.empty())
    host_.next_step("`yolo approve " + id + "` in a terminal (or `yolo reject " + id +
                    " --feedback TEXT`), then `yolo execute`");
}

GateOutcome RunGates::wave_gate(long long w, const std::vector<execution::PlanEntry>& entries,
                                const std::string& phase) {
  std::string rel, ids;
  std::vector<std::string> files;
  for (const auto& e : entries)
    if (e.wave == w) {
      if (rel.empty()) rel = e.path;
      files.push_back(e.path);
      ids += (ids.empty() ? "" : ", ") + e.id;
    }
  const std::string wave = std::to_string(w);
  GateOutcome g = ensure(gates::GateType::Wave, rel, "wave " + wave + " of phase " + phase + ": plans " + ids,
                         static_cast<int>(w), files);
  if (g == GateOutcome::Paused)
    host_.stop(kExecPaused, Result::Paused, "Paused before wave " + wave + ": its wave gate awaits approval");
  return g;
}

void RunGates::pause(const json& doc) {
  if (const json* g = gates::open_gate(doc))
    pause_for(*g);
  else if (auto a = doc.find("approval"); a != doc.end() && a->is_object())
    pause_for(*a);
  host_.stop(kExecPaused, Result::Paused,
             "Paused at a gate: after `yolo approve`, run `yolo execute` again to continue");
}

GateOutcome RunGates::ensure(gates::GateType type, const std::string& rel, const std::string& reason,
                             std::optional<int> wave, const std::vector<std::string>& files) {
  const gates::Now now = gates::now_of(world_, root_);
  std::string tname(gates::to_string(type));
  std::string label(gates::label(type));
  bool acted = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto& snap = writes_.now();  // read again when another process (or a gate step) wrote it
    if (!snap.ok()) {
      host_.stop(kExecHalted, Result::Error, snap.error);
      return GateOutcome::Halted;
    }
    auto digested = gates::file_digest(world_, root_, rel);
    std::string err = digested.error, digest = digested.value_or("");
    gates::Need need = gates::ensure(snap.doc, type, rel, now, files);
    if (digest.empty() && need.step != gates::Step::Pause) {  // an open gate waits first
      std::string why = "the " + tname + " gate needs " + rel + ": " + err;
      tell_.emit("gate_error", {{"gate_type", tname}, {"plan_path", rel}, {"reason", why}}, Sym::Fail,
           label + " gate: " + why);
      host_.stop(kExecHalted, Result::Halted, "Halted: " + why);
      return GateOutcome::Halted;
    }
    const gates::ApprovalStatus& st = need.status;
    switch (need.step) {
      case gates::Step::Proceed: {
        std::string by = str(st.gate, "approved_by");
        tell_.emit("gate_passed",
             {{"gate_type", tname}, {"plan_path", rel}, {"gate_id", str(st.gate, "id")}, {"approved_by", by}}, Sym::Ok,
             label + " gate: " + (acted ? "cleared" : "approved") + (by.empty() ? "" : " (by " + by + ")") + " for " +
                 rel);
        return GateOutcome::Passed;
      }
      case gates::Step::Pause:
        pause_for(need.gate);
        return GateOutcome::Paused;
      case gates::Step::Halt: {
        std::string fb = str(st.gate, "feedback");
        tell_.emit("gate_rejected",
             {{"gate_type", tname}, {"plan_path", rel}, {"gate_id", str(st.gate, "id")}, {"feedback", fb}}, Sym::Fail,
             label + " gate: rejected: " + fb);
        tell_.note("revise " + rel + " and request approval again: yolo request-approval --plan-path " + rel +
             " --gate-type " + tname);
        host_.set_halted(st.message);
        host_.stop(kExecHalted, Result::Halted, "Halted: " + st.message);
        return GateOutcome::Halted;
      }
      case gates::Step::Reopen: {
        tell_.emit("approval_invalidated", {{"gate_type", tname}, {"plan_path", rel}, {"reason", st.message}}, Sym::Warn,
             st.message);
        gates::GateRun r = gates::reopen_stale_gate(world_, root_, cfg_, type, rel, now, files, &approver_);
        if (!r.ok()) {
          host_.stop(kExecHalted, Result::Error, r.error);
          return GateOutcome::Halted;
        }
        for (const auto& m : r.messages)
          if (m.kind == gates::Outcome::Warning) tell_.note(m.text);
        acted = true;
        continue;
      }
      case gates::Step::Request: {
        gates::RequestInput in;
        in.type = type;
        in.plan_path = rel;
        in.reason = reason;
        in.wave = wave;
        in.files = files;
        tell_.emit("gate_requested", {{"gate_type", tname}, {"plan_path", rel}, {"reason", reason}}, Sym::Diamond,
             label + " gate: opening on " + rel + " (approver: " + approver_note_for(type) + ")");
        gates::GateRun r = gates::request_gate(world_, root_, cfg_, in, &approver_);
        for (const auto& m : r.messages)
          if (m.kind == gates::Outcome::Warning) tell_.note(m.text);
        if (!r.ok()) {
          tell_.emit("gate_error", {{"gate_type", tname}, {"plan_path", rel}, {"reason", r.error}}, Sym::Fail,
               label + " gate: " + r.error);
          host_.stop(kExecHalted, Result::Halted, "Halted: " + r.error);
          return GateOutcome::Halted;
        }
        if (!r.stamp.empty() && r.state.is_object()) {
          // The state as the gate's last write left it: the next writes_.now() reads the file
          // again only if another process wrote it since.
          writes_.wrote(std::move(r.state), r.stamp);
        }
        acted = true;
        continue;
      }
    }
  }
  host_.stop(kExecPaused, Result::Paused, label + " gate: still not passed");
  return GateOutcome::Paused;
}

std::string RunGates::approver_note_for(gates::GateType type) const {
  auto spec = gates::approver_spec(cfg_, type);
  switch (spec.kind) {
    case gates::ApproverSpec::Kind::Manual:
      return "manual";
    case gates::ApproverSpec::Kind::Skip:
      return "skip";
    case gates::ApproverSpec::Kind::Command:
      return "command " + (spec.argv.empty() ? std::string() : spec.argv[0]);
    case gates::ApproverSpec::Kind::Invalid:
      return "invalid: " + spec.error;
  }
  return "manual";
}

GateOutcome RunGates::budget(long long w, const std::string& phase, const std::string& cid) {
  usage::Budget b = usage::budget_of(cfg_.raw);
  if (!b.any()) return GateOutcome::Passed;
  usage::Totals t = usage::totals(usage::read_all(world_, root_), cid, phase);
  auto over = usage::over_budget(b, t);
  if (!over) return GateOutcome::Passed;
  // The gate covers a statement of which budget was passed and how many times: it changes
  // (and the gate opens again) only at the next multiple of the budget.
  const std::string rel = ".yolo-planning/.costs/budget-" + (over->scope == "phase" ? phase : "run") + ".md";
  const std::string text = usage::statement(*over, phase, cid);
  auto have = world_.files().read(root_ / rel, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!have.ok() || have.content != text) {
    std::string err = world_.files().make_dirs((root_ / rel).parent_path()).error;
    if (err.empty()) err = world_.files().write_atomic(root_ / rel, text).error;
    if (!err.empty()) {
      tell_.emit("gate_error", {{"gate_type", "budget"}, {"plan_path", rel}, {"reason", err}}, Sym::Fail,
           "Budget gate: " + err);
      host_.stop(kExecHalted, Result::Halted, "Halted: " + err);
      return GateOutcome::Halted;
    }
  }
  std::string reason = over->describe() + " before wave " + std::to_string(w) + " of phase " + phase;
  tell_.emit("budget_passed",
       {{"scope", over->scope},
        {"unit", over->unit},
        {"spent", over->spent},
        {"limit", over->limit},
        {"level", over->level},
        {"usage", t.to_json()}},
       Sym::Warn, "Budget: " + over->describe());
  writes_.flush();
  GateOutcome g = ensure(gates::GateType::Budget, rel, reason, static_cast<int>(w), {rel});
  if (g == GateOutcome::Paused)
    host_.stop(kExecPaused, Result::Paused, "Paused before wave " + std::to_string(w) + ": " + over->describe());
  return g;
}

}  // namespace yolo::runner::phase
