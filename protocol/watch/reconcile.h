// The watcher's reconcile decisions (`yolo watch`), pure: what changed since the last
// reconcile -> what to do. runner/watcher.cc gathers the changes (file events, content
// hashes, the state's approvals) and carries out the actions (reviews, an approval request,
// a `yolo execute` child); the rules are here, tested without processes or files.
#pragma once
#include <array>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace yolo::watch {

// What the watcher is running under.
struct Situation {
  bool review = true;            // review changed plans (not --no-review)
  bool drive_asked = false;      // --execute / execute --watch
  bool run_in_progress = false;  // execution::run_in_progress(state): a run `yolo execute` started
};

// The rule for driving execution: when asked to, or while a run is in progress. A review, or
// a gate requested outside a run, is no run: a plain `yolo watch` never starts `yolo execute`.
bool drives_execution(const Situation& s);

// What was last reviewed, as the review ledgers hold it: one record per plan id and phase
// folder, each with the content hash it reviewed. Whether a plan file is reviewed as it is
// is asked of these records by content, never by the path a record was made at: checkouts
// move a plan id between files (02-PLAN.md on one branch, 01-02-PLAN.md on another), and a
// hash remembered per path kept the other branch's review, so the watcher skipped a review
// the ledger (and `yolo status`) needed. The plan id is in the content, so "a record of this
// phase reviewed exactly these bytes" is "this plan id's record did": no parse of the file.
class ReviewRecords {
 public:
  // A record: plan `id` of `phase` (its folder's name, as its ledger is named) reviewed the content `hash`
  // (sha256 hex or "sha256:<hex>"; "" removes the record).
  void set(const std::string& phase, const std::string& id, std::string_view hash);
  // The phase's ledger read whole: its records replace the ones held for that phase.
  void replace(const std::string& phase, const std::vector<std::pair<std::string, std::string>>& id_hash);
  // Whether some record of `phase` reviewed exactly the content whose hash is `hash`.
  bool reviewed(const std::string& phase, std::string_view hash) const;
  size_t size() const { return records_; }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct DigestHash {
    size_t operator()(const Digest& d) const;
  };
  struct Phase {
    std::unordered_map<std::string, Digest> by_id;
    std::unordered_map<Digest, unsigned, DigestHash> hashes;  // how many records hold each
  };
  static std::optional<Digest> digest_of(std::string_view hash);
  std::unordered_map<std::string, Phase> phases_;
  size_t records_ = 0;
};

// What a plan file's content is now, against what the watcher saw last and what was last
// reviewed.
enum class PlanSeen {
  Unchanged,     // the same content as last seen: touched, not changed
  ReviewedAsIs,  // new to the watcher, but its last review was of exactly this content
  NeedsReview,   // changed since its last review (or never reviewed, or unreadable)
};
// last_seen: the hash the watcher saw before (nullopt: not seen yet); reviewed_as_is: a
// review record of its phase holds hash_now (ReviewRecords::reviewed); hash_now: "" when
// the file cannot be read.
PlanSeen plan_seen(std::optional<std::string_view> last_seen, bool reviewed_as_is, std::string_view hash_now);

// What one reconcile found.
struct Changes {
  // phase folder -> plans that need a review. A phase with no plans listed: a plan came or
  // went, so its siblings' cross-plan checks change (nothing to review by itself).
  std::map<std::filesystem::path, std::vector<std::filesystem::path>> plans;
  bool summaries = false;  // a SUMMARY was written, changed or removed
  bool roadmap = false;    // ROADMAP.md has new (non-empty) content
  bool approvals = false;  // the approval or a gate's status changed in the state
};

struct Actions {
  std::map<std::filesystem::path, std::vector<std::filesystem::path>> reviews;  // phase -> plans to review
  bool request_vision_gate = false;                                             // `yolo request-approval` on ROADMAP.md
  bool run_execute = false;  // `yolo execute` (queued behind a running one)
};

// Reviews of every phase with changed plans (when reviewing); a changed ROADMAP.md asks for
// the vision gate, unless execution is driven (then execute opens the gate itself); when
// driving, a SUMMARY, ROADMAP.md or an approval that changed runs execute.
Actions decide(const Changes& c, const Situation& s);

