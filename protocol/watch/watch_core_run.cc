// What the watch core follows of the run (watch::RunFollower): the state's approvals as last
// loaded, and when `yolo execute` runs (again). The rest of the core: protocol/watch/watch_core.cc.
#include "protocol/gates/approvals.h"
#include "protocol/run/execute_rules.h"
#include "protocol/run/execution.h"
#include "protocol/gates/gates.h"
#include "protocol/state/state.h"
#include "protocol/watch/watch_core.h"

namespace yolo::watch {

namespace stdfs = std::filesystem;

RunFollower::RunFollower(const World& w, stdfs::path root, bool drive_asked, Say say, std::function<long long()> now_ms)
    : w_(w), root_(std::move(root)), drive_asked_(drive_asked), say_(std::move(say)), now_ms_(std::move(now_ms)) {}

void RunFollower::load_state(bool announce) {
  // A state file with the bytes last loaded says the same: no parse, no schema check (a
  // review's own write comes back as an event).
  const stdfs::path file = state::state_path(root_);
  auto before = w_.files().read(file, 64u << 20, /*text=*/false);
  if (state_cached_ && before.ok() && before.content == state_bytes_) return;
  state_cached_ = false;
  std::string().swap(state_bytes_);
  auto s = state::load(w_, root_);
  if (!s.ok()) {
    if (s.error != last_state_error_) say_(Mark::Fail, s.error, {{"event", "state_error"}, {"error", s.error}});
    last_state_error_ = s.error;
    return;
  }
  last_state_error_.clear();
  const json& d = s.doc;
  active_run_ = execution::run_in_progress(d);  // a review's records are no run
  run_status_ = d.value("status", json("")).is_string() ? d.value("status", "") : "";
  // What unblocks or blocks the run: the approval and each gate's status.
  json approvals = {{"approval", d.value("approval", json(nullptr))}, {"gates", json::array()}};
  if (auto g = d.find("gates"); g != d.end() && g->is_array())
    for (const auto& gate : *g)
      if (gate.is_object()) approvals["gates"].push_back({gate.value("id", ""), gate.value("status", "")});
  std::string fp = approvals.dump();
  if (fp != approvals_fp_) {
    if (announce) announce_approval_change(d);
    approvals_fp_ = fp;
    approvals_changed_ = true;
  }
  // The bytes are remembered only when the file read the same on both sides of the load.
  s.doc = json();
  auto after = w_.files().read(file, 64u << 20, false);
  if (before.ok() && after.ok() && after.content == before.content) {
    state_bytes_ = std::move(before.content);
    state_cached_ = true;
  }
}

void RunFollower::announce_approval_change(const json& d) {
  const json approval = d.value("approval", json(nullptr));
  bool awaiting = execution::run_status(d) == execution::RunStatus::AwaitingApproval;
  if (awaiting && approval.is_object()) {
    std::string p = approval.value("plan_path", json("")).is_string() ? approval.value("plan_path", "") : "";
    say_(Mark::Pause, "waiting for approval of " + p,
         {{"event", execution::to_string(execution::RunStatus::AwaitingApproval)}, {"plan_path", p}});
  } else if (approval.is_object() && approval.value("approved", false)) {
    std::string by = approval.value("approved_by", json("")).is_string() ? approval.value("approved_by", "") : "";
    std::string p = approval.value("plan_path", json("")).is_string() ? approval.value("plan_path", "") : "";
    // Whether it counts is the gates' own question (seal, digest of the file now).
    auto type = gates::parse_gate_type(approval.value("gate_type", json("vision")).is_string()
                                           ? approval.value("gate_type", "vision")
                                           : "vision")
                    .value_or(gates::GateType::Vision);
    auto st = gates::approval_status(d, type, p, gates::now_of(w_, root_));
    if (!st.counts()) {
      say_(Mark::Warn, "an approval of " + p + " does not count: " + st.message,
           {{"event", "approval_not_counted"}, {"plan_path", p}, {"approved_by", by}, {"reason", st.message}});
      return;  // when driving, execute runs anyway (the state changed): it re-opens the gate and says why
    }
    say_(Mark::Ok, "approval landed" + (by.empty() ? "" : " (by " + by + ")") + (driving() ? " → resuming" : ""),
         {{"event", "approved"}, {"approved_by", by}});
  }
}

// ---- execute and the gate --------------------------------------------------------------

bool RunFollower::want_execute(bool force) {
  if (exec_running_) {
    exec_rerun_ = true;  // once it ends
    return false;
  }
  if (!force && !driving()) return false;
  exec_rerun_ = false;
  exec_running_ = true;
  exec_t0_ = now();
  return true;
}

bool RunFollower::execute_ended(bool exited, int exit_code, const std::string& describe, const std::string& err_tail) {
  exec_running_ = false;
  const execution::ExecuteEnd end = execution::execute_end(exit_code);
  std::string what;
  Mark m = Mark::Fail;
  if (exited) {
    switch (end) {
      case execution::ExecuteEnd::Complete:
        what = "phase complete", m = Mark::Ok;
        break;
      case execution::ExecuteEnd::HaltedOrFailed:
        what = "run halted or failed", m = Mark::Fail;
        break;
      case execution::ExecuteEnd::Paused:
        what = "paused at a gate", m = Mark::Pause;
        break;
      case execution::ExecuteEnd::WaitingForSummaries:
        what = "waiting for SUMMARY files", m = Mark::Skip;
        break;
      case execution::ExecuteEnd::Other:
        what = "execute " + describe;
        break;
    }
  } else {
    what = "execute " + describe;
  }
  const double ms = static_cast<double>(now() - exec_t0_);
  std::string tail = exited && execution::expected_end(end) ? "" : err_tail;
  say_(m, what + " (" + std::to_string(now() - exec_t0_) + " ms)" + (tail.empty() ? "" : "\n" + tail),
       {{"event", "execute_done"}, {"exit_code", exit_code}, {"outcome", what}, {"ms", ms}});
  load_state(/*announce=*/true);
  approvals_changed_ = false;  // what execute itself wrote is not news...
  // ...but an approval that landed while it was pausing is: the state says so (the run is
  // not awaiting approval any more). Once per state of the approvals, so a run that pauses
  // again on the same state does not loop.
  bool paused = exited && end == execution::ExecuteEnd::Paused;
  if (gate_resolved_since_pause(paused, run_status_) && approvals_fp_ != resumed_fp_) {
    resumed_fp_ = approvals_fp_;
    exec_rerun_ = true;
  }
  return exec_rerun_ && want_execute(/*force=*/true);
}

void RunFollower::gate_request_ended() {
  gate_running_ = false;
  load_state(/*announce=*/true);
}

// ---- the core's side -----------------------------------------------------------------

void Core::run_execute(bool force) {
  if (!run_.want_execute(force)) return;
  Action a;
  a.kind = Action::Kind::RunExecute;
  out_.push_back(std::move(a));
}

void Core::execute_ended(bool exited, int exit_code, const std::string& describe, const std::string& err_tail) {
  if (!run_.execute_ended(exited, exit_code, describe, err_tail)) return;
  Action a;
  a.kind = Action::Kind::RunExecute;
  out_.push_back(std::move(a));
}

void Core::gate_request_ended() { run_.gate_request_ended(); }

}  // namespace yolo::watch
