// `yolo execute`: what the agents cost (protocol/state/agent_usage.h); the budget gate is
// runner/run_gates.h's.
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

}  // namespace yolo::runner::phase
