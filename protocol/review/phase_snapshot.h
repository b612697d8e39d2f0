// The cross-plan view of phase folders during one review pass. Reviewing a phase plan by plan
// with the cross-plan checks used to load every sibling and run the checks over the whole
// phase once per plan: quadratic (400 plans: 160,000 sibling loads). A snapshot loads a
// phase's plans once, runs cross_plan_findings once, and answers each plan from that,
// recomputing only when something changed: the plan under review is always read fresh by
// the caller, and when its content hash differs from the snapshot's it takes its place and
// the checks run again. invalidate() (after an agent may have rewritten files) makes the
// next use list and load the folder again. Changes made by other processes to *other*
// plans during the pass are seen by the next pass (the watcher reviews again on change).
// A long-running caller (the watcher's fresh lane) keeps one across passes and says which
// plan files changed (changed()); then a save costs the same at any phase size: the
// checks run again only when a plan's cross-plan facts (id, wave, depends_on, files, path)
// changed, not on every edit of its text. A phase's siblings come from its store of
// cross-plan facts (protocol/review/cross_facts.h) while their files are unchanged: a phase nobody
// in this process has parsed costs one file and a stat per plan. Not thread-safe.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/plan/plan.h"
#include "protocol/plan/plan_cache.h"

namespace yolo {

class PhaseSnapshots {
 public:
  // Siblings are read through `cache` when given (it is kept by a long-running caller).
  // max_plans bounds the plans kept (least recently used phases are dropped first; a phase
  // in use is always kept whole).
  // The siblings' facts come from the phase's store (protocol/review/cross_facts.h) while their
  // files are those they were parsed from; save_facts: what was parsed is written back to it
  // (the watcher's fresh lane leaves that to its background pass: no write while a save waits).
  explicit PhaseSnapshots(PlanCache* cache = nullptr, size_t max_plans = SIZE_MAX, bool save_facts = true)
      : cache_(cache), max_plans_(max_plans), save_facts_(save_facts) {}

  // The cross-plan findings of `self` (the plan at plan_path, just loaded by the caller)
  // among the plans of phase_dir, exactly as stage1_plan_file computes them; nullopt when
  // plan_path is not one of the folder's plan files (the caller computes them itself).
  std::optional<std::vector<Finding>> cross_for(const World& w, const std::filesystem::path& phase_dir,
                                                const std::filesystem::path& plan_path, const Plan& self,
                                                size_t max_bytes);

  // Every folder is listed and loaded again on its next use.
  void invalidate();

  // The plan file at plan_path was written, created or removed since it was loaded: it is
  // read again on its phase's next use (created or removed: the folder is listed again).
  void changed(const World& w, const std::filesystem::path& plan_path);

  size_t recomputes() const { return recomputes_; }  // how often the checks ran (tests)

  struct Phase {
    std::vector<std::optional<Plan>> plans;         // listing order; nullopt: unreadable
    std::vector<std::filesystem::path> files;       // the plan files, same order
    std::unordered_map<std::string, size_t> index;  // lexically normal path -> position
    std::vector<std::vector<Finding>> cross;        // per position (valid plans only)
    std::vector<size_t> stale;                      // positions to read again (changed())
    bool dirty = true;
    unsigned long long used = 0;  // last use (for dropping the least recently used)
  };

  // A phase loaded and checked away from any snapshot, as the first use of phase_dir would
  // load it (its store of facts, no cache, nothing written) with the cross-plan checks run
  // over it: it touches no snapshot, so it may run on another thread while this one is in
  // use (the watcher prepares the phase of a save during the save's debounce).
  static Phase prepare(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes);
  // Takes a prepared phase when this snapshot holds none of that folder (false: dropped, what
  // is held is as new). The plans written since prepare() began are then to be reported with
  // changed(), as for any held phase.
  bool adopt(const std::filesystem::path& phase_dir, Phase&& ph);
  bool holds(const std::filesystem::path& phase_dir) const;

 private:
  Phase& phase(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes);
  // The folder's plans as its store and the cache give them, in listing order.
  static void fill(Phase& ph, const World& w, const std::filesystem::path& phase_dir, size_t max_bytes,
                   PlanCache* cache, bool save_facts);
  // The cross-plan checks over the valid plans, when something changed since they last ran
  // (true: they ran).
  static bool recheck(Phase& ph);
  PlanLoad load(const World& w, const std::filesystem::path& f, size_t max_bytes);
  void trim(const std::string& keep);

  PlanCache* cache_;
  size_t max_plans_;
  bool save_facts_;
  std::map<std::string, Phase> phases_;
  size_t kept_ = 0;  // plans held over all phases
  unsigned long long tick_ = 0;
  size_t recomputes_ = 0;
};

}  // namespace yolo
