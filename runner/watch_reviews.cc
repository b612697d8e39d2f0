#include "runner/watch_reviews.h"

#include <malloc.h>

#include "protocol/ports/fs.h"
#include "protocol/review/stage1.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One batch on a worker thread. Everything it reads is its own copy (options, targets) or,
// for the plan cache, is not touched by the loop thread while the batch runs (the watcher
// warms its cache only while the fresh lane is idle).
struct WatchReviews::Job {
  uv_work_t req{};
  WatchReviews* self = nullptr;
  watch::Lane lane = watch::Lane::Fresh;
  ReviewGateOptions opts;
  std::vector<review::PlanTarget> targets;
  ReviewGateResult res;
  std::string error;
  std::map<stdfs::path, std::string> before;  // --fix: each plan's text before the batch
  Clock::time_point t0;
};

WatchReviews::WatchReviews(uv_loop_t* loop, const World& w, stdfs::path root, PlanCache* fresh_cache, PhaseSnapshots* fresh_snapshots,
                           Hooks hooks)
    : loop_(loop),
      w_(w),
      root_(std::move(root)),
      fresh_cache_(fresh_cache),
      fresh_snapshots_(fresh_snapshots),
      hooks_(std::move(hooks)) {}

WatchReviews::~WatchReviews() = default;

void WatchReviews::configure(const Config& cfg, bool fix) {
  config_ = cfg;
  fix_ = fix;
}

void WatchReviews::start(watch::ReviewBatch b) {
  if (stopped_) return;
  auto* j = new Job;
  j->self = this;
  j->lane = b.lane;
  j->req.data = j;
  j->t0 = Clock::now();
  j->opts.root = root_;
  j->opts.config = config_;
  j->opts.quiet = true;
  j->opts.plan_cache = b.lane == watch::Lane::Fresh ? fresh_cache_ : &backlog_cache_;
  if (b.lane == watch::Lane::Fresh) j->opts.snapshots = fresh_snapshots_;
  // The architect rewrites a plan only when asked (--fix or watch.fix): one cycle otherwise,
  // so the file the person just saved is never changed under them.
  if (!fix_) j->opts.max_cycles = 1;
  for (const auto& p : b.plans) {
    j->targets.push_back(review::PlanTarget{p, p.parent_path(), ""});
    if (fix_)
      if (auto t = w_.files().read(p, Stage1Options{}.max_file_bytes, /*text=*/true); t.ok())
        j->before[p.lexically_normal()] = std::move(t.content);
  }
  ++jobs_;
  if (b.lane == watch::Lane::Fresh) ++fresh_jobs_;
  uv_queue_work(
      loop_, &j->req,
      [](uv_work_t* r) {
        auto* job = static_cast<Job*>(r->data);
        try {
          job->res = run_review_gate(job->self->w_, job->opts, job->targets, /*is_phase=*/false);
        } catch (const std::exception& e) {
          job->error = e.what();
        }
        // The batch freed a phase's parsed ledger (one small block per JSON node): merge those
        // blocks now, on this thread after the review, not in the next save's Stage 1 (its
        // first large allocation merged them all, in the save's latency); what is
        // free at the top of the heap goes back to the system.
        malloc_trim(0);
      },
      [](uv_work_t* r, int) {
        auto* job = static_cast<Job*>(r->data);
        job->self->done(job);
      });
}

void WatchReviews::done(Job* j) {
  std::unique_ptr<Job> own(j);
  --jobs_;
  if (j->lane == watch::Lane::Fresh) --fresh_jobs_;
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - j->t0).count();
  reviewed_ += j->res.rows.size();
  if (hooks_.ended) hooks_.ended(j->lane, j->res, j->error, ms, j->before);
}

}  // namespace yolo::runner
