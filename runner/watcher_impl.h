// The watcher's parts (runner/watcher.h is the entry point). What it decides is protocol's
// watch core (protocol/watch/watch_core.h: events in, actions out); these files are its driver:
//   watcher.cc          the loop: start, file events into the core, its actions carried out,
//                       shutdown
//   watch_reconcile.cc  the reading the core asks for, on worker threads: phases learnt,
//                       ledgers and phase snapshots read ahead during the debounce; git busy
//   watch_drive.cc      what it sets going: review batches (runner/watch_reviews.h), the
//                       vision gate request, `yolo execute` runs, and their lines
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

#include "protocol/state/config.h"
#include "protocol/base/json.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/plan/plan_cache.h"
#include "protocol/watch/reconcile.h"
#include "protocol/watch/watch_core.h"
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

double ms_since(Clock::time_point t);
std::string fmt_ms(double ms);

class Watcher {
 public:
  Watcher(Context ctx, const WatchOptions& o) : ctx_(std::move(ctx)), o_(o), planning_(ctx_.root / ".yolo-planning") {}
  int run();

 private:
  // --- the loop (watcher.cc) ---
  void emit(out::Sym s, const std::string& msg, json j);
  void on_change(const DirWatch::Change& c);
  void on_watch_limit(const std::vector<stdfs::path>& recovered);
  size_t last_unwatched_said_ = 0;
  void carry_out();  // the core's actions
  void act(watch::Action& a);
  void settle();  // the settle timer fired
  void reload_config();
  void shutdown(int sig);
  void maybe_finish_shutdown();
  void finish();

  // --- what the core asks read, ahead or on worker threads (watch_reconcile.cc) ---
  stdfs::path git_dir() const;
  std::string git_busy() const;
  // One phase learnt on a worker thread (Action::Learn).
  struct PhaseJob;
  void learn(const stdfs::path& dir, bool plans_only);
  // A plan event in a phase not learnt yet starts loading that phase's ledger on a worker
  // thread at once, while the debounce runs; the settle then waits for that load instead of
  // parsing the ledger on the loop (take_prefetches).
  struct LedgerPrefetch;
  void prefetch_ledger(const stdfs::path& dir);
  void take_prefetches();
  std::map<stdfs::path, std::shared_ptr<LedgerPrefetch>> prefetches_;
  // A plan event in a phase the fresh lane's snapshots do not hold starts preparing that
  // phase on a worker thread (PhaseSnapshots::prepare), so the save's review finds its
  // siblings held; adopted on the loop while no fresh batch runs.
  struct SnapshotPrefetch;
  void prefetch_snapshot(const stdfs::path& dir);
  void adopt_snapshots();
  std::map<stdfs::path, std::shared_ptr<SnapshotPrefetch>> snapshot_prefetches_;  // by folder, lexically normal
  void note_plan_changed(const stdfs::path& p);

  // --- what it sets going (watch_drive.cc) ---
  SpawnSpec child(std::vector<std::string> args);
  bool fixing() const { return o_.fix || config_.watch_fix; }
  void on_reviews_ended(watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                        const std::map<stdfs::path, std::string>& before);
  void announce_review(const review::PlanReview& row, double ms, const std::map<stdfs::path, std::string>& before);
  void start_warming();
  void warm_one();
  void request_vision_gate();
  void start_execute();

  Context ctx_;                     // the command's World, project root and config
  const World& world_ = ctx_.world;  // every file and time the watcher reads goes through it
  WatchOptions o_;
  stdfs::path planning_;
  Config& config_ = ctx_.config;
  InstanceLock instance_lock_;
  std::unique_ptr<watch::Core> core_;
  uv_loop_t loop_{};
  uv_timer_t debounce_{}, force_exit_{}, record_retry_{};
  uv_signal_t sigint_{}, sigterm_{};
  std::unique_ptr<DirWatch> dir_watch_;
  bool stopping_ = false;
  // Siblings as the cross-plan checks read them (slim, ~1 KB a plan; at most 20,000 kept),
  // reused while their files stay the same. Used by the fresh review lane's worker while it
  // runs a batch, else by warming on the loop thread (only without the phases' stores of
  // cross-plan facts, protocol/review/cross_facts.h): never both at once.
  PlanCache plan_cache_;
  // The fresh lane's phases as the cross-plan checks see them, kept between saves (at most
  // as many plans as the cache): a save re-runs the checks only when a plan's cross-plan
  // facts changed. Told of every plan change the core sees (note_plan_changed); while the
  // fresh lane's batch runs (its worker uses them) the changes wait in snapshot_pending_.
  PhaseSnapshots fresh_snapshots_{&plan_cache_, 20000, /*save_facts=*/false};
  std::vector<stdfs::path> snapshot_pending_;
  uv_idle_t warm_{};
  bool warm_paused_ = false;  // warming waits for the fresh lane's batch to end
  std::vector<stdfs::path> warm_queue_;
  std::unique_ptr<WatchReviews> reviews_;
  std::unique_ptr<Process> exec_proc_, gate_proc_;
};

}  // namespace yolo::runner::watch_impl
