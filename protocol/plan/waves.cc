#include "protocol/plan/waves.h"

#include <algorithm>
#include <unordered_map>

#include "protocol/plan/plan.h"

namespace yolo::waves {

const char* to_string(PlanStatus s) {
  switch (s) {
    case PlanStatus::Pending:
      return "pending";
    case PlanStatus::Ready:
      return "ready";
    case PlanStatus::Running:
      return "running";
    case PlanStatus::Complete:
      return "complete";
    case PlanStatus::Failed:
      return "failed";
  }
  return "pending";
}

std::optional<PlanStatus> parse_status(std::string_view s) {
  if (s == "pending") return PlanStatus::Pending;
  if (s == "ready") return PlanStatus::Ready;
  if (s == "running") return PlanStatus::Running;
  if (s == "complete") return PlanStatus::Complete;
  if (s == "failed") return PlanStatus::Failed;
  return std::nullopt;
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::Start:
      return "start";
    case Outcome::Waiting:
      return "waiting";
    case Outcome::Frozen:
      return "frozen";
    case Outcome::Complete:
      return "complete";
    case Outcome::Failed:
      return "failed";
    case Outcome::Blocked:
      return "blocked";
  }
  return "blocked";
}

int resolve_dependency(const std::vector<PlanNode>& plans, const std::string& dep) {
  std::string d = normalize_ref(dep);
  bool has_dash = d.find('-') != std::string::npos;
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string& mine = has_dash ? plans[i].id : plans[i].plan;
    if (!mine.empty() && normalize_ref(mine) == d) return static_cast<int>(i);
  }
  return -1;
}

void resolve_dependencies(std::vector<PlanNode>& plans) {
  // The first plan of each normalised id and plan number, as resolve_dependency's scan finds it.
  std::unordered_map<std::string, int> by_id, by_plan;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i].id.empty()) by_id.emplace(normalize_ref(plans[i].id), static_cast<int>(i));
    if (!plans[i].plan.empty()) by_plan.emplace(normalize_ref(plans[i].plan), static_cast<int>(i));
  }
  for (auto& p : plans) {
    p.dep_index.clear();
    for (const auto& dep : p.depends_on) {
      std::string d = normalize_ref(dep);
      const auto& m = d.find('-') != std::string::npos ? by_id : by_plan;
      auto f = m.find(d);
      p.dep_index.push_back(f == m.end() ? -1 : f->second);
    }
  }
}

namespace {

// Empty when every dependency of p is complete, else a sentence naming the first one that is not.
std::string unmet_dependency(const std::vector<PlanNode>& plans, const PlanNode& p) {
  const bool resolved = p.dep_index.size() == p.depends_on.size();
  for (size_t k = 0; k < p.depends_on.size(); ++k) {
    const std::string& dep = p.depends_on[k];
    int j = resolved ? p.dep_index[k] : resolve_dependency(plans, dep);
    if (j < 0) return "plan " + p.id + " depends on '" + dep + "', which is not a plan of this phase";
    const PlanNode& q = plans[static_cast<size_t>(j)];
    if (&q == &p) return "plan " + p.id + " depends on itself";
    if (q.status != PlanStatus::Complete)
      return "plan " + p.id + " waits for plan " + q.id + " (" + to_string(q.status) + ")";
  }
  return {};
}

bool startable_status(PlanStatus s) { return s == PlanStatus::Pending || s == PlanStatus::Ready; }

// The decisions made before any plan is looked at (d.running set): the phase (or the --plan
// plan) complete, a gate open, every slot taken. True when d is decided; else `slots` holds
// the free ones.
bool decided_before_scan(Decision& d, bool done, const Options& opts, size_t& slots) {
  if (done) {
    d.outcome = Outcome::Complete;
    return true;
  }
  if (opts.frozen) {
    d.outcome = Outcome::Frozen;
    d.reason = "a gate is open: no new plan starts";
    return true;
  }
  slots = opts.max_parallel > 0 && static_cast<size_t>(opts.max_parallel) > d.running
              ? static_cast<size_t>(opts.max_parallel) - d.running
              : 0;
  if (slots == 0 && d.running > 0) {  // every slot is taken: nothing starts, why others wait is not asked
    d.outcome = Outcome::Waiting;
    return true;
  }
  return false;
}

// After the scan: plans to start, or plans running (the others wait for them). False when
// nothing runs and nothing starts: the phase stops, for a reason.
bool decided_after_scan(Decision& d) {
  if (!d.start.empty()) {
    d.outcome = Outcome::Start;
    return true;
  }
  if (d.running > 0) {
    d.outcome = Outcome::Waiting;
    return true;
  }
  return false;
}

}  // namespace

