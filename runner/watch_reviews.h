// The watcher's reviews, run in its own process: no `yolo review` child per save.
// Which plans go in which batch is the watch core's (protocol/watch/watch_core.h: a fresh lane for
// saves, a backlog lane for what the first reconcile found); this runs each batch with the
// review gate (runner/review_gate.h: Stage 1, the reviewer and architect agents, the ledger
// and state records) on a libuv worker thread, so the watcher's loop keeps handling file
// events while a batch, or an agent, runs. The agents are direct children of the watcher
// (spawned by the gate on the worker's private loop, stopped on SIGINT/SIGTERM like in
// `yolo review`). The fresh lane uses the watcher's plan cache (siblings parsed once, kept
// while their files stay the same); the backlog lane has its own, dropped when it empties.
#pragma once
#include <uv.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "protocol/state/config.h"
#include "protocol/base/json.h"
#include "protocol/plan/plan_cache.h"
#include "protocol/watch/reconcile.h"
#include "runner/review_gate.h"

namespace yolo::runner {

class WatchReviews {
 public:
  struct Hooks {
    // A batch ended: the review gate's result (rows: one typed row per plan reviewed;
    // state_errors: what it could not record), the error that stopped it ("" if none), its
    // elapsed time, and (with the architect allowed to rewrite: --fix) each plan's text
    // before the batch, to show what the architect changed.
    std::function<void(watch::Lane, const ReviewGateResult&, const std::string& error, double ms,
                       const std::map<std::filesystem::path, std::string>& before)>
        ended;
  };

  // The fresh lane reads siblings through fresh_cache and keeps its phase snapshots in
  // fresh_snapshots (both the watcher's; it tells the snapshots what changed).
  WatchReviews(uv_loop_t* loop, const World& w, std::filesystem::path root, PlanCache* fresh_cache, PhaseSnapshots* fresh_snapshots,
               Hooks hooks);
  ~WatchReviews();
  WatchReviews(const WatchReviews&) = delete;
  WatchReviews& operator=(const WatchReviews&) = delete;

  // What the next batch runs with (the config as last loaded; --fix / watch.fix).
  void configure(const Config& cfg, bool fix);
  // Runs one batch on a worker thread (at most one per lane at a time: the core's rule).
  void start(watch::ReviewBatch b);
  // No new batch from now on; the running ones end (their agents get the signal too).
  void stop() { stopped_ = true; }
  bool running() const { return jobs_ > 0; }
  bool fresh_running() const { return fresh_jobs_ > 0; }
  // The backlog is reviewed: its parsed plans are not needed any more.
  void backlog_done() { backlog_cache_.clear(); }
  size_t reviewed_count() const { return reviewed_; }

 private:
  struct Job;
  void done(Job* j);

  uv_loop_t* loop_;
  const World& w_;  // the watcher's: the batches read and write files and the time through it
  std::filesystem::path root_;
  PlanCache* fresh_cache_;
  PhaseSnapshots* fresh_snapshots_;
  PlanCache backlog_cache_;
  Hooks hooks_;
  Config config_;
  bool fix_ = false;
  bool stopped_ = false;
  int jobs_ = 0, fresh_jobs_ = 0;
  size_t reviewed_ = 0;
};

}  // namespace yolo::runner
