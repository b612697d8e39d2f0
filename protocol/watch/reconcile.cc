#include "protocol/watch/reconcile.h"

#include <algorithm>
#include <cstring>

namespace yolo::watch {

bool drives_execution(const Situation& s) { return s.drive_asked || s.run_in_progress; }

PlanSeen plan_seen(std::optional<std::string_view> last_seen, bool reviewed_as_is, std::string_view hash_now) {
  if (last_seen && *last_seen == hash_now) return PlanSeen::Unchanged;
  return reviewed_as_is && !hash_now.empty() ? PlanSeen::ReviewedAsIs : PlanSeen::NeedsReview;
}

size_t ReviewRecords::DigestHash::operator()(const Digest& d) const {
  size_t h;
  std::memcpy(&h, d.data(), sizeof h);  // a sha256 is spread evenly already
  return h;
}

std::optional<ReviewRecords::Digest> ReviewRecords::digest_of(std::string_view hash) {
  constexpr std::string_view kPrefix = "sha256:";
  if (hash.substr(0, kPrefix.size()) == kPrefix) hash.remove_prefix(kPrefix.size());
  if (hash.size() != 64) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Digest d{};
  for (size_t i = 0; i < 32; ++i) {
    int a = nibble(hash[2 * i]), b = nibble(hash[2 * i + 1]);
    if (a < 0 || b < 0) return std::nullopt;
    d[i] = static_cast<unsigned char>(a * 16 + b);
  }
  return d;
}

void ReviewRecords::set(const std::string& phase, const std::string& id, std::string_view hash) {
  auto d = digest_of(hash);
  auto pit = phases_.find(phase);
  if (pit == phases_.end()) {
    if (!d) return;
    pit = phases_.emplace(phase, Phase{}).first;
  }
  Phase& ph = pit->second;
  if (auto it = ph.by_id.find(id); it != ph.by_id.end()) {
    if (auto h = ph.hashes.find(it->second); h != ph.hashes.end() && --h->second == 0) ph.hashes.erase(h);
    if (d) {
      it->second = *d;
      ++ph.hashes[*d];
      return;
    }
    ph.by_id.erase(it);
    --records_;
  } else if (d) {
    ph.by_id.emplace(id, *d);
    ++ph.hashes[*d];
    ++records_;
  }
  if (ph.by_id.empty()) phases_.erase(pit);
}

void ReviewRecords::replace(const std::string& phase, const std::vector<std::pair<std::string, std::string>>& id_hash) {
  if (auto it = phases_.find(phase); it != phases_.end()) {
    records_ -= it->second.by_id.size();
    phases_.erase(it);
  }
  for (const auto& [id, h] : id_hash) set(phase, id, h);
}

bool ReviewRecords::reviewed(const std::string& phase, std::string_view hash) const {
  auto d = digest_of(hash);
  if (!d) return false;
  auto it = phases_.find(phase);
  return it != phases_.end() && it->second.hashes.count(*d) > 0;
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

bool still_needs_review(const ReviewRecords& records, const std::string& phase, std::string_view seen_hash) {
  return !records.reviewed(phase, seen_hash);
}

}  // namespace yolo::watch
