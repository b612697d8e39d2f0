// Wave scheduling (PROTOCOL.md section 7), pure: given a phase's plans and their statuses,
// which plans may start now. No clock, no processes, no files.
//
// Rules: plans run by wave: a plan of wave N starts only when every plan of every earlier
// wave is complete; a plan starts only when its depends_on plans are complete; at most
// max_parallel plans run at once; nothing new starts while the run is frozen (a gate is
// open, or the approval object is missing or not approved); a failed plan stops the next
// wave (plans of its own wave that do not depend on it may still run). The phase is
// complete when every plan is.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace yolo::waves {

enum class PlanStatus { Pending, Ready, Running, Complete, Failed };
const char* to_string(PlanStatus s);
std::optional<PlanStatus> parse_status(std::string_view s);

struct PlanNode {
  std::string id;      // "01-03"
  std::string plan;    // the plan number as written ("03"), for depends_on entries without a phase
  long long wave = 0;  // < 1 means invalid: the plan never starts
  std::vector<std::string> depends_on;
  PlanStatus status = PlanStatus::Pending;
  // Filled by resolve_dependencies: for each depends_on entry, the index it names (-1:
  // none). next() then looks dependencies up in O(1) instead of searching every plan.
  std::vector<int> dep_index;
};

struct Options {
  int max_parallel = 1;
  bool frozen = false;  // a gate is open / approval missing or not approved
  std::string only;     // --plan: when set (an id or a plan number), only that plan may start
};

enum class Outcome {
  Start,     // `start` holds plans to start now (others may be running)
  Waiting,   // plans are running; nothing more may start until one ends
  Frozen,    // frozen: nothing new starts (running plans, if any, finish)
  Complete,  // every plan (or the --plan plan) is complete
  Failed,    // a plan failed and nothing else can run: the phase halts
  Blocked,   // nothing runs and nothing can start, no failure (bad wave, unknown dependency)
};
const char* to_string(Outcome o);

struct Decision {
  Outcome outcome = Outcome::Blocked;
  std::vector<size_t> start;  // indices into the plans vector, in order
  long long wave = 0;         // the current wave: lowest wave with a plan not complete (0: none)
  long long total_waves = 0;  // highest valid wave
  size_t running = 0;
  std::string reason;  // for Failed / Blocked / Frozen: a sentence for people
};

// Index of the plan a depends_on entry names ("03" or "01-03", written any way), or -1.
int resolve_dependency(const std::vector<PlanNode>& plans, const std::string& dep);

// Resolves every plan's depends_on once (dep_index, as resolve_dependency would), in time
// proportional to the plans and their dependencies. The ids and plan numbers must not
// change afterwards (a run's nodes keep them; only statuses change).
void resolve_dependencies(std::vector<PlanNode>& plans);

// What may start now. `only` that names no plan gives Blocked.
Decision next(const std::vector<PlanNode>& plans, const Options& opts);

// A run's plans with what next() needs of them kept current. The run changes a status only
// through set(); a decision then looks at the current wave's plans that may start, not at
// every plan of the phase (next() on all of them at every executor's end cost a run of n
// plans n² steps). Its decisions are
// next()'s on the same plans: outcome, plans to start, wave, counts and reason alike (when
// nothing runs and nothing starts, it asks next() itself, for the reason).
class Board {
 public:
  Board() = default;
  explicit Board(std::vector<PlanNode> plans);  // resolves their dependencies (resolve_dependencies)

  const PlanNode& operator[](size_t i) const { return plans_[i]; }
  void set(size_t i, PlanStatus s);
  Decision next(const Options& opts) const;
  // Every plan of the wave is complete or failed; and whether one failed.
  bool wave_finished(long long wave) const;
  bool wave_failed(long long wave) const;

 private:
  struct Wave {
    size_t plans = 0, open = 0, finished = 0, failed = 0;  // open: not complete; finished: complete or failed
    std::set<size_t> startable;                            // pending or ready, by index
  };
  void count(size_t i, int sign);

  std::vector<PlanNode> plans_;
  size_t running_ = 0, complete_ = 0;
  long long total_waves_ = 0;
  std::map<long long, Wave> waves_;  // every wave a plan names (< 1 too)
  std::set<long long> open_waves_;   // waves >= 1 with a plan not complete
};

}  // namespace yolo::waves
