#include "protocol/run/run_core.h"

#include <algorithm>

#include "protocol/base/json_field.h"

namespace yolo::run {

Seeds seeds(const json& doc, const std::vector<execution::PlanEntry>& entries, const std::vector<PlanKnown>& known) {
  // Built once, dependencies resolved: the core looks each one up in O(1) and decides on the
  // current wave's plans only.
  std::vector<waves::PlanNode> nodes = execution::nodes(doc, entries);
  Seeds out;
  out.plans.resize(nodes.size());
  out.pending_worktree.assign(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    PlanSeed& sd = out.plans[i];
    sd.node = std::move(nodes[i]);
    if (const json* p = execution::find_plan(doc, entries[i].id)) {
      if (auto w = p->find("worktree"); w != p->end() && w->is_object()) {
        sd.merge = execution::merge_state(*w);
        sd.head = json_field::str(*w, "head");
        if (sd.merge == MergeState::Pending) out.pending_worktree[i] = &*w;
      }
    }
    if (i >= known.size()) continue;
    if (const json* d = known[i].job; d && !d->is_null()) {
      sd.attempt = d->value("attempt", 1);
      sd.job = *d;
    }
    sd.failed_before = known[i].failed_before;
  }
  return out;
}

MergeOutcome merge_outcome(MergeState after) {
  if (after == MergeState::Merged) return MergeOutcome::Merged;
  if (after == MergeState::Conflict) return MergeOutcome::Conflict;
  return MergeOutcome::Refused;
}

const char* to_string(Step s) {
  switch (s) {
    case Step::Idle:
      return "idle";
    case Step::Executing:
      return "executing";
    case Step::Checking:
      return "checking";
    case Step::Gating:
      return "gating";
    case Step::Done:
      return "done";
  }
  return "idle";
}

const char* to_string(Act a) {
  switch (a) {
    case Act::WriteState:
      return "write_state";
    case Act::Merge:
      return "merge";
    case Act::WaveEnd:
      return "wave_end";
    case Act::Halted:
      return "halted";
    case Act::Frozen:
      return "frozen";
    case Act::Pause:
      return "pause";
    case Act::Halt:
      return "halt";
    case Act::PlanComplete:
      return "plan_complete";
    case Act::Complete:
      return "complete";
    case Act::AskWaveGate:
      return "ask_wave_gate";
    case Act::AskBudget:
      return "ask_budget";
    case Act::WaveStart:
      return "wave_start";
    case Act::Start:
      return "start";
    case Act::MarkReady:
      return "mark_ready";
    case Act::MergeRefused:
      return "merge_refused";
  }
  return "write_state";
}

Core::Core(std::vector<PlanSeed> plans, Settings s) : settings_(std::move(s)) {
  std::vector<waves::PlanNode> nodes;
  nodes.reserve(plans.size());
  plans_.reserve(plans.size());
  start_.reserve(plans.size());
  for (auto& p : plans) {
    PlanRecord r;
    r.status = p.node.status;
    r.merge = p.merge;
    r.head = p.head;
    r.attempt = p.attempt;
    dispatch::Start st;
    st.attempt = p.attempt + 1;
    if (p.job.is_object()) {
      st = dispatch::decide_start(p.job, p.failed_before);
      if (st.kind == dispatch::Start::Kind::Reattach) r.handle = st.handle;
    }
    plans_.push_back(std::move(r));
    start_.push_back(std::move(st));
    if (p.node.wave >= 1 && (first_wave_ == 0 || p.node.wave < first_wave_)) first_wave_ = p.node.wave;
    nodes.push_back(std::move(p.node));
  }
  board_ = waves::Board(std::move(nodes));
}

void Core::set_status(size_t i, PlanStatus s) {
  plans_[i].status = s;
  board_.set(i, s);
}

// ---- events ---------------------------------------------------------------------------------

void Core::started(size_t i) {
  PlanRecord& r = plans_[i];
  if (r.status != PlanStatus::Running) set_status(i, PlanStatus::Running);
  r.step = Step::Executing;
  // A re-attached job is the same attempt; so is a submit that may have reached the engine
  // before the run stopped (the adapter answers with that job).
  r.attempt = start_[i].attempt;
  r.end.reset();
  r.merge = MergeState::None;
  r.head.clear();
  // A later start of the plan is a new attempt; its job (if it got one) may have pushed its
  // branch after all: looked up first.
  dispatch::Start again;
  again.attempt = r.attempt + 1;
  if (!r.handle.empty()) again.previous_attempt = r.attempt;
  start_[i] = again;
}

void Core::take_slot(size_t i, int slot) { plans_[i].slot = slot; }

void Core::not_started(size_t i, const execution::PlanEnd& end) {
  PlanRecord& r = plans_[i];
  set_status(i, end.status);
  r.step = Step::Done;
  r.slot = 0;
  r.end = end;
  waves_touched_.insert(board_[i].wave);
}

void Core::put_back(size_t i) {
  PlanRecord& r = plans_[i];
  set_status(i, PlanStatus::Pending);
  r.step = Step::Idle;
  r.slot = 0;
}

void Core::submitted(size_t i, const std::string& handle) { plans_[i].handle = handle; }

void Core::executor_exited(size_t i) { plans_[i].step = Step::Checking; }

void Core::gating(size_t i) { plans_[i].step = Step::Gating; }

void Core::concluded(size_t i, const execution::PlanEnd& end, MergeState merge, const std::string& head) {
  PlanRecord& r = plans_[i];
  set_status(i, end.status);
  r.step = Step::Done;
  r.slot = 0;  // its gates ran: the slot serves the next plan (the branch keeps the work)
  r.end = end;
  r.merge = merge;
  r.head = head;
  if (end.status == PlanStatus::Pending) r.handle.clear();
  waves_touched_.insert(board_[i].wave);
}

void Core::merged(size_t i, MergeOutcome m) {
  PlanRecord& r = plans_[i];
  switch (m) {
    case MergeOutcome::Merged:
      r.merge = MergeState::Merged;
      return;
    case MergeOutcome::Conflict:
      r.merge = MergeState::Conflict;
      set_status(i, PlanStatus::Failed);
      return;
    case MergeOutcome::Refused:  // nothing merged: the plan stays gated for the next run
      refused_.push_back(i);
      return;
  }
}

void Core::wave_gate(long long wave, Answer a) {
  if (a == Answer::Passed)
    wave_gate_passed_.insert(wave);
  else
    stopped_ = true;
}

void Core::budget(long long wave, Answer a) {
  if (a == Answer::Passed)
    budget_passed_.insert(wave);
  else
    stopped_ = true;
}

// ---- queries --------------------------------------------------------------------------------

bool Core::busy() const {
  for (const auto& r : plans_)
    if (r.step == Step::Executing || r.step == Step::Checking || r.step == Step::Gating) return true;
  return false;
}

size_t Core::gating_count() const {
  size_t n = 0;
  for (const auto& r : plans_) n += r.step == Step::Gating;
  return n;
}

size_t Core::done_count() const {
  size_t n = 0;
  for (const auto& r : plans_) n += r.status == PlanStatus::Complete;
  return n;
}

bool Core::slot_held(int slot, size_t except) const {
  for (size_t i = 0; i < plans_.size(); ++i)
    if (i != except && plans_[i].slot == slot && plans_[i].step != Step::Done && plans_[i].step != Step::Idle)
      return true;
  return false;
}

int Core::free_slot() const {
  int slot = 1;
  while (slot_held(slot, plans_.size())) ++slot;
  return slot;
}

std::vector<size_t> Core::merge_order() const {
  std::vector<size_t> order;  // plan order: the file order the core was built with
  for (size_t i = 0; i < plans_.size(); ++i)
    if (plans_[i].merge == MergeState::Pending && plans_[i].status == PlanStatus::Complete && !plans_[i].head.empty())
      order.push_back(i);
  return order;
}

bool Core::merge_due() const {
  if (!settings_.isolated || busy()) return false;
  for (const auto& r : plans_)
    if (r.merge == MergeState::Pending && r.status == PlanStatus::Complete && !r.head.empty()) return true;
  return false;
}

// ---- decisions ------------------------------------------------------------------------------

std::vector<Action> Core::next(const Outlook& o) {
  std::vector<Action> acts;
  if (stopped_) return acts;
  if (!refused_.empty()) {
    Action a{Act::MergeRefused};
    a.plans = refused_;
    refused_.clear();
    stopped_ = true;
    acts.push_back(std::move(a));
    return acts;
  }
  // Gated plans are merged, in plan order, once nothing runs: before anything else is
  // decided (a merge that conflicts fails its plan, and so its wave).
  if (merge_due()) {
    acts.push_back({Act::WriteState});
    Action m{Act::Merge};
    m.plans = merge_order();
    acts.push_back(std::move(m));
    return acts;
  }
  for (long long w : waves_touched_) {
    if (waves_ended_.count(w) || !board_.wave_finished(w)) continue;
    waves_ended_.insert(w);
    Action a{Act::WaveEnd};
    a.wave = w;
    a.failed = board_.wave_failed(w);
    acts.push_back(std::move(a));
  }
  if (o.halted) {
    acts.push_back({Act::Halted});
    stopped_ = true;
    return acts;
  }
  waves::Options wo;
  wo.max_parallel = settings_.max_parallel + static_cast<int>(gating_count());
  wo.frozen = o.frozen;
  wo.only = settings_.only;
  waves::Decision d = board_.next(wo);
  // While a plan's gates run here, only a start is decided: the rest (the end of the phase,
  // a pause, a halt) waits for its outcome.
  if (gating_count() > 0 && d.outcome != waves::Outcome::Start) return acts;
  const bool busy_now = busy();
  switch (d.outcome) {
    case waves::Outcome::Waiting:
      return acts;
    case waves::Outcome::Complete: {
      if (busy_now) {
        acts.push_back({Act::WriteState});
        return acts;
      }
      waves::Options all = wo;
      all.only.clear();
      all.frozen = false;
      Action a{board_.next(all).outcome == waves::Outcome::Complete ? Act::Complete : Act::PlanComplete};
      if (a.kind == Act::PlanComplete) acts.push_back({Act::WriteState});
      acts.push_back(std::move(a));
      stopped_ = true;
      return acts;
    }
    case waves::Outcome::Frozen:
      acts.push_back({Act::WriteState});
      if (busy_now) {
        if (!frozen_noted_) acts.push_back({Act::Frozen});
        frozen_noted_ = true;
        return acts;
      }
      acts.push_back({Act::Pause});
      stopped_ = true;
      return acts;
    case waves::Outcome::Failed:
    case waves::Outcome::Blocked: {
      acts.push_back({Act::WriteState});
      if (busy_now) return acts;
      Action a{Act::Halt};
      a.reason = d.reason;
      acts.push_back(std::move(a));
      stopped_ = true;
      return acts;
    }
    case waves::Outcome::Start:
      break;
  }
  const long long w = d.wave;
  if (settings_.wave_approval && w > first_wave_ && !wave_gate_passed_.count(w)) {
    if (busy_now) return acts;
    acts.push_back({Act::WriteState});
    Action a{Act::AskWaveGate};
    a.wave = w;
    acts.push_back(std::move(a));
    return acts;
  }
  if (!budget_passed_.count(w)) {  // what the agents cost so far, before the wave starts
    if (busy_now) return acts;
    Action a{Act::AskBudget};
    a.wave = w;
    acts.push_back(std::move(a));
    return acts;
  }
  if (!waves_started_.count(w)) {
    waves_started_.insert(w);
    Action a{Act::WaveStart};
    a.wave = w;
    a.total_waves = d.total_waves;
    for (size_t i = 0; i < plans_.size(); ++i)
      if (board_[i].wave == w) a.plans.push_back(i);
    acts.push_back(std::move(a));
  }
  Action s{settings_.executor ? Act::Start : Act::MarkReady};
  s.wave = w;
  s.total_waves = d.total_waves;
  s.plans = d.start;
  if (settings_.executor) {
    // Decided is started: the plans are running for the waves from now on (started() or
    // not_started() follows for each, put_back() for one a batch gave up before its start).
    for (size_t i : d.start) {
      set_status(i, PlanStatus::Running);
      plans_[i].step = Step::Executing;
      plans_[i].slot = 0;
      if (start_[i].kind == dispatch::Start::Kind::Reattach) s.reattach.push_back(i);
      s.jobs.push_back(start_[i]);
    }
  } else {
    stopped_ = true;
  }
  acts.push_back(std::move(s));
  return acts;
}

}  // namespace yolo::run
