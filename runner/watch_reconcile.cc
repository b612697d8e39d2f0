// `yolo watch`, what changed: plan and SUMMARY content hashes against what was last seen
// and last reviewed (the phases' review ledgers), the state's approvals, ROADMAP.md, and
// whether git is in the middle of an operation (runner/watcher_impl.h lists the parts).
#include <algorithm>
#include <atomic>
#include <future>
#include <memory>

#include "protocol/clock.h"
#include "protocol/cross_facts.h"
#include "protocol/execution.h"
#include "protocol/fs.h"
#include "protocol/approvals.h"
#include "protocol/plan.h"
#include "protocol/review_ledger.h"
#include "protocol/stage1.h"
#include "protocol/reviewed.h"
#include "protocol/state.h"
#include "protocol/text.h"
#include "protocol/watch_paths.h"
#include "runner/config_report.h"
#include "runner/watcher_impl.h"
#include "runner/world.h"

namespace yolo::runner::watch_impl {

using watch::PathKind;

namespace {
// Content hash of a file (sha256 hex), or empty when it cannot be read.
std::string hash_file(const stdfs::path& p) { return review::file_hash(world(), p); }

// A loaded ledger's records: plan id -> the content hash it reviewed. By id, not by the
// path a record was made at (watch::ReviewRecords says why).
std::vector<std::pair<std::string, std::string>> records_of(const json& ledger) {
  std::vector<std::pair<std::string, std::string>> out;
  auto it = ledger.find("reviews");
  if (it == ledger.end() || !it->is_object()) return out;
  for (const auto& [id, rec] : it->items())
    if (rec.is_object() && rec.contains("hash") && rec["hash"].is_string())
      out.emplace_back(id, rec["hash"].get<std::string>());
  return out;
}
}  // namespace

namespace {
// The map key of a path: its text, with "//" and "/./" folded (the paths compared are built
// the same way; this keeps a stray separator from making two keys of one file).
std::string key_of(const stdfs::path& p) {
  const std::string& s = p.native();
  if (s.find("//") == std::string::npos && s.find("/./") == std::string::npos) return s;
  return p.lexically_normal().native();
}
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> Digests::get(const stdfs::path& p) const {
  std::string k = key_of(p);
  auto it = map_.find(k);
  if (it == map_.end()) return std::nullopt;
  if (it->second.kind == 0) return std::string();
  if (it->second.kind == 2) return odd_.at(k);
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (int i = 0; i < 32; ++i) {
    s[2 * i] = hex[it->second.d[i] >> 4];
    s[2 * i + 1] = hex[it->second.d[i] & 15];
  }
  return s;
}

void Digests::set(const stdfs::path& p, std::string_view hash) {
  std::string k = key_of(p);
  Val v;
  if (hash.empty()) {
    v.kind = 0;
  } else {
    bool ok = hash.size() == 64;
    for (size_t i = 0; ok && i < 32; ++i) {
      int a = hex_digit(hash[2 * i]), b = hex_digit(hash[2 * i + 1]);
      ok = a >= 0 && b >= 0;
      if (ok) v.d[i] = static_cast<unsigned char>(a * 16 + b);
    }
    v.kind = ok ? 1 : 2;
  }
  if (v.kind == 2)
    odd_[k] = std::string(hash);
  else
    odd_.erase(k);
  map_[std::move(k)] = v;
}

void Digests::erase_if(const std::function<bool(const stdfs::path&)>& gone,
                       const std::function<void(const stdfs::path&)>& removed) {
  for (auto it = map_.begin(); it != map_.end();) {
    stdfs::path p = it->first;
    if (gone(p)) {
      removed(p);
      odd_.erase(it->first);
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<stdfs::path> Digests::paths(size_t max) const {
  std::vector<stdfs::path> out;
  for (const auto& [k, _] : map_) {
    if (out.size() >= max) break;
    out.emplace_back(k);
  }
  return out;
}

// The folder git keeps this work tree's state in (.git, or the one a `.git` file names).
stdfs::path Watcher::git_dir() const {
  std::error_code ec;
  stdfs::path dot = o_.root / ".git";
  if (stdfs::is_directory(dot, ec)) return dot;
  auto r = fs::read_text(dot, 4096);
  if (!r.ok()) return {};
  std::string t(text::trim(r.content));
  if (!t.starts_with("gitdir:")) return {};
  stdfs::path g = std::string(text::trim(std::string_view(t).substr(7)));
  return g.is_absolute() ? g : o_.root / g;
}

// What git is in the middle of (files half applied), or empty.
std::string Watcher::git_busy() const {
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

void Watcher::reconcile(bool initial) {
  if (stopping_) return;
  // Mid-rebase, mid-merge, mid-checkout: plans are half applied. Wait (polling, .git is
  // not watched), then reconcile everything once.
  if (!initial) {
    if (std::string busy = git_busy(); !busy.empty()) {
      if (!git_waiting_)
        emit(out::Sym::Pause, "git is in the middle of " + busy + ": waiting for it to finish before reviewing",
             {{"event", "git_busy"}, {"operation", busy}});
      git_waiting_ = true;
      full_rescan_ = true;
      uv_timer_start(
          &debounce_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->reconcile(false); }, 200, 0);
      return;
    }
    if (git_waiting_) {
      git_waiting_ = false;
      emit(out::Sym::Ok, "git finished: reconciling once", {{"event", "git_done"}});
    }
  }
  if (config_dirty_) {
    config_dirty_ = false;
    auto cfg = load_config_reported(o_.root);
    if (cfg.ok()) {
      config_ = cfg.config;
      reviews_->configure(config_, fixing());
    } else
      emit(out::Sym::Warn, cfg.error, {{"event", "config_error"}, {"error", cfg.error}});
  }
  Changed changed;  // phase dir -> changed plans
  bool summaries_changed = false;
  // A full scan (the first, or a rescan) queues what it finds in the backlog lane, said in one
  // line; a save is a fresh review, said per plan.
  bool full = full_rescan_;
  bulk_scan_ = full;
  // What was last reviewed first: a plan is compared with its freshest record. The first
  // reconcile leaves that to the phases' learning after `ready`.
  if (full_rescan_ && !initial) {
    dirty_ledgers_.clear();
    load_all_ledgers();
    phases_pending_.clear();  // every phase is learnt by this rescan
    plans_pending_.clear();
  }
  // A ledger written while a review batch runs is most likely its own write: loaded when the
  // batch has ended (then its bytes are known and it costs a read, not a parse of every
  // record of the phase on the loop thread per save).
  if (!reviews_->running()) {
    for (const auto& f : dirty_ledgers_) load_ledger(f);
    dirty_ledgers_.clear();
  }
  if (full_rescan_) {
    full_rescan_ = false;
    dirty_files_.clear();
    dirty_dirs_.clear();
    std::set<stdfs::path> present;
    std::error_code ec;
    for (auto it = stdfs::directory_iterator(planning_ / "phases", ec); !ec && it != stdfs::directory_iterator();
         it.increment(ec)) {
      // A symlink loop (ELOOP) or a folder we may not read (EACCES) is named and skipped.
      std::error_code dec;
      bool dir = it->is_directory(dec);
      if (dec) {
        walk_error(it->path(), dec);
      } else if (dir && initial) {
        scan_phase(it->path(), present, changed, summaries_changed, /*plans_too=*/false);
        phases_pending_.insert(it->path());
      } else if (dir) {
        scan_phase(it->path(), present, changed, summaries_changed);
      }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) walk_error(planning_ / "phases", ec);
    forget_missing([&](const stdfs::path& p) { return !present.count(p); }, changed, summaries_changed);
    if (!initial) state_dirty_ = roadmap_dirty_ = true;
  } else {
    // A phase not learnt yet is learnt now, before its events are judged.
    for (const auto& d : dirty_dirs_) ensure_phase(d);
    for (const auto& f : dirty_files_) ensure_phase(f.parent_path());
    for (const auto& d : dirty_dirs_) {
      std::set<stdfs::path> present;
      scan_phase(d, present, changed, summaries_changed);
      forget_missing([&](const stdfs::path& p) { return p.parent_path() == d && !present.count(p); }, changed,
                     summaries_changed);
    }
    dirty_dirs_.clear();
    for (const auto& f : dirty_files_) check_file(f, changed, summaries_changed);
    dirty_files_.clear();
  }
  if (state_dirty_) {
    state_dirty_ = false;
    load_state(/*announce=*/true);
  }
  bool roadmap_changed = false;
  if (roadmap_dirty_) {
    roadmap_dirty_ = false;
    std::string h = hash_file(planning_ / "ROADMAP.md");
    if (h != roadmap_hash_) {
      roadmap_hash_ = h;
      roadmap_changed = !h.empty();
      if (roadmap_changed) emit(out::Sym::Diamond, "ROADMAP.md changed → vision gate", {{"event", "roadmap_changed"}});
    }
  }
  watch::Changes found{std::move(changed), summaries_changed, roadmap_changed, approvals_changed_};
  approvals_changed_ = false;
  auto act = watch::decide(found, situation());
  bulk_scan_ = false;
  size_t n = 0;
  for (const auto& [_, plans] : found.plans) n += plans.size();
  auto lane = watch::lane_for(full, initial, n);
  if (full && lane == watch::Lane::Fresh)  // a few: said plan by plan, as saves are
    for (const auto& [_, plans] : found.plans)
      for (const auto& p : plans) announce_changed(p);
  start_reviews(act.reviews, lane);
  if (act.request_vision_gate) request_vision_gate();
  if (act.run_execute) consider_execution(false);
}

void Watcher::scan_phase(const stdfs::path& dir, std::set<stdfs::path>& present, Changed& changed,
                         bool& summaries_changed, bool plans_too) {
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool plan = is_plan_filename(name);
    if (!plan && !is_summary_filename(name)) continue;
    present.insert(it->path());
    if (plan && !plans_too) {
      ++plans_listed_;
      continue;
    }
    check_file(it->path(), changed, summaries_changed);
  }
  if (ec && ec != std::errc::no_such_file_or_directory) walk_error(dir, ec);
}

// One phase learnt on a worker thread: its ledger's records and its plans' hashes.
struct Watcher::PhaseJob {
  uv_work_t req{};
  Watcher* self = nullptr;
  stdfs::path dir, ledger;
  std::optional<size_t> ledger_fp;
  std::string ledger_error;
  std::vector<std::pair<std::string, std::string>> reviewed;  // plan id -> hash reviewed
  struct Seen {
    stdfs::path path;
    std::string hash;
  };
  std::vector<Seen> plans;
  bool plans_only = false;  // the ledger was loaded already (ensure_phase)
};

// A plan as the learning read it is taken unless it changed since: every change made before
// now has its event read (drained from the kernel's queue first); those files are judged by
// their reconcile, as changes, fresh. A change after now compares with what is taken here.
bool Watcher::learnt_as_is(const stdfs::path& p) const { return !dirty_files_.count(p); }

void Watcher::learn_next_phase() {
  if (stopping_ || learning_) return;
  if (phases_pending_.empty() && plans_pending_.empty()) {
    if (learn_t0_ != Clock::time_point{}) {
      emit(out::Sym::Ok,
           "every phase read: " + std::to_string(plan_hash_.size()) + " plans known (in " +
               fmt_ms(ms_since(learn_t0_)) + " after ready)",
           {{"event", "phases_learnt"}, {"plans", plan_hash_.size()}, {"ms", ms_since(learn_t0_)}});
      learn_t0_ = {};
      if (learn_backlog_) say_backlog(learn_backlog_);
      learn_backlog_ = 0;
      maybe_backlog_done();
      start_warming();  // the plans are known now: their siblings are parsed ahead
    }
    return;
  }
  if (learn_t0_ == Clock::time_point{}) learn_t0_ = Clock::now();
  // A save's review runs: it has the machine first (the learning goes on when it ends).
  if (reviews_->fresh_running()) {
    learn_paused_ = true;
    return;
  }
  auto* j = new PhaseJob;
  j->self = this;
  j->req.data = j;
  // A phase whose ledger an event had loaded goes first: its plans are being edited.
  j->plans_only = !plans_pending_.empty();
  j->dir = j->plans_only ? *plans_pending_.begin() : *phases_pending_.begin();
  j->ledger = review_ledger::path_for(o_.root, j->dir);
  learning_ = true;
  uv_queue_work(
      &loop_, &j->req,
      [](uv_work_t* r) {
        auto* job = static_cast<PhaseJob*>(r->data);
        try {
          if (!job->plans_only) job->ledger_fp = ledger_fingerprint(job->ledger);
          if (job->ledger_fp) {
            auto l = review_ledger::load_file(world(), job->ledger);
            if (!l.ok()) {
              job->ledger_error = l.error;
            } else {
              job->reviewed = records_of(l.doc);
            }
          }
          // Each plan's hash from the phase's store of cross-plan facts while its file is the
          // one they were parsed from (a stat); else the plan is read and parsed, and its facts
          // remembered, so a save in this phase reads one file for its siblings (cross_facts.h).
          cross_facts::Store facts(world(), job->dir, Stage1Options{}.max_file_bytes);
          std::error_code ec;
          for (auto it = stdfs::directory_iterator(job->dir, ec); !ec && it != stdfs::directory_iterator();
               it.increment(ec)) {
            if (!is_plan_filename(it->path().filename().string())) continue;
            std::string h;
            if (facts.enabled())
              if (auto l = facts.load(it->path()); l.plan) h = l.plan->content_hash;
            job->plans.push_back({it->path(), h.empty() ? hash_file(it->path()) : h});
          }
          if (!ec) facts.save(/*prune=*/true);
        } catch (const std::exception& e) {
          job->ledger_error = job->ledger.string() + ": " + e.what();
        }
      },
      [](uv_work_t* r, int) {
        auto* job = static_cast<PhaseJob*>(r->data);
        job->self->on_phase_learnt(job);
      });
}

void Watcher::on_phase_learnt(PhaseJob* j) {
  std::unique_ptr<PhaseJob> own(j);
  learning_ = false;
  if (stopping_) return;
  dir_watch_->drain();  // the events of what changed while the worker read
  if (j->plans_only) {
    // The plans of a phase whose ledger an event's reconcile loaded. A plan the loop has
    // read since (an event) is newer there; one gone since (its event handled already) is
    // not brought back.
    if (plans_pending_.erase(j->dir)) {
      Changed changed;
      bulk_scan_ = true;
      std::error_code ec;
      for (const auto& pl : j->plans)
        if (learnt_as_is(pl.path) && !plan_hash_.get(pl.path) && stdfs::is_regular_file(pl.path, ec))
          check_plan_hashed(pl.path, pl.hash, changed);
      bulk_scan_ = false;
      queue_backlog(std::move(changed));
    }
    return learn_next_phase();
  }
  // Learnt meanwhile by an event's reconcile (or a rescan): that one is newer.
  if (phases_pending_.erase(j->dir)) {
    if (!j->ledger_error.empty()) {
      emit(out::Sym::Fail, j->ledger_error, {{"event", "ledger_error"}, {"error", j->ledger_error}});
    } else {
      if (j->ledger_fp) reviewed_.replace(phase_of_ledger(j->ledger), j->reviewed);
      if (j->ledger_fp) ledger_seen_[j->ledger] = *j->ledger_fp;
    }
    Changed changed;
    bulk_scan_ = true;
    for (const auto& pl : j->plans)
      if (learnt_as_is(pl.path)) check_plan_hashed(pl.path, pl.hash, changed);
    bulk_scan_ = false;
    queue_backlog(std::move(changed));
  }
  learn_next_phase();
}

// The ledger of a phase not learnt yet, loaded on a worker thread from the moment a plan
// event arrives in it: the load (1,000 sealed records at 100,000 plans: parse, schema and
// seals) runs while the debounce does, instead of after it on the loop.
struct Watcher::LedgerPrefetch {
  uv_work_t req{};
  Watcher* self = nullptr;
  std::shared_ptr<LedgerPrefetch> keep;  // alive until the worker's callback has run
  stdfs::path dir, ledger;
  std::optional<size_t> fp;  // the ledger's fingerprint, taken before it was read
  std::string error;
  std::vector<std::pair<std::string, std::string>> reviewed;  // plan id -> hash reviewed
  std::atomic<bool> started{false};                           // a worker thread has it (review batches share the pool)
  std::promise<void> done;
  std::shared_future<void> ready = done.get_future().share();
  bool taken = false;  // applied (or dropped) on the loop already
};

void Watcher::prefetch_ledger(const stdfs::path& dir) {
  if (!phases_pending_.count(dir) || prefetches_.count(dir)) return;
  auto f = std::make_shared<LedgerPrefetch>();
  f->self = this;
  f->keep = f;
  f->req.data = f.get();
  f->dir = dir;
  f->ledger = review_ledger::path_for(o_.root, dir);
  prefetches_[dir] = f;
  uv_queue_work(
      &loop_, &f->req,
      [](uv_work_t* r) {
        auto* job = static_cast<LedgerPrefetch*>(r->data);
        job->started = true;
        try {
          job->fp = ledger_fingerprint(job->ledger);
          if (job->fp) {
            auto l = review_ledger::load_file(world(), job->ledger);
            if (!l.ok()) {
              job->error = l.error;
            } else {
              job->reviewed = records_of(l.doc);
            }
          }
        } catch (const std::exception& e) {
          job->error = job->ledger.string() + ": " + e.what();
        }
        job->done.set_value();
      },
      [](uv_work_t* r, int) {
        auto* job = static_cast<LedgerPrefetch*>(r->data);
        std::shared_ptr<LedgerPrefetch> own = std::move(job->keep);
        Watcher* w = job->self;
        if (auto it = w->prefetches_.find(job->dir); it != w->prefetches_.end() && it->second.get() == job)
          w->prefetches_.erase(it);
        if (!job->taken && !w->stopping_) w->apply_prefetch(*job);
      });
}

// The phase of a save, prepared for the fresh lane on a worker thread while the debounce runs
// (its store of cross-plan facts, a stat per plan, the checks): the save's review then finds
// its siblings held instead of loading them, most of a review at 1,000 plans in a phase.
// The plans whose content the watcher sees change meanwhile are told to the snapshot once
// the phase is adopted (changed()), as for any phase it holds. At most two at once: a burst
// of events across many phases (a checkout) is left to the reviews themselves.
struct Watcher::SnapshotPrefetch {
  uv_work_t req{};
  std::shared_ptr<SnapshotPrefetch> keep;  // alive until the worker's callback has run
  Watcher* self = nullptr;
  stdfs::path dir;
  PhaseSnapshots::Phase phase;
  bool ok = false, done = false;
  std::vector<stdfs::path> changed_since;  // plans seen changed after it began
};

void Watcher::prefetch_snapshot(const stdfs::path& folder) {
  const stdfs::path dir = folder.lexically_normal();
  if (!o_.review || stopping_ || snapshot_prefetches_.count(dir) || snapshot_prefetches_.size() >= 2 ||
      fresh_snapshots_.holds(dir))
    return;
  auto f = std::make_shared<SnapshotPrefetch>();
  f->keep = f;
  f->self = this;
  f->req.data = f.get();
  f->dir = dir;
  snapshot_prefetches_[dir] = f;
  uv_queue_work(
      &loop_, &f->req,
      [](uv_work_t* r) {
        auto* job = static_cast<SnapshotPrefetch*>(r->data);
        try {
          job->phase = PhaseSnapshots::prepare(world(), job->dir, Stage1Options{}.max_file_bytes);
          job->ok = true;
        } catch (const std::exception&) {  // never escapes the thread: the review loads the phase itself
          job->ok = false;
        }
      },
      [](uv_work_t* r, int status) {
        auto* job = static_cast<SnapshotPrefetch*>(r->data);
        std::shared_ptr<SnapshotPrefetch> own = std::move(job->keep);
        job->done = true;
        Watcher* w = job->self;
        if (w->stopping_ || status != 0) {
          w->snapshot_prefetches_.erase(job->dir);
          return;
        }
        if (!w->reviews_->fresh_running()) w->adopt_snapshots();  // else when the fresh batch ends
      });
}

// The prepared phases, into the fresh lane's snapshots (on the loop, while no batch uses them).
void Watcher::adopt_snapshots() {
  for (auto it = snapshot_prefetches_.begin(); it != snapshot_prefetches_.end();) {
    SnapshotPrefetch& f = *it->second;
    if (!f.done) {
      ++it;
      continue;
    }
    if (f.ok && fresh_snapshots_.adopt(f.dir, std::move(f.phase)))
      for (const auto& p : f.changed_since) fresh_snapshots_.changed(world(), p);
    it = snapshot_prefetches_.erase(it);
  }
}

// What a prefetch read becomes what the watcher knows of that phase, as ensure_phase's own
// load would: only while the phase is still not learnt and nothing has loaded its ledger
// since (a newer load is never overwritten by an older one).
void Watcher::apply_prefetch(LedgerPrefetch& f) {
  f.taken = true;
  if (!phases_pending_.count(f.dir) || ledger_seen_.count(f.ledger)) return;
  phases_pending_.erase(f.dir);
  if (!f.error.empty()) {
    emit(out::Sym::Fail, f.error, {{"event", "ledger_error"}, {"error", f.error}});
  } else if (f.fp) {
    reviewed_.replace(phase_of_ledger(f.ledger), f.reviewed);
    ledger_seen_[f.ledger] = *f.fp;
  }
  plans_pending_.insert(f.dir);
  learn_next_phase();
}

// Its ledger now, so the files of the events at hand are judged against it by the caller;
// the hashes of its other plans are learnt next on the worker thread (their backlog, if any,
// is found then). A prefetch under way (the event's own) is waited for rather than repeated.
void Watcher::ensure_phase(const stdfs::path& dir) {
  if (auto it = prefetches_.find(dir); it != prefetches_.end() && phases_pending_.count(dir)) {
    std::shared_ptr<LedgerPrefetch> f = it->second;
    if (f->started) {
      f->ready.wait();  // a bounded read; the worker's callback then only frees it
      if (!f->taken) apply_prefetch(*f);
    } else {
      f->taken = true;  // still queued behind other work (a review batch): loaded here instead
    }
    if (!phases_pending_.count(dir)) return;
  }
  if (!phases_pending_.erase(dir)) return;
  load_ledger(review_ledger::path_for(o_.root, dir));
  plans_pending_.insert(dir);
  learn_next_phase();
}

// What a phase's learning found not reviewed as it is: reviewed in the background (when
// the watcher reviews at all: watch::decide).
void Watcher::queue_backlog(Changed changed) {
  watch::Changes found{std::move(changed), false, false, false};
  start_reviews(watch::decide(found, situation()).reviews, watch::Lane::Backlog);
}

// A folder of the tree that cannot be walked: said once per path and reason, then skipped.
void Watcher::walk_error(const stdfs::path& p, const std::error_code& ec) {
  std::string msg = "skipping " + p.string() + ": " + ec.message();
  if (!walk_errors_.insert(msg).second) return;
  emit(out::Sym::Warn, msg, {{"event", "walk_error"}, {"path", p.string()}, {"error", ec.message()}});
}

void Watcher::forget_missing(const std::function<bool(const stdfs::path&)>& missing, Changed& changed,
                             bool& summaries_changed) {
  plan_hash_.erase_if(missing, [&](const stdfs::path& p) {
    changed[p.parent_path()];  // siblings' cross-plan checks change
    reviews_->drop(p);
    note_plan_changed(p);
  });
  summary_hash_.erase_if(missing, [&](const stdfs::path&) { summaries_changed = true; });
}

void Watcher::check_file(const stdfs::path& p, Changed& changed, bool& summaries_changed) {
  std::string name = p.filename().string();
  bool is_plan = is_plan_filename(name);
  auto& cache = is_plan ? plan_hash_ : summary_hash_;
  std::error_code ec;
  if (!stdfs::is_regular_file(p, ec)) {
    if (cache.erase(p)) {
      if (is_plan) {
        changed[p.parent_path()];
        reviews_->drop(p);
        note_plan_changed(p);
      } else
        summaries_changed = true;
    }
    return;
  }
  std::string h = hash_file(p);
  std::optional<std::string> seen_text = cache.get(p);
  std::optional<std::string_view> seen;
  if (seen_text) seen = *seen_text;
  if (!is_plan) {
    if (seen && *seen == h) return;  // touched, not changed
    cache.set(p, h);
    summaries_changed = true;
    if (!started_) return;  // the first scan finds what is there: nothing was written
    emit(out::Sym::Diamond, name + " written", {{"event", "summary_changed"}, {"path", p.string()}});
    return;
  }
  check_plan_hashed(p, h, changed);
}

// A plan file read now (its hash h): what changed, and whether it needs a review.
void Watcher::check_plan_hashed(const stdfs::path& p, const std::string& h, Changed& changed) {
  std::optional<std::string> seen_text = plan_hash_.get(p);
  std::optional<std::string_view> seen;
  if (seen_text) seen = *seen_text;
  if (!seen || *seen != h) note_plan_changed(p);
  auto seen_now = watch::plan_seen(seen, reviewed_.reviewed(phase_of_plan(p), h), h);
  plan_hash_.set(p, h);
  if (seen_now != watch::PlanSeen::NeedsReview) return;  // touched, or already reviewed as it is
  changed[p.parent_path()].push_back(p);
  if (!bulk_scan_) announce_changed(p);  // a full scan's are announced when it is done
}

// The fresh lane's snapshots learn of the change now, or when its running batch ends.
void Watcher::note_plan_changed(const stdfs::path& p) {
  if (auto it = snapshot_prefetches_.find(p.lexically_normal().parent_path()); it != snapshot_prefetches_.end())
    it->second->changed_since.push_back(p);
  if (reviews_ && reviews_->fresh_running())
    snapshot_pending_.push_back(p);
  else
    fresh_snapshots_.changed(world(), p);
}

void Watcher::announce_changed(const stdfs::path& p) {
  std::string id = plan_label(p);
  emit(out::Sym::Diamond, id + (o_.review ? " changed → reviewing" : " changed"),
       {{"event", "plan_changed"},
        {"plan_id", id},
        {"path", p.string()},
        {"hash", plan_hash_.get(p).value_or(std::string())}});
}

std::string Watcher::plan_label(const stdfs::path& p) {
  auto l = load_plan(world(), p);
  if (l.plan && (!l.plan->phase.empty() || !l.plan->plan.empty())) return l.plan->id();
  return p.filename().string();
}

void Watcher::load_state(bool announce) {
  // A state file with the bytes last loaded says the same: skip its parse and schema check.
  // A review's own write asks twice (its child's exit, then its inotify event).
  auto before = fs::read_bytes(state::state_path(o_.root), 64u << 20);
  if (state_cached_ && before.ok() && before.content == state_bytes_) return;
  state_cached_ = false;
  std::string().swap(state_bytes_);  // a peak of one state text less while loading
  auto s = state::load(world(), o_.root);
  if (!s.ok()) {
    if (s.error != last_state_error_) emit(out::Sym::Fail, s.error, {{"event", "state_error"}, {"error", s.error}});
    last_state_error_ = s.error;
    return;
  }
  last_state_error_.clear();
  const json& d = s.doc;
  active_run_ = execution::run_in_progress(d);  // a review's records are no run
  run_status_ = d.value("status", json("")).is_string() ? d.value("status", "") : "";
  // Approval/gate fingerprint: what unblocks or blocks the run.
  json approvals = {{"approval", d.value("approval", json(nullptr))}, {"gates", json::array()}};
  if (auto g = d.find("gates"); g != d.end() && g->is_array())
    for (const auto& gate : *g) approvals["gates"].push_back({gate.value("id", ""), gate.value("status", "")});
  std::string fp = approvals.dump();
  if (fp != approvals_fp_) {
    if (announce) announce_approval_change(d);
    approvals_fp_ = fp;
    approvals_changed_ = true;
  }
  // Remember the bytes only when the file read the same on both sides of the load, so
  // what was loaded is what they say.
  s.doc = json();  // done with it: no parsed state and two texts in memory at once
  auto after = fs::read_bytes(state::state_path(o_.root), 64u << 20);
  if (before.ok() && after.ok() && after.content == before.content) {
    state_bytes_ = std::move(before.content);
    state_cached_ = true;
  }
}

void Watcher::announce_approval_change(const json& d) {
  const json approval = d.value("approval", json(nullptr));
  bool awaiting = execution::run_status(d) == execution::RunStatus::AwaitingApproval;
  if (awaiting && approval.is_object()) {
    std::string p = approval.value("plan_path", "");
    emit(out::Sym::Pause, "waiting for approval of " + p,
         {{"event", to_string(execution::RunStatus::AwaitingApproval)}, {"plan_path", p}});
  } else if (approval.is_object() && approval.value("approved", false)) {
    std::string by = approval.value("approved_by", json("")).is_string() ? approval.value("approved_by", "") : "";
    // Whether it counts is the gates' own question (seal, digest of the file now).
    std::string p = approval.value("plan_path", "");
    auto type = gates::parse_gate_type(approval.value("gate_type", "vision")).value_or(gates::GateType::Vision);
    auto st = gates::approval_status(d, type, p, gates::now_of(world(), o_.root));
    if (!st.counts()) {
      emit(out::Sym::Warn, "an approval of " + p + " does not count: " + st.message,
           {{"event", "approval_not_counted"}, {"plan_path", p}, {"approved_by", by}, {"reason", st.message}});
      return;  // when driving, execute runs anyway (the state changed): it re-opens the gate and says why
    }
    emit(out::Sym::Ok, "approval landed" + (by.empty() ? "" : " (by " + by + ")") + (driving() ? " → resuming" : ""),
         {{"event", "approved"}, {"approved_by", by}});
  }
}

void Watcher::load_all_ledgers() {
  ledger_seen_.clear();
  std::error_code ec;
  for (stdfs::directory_iterator it(review_ledger::dir(o_.root), ec), end; !ec && it != end; it.increment(ec))
    if (watch::classify(planning_, it->path()) == PathKind::Ledger) load_ledger(it->path());
}

// The bytes of a ledger and its journal (protocol/review_ledger.h) as one number; nullopt
// when the ledger cannot be read.
std::optional<size_t> ledger_fingerprint(const stdfs::path& file) {
  auto bytes = fs::read_bytes(file, 16u << 20);
  if (!bytes.ok()) return std::nullopt;
  size_t h = std::hash<std::string>{}(bytes.content);
  if (auto j = fs::read_bytes(review_ledger::journal_for(file), 16u << 20); j.ok() && !j.content.empty())
    h = h * 1000003u ^ std::hash<std::string>{}(j.content);
  return h;
}

// A ledger whose bytes are the ones last loaded says the same: no parse, no schema check
// (every review of ours writes one, and its inotify event comes back here). A journal's
// event stands for its ledger.
void Watcher::load_ledger(const stdfs::path& changed) {
  stdfs::path file = changed;
  if (file.extension() == ".jsonl") file.replace_extension(".json");
  auto fp = ledger_fingerprint(file);
  if (!fp) {
    // Gone: its records with it (a review too many, never one too few).
    if (ledger_seen_.erase(file)) reviewed_.replace(phase_of_ledger(file), {});
    return;
  }
  size_t h = *fp;
  if (auto it = ledger_seen_.find(file); it != ledger_seen_.end() && it->second == h) return;
  auto r = review_ledger::load_file(world(), file);
  if (!r.ok()) {
    emit(out::Sym::Fail, r.error, {{"event", "ledger_error"}, {"error", r.error}});
    return;
  }
  reviewed_.replace(phase_of_ledger(file), records_of(r.doc));
  ledger_seen_[file] = h;
}

}  // namespace yolo::runner::watch_impl
