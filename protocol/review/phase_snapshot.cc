#include "protocol/review/phase_snapshot.h"

#include "protocol/review/cross_facts.h"
#include "protocol/plan/cross_plan.h"

namespace yolo {

namespace {
bool valid(const std::optional<Plan>& p) { return p && !p->frontmatter_error; }

// What cross_plan_findings reads of a plan: two plans alike here give every plan of their
// phase the same cross-plan findings.
bool same_cross_facts(const std::optional<Plan>& a, const std::optional<Plan>& b) {
  if (!a || !b) return !a && !b;
  if (a->frontmatter_error.has_value() != b->frontmatter_error.has_value()) return false;
  if (a->path != b->path || a->phase != b->phase || a->plan != b->plan || a->wave != b->wave ||
      a->depends_on != b->depends_on || a->files.size() != b->files.size())
    return false;
  for (size_t i = 0; i < a->files.size(); ++i)
    if (a->files[i].path != b->files[i].path || a->files[i].is_glob != b->files[i].is_glob) return false;
  return true;
}
}  // namespace

PlanLoad PhaseSnapshots::load(const World& w, const std::filesystem::path& f, size_t max_bytes) {
  PlanLoad l = cache_ ? cache_->load_sibling(w, f, max_bytes) : load_plan(w, f, max_bytes);
  if (l.plan) l.plan->frontmatter = json::object();  // the checks use the fields, not the document
  return l;
}

PhaseSnapshots::Phase& PhaseSnapshots::phase(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes) {
  std::string key = phase_dir.lexically_normal().string();
  auto it = phases_.find(key);
  if (it != phases_.end()) {
    Phase& ph = it->second;
    ph.used = ++tick_;
    for (size_t pos : ph.stale) {
      std::optional<Plan> now = load(w, ph.files[pos], max_bytes).plan;
      if (!same_cross_facts(ph.plans[pos], now)) ph.dirty = true;
      ph.plans[pos] = std::move(now);
    }
    ph.stale.clear();
    return ph;
  }
  Phase& ph = phases_[key];
  ph.used = ++tick_;
  fill(ph, w, phase_dir, max_bytes, cache_, save_facts_);
  kept_ += ph.plans.size();
  trim(key);
  return ph;
}

void PhaseSnapshots::fill(Phase& ph, const World& w, const std::filesystem::path& phase_dir, size_t max_bytes,
                          PlanCache* cache, bool save_facts) {
  // The siblings' facts from the phase's store (protocol/review/cross_facts.h) while their files
  // are the ones they were parsed from, else from the cache, else parsed and remembered.
  cross_facts::Store store(w, phase_dir, max_bytes);
  auto loaded = store.load_folder(cache);
  ph.plans.reserve(loaded.size());
  ph.files.reserve(loaded.size());
  std::filesystem::path normal_dir = phase_dir.lexically_normal();
  for (auto& [f, l] : loaded) {
    ph.index.emplace((normal_dir / f.filename()).string(), ph.plans.size());  // f's normal form: a plain name
    if (l.plan) l.plan->frontmatter = json::object();  // the checks use the fields, not the document
    ph.plans.push_back(std::move(l.plan));
    ph.files.push_back(std::move(f));
  }
  if (save_facts) (void)store.save(/*prune=*/true);  // only when a plan was parsed or removed
}

PhaseSnapshots::Phase PhaseSnapshots::prepare(const World& w, const std::filesystem::path& phase_dir,
                                              size_t max_bytes) {
  Phase ph;
  fill(ph, w, phase_dir, max_bytes, nullptr, false);
  recheck(ph);
  return ph;
}

bool PhaseSnapshots::holds(const std::filesystem::path& phase_dir) const {
  return phases_.count(phase_dir.lexically_normal().string()) != 0;
}

bool PhaseSnapshots::adopt(const std::filesystem::path& phase_dir, Phase&& prepared) {
  std::string key = phase_dir.lexically_normal().string();
  if (phases_.count(key)) return false;
  Phase& ph = phases_[key] = std::move(prepared);
  ph.used = ++tick_;
  kept_ += ph.plans.size();
  trim(key);
  return true;
}

bool PhaseSnapshots::recheck(Phase& ph) {
  if (!ph.dirty) return false;
  std::vector<const Plan*> all;
  std::vector<size_t> where;
  for (size_t i = 0; i < ph.plans.size(); ++i)
    if (valid(ph.plans[i])) {
      where.push_back(i);
      all.push_back(&*ph.plans[i]);
    }
  auto cross = cross_plan_findings(all);
  ph.cross.assign(ph.plans.size(), {});
  for (size_t k = 0; k < where.size(); ++k) ph.cross[where[k]] = std::move(cross[k]);
  ph.dirty = false;
  return true;
}

// Drops the least recently used phases (never `keep`) while more plans than max_plans_ are held.
void PhaseSnapshots::trim(const std::string& keep) {
  while (kept_ > max_plans_) {
    auto lru = phases_.end();
    for (auto it = phases_.begin(); it != phases_.end(); ++it)
      if (it->first != keep && (lru == phases_.end() || it->second.used < lru->second.used)) lru = it;
    if (lru == phases_.end()) return;
    kept_ -= lru->second.plans.size();
    phases_.erase(lru);
  }
}

void PhaseSnapshots::changed(const World& w, const std::filesystem::path& plan_path) {
  std::filesystem::path p = plan_path.lexically_normal();
  auto it = phases_.find(p.parent_path().string());
  if (it == phases_.end()) return;  // not loaded: read as it is on first use
  Phase& ph = it->second;
  auto at = ph.index.find(p.string());
  if (at == ph.index.end() || !w.files().is_file(p)) {  // came or went: list again
    kept_ -= ph.plans.size();
    phases_.erase(it);
    return;
  }
  ph.stale.push_back(at->second);
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
    std::optional<Plan> now = self;
    now->frontmatter = json::object();
    if (!same_cross_facts(mine, now)) ph.dirty = true;
    mine = std::move(now);
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
  if (recheck(ph)) ++recomputes_;
  return ph.cross[pos];
}

void PhaseSnapshots::invalidate() {
  phases_.clear();
  kept_ = 0;
}

}  // namespace yolo
