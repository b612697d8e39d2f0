#include "protocol/reconcile.h"

#include <algorithm>

#include "protocol/reviewed.h"

namespace yolo::watch {

bool drives_execution(const Situation& s) { return s.drive_asked || s.run_in_progress; }

PlanSeen plan_seen(std::optional<std::string_view> last_seen, std::string_view reviewed_hash,
                   std::string_view hash_now) {
  if (last_seen && *last_seen == hash_now) return PlanSeen::Unchanged;
  if (review::same_content(reviewed_hash, hash_now)) return PlanSeen::ReviewedAsIs;
  return PlanSeen::NeedsReview;
}

Actions decide(const Changes& c, const Situation& s) {
  Actions a;
  bool driving = drives_execution(s);
  if (s.review)
    for (const auto& [phase, plans] : c.plans) a.reviews[phase] = plans;
  a.request_vision_gate = c.roadmap && !driving;
  a.run_execute = driving && (c.summaries || c.roadmap || c.approvals);
  return a;
}

bool gate_resolved_since_pause(bool paused, std::string_view run_status) {
  return paused && !run_status.empty() && run_status != "awaiting_approval";
}

Lane lane_for(bool full_scan, bool initial, size_t found) {
  if (!full_scan) return Lane::Fresh;
  return !initial && found <= kFreshRescanMax ? Lane::Fresh : Lane::Backlog;
}

size_t batch_size(Lane lane, bool agents) {
  if (lane == Lane::Fresh) return 64;
  return agents ? 1 : 256;
}

// The lanes' deques may hold stale entries (a plan moved to the fresh lane, dropped, or
// queued again): where_ is the truth, and take() skips what it does not confirm. So a move
// or a drop costs a map update, not a scan of a 100,000-plan backlog.
void ReviewQueue::push(const std::filesystem::path& plan, Lane lane) {
  if (auto it = where_.find(plan); it != where_.end()) {
    if (it->second == lane || it->second == Lane::Fresh) return;  // queued already (fresh wins)
    --count_[index(it->second)];
    it->second = lane;
  } else {
    where_.emplace(plan, lane);
  }
  ++count_[index(lane)];
  queue_[index(lane)].push_back(plan);
}

void ReviewQueue::drop(const std::filesystem::path& plan) {
  auto it = where_.find(plan);
  if (it == where_.end()) return;
  --count_[index(it->second)];
  where_.erase(it);
}

std::optional<ReviewBatch> ReviewQueue::take(Lane lane, size_t max) {
  size_t i = index(lane);
  if (running_[i] || max == 0 || count_[i] == 0) return std::nullopt;
  ReviewBatch b;
  b.lane = lane;
  auto& q = queue_[i];
  std::vector<std::filesystem::path> waiting;  // queued, but their earlier batch has not ended
  while (!q.empty() && b.plans.size() < max) {
    std::filesystem::path p = std::move(q.front());
    q.pop_front();
    auto it = where_.find(p);
    if (it == where_.end() || it->second != lane) continue;  // stale entry
    if (flight_.count(p)) {
      waiting.push_back(std::move(p));
      continue;
    }
    where_.erase(it);
    --count_[i];
    flight_.emplace(p, lane);
    b.plans.push_back(std::move(p));
  }
  for (auto it = waiting.rbegin(); it != waiting.rend(); ++it) q.push_front(std::move(*it));
  if (b.plans.empty()) return std::nullopt;
  running_[i] = true;
  return b;
}

void ReviewQueue::finish(Lane lane) {
  running_[index(lane)] = false;
  for (auto it = flight_.begin(); it != flight_.end();) it = it->second == lane ? flight_.erase(it) : std::next(it);
}

bool still_needs_review(std::string_view seen_hash, std::string_view reviewed_hash) {
  return !review::same_content(reviewed_hash, seen_hash);
}

}  // namespace yolo::watch
