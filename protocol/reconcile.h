// The watcher's reconcile decisions (`yolo watch`), pure: what changed since the last
// reconcile -> what to do. runner/watcher.cc gathers the changes (file events, content
// hashes, the state's approvals) and carries out the actions (reviews, an approval request,
// a `yolo execute` child); the rules are here, tested without processes or files.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
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

// What a plan file's content is now, against what the watcher saw last and what was last
// reviewed (review::same_content decides "the same").
enum class PlanSeen {
  Unchanged,     // the same content as last seen: touched, not changed
  ReviewedAsIs,  // new to the watcher, but its last review was of exactly this content
  NeedsReview,   // changed since its last review (or never reviewed, or unreadable)
};
// last_seen: the hash the watcher saw before (nullopt: not seen yet); reviewed_hash: the
// hash of its last review ("" when none); hash_now: "" when the file cannot be read.
PlanSeen plan_seen(std::optional<std::string_view> last_seen, std::string_view reviewed_hash,
                   std::string_view hash_now);

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

}  // namespace yolo::watch
