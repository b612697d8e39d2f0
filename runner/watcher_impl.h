// The watcher's parts (runner/watcher.h is the entry point). What it decides is protocol's
// watch core (protocol/watch/watch_core.h: events in, actions out); these files are its driver:
//   watcher.cc          the loop: start, file events into the core, its actions carried out,
//                       shutdown
//   watch_read_ahead.h  the reading the core asks for, on worker threads: phases learnt,
//                       ledgers and phase snapshots read ahead during the debounce, the
//                       siblings parsed ahead; git busy (a class of its own, ReadAhead)
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
#include "protocol/watch/reconcile.h"
#include "protocol/watch/watch_core.h"
#include "runner/dir_watch.h"
#include "runner/instance_lock.h"
#include "runner/output.h"
#include "runner/review_gate.h"
#include "runner/subprocess.h"
#include "runner/watch_read_ahead.h"
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

  // --- what it sets going (watch_drive.cc) ---
  SpawnSpec child(std::vector<std::string> args);
  bool fixing() const { return o_.fix || config_.watch_fix; }
  void on_reviews_ended(watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                        const std::map<stdfs::path, std::string>& before);
  void announce_review(const review::PlanReview& row, double ms, const std::map<stdfs::path, std::string>& before);
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
  // What the core asks read, and what is read ahead (runner/watch_read_ahead.h).
  ReadAhead read_ahead_{&loop_, ctx_.world, ctx_.root, o_.review, read_ahead_host()};
  ReadAhead::Host read_ahead_host();
  std::unique_ptr<WatchReviews> reviews_;
  std::unique_ptr<Process> exec_proc_, gate_proc_;
};

}  // namespace yolo::runner::watch_impl
