#include "protocol/phase_snapshot.h"

#include "protocol/stage1.h"

namespace yolo {

namespace {
bool valid(const std::optional<Plan>& p) { return p && !p->frontmatter_error; }
}  // namespace

PhaseSnapshots::Phase& PhaseSnapshots::phase(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes) {
  std::string key = phase_dir.lexically_normal().string();
  auto it = phases_.find(key);
  if (it != phases_.end()) return it->second;
  Phase& ph = phases_[key];
  for (const auto& f : list_plan_files(w, phase_dir)) {
    PlanLoad l = cache_ ? cache_->load_sibling(w, f, max_bytes) : load_plan(w, f, max_bytes);
    if (l.plan) l.plan->frontmatter = json::object();  // the checks use the fields, not the document
    ph.index.emplace(f.lexically_normal().string(), ph.plans.size());
    ph.plans.push_back(std::move(l.plan));
  }
  return ph;
}

std::optional<std::vector<Finding>> PhaseSnapshots::cross_for(const World& w, const std::filesystem::path& phase_dir,
                                                              const std::filesystem::path& plan_path, const Plan& self,
                                                              size_t max_bytes) {
  Phase& ph = phase(w, phase_dir, max_bytes);
  auto at = ph.index.find(plan_path.lexically_normal().string());
  if (at == ph.index.end()) return std::nullopt;
  size_t pos = at->second;
  auto& mine = ph.plans[pos];
  if (!mine || mine->content_hash != self.content_hash ||
      mine->frontmatter_error.has_value() != self.frontmatter_error.has_value()) {
    mine = self;
    mine->frontmatter = json::object();
    ph.dirty = true;
  }
  if (self.frontmatter_error) {
    // Not among the checked plans when it is a sibling, but checked as itself: the phase
    // with this plan in its place (stage1_plan_file does the same).
    std::vector<Plan> all;
    size_t self_index = 0;
    for (size_t i = 0; i < ph.plans.size(); ++i) {
      if (i == pos) {
        self_index = all.size();
        all.push_back(self);
      } else if (valid(ph.plans[i])) {
        all.push_back(*ph.plans[i]);
      }
    }
    ++recomputes_;
    return std::move(cross_plan_findings(all)[self_index]);
  }
  if (ph.dirty) {
    std::vector<Plan> all;
    std::vector<size_t> where;
    for (size_t i = 0; i < ph.plans.size(); ++i)
      if (valid(ph.plans[i])) {
        where.push_back(i);
        all.push_back(*ph.plans[i]);
      }
    auto cross = cross_plan_findings(all);
    ph.cross.assign(ph.plans.size(), {});
    for (size_t k = 0; k < where.size(); ++k) ph.cross[where[k]] = std::move(cross[k]);
    ph.dirty = false;
    ++recomputes_;
  }
  return ph.cross[pos];
}

void PhaseSnapshots::invalidate() { phases_.clear(); }

}  // namespace yolo
