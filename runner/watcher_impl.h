// The watcher's parts (runner/watcher.h is the entry point), one file per concept:
//   watcher.cc          the loop: start, file events, rescans and their backoff, shutdown
//   watch_reconcile.cc  what changed: plan and SUMMARY hashes, ledgers, the state, git busy
//   watch_drive.cc      what it sets going: reviews (runner/watch_reviews.h), the vision
//                       gate request, `yolo execute` runs
// The decisions are protocol's (protocol/reconcile.h: watch::decide, plan_seen, the review
// queue, gate_resolved_since_pause).
#pragma once
#include <uv.h>

#include <chrono>
#include <functional>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/config.h"
#include "protocol/json.h"
#include "protocol/phase_snapshot.h"
#include "protocol/plan_cache.h"
#include "protocol/reconcile.h"
#include "runner/dir_watch.h"
#include "runner/instance_lock.h"
#include "runner/output.h"
#include "runner/review_gate.h"
#include "runner/subprocess.h"
#include "runner/watch_reviews.h"
#include "runner/watcher.h"

namespace yolo::runner::watch_impl {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Changed = std::map<stdfs::path, std::vector<stdfs::path>>;  // phase dir -> plans needing a review

double ms_since(Clock::time_point t);
std::string fmt_ms(double ms);

// Content hashes (sha256 hex, or "" for an unreadable file) by file, kept compact: the path's
// text and the 32 bytes of the digest. A std::map of std::filesystem::path (a component list
// on the heap) to a hex std::string took three times the memory a plan, two of them a lot at
// a hundred thousand plans.
class Digests {
 public:
  std::optional<std::string> get(const stdfs::path& p) const;
  void set(const stdfs::path& p, std::string_view hash);
  bool erase(const stdfs::path& p) { return map_.erase(p.native()) > 0; }
  size_t size() const { return map_.size(); }
  // Removes the entries whose path `gone` says; calls `removed` with each first.
  void erase_if(const std::function<bool(const stdfs::path&)>& gone,
                const std::function<void(const stdfs::path&)>& removed);
  // Up to `max` paths, in order.
  std::vector<stdfs::path> paths(size_t max) const;

 private:
  struct Val {
    unsigned char kind = 0;  // 0: "", 1: the digest below, 2: other text (in odd_)
    unsigned char d[32] = {};
  };
  std::map<std::string, Val> map_;
  std::map<std::string, std::string> odd_;  // values that are not a sha256 hex (never in practice)
};

// The bytes of a review ledger and its journal as one number (nullopt: no ledger).
std::optional<size_t> ledger_fingerprint(const stdfs::path& ledger_file);

class Watcher {
 public:
  explicit Watcher(const WatchOptions& o) : o_(o), planning_(o.root / ".yolo-planning") {}
  int run();

 private:
  // --- the loop (watcher.cc) ---
  void emit(out::Sym s, const std::string& msg, json j);
  void on_change(const DirWatch::Change& c);
  void request_rescan(const std::string& why);
  void on_watch_limit(const std::vector<stdfs::path>& recovered);
  size_t last_unwatched_said_ = 0;
  void schedule(long long at_least_ms = 0);
  void shutdown(int sig);
  void maybe_finish_shutdown();
  void finish();

  // --- what changed (watch_reconcile.cc) ---
  stdfs::path git_dir() const;
  std::string git_busy() const;
  void reconcile(bool initial);
  // plans_too false: the plans are listed (counted, kept in `present`) but not read.
  void scan_phase(const stdfs::path& dir, std::set<stdfs::path>& present, Changed& changed, bool& summaries_changed,
                  bool plans_too = true);
  void walk_error(const stdfs::path& p, const std::error_code& ec);
  void forget_missing(const std::function<bool(const stdfs::path&)>& missing, Changed& changed,
                      bool& summaries_changed);
  void check_file(const stdfs::path& p, Changed& changed, bool& summaries_changed);
  std::string plan_label(const stdfs::path& p);
  void announce_changed(const stdfs::path& p);  // "01-02 changed → reviewing"
  void note_plan_changed(const stdfs::path& p);
  void load_state(bool announce);
  void announce_approval_change(const json& d);
  void load_all_ledgers();
  void load_ledger(const stdfs::path& file);
  // --- phases learnt after `ready` (watch_reconcile.cc) ---
  // The first reconcile lists the plans only: each phase's ledger and plan hashes are learnt
  // after `ready`, one phase at a time on a worker thread (learn_next_phase), so the loop
  // handles events meanwhile; a phase a file event arrives in first is learnt at once, on
  // the loop thread, by that event's reconcile (ensure_phase).
  struct PhaseJob;
  // A plan event in a phase not learnt yet starts loading that phase's ledger on a worker
  // thread at once, while the debounce runs (prefetch_ledger); the event's reconcile then
  // waits for that load instead of parsing the ledger on the loop (ensure_phase).
  struct LedgerPrefetch;
  void prefetch_ledger(const stdfs::path& dir);
  void apply_prefetch(LedgerPrefetch& f);
  std::map<stdfs::path, std::shared_ptr<LedgerPrefetch>> prefetches_;
  // A plan event in a phase the fresh lane's snapshots do not hold starts preparing that
  // phase on a worker thread (prefetch_snapshot: PhaseSnapshots::prepare), so the save's
  // review finds its siblings held; adopted on the loop while no fresh batch runs.
  struct SnapshotPrefetch;
  void prefetch_snapshot(const stdfs::path& dir);
  void adopt_snapshots();
  std::map<stdfs::path, std::shared_ptr<SnapshotPrefetch>> snapshot_prefetches_;  // by folder, lexically normal
  void ensure_phase(const stdfs::path& dir);
  void learn_next_phase();
  void on_phase_learnt(PhaseJob* j);
  void check_plan_hashed(const stdfs::path& p, const std::string& h, Changed& changed);
  void queue_backlog(Changed changed);
  bool learnt_as_is(const stdfs::path& p) const;
  void say_backlog(size_t n);
  void maybe_backlog_done();
  watch::Situation situation() const { return {o_.review, o_.drive_execution, active_run_}; }
  bool driving() const { return watch::drives_execution(situation()); }

