// `yolo watch`, the reading the watch core asks for and what it reads ahead, on worker threads
// of the watcher's loop: each phase learnt after `ready`, a phase's ledger and its snapshot
// read while the debounce runs, the siblings the cross-plan checks read parsed ahead, and
// whether git is in the middle of an operation. What it reads goes to the core through the
// watcher (runner/watcher_impl.h).
#pragma once
#include <uv.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocol/plan/plan_cache.h"
#include "protocol/ports/world.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/watch/watch_core.h"

namespace yolo::runner::watch_impl {

namespace stdfs = std::filesystem;

class ReadAhead {
 public:
  // What it needs of the watcher, asked when a read ends (the core exists by then).
  struct Host {
    std::function<watch::Core&()> core;
    std::function<bool()> stopping;
    std::function<bool()> fresh_running;  // the fresh review lane's batch runs: it uses the cache and snapshots
    std::function<void()> drain;          // the file events queued meanwhile, into the core
    std::function<void()> carry_out;      // the core's actions
  };
  ReadAhead(uv_loop_t* loop, const World& world, stdfs::path root, bool review, Host host)
      : loop_(loop), world_(world), root_(std::move(root)), review_(review), host_(std::move(host)) {}

  // What the review lanes read through (runner/watch_reviews.h).
  PlanCache& plan_cache() { return plan_cache_; }
  PhaseSnapshots& fresh_snapshots() { return fresh_snapshots_; }

  // What git is in the middle of (files half applied), or empty.
  std::string git_busy() const;
  // One phase learnt on a worker thread (Action::Learn), then handed to the core.
  void learn(const stdfs::path& dir, bool plans_only);
  // A plan event in a phase not learnt yet starts loading that phase's ledger on a worker
  // thread at once, while the debounce runs; the settle then waits for that load instead of
  // parsing the ledger on the loop (take_prefetches).
  void prefetch_ledger(const stdfs::path& dir);
  void take_prefetches();
  // A plan event in a phase the fresh lane's snapshots do not hold starts preparing that
  // phase on a worker thread (PhaseSnapshots::prepare), so the save's review finds its
  // siblings held; adopted on the loop while no fresh batch runs.
  void prefetch_snapshot(const stdfs::path& dir);
  // The core saw a plan's content change: the fresh lane's snapshots learn of it.
  void note_plan_changed(const stdfs::path& p);
  // The fresh lane's batch ended: what changed meanwhile and the phases prepared meanwhile
  // go into its snapshots, and warming goes on if it waited for the batch.
  void fresh_batch_ended();
  void resume_warming();
  // Action::Warm: the siblings parsed ahead, a few per loop turn (watch_read_ahead.cc).
  void start_warming();

 private:
  stdfs::path git_dir() const;
  void adopt_snapshots();
  void warm_one();
  struct PhaseJob;
  struct LedgerPrefetch;
  struct SnapshotPrefetch;

  uv_loop_t* loop_;
  const World& world_;
  stdfs::path root_;
  bool review_;
  Host host_;
  std::map<stdfs::path, std::shared_ptr<LedgerPrefetch>> prefetches_;
  std::map<stdfs::path, std::shared_ptr<SnapshotPrefetch>> snapshot_prefetches_;  // by folder, lexically normal
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
};

}  // namespace yolo::runner::watch_impl