Decision next(const std::vector<PlanNode>& plans, const Options& opts) {
  Decision d;
  int only = -1;
  if (!opts.only.empty()) {
    only = resolve_dependency(plans, opts.only);
    if (only < 0) {
      d.outcome = Outcome::Blocked;
      d.reason = "no plan '" + opts.only + "' in this phase";
      return d;
    }
  }
  bool all_complete = true;
  const PlanNode* invalid = nullptr;
  const PlanNode* failed = nullptr;
  for (const auto& p : plans) {
    if (p.wave >= 1) d.total_waves = std::max(d.total_waves, p.wave);
    if (p.status == PlanStatus::Running) ++d.running;
    if (p.status == PlanStatus::Failed && !failed) failed = &p;
    if (p.status == PlanStatus::Complete) continue;
    all_complete = false;
    if (p.wave < 1) {
      if (!invalid) invalid = &p;
      continue;
    }
    if (d.wave == 0 || p.wave < d.wave) d.wave = p.wave;
  }
  bool done = only >= 0 ? plans[static_cast<size_t>(only)].status == PlanStatus::Complete : all_complete;
  size_t slots = 0;
  if (decided_before_scan(d, done, opts, slots)) return d;
  std::string first_block;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (slots > 0 && d.start.size() == slots) break;  // the slots are filled: the outcome is Start
    const PlanNode& p = plans[i];
    if (only >= 0 && static_cast<int>(i) != only) continue;
    if (!startable_status(p.status)) continue;
    if (p.wave < 1) {
      if (first_block.empty()) first_block = "plan " + p.id + " has no valid wave";
      continue;
    }
    if (p.wave != d.wave) {
      if (first_block.empty())
        first_block = "plan " + p.id + " (wave " + std::to_string(p.wave) + ") waits for wave " +
                      std::to_string(d.wave) + " to complete";
      continue;
    }
    std::string unmet = unmet_dependency(plans, p);
    if (!unmet.empty()) {
      if (first_block.empty()) first_block = unmet;
      continue;
    }
    if (d.start.size() < slots) d.start.push_back(i);
  }
  if (decided_after_scan(d)) return d;
  if (failed) {
    d.outcome = Outcome::Failed;
    d.reason = "plan " + failed->id + " failed: wave " + std::to_string(failed->wave) +
               " cannot complete, the next wave does not start";
    return d;
  }
  d.outcome = Outcome::Blocked;
  if (!first_block.empty())
    d.reason = first_block;
  else if (invalid)
    d.reason = "plan " + invalid->id + " has no valid wave";
  else
    d.reason = "no plan can start";
  return d;
}

Board::Board(std::vector<PlanNode> plans) : plans_(std::move(plans)) {
  resolve_dependencies(plans_);
  for (size_t i = 0; i < plans_.size(); ++i) {
    const PlanNode& p = plans_[i];
    if (p.wave >= 1) total_waves_ = std::max(total_waves_, p.wave);
    ++waves_[p.wave].plans;
    count(i, +1);
  }
}

void Board::count(size_t i, int sign) {
  const PlanNode& p = plans_[i];
  Wave& w = waves_[p.wave];
  auto add = [sign](size_t& n) { n = sign > 0 ? n + 1 : n - 1; };
  if (p.status == PlanStatus::Running) add(running_);
  if (p.status == PlanStatus::Complete) {
    add(complete_);
  } else {
    add(w.open);
    if (p.wave >= 1) {
      if (w.open > 0)
        open_waves_.insert(p.wave);
      else
        open_waves_.erase(p.wave);
    }
  }
  if (p.status == PlanStatus::Complete || p.status == PlanStatus::Failed) add(w.finished);
  if (p.status == PlanStatus::Failed) add(w.failed);
  if (startable_status(p.status)) {
    if (sign > 0)
      w.startable.insert(i);
    else
      w.startable.erase(i);
  }
}

void Board::set(size_t i, PlanStatus s) {
  if (i >= plans_.size() || plans_[i].status == s) return;
  count(i, -1);
  plans_[i].status = s;
  count(i, +1);
}

bool Board::wave_finished(long long wave) const {
  auto w = waves_.find(wave);
  return w == waves_.end() || w->second.finished == w->second.plans;
}

bool Board::wave_failed(long long wave) const {
  auto w = waves_.find(wave);
  return w != waves_.end() && w->second.failed > 0;
}

Decision Board::next(const Options& opts) const {
  if (!opts.only.empty()) return waves::next(plans_, opts);  // one plan: next() looks at it alone
  Decision d;
  d.total_waves = total_waves_;
  d.running = running_;
  d.wave = open_waves_.empty() ? 0 : *open_waves_.begin();
  size_t slots = 0;
  if (decided_before_scan(d, complete_ == plans_.size(), opts, slots)) return d;
  // next() starts the first plans, by index, that may start, of the current wave: the
  // wave's startable plans, in index order, whose dependencies are complete.
  if (auto w = waves_.find(d.wave); d.wave >= 1 && w != waves_.end())
    for (size_t i : w->second.startable) {
      if (d.start.size() == slots) break;
      if (unmet_dependency(plans_, plans_[i]).empty()) d.start.push_back(i);
    }
  if (decided_after_scan(d)) return d;
  return waves::next(plans_, opts);  // the run stops here: next() finds the reason
}

}  // namespace yolo::waves