  // --- what it sets going (watch_drive.cc) ---
  SpawnSpec child(std::vector<std::string> args);
  bool fixing() const { return o_.fix || config_.watch_fix; }
  void start_reviews(const Changed& reviews, watch::Lane lane);
  void on_reviews_ended(watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                        const std::set<stdfs::path>& phases, const std::map<stdfs::path, std::string>& before);
  void announce_review(const review::PlanReview& row, double ms, const std::map<stdfs::path, std::string>& before);
  void start_warming();
  void warm_one();
  void request_vision_gate();
  void consider_execution(bool force);
  void on_execute_done(SpawnResult r, double ms);

  WatchOptions o_;
  stdfs::path planning_;
  Config config_;
  int debounce_ms_ = 20;
  InstanceLock instance_lock_;
  std::set<std::string> walk_errors_;  // said already
  bool git_waiting_ = false;           // a git operation is in progress: reconcile when it ends
  Clock::time_point last_rescan_request_{};
  long long rescan_backoff_ms_ = 0;
  uv_loop_t loop_{};
  uv_timer_t debounce_{}, force_exit_{};
  // Reviews whose results could not be written (a full disk): reviewed again after a pause
  // that doubles (5 s to 2 min) while writing keeps failing.
  uv_timer_t record_retry_{};
  std::set<stdfs::path> record_retry_plans_;
  long long record_retry_ms_ = 0;
  void retry_unrecorded();
  uv_signal_t sigint_{}, sigterm_{};
  std::unique_ptr<DirWatch> dir_watch_;
  bool stopping_ = false;
  bool started_ = false;  // the first reconcile is done
  bool full_rescan_ = false, state_dirty_ = false, roadmap_dirty_ = false, config_dirty_ = false;
  bool approvals_changed_ = false, active_run_ = false, exec_rerun_ = false;
  bool bulk_scan_ = false;  // a full scan is running: plans found are not announced one by one
  std::set<stdfs::path> dirty_files_, dirty_dirs_, dirty_ledgers_;
  std::map<stdfs::path, size_t> ledger_seen_;  // ledger file -> hash of the bytes last loaded
  std::set<stdfs::path> phases_pending_;       // phase folders whose ledger and plans are not learnt yet
  std::set<stdfs::path> plans_pending_;        // phase folders whose ledger is loaded, plans not yet
  bool learning_ = false;                      // a phase is being learnt on a worker thread
  bool learn_paused_ = false;                  // waits for the fresh lane's batch to end
  size_t plans_listed_ = 0;                    // plans the first reconcile listed
  Clock::time_point learn_t0_{};               // the phases' learning started (zero: not learning)
  size_t learn_backlog_ = 0;                   // plans it found not reviewed as they are
  // Siblings as the cross-plan checks read them (slim, ~1 KB a plan; at most 20,000 kept),
  // reused while their files stay the same. Used by the fresh review lane's worker while it
  // runs a batch, else by warming on the loop thread (only without the phases' stores of
  // cross-plan facts, protocol/cross_facts.h): never both at once.
  PlanCache plan_cache_;
  // The fresh lane's phases as the cross-plan checks see them, kept between saves (at most
  // as many plans as the cache): a save re-runs the checks only when a plan's cross-plan
  // facts changed. Told of every plan change seen here (note_plan_changed); while the fresh
  // lane's batch runs (its worker uses them) the changes wait in snapshot_pending_.
  PhaseSnapshots fresh_snapshots_{&plan_cache_, 20000, /*save_facts=*/false};
  std::vector<stdfs::path> snapshot_pending_;
  uv_idle_t warm_{};
  bool warm_paused_ = false;  // warming waits for the fresh lane's batch to end
  std::vector<stdfs::path> warm_queue_;
  Digests plan_hash_, summary_hash_;
  // The review ledgers' records by phase folder and plan id (what was reviewed, whatever file
  // holds the plan now): a plan needs a review when no record of its phase holds its content.
  watch::ReviewRecords reviewed_;
  // The records' phase key of a plan file (its folder's name, as its ledger is named) and of
  // a ledger file.
  static std::string phase_of_plan(const stdfs::path& plan) {
    return plan.lexically_normal().parent_path().filename().string();
  }
  static std::string phase_of_ledger(const stdfs::path& ledger) { return ledger.stem().string(); }
  std::string roadmap_hash_, approvals_fp_, last_state_error_;
  std::string run_status_;   // the state's status as last loaded
  std::string resumed_fp_;   // the approvals' fingerprint execute was last run again for
  std::string state_bytes_;  // the state file as last loaded (valid when state_cached_)
  bool state_cached_ = false;
  std::unique_ptr<WatchReviews> reviews_;
  Clock::time_point backlog_t0_{};
  size_t backlog_total_ = 0;  // plans queued in the backlog since it was last empty
  std::unique_ptr<Process> exec_proc_, gate_proc_;
};

}  // namespace yolo::runner::watch_impl
