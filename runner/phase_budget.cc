// `yolo execute`: what the agents cost (protocol/state/agent_usage.h) and the budget gate.
#include "protocol/state/agent_usage.h"
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

void Run::record_usage(size_t i, const std::string& agent, const std::string& out) {
  auto u = usage::parse(out);
  if (!u) return;  // the CLI printed no machine-readable usage (plain text output)
  const auto& e = entries_[i];
  usage::Record rec{world_.now(), cid_, phase_.folder, e.id, agent, 0, *u};
  if (std::string err = usage::append(world_, root_, rec).error; !err.empty()) note("could not record the usage: " + err);
  json data = {{"plan", e.id}, {"agent", agent}, {"usage", u->to_json()}};
  log("agent_token_usage", e.plan, data);
}

GateOutcome Run::budget_gate(long long w) {
  usage::Budget b = usage::budget_of(cfg_.raw);
  if (!b.any()) return GateOutcome::Passed;
  usage::Totals t = usage::totals(usage::read_all(world_, root_), cid_, phase_.folder);
  auto over = usage::over_budget(b, t);
  if (!over) return GateOutcome::Passed;
  // The gate covers a statement of which budget was passed and how many times: it changes
  // (and the gate opens again) only at the next multiple of the budget.
  const std::string rel = ".yolo-planning/.costs/budget-" + (over->scope == "phase" ? phase_.folder : "run") + ".md";
  const std::string text = usage::statement(*over, phase_.folder, cid_);
  auto have = world_.files().read(root_ / rel, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!have.ok() || have.content != text) {
    std::string err = world_.files().make_dirs((root_ / rel).parent_path()).error;
    if (err.empty()) err = world_.files().write_atomic(root_ / rel, text).error;
    if (!err.empty()) {
      emit("gate_error", {{"gate_type", "budget"}, {"plan_path", rel}, {"reason", err}}, Sym::Fail,
           "Budget gate: " + err);
      stop(kExecHalted, Result::Halted, "Halted: " + err);
      return GateOutcome::Halted;
    }
  }
  std::string reason = over->describe() + " before wave " + std::to_string(w) + " of phase " + phase_.folder;
  emit("budget_passed",
       {{"scope", over->scope},
        {"unit", over->unit},
        {"spent", over->spent},
        {"limit", over->limit},
        {"level", over->level},
        {"usage", t.to_json()}},
       Sym::Warn, "Budget: " + over->describe());
  flush_plans();
  GateOutcome g = ensure_gate(gates::GateType::Budget, rel, reason, static_cast<int>(w), {rel});
  if (g == GateOutcome::Paused)
    stop(kExecPaused, Result::Paused, "Paused before wave " + std::to_string(w) + ": " + over->describe());
  return g;
}

}  // namespace yolo::runner::phase
