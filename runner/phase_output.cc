// `yolo execute`: what the run shows of itself to its report (runner/run_report.h): the plans'
// statuses for its last JSON line, what its live line shows; and the run's last word.
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

int Run::finish(int code, Result result, const std::string& message) {
  worktrees_.tidy();  // what killed runs left, once (runner/run_worktrees.h)
  return report_.finish(code, result, message);
}

RunReport::Host Run::report_host() {
  RunReport::Host h;
  h.plans = [this] {
    json plans = json::array();
    auto snap = state::load(world_, root_);
    if (snap.ok()) {
      auto statuses = execution::nodes(snap.doc, entries_);  // one pass over the state's plans
      for (size_t i = 0; i < entries_.size(); ++i)
        plans.push_back({{"id", entries_[i].id}, {"status", std::string(waves::to_string(statuses[i].status))}});
    }
    return plans;
  };
  h.live = [this] { return live_view(); };
  return h;
}

LiveView Run::live_view() {
  LiveView v;
  v.total = entries_.size();
  for (size_t i = 0; i < entries_.size(); ++i)
    if ((core_.plan(i).step == run::Step::Done && core_.plan(i).status == PlanStatus::Complete) ||
        (entries_[i].summary == SummaryState::Passed && !runs_[i].running))
      ++v.done;
  long long timeout = cfg_.timeout_for(cfg_.executor);
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (!runs_[i].running) continue;
    double secs = static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e9;
    v.running.push_back({entries_[i].id, secs, timeout, run_of(i).tool});
  }
  for (size_t i = 0; i < runs_.size(); ++i)
    if (const char* step = run_of(i).aside_step) v.aside.push_back({entries_[i].id, step});
  return v;
}

}  // namespace yolo::runner::phase
