// `yolo watch`, the reading the watch core asks for and what it reads ahead (runner/watch_read_ahead.h).
#include <algorithm>
#include <atomic>
#include <future>
#include <memory>

#include "protocol/ports/fs.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/stage1.h"
#include "protocol/base/text.h"
#include "protocol/review/cross_facts.h"
#include "runner/watch_read_ahead.h"

namespace yolo::runner::watch_impl {

// The folder git keeps this work tree's state in (.git, or the one a `.git` file names).
stdfs::path ReadAhead::git_dir() const {
  stdfs::path dot = root_ / ".git";
  if (world_.files().is_directory(dot)) return dot;
  auto r = world_.files().read(dot, 4096, /*text=*/true);
  if (!r.ok()) return {};
  std::string t(text::trim(r.content));
  if (!t.starts_with("gitdir:")) return {};
  stdfs::path g = std::string(text::trim(std::string_view(t).substr(7)));
  return g.is_absolute() ? g : root_ / g;
}

// What git is in the middle of (files half applied), or empty.
std::string ReadAhead::git_busy() const {
  stdfs::path g = git_dir();
  if (g.empty()) return {};
  std::error_code ec;
  for (const auto& [f, what] :
       std::initializer_list<std::pair<const char*, const char*>>{{"rebase-merge", "a rebase"},
                                                                  {"rebase-apply", "a rebase or am"},
                                                                  {"MERGE_HEAD", "a merge"},
                                                                  {"CHERRY_PICK_HEAD", "a cherry-pick"},
                                                                  {"REVERT_HEAD", "a revert"},
                                                                  {"index.lock", "a git command (index.lock)"}})
    if (stdfs::exists(g / f, ec)) {
      // A lock left by a git that crashed does not hold the watcher forever.
      if (std::string_view(f) == "index.lock") {
        auto t = stdfs::last_write_time(g / f, ec);
        if (!ec && stdfs::file_time_type::clock::now() - t > std::chrono::seconds(60)) continue;
      }
      return what;
    }
  return {};
}

// One phase learnt on a worker thread (watch::learn_phase: its ledger's records and its
// plans' hashes), then handed to the core on the loop.
struct ReadAhead::PhaseJob {
  uv_work_t req{};
  ReadAhead* self = nullptr;
  stdfs::path dir, root;
  bool plans_only = false;
  watch::LearntPhase result;
};

void ReadAhead::learn(const stdfs::path& dir, bool plans_only) {
  if (host_.stopping()) return;
  auto* j = new PhaseJob;
  j->self = this;
  j->req.data = j;
  j->dir = dir;
  j->root = root_;
  j->plans_only = plans_only;
  uv_queue_work(
      loop_, &j->req,
      [](uv_work_t* r) {
        auto* job = static_cast<PhaseJob*>(r->data);
        try {
          job->result = watch::learn_phase(job->self->world_, job->root, job->dir, job->plans_only);
        } catch (const std::exception& e) {
          job->result.dir = job->dir;
          job->result.plans_only = job->plans_only;
          job->result.ledger.error = review_ledger::path_for(job->root, job->dir).string() + ": " + e.what();
        }
      },
      [](uv_work_t* r, int) {
        std::unique_ptr<PhaseJob> job(static_cast<PhaseJob*>(r->data));
        ReadAhead* w = job->self;
        if (w->host_.stopping()) return;
        w->host_.drain();  // the events of what changed while the worker read: judged as changes
        w->host_.core().phase_learnt(std::move(job->result));
        w->host_.carry_out();
      });
}

// The ledger of a phase not learnt yet, loaded on a worker thread from the moment a plan
// event arrives in it: the load (1,000 sealed records at 100,000 plans: parse, schema and
// seals) runs while the debounce does, instead of after it on the loop.
struct ReadAhead::LedgerPrefetch {
  uv_work_t req{};
  ReadAhead* self = nullptr;
  std::shared_ptr<LedgerPrefetch> keep;  // alive until the worker's callback has run
  stdfs::path dir, ledger;
  watch::LedgerRead read;
  std::atomic<bool> started{false};  // a worker thread has it (review batches share the pool)
  std::promise<void> done;
  std::shared_future<void> ready = done.get_future().share();
  bool taken = false;  // applied (or dropped) on the loop already
};

void ReadAhead::prefetch_ledger(const stdfs::path& dir) {
  if (!host_.core().phase_pending(dir) || prefetches_.count(dir)) return;
  auto f = std::make_shared<LedgerPrefetch>();
  f->self = this;
  f->keep = f;
  f->req.data = f.get();
  f->dir = dir;
  f->ledger = review_ledger::path_for(root_, dir);
  prefetches_[dir] = f;
  uv_queue_work(
      loop_, &f->req,
      [](uv_work_t* r) {
        auto* job = static_cast<LedgerPrefetch*>(r->data);
        job->started = true;
        try {
          job->read = watch::read_ledger(job->self->world_, job->ledger);
        } catch (const std::exception& e) {
          job->read = {};
          job->read.error = job->ledger.string() + ": " + e.what();
        }
        job->done.set_value();
      },
      [](uv_work_t* r, int) {
        auto* job = static_cast<LedgerPrefetch*>(r->data);
        std::shared_ptr<LedgerPrefetch> own = std::move(job->keep);
        ReadAhead* w = job->self;
        if (auto it = w->prefetches_.find(job->dir); it != w->prefetches_.end() && it->second.get() == job)
          w->prefetches_.erase(it);
        if (job->taken || w->host_.stopping()) return;
        job->taken = true;
        w->host_.core().ledger_read(job->dir, std::move(job->read));
        w->host_.carry_out();
      });
}

// Before a settle: the ledgers read ahead for phases still not learnt are the core's now (a
// read under way is waited for: a bounded read, rather than the same read again on the
// loop); one still queued behind other work (a review batch) is left to the core to load.
void ReadAhead::take_prefetches() {
  for (auto& [dir, f] : prefetches_) {
    if (f->taken || !host_.core().phase_pending(dir)) continue;
    f->taken = true;
    if (!f->started) continue;
    f->ready.wait();
    host_.core().ledger_read(dir, std::move(f->read));
  }
}

// The phase of a save, prepared for the fresh lane on a worker thread while the debounce runs
// (its store of cross-plan facts, a stat per plan, the checks): the save's review then finds
// its siblings held instead of loading them, most of a review at 1,000 plans in a phase.
// The plans whose content the watcher sees change meanwhile are told to the snapshot once
// the phase is adopted (changed()), as for any phase it holds. At most two at once: a burst
// of events across many phases (a checkout) is left to the reviews themselves.
struct ReadAhead::SnapshotPrefetch {
  uv_work_t req{};
  std::shared_ptr<SnapshotPrefetch> keep;  // alive until the worker's callback has run
  ReadAhead* self = nullptr;
  stdfs::path dir;
  PhaseSnapshots::Phase phase;
  bool ok = false, done = false;
  std::vector<stdfs::path> changed_since;  // plans seen changed after it began
};

void ReadAhead::prefetch_snapshot(const stdfs::path& folder) {
  const stdfs::path dir = folder.lexically_normal();
  if (!review_ || host_.stopping() || snapshot_prefetches_.count(dir) || snapshot_prefetches_.size() >= 2 ||
      fresh_snapshots_.holds(dir))
    return;
  auto f = std::make_shared<SnapshotPrefetch>();
  f->keep = f;
  f->self = this;
  f->req.data = f.get();
  f->dir = dir;
  snapshot_prefetches_[dir] = f;
  uv_queue_work(
      loop_, &f->req,
      [](uv_work_t* r) {
        auto* job = static_cast<SnapshotPrefetch*>(r->data);
        try {
          job->phase = PhaseSnapshots::prepare(job->self->world_, job->dir, Stage1Options{}.max_file_bytes);
          job->ok = true;
        } catch (const std::exception&) {  // never escapes the thread: the review loads the phase itself
          job->ok = false;
        }
      },
      [](uv_work_t* r, int status) {
        auto* job = static_cast<SnapshotPrefetch*>(r->data);
        std::shared_ptr<SnapshotPrefetch> own = std::move(job->keep);
        job->done = true;
        ReadAhead* w = job->self;
        if (w->host_.stopping() || status != 0) {
          w->snapshot_prefetches_.erase(job->dir);
          return;
        }
        if (!w->host_.fresh_running()) w->adopt_snapshots();  // else when the fresh batch ends
      });
}

// The prepared phases, into the fresh lane's snapshots (on the loop, while no batch uses them).
void ReadAhead::adopt_snapshots() {
  for (auto it = snapshot_prefetches_.begin(); it != snapshot_prefetches_.end();) {
    SnapshotPrefetch& f = *it->second;
    if (!f.done) {
      ++it;
      continue;
    }
    if (f.ok && fresh_snapshots_.adopt(f.dir, std::move(f.phase)))
      for (const auto& p : f.changed_since) fresh_snapshots_.changed(world_, p);
    it = snapshot_prefetches_.erase(it);
  }
}

// The fresh lane's snapshots learn of a plan's change now, or when its running batch ends.
void ReadAhead::note_plan_changed(const stdfs::path& p) {
  if (auto it = snapshot_prefetches_.find(p.lexically_normal().parent_path()); it != snapshot_prefetches_.end())
    it->second->changed_since.push_back(p);
  if (host_.fresh_running())
    snapshot_pending_.push_back(p);
  else
    fresh_snapshots_.changed(world_, p);
}

void ReadAhead::fresh_batch_ended() {
  for (const auto& p : snapshot_pending_) fresh_snapshots_.changed(world_, p);
  std::vector<stdfs::path>().swap(snapshot_pending_);
  adopt_snapshots();  // the phases prepared while the batch ran
}

// After the first reconcile, the siblings the cross-plan checks read are parsed ahead, a few
// plans per loop turn (a few milliseconds: events are handled between turns, whatever the
// size of a phase), as many as the cache keeps, so the first save in a phase costs the
// review of one plan, not the parse of its whole phase. Then the loop sleeps. With the
// phases' stores of cross-plan facts (protocol/review/cross_facts.h; the learning filled them), a
// phase's siblings are one file and a stat each: nothing is parsed ahead, nor kept.
void ReadAhead::start_warming() {
  if (!review_ || cross_facts::usable(world_, root_)) return;
  warm_queue_.clear();
  warm_queue_ = host_.core().known_plans(plan_cache_.capacity());
  std::reverse(warm_queue_.begin(), warm_queue_.end());  // taken from the back: in path order
  if (warm_queue_.empty()) return;
  uv_idle_init(loop_, &warm_);
  warm_.data = this;
  uv_idle_start(&warm_, [](uv_idle_t* h) { static_cast<ReadAhead*>(h->data)->warm_one(); });
}

void ReadAhead::warm_one() {
  if (host_.stopping() || warm_queue_.empty()) {
    uv_idle_stop(&warm_);
    std::vector<stdfs::path>().swap(warm_queue_);
    return;
  }
  if (host_.fresh_running()) {  // its worker uses the cache now: go on when it ends
    uv_idle_stop(&warm_);
    warm_paused_ = true;
    return;
  }
  for (int i = 0; i < 16 && !warm_queue_.empty(); ++i) {
    plan_cache_.load_sibling(world_, warm_queue_.back(), Stage1Options{}.max_file_bytes);
    warm_queue_.pop_back();
  }
}

void ReadAhead::resume_warming() {
  if (!warm_paused_ || warm_queue_.empty() || host_.fresh_running()) return;
  warm_paused_ = false;
  uv_idle_start(&warm_, [](uv_idle_t* h) { static_cast<ReadAhead*>(h->data)->warm_one(); });
}

}  // namespace yolo::runner::watch_impl
