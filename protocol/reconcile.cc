#include "protocol/reconcile.h"

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

}  // namespace yolo::watch