// After a `yolo execute` run ended: run it again at once? The watcher reads the state after
// execute has exited, so a person's approval that landed after execute last looked (while
// it was pausing at the gate) arrives together with what execute wrote, and by its timing
// the watcher cannot tell the two apart (taking it for execute's own write, it waited for
// an approval it had already read). The state says it: execute paused at a gate (`paused`)
// but the run is no longer awaiting approval: the gate was resolved since (approved: the
// run goes on; rejected: execute says so).
bool gate_resolved_since_pause(bool paused, std::string_view run_status);

// ---- the review queue -----------------------------------------------------------------
//
// Which plans the watcher reviews next, and in what batches. Two lanes, each running one
// batch at a time, side by side: Fresh holds the plans saved while the watcher runs (a
// person is waiting for the verdict); Backlog holds what the first reconcile or a rescan
// found not reviewed as it is (nobody is waiting; 10,000 plans take a while). A save never
// waits for the backlog: it has its own lane, and a plan queued in the backlog that is saved
// moves to the fresh lane. A plan is never in two batches at once: one that changes while
// its batch runs waits for that batch to end (then reviewed_now() says whether the review
// that just ended already covers its content).
enum class Lane { Fresh, Backlog };

struct ReviewBatch {
  Lane lane = Lane::Fresh;
  std::vector<std::filesystem::path> plans;  // in the order they were queued
};

// The lane for the plans one reconcile found: a save's are fresh; the first scan's are the
// backlog; a rescan (after git finished, a queue overflow, a recreated folder) that finds a
// few is what a person just did (a checkout): fresh, announced plan by plan; one that finds
// more than kFreshRescanMax is a backlog, announced in one line.
inline constexpr size_t kFreshRescanMax = 50;
Lane lane_for(bool full_scan, bool initial, size_t found);

// How many plans one batch takes. Without agents a review is Stage 1 and a record (under a
// millisecond): a backlog batch is large, so the ledger is written once per many plans, and
// a fresh batch takes every save at once. With agents each plan is an agent call (seconds
// to minutes): the backlog goes one plan per batch, so a save of a plan in the backlog
// never waits behind a long batch.
size_t batch_size(Lane lane, bool agents);

class ReviewQueue {
 public:
  // Queues `plan` in `lane`. Already queued: Fresh wins (a backlog entry moves to the fresh
  // lane, keeping nothing twice). In a running batch: queued all the same, taken only when
  // that batch has ended.
  void push(const std::filesystem::path& plan, Lane lane);
  // The plan is gone (deleted, renamed away): no longer queued.
  void drop(const std::filesystem::path& plan);
  // The next batch of `lane`: up to `max` plans, oldest first, none in a running batch; the
  // plans are in flight until finish(). nullopt when the lane is running a batch or has
  // nothing it may take.
  std::optional<ReviewBatch> take(Lane lane, size_t max);
  // The batch of `lane` ended.
  void finish(Lane lane);

  bool busy(Lane lane) const { return running_[index(lane)]; }
  size_t queued(Lane lane) const { return count_[index(lane)]; }
  bool idle() const {
    return !busy(Lane::Fresh) && !busy(Lane::Backlog) && !queued(Lane::Fresh) && !queued(Lane::Backlog);
  }
  bool in_flight(const std::filesystem::path& plan) const { return flight_.count(plan) > 0; }

 private:
  static size_t index(Lane l) { return l == Lane::Fresh ? 0 : 1; }
  std::deque<std::filesystem::path> queue_[2];    // in order; may hold stale entries (where_ decides)
  size_t count_[2] = {0, 0};                      // plans truly queued per lane
  std::map<std::filesystem::path, Lane> where_;   // queued plans and their lane
  std::map<std::filesystem::path, Lane> flight_;  // plans in a running batch
  bool running_[2] = {false, false};
};

// A queued plan is reviewed when its batch starts only if its content (as the watcher last
// saw it) still differs from its last review: the review that just ended (a queued-again
// plan, an architect's rewrite recorded by the review itself) may cover it already.
bool still_needs_review(const ReviewRecords& records, const std::string& phase, std::string_view seen_hash);

}  // namespace yolo::watch
