// The cross-plan view of phase folders during one review pass. Reviewing a phase plan by plan
// with the cross-plan checks used to load every sibling and run the checks over the whole
// phase once per plan: quadratic (400 plans: 160,000 sibling loads). A snapshot loads a
// phase's plans once, runs cross_plan_findings once, and answers each plan from that,
// recomputing only when something changed: the plan under review is always read fresh by
// the caller, and when its content hash differs from the snapshot's it takes its place and
// the checks run again. invalidate() (after an agent may have rewritten files) makes the
// next use list and load the folder again. Changes made by other processes to *other*
// plans during the pass are seen by the next pass (the watcher reviews again on change).
// Not thread-safe.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/findings.h"
#include "protocol/plan.h"
#include "protocol/plan_cache.h"

namespace yolo {

class PhaseSnapshots {
 public:
  // Siblings are read through `cache` when given (it is kept by a long-running caller).
  explicit PhaseSnapshots(PlanCache* cache = nullptr) : cache_(cache) {}

  // The cross-plan findings of `self` (the plan at plan_path, just loaded by the caller)
  // among the plans of phase_dir, exactly as stage1_plan_file computes them; nullopt when
  // plan_path is not one of the folder's plan files (the caller computes them itself).
  std::optional<std::vector<Finding>> cross_for(const World& w, const std::filesystem::path& phase_dir,
                                                const std::filesystem::path& plan_path, const Plan& self,
                                                size_t max_bytes);

  // Every folder is listed and loaded again on its next use.
  void invalidate();

  size_t recomputes() const { return recomputes_; }  // how often the checks ran (tests)

 private:
  struct Phase {
    std::vector<std::optional<Plan>> plans;         // listing order; nullopt: unreadable
    std::unordered_map<std::string, size_t> index;  // lexically normal path -> position
    std::vector<std::vector<Finding>> cross;        // per position (valid plans only)
    bool dirty = true;
  };
  Phase& phase(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes);

  PlanCache* cache_;
  std::map<std::string, Phase> phases_;
  size_t recomputes_ = 0;
};

}  // namespace yolo
