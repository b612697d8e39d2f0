// The watch core (protocol/watch/watch_core.h): events in, actions out. The run's side (the state's
// approvals, execute) is in watch_core_run.cc; what it reads, in watch_read.cc.
#include "protocol/watch/watch_core.h"

#include <algorithm>

#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/review_loop.h"

namespace yolo::watch {

namespace stdfs = std::filesystem;

const char* to_string(Mark m) {
  switch (m) {
    case Mark::Ok:
      return "ok";
    case Mark::Warn:
      return "warn";
    case Mark::Fail:
      return "fail";
    case Mark::Note:
      return "note";
    case Mark::Pause:
      return "pause";
    case Mark::Skip:
      return "skip";
  }
  return "note";
}

// ---- the core ----------------------------------------------------------------------

Core::Core(const World& w, CoreOptions o)
    : w_(w),
      o_(std::move(o)),
      planning_(o_.root / ".yolo-planning"),
      run_(
          w, o_.root, o_.drive_asked, [this](Mark m, std::string t, json e) { say(m, std::move(t), std::move(e)); },
          o_.now_ms) {
  if (o_.debounce_ms < 0) o_.debounce_ms = 0;
}

std::vector<Action> Core::take_actions() {
  std::vector<Action> a;
  a.swap(out_);
  return a;
}

void Core::say(Mark m, std::string text, json event) {
  Action a;
  a.kind = Action::Kind::Say;
  a.mark = m;
  a.text = std::move(text);
  event["ts"] = w_.now();
  a.event = std::move(event);
  out_.push_back(std::move(a));
}

void Core::arm(long long ms) {
  Action a;
  a.kind = Action::Kind::ArmSettle;
  a.ms = std::max(o_.debounce_ms, ms);
  out_.push_back(std::move(a));
}

std::string Core::phase_of_plan(const stdfs::path& plan) {
  return plan.lexically_normal().parent_path().filename().string();
}

void Core::configure(bool agents) { agents_ = agents; }

void Core::start() {
  run_.load_state(/*announce=*/false);
  // The state as found is no news: execute runs once below when driving (asked to, or a run
  // in progress), not a second time for approvals it reads itself.
  run_.take_approvals_changed();
  roadmap_hash_ = review::file_hash(w_, planning_ / "ROADMAP.md");
  full_rescan_ = true;
  reconcile(/*initial=*/true);
  started_ = true;
  learn_next();
  if (driving()) run_execute(/*force=*/true);
}

PathKind Core::path_changed(const stdfs::path& p, bool gone) {
  (void)gone;            // a change or a removal is judged alike: by what the settle finds on disk
  if (p == planning_) {  // deleted or moved itself
    planning_replaced();
    return PathKind::Other;
  }
  const PathKind kind = classify(planning_, p);
  switch (kind) {
    case PathKind::Ignored:
    case PathKind::Other:
      return kind;
    case PathKind::Plan:
    case PathKind::Summary:
      dirty_files_.insert(p);
      break;
    case PathKind::PhaseDir:
      dirty_dirs_.insert(p);
      break;
    case PathKind::PhasesRoot:
      full_rescan_ = true;
      break;
    case PathKind::State:
      state_dirty_ = true;
      break;
    case PathKind::Ledger:
      dirty_ledgers_.insert(p);
      break;
    case PathKind::Roadmap:
      roadmap_dirty_ = true;
      break;
    case PathKind::Config:
      config_dirty_ = true;
      break;
  }
  arm(0);
  return kind;
}

void Core::planning_replaced() {
  full_rescan_ = true;
  arm(0);
}

void Core::rescan_quietly() {
  full_rescan_ = true;
  arm(0);
}

// A flood overflows the kernel's queue again and again: each rescan waits longer (doubling
// up to 5 s) while overflows keep coming less than 2 s apart, so a flood cannot keep the
// watcher rescanning back to back; a quiet spell resets it. An overflow while a rescan
// already waits is folded into it (said once).
void Core::overflow(const std::string& why) {
  long long t = now();
  bool soon = last_overflow_ms_ >= 0 && t - last_overflow_ms_ < 2000;
  last_overflow_ms_ = t;
  rescan_backoff_ms_ = soon ? std::min<long long>(5000, std::max<long long>(100, rescan_backoff_ms_ * 2)) : 0;
  if (!full_rescan_)
    say(Mark::Warn,
        "rescanning everything: " + why +
            (rescan_backoff_ms_ ? " (in " + std::to_string(rescan_backoff_ms_) + " ms)" : ""),
        {{"event", "rescan"}, {"reason", why}, {"backoff_ms", rescan_backoff_ms_}});
  full_rescan_ = true;
  arm(rescan_backoff_ms_);
}

void Core::settle(const std::string& git_busy) {
  // Mid-rebase, mid-merge, mid-checkout: plans are half applied. Wait (polling: .git is
  // not watched), then reconcile everything once.
  if (!git_busy.empty()) {
    if (!git_waiting_)
      say(Mark::Pause, "git is in the middle of " + git_busy + ": waiting for it to finish before reviewing",
          {{"event", "git_busy"}, {"operation", git_busy}});
    git_waiting_ = true;
    full_rescan_ = true;
    Action a;
    a.kind = Action::Kind::ArmSettle;
    a.ms = 200;
    out_.push_back(std::move(a));
    return;
  }
  if (git_waiting_) {
    git_waiting_ = false;
    say(Mark::Ok, "git finished: reconciling once", {{"event", "git_done"}});
  }
  reconcile(/*initial=*/false);
}

void Core::reconcile(bool initial) {
  if (config_dirty_) {
    config_dirty_ = false;
    Action a;
    a.kind = Action::Kind::ReloadConfig;
    out_.push_back(std::move(a));
  }
  Changed changed;  // phase dir -> plans needing a review
  summaries_changed_ = false;
  // A full scan (the first, or a rescan) says what it finds in one line; a save is said
  // plan by plan.
  const bool full = full_rescan_;
  bulk_scan_ = full;
  // What was last reviewed first: a plan is compared with its freshest record. The first
  // reconcile leaves that to the phases' learning.
  if (full_rescan_ && !initial) {
    dirty_ledgers_.clear();
    load_all_ledgers();
    phases_pending_.clear();  // every phase is learnt by this rescan
    plans_pending_.clear();
  }
  // A ledger written while a review batch runs is most likely its own write: loaded when the
  // batch has ended (then its bytes are known: a read, not a parse per save).
  if (!reviews_running()) {
    for (const auto& f : dirty_ledgers_) load_ledger(f);
    dirty_ledgers_.clear();
  }
  if (full_rescan_) {
    full_rescan_ = false;
    dirty_files_.clear();
    dirty_dirs_.clear();
    std::set<stdfs::path> present;
    const stdfs::path phases = planning_ / "phases";
    auto entries = w_.files().list_entries(phases);
    if (entries.empty() && o_.why_unlistable)
      if (std::string why = o_.why_unlistable(phases); !why.empty()) walk_error(phases, why);
    for (const auto& e : entries) {
      stdfs::path dir = phases / e.name;
      bool is_dir = e.kind == fs::DirEntry::Kind::Directory ||
                    (e.kind == fs::DirEntry::Kind::Other && w_.files().is_directory(dir));
      if (!is_dir) {
        if (e.kind == fs::DirEntry::Kind::Other && o_.why_unlistable)
          if (std::string why = o_.why_unlistable(dir); !why.empty()) walk_error(dir, why);
        continue;
      }
      if (initial) {
        scan_phase(dir, present, changed, /*plans_too=*/false);
        phases_pending_.insert(dir);
      } else {
        scan_phase(dir, present, changed, /*plans_too=*/true);
      }
    }
    forget_missing([&](const stdfs::path& p) { return !present.count(p); }, changed);
    if (!initial) state_dirty_ = roadmap_dirty_ = true;
  } else {
    // A phase not learnt yet is learnt now, before its events are judged.
    for (const auto& d : dirty_dirs_) ensure_phase(d);
    for (const auto& f : dirty_files_) ensure_phase(f.parent_path());
    for (const auto& d : dirty_dirs_) {
      std::set<stdfs::path> present;
      scan_phase(d, present, changed, /*plans_too=*/true);
      forget_missing([&](const stdfs::path& p) { return p.parent_path() == d && !present.count(p); }, changed);
    }
    dirty_dirs_.clear();
    for (const auto& f : dirty_files_) check_file(f, changed);
    dirty_files_.clear();
  }
  if (state_dirty_) {
    state_dirty_ = false;
    run_.load_state(/*announce=*/true);
  }
  bool roadmap_changed = false;
  if (roadmap_dirty_) {
    roadmap_dirty_ = false;
    std::string h = review::file_hash(w_, planning_ / "ROADMAP.md");
    if (h != roadmap_hash_) {
      roadmap_hash_ = h;
      roadmap_changed = !h.empty();
      if (roadmap_changed) say(Mark::Note, "ROADMAP.md changed → vision gate", {{"event", "roadmap_changed"}});
    }
  }
  Changes found{std::move(changed), summaries_changed_, roadmap_changed, run_.take_approvals_changed()};
  Actions act = decide(found, situation());
  bulk_scan_ = false;
  size_t n = 0;
  for (const auto& [_, plans] : found.plans) n += plans.size();
  Lane lane = lane_for(full, initial, n);
  if (full && lane == Lane::Fresh)  // a few: said plan by plan, as saves are
    for (const auto& [_, plans] : found.plans)
      for (const auto& p : plans) announce_changed(p);
  queue_reviews(act.reviews, lane);
  if (act.request_vision_gate && run_.want_gate_request()) {
    Action a;
    a.kind = Action::Kind::RequestGate;
    out_.push_back(std::move(a));
  }
  if (act.run_execute) run_execute(/*force=*/false);
}

void Core::walk_error(const stdfs::path& p, const std::string& why) {
  std::string msg = "skipping " + p.string() + ": " + why;
  if (!walk_errors_.insert(msg).second) return;
  say(Mark::Warn, msg, {{"event", "walk_error"}, {"path", p.string()}, {"error", why}});
}

void Core::scan_phase(const stdfs::path& dir, std::set<stdfs::path>& present, Changed& changed, bool plans_too) {
  auto names = w_.files().list(dir);
  if (names.empty() && o_.why_unlistable)
    if (std::string why = o_.why_unlistable(dir); !why.empty()) walk_error(dir, why);
  for (const auto& name : names) {
    bool plan = is_plan_filename(name);
    if (!plan && !is_summary_filename(name)) continue;
    stdfs::path p = dir / name;
    present.insert(p);
    if (plan && !plans_too) {
      ++plans_listed_;
      continue;
    }
    check_file(p, changed);
  }
}

void Core::plan_gone(const stdfs::path& p, Changed& changed) {
  changed[p.parent_path()];  // its siblings' cross-plan checks change
  queue_.drop(p);
  if (o_.plan_changed) o_.plan_changed(p);
}

void Core::forget_missing(const std::function<bool(const stdfs::path&)>& missing, Changed& changed) {
  plan_hash_.erase_if(missing, [&](const stdfs::path& p) { plan_gone(p, changed); });
  summary_hash_.erase_if(missing, [&](const stdfs::path&) { summaries_changed_ = true; });
}

void Core::check_file(const stdfs::path& p, Changed& changed) {
  std::string name = p.filename().string();
  bool is_plan = is_plan_filename(name);
  auto& cache = is_plan ? plan_hash_ : summary_hash_;
  if (!w_.files().is_file(p)) {
    if (cache.erase(p)) {
      if (is_plan)
        plan_gone(p, changed);
      else
        summaries_changed_ = true;
    }
    return;
  }
  std::string h = review::file_hash(w_, p);
  if (!is_plan) {
    if (auto seen = cache.get(p); seen && *seen == h) return;  // touched, not changed
    cache.set(p, h);
    if (!started_) return;  // the first scan finds what is there: nothing was written
    summaries_changed_ = true;
    say(Mark::Note, name + " written", {{"event", "summary_changed"}, {"path", p.string()}});
    return;
  }
  check_plan_hashed(p, h, changed);
}

// A plan file read now (its hash h): what changed, and whether it needs a review.
void Core::check_plan_hashed(const stdfs::path& p, const std::string& h, Changed& changed) {
  std::optional<std::string> seen_text = plan_hash_.get(p);
  std::optional<std::string_view> seen;
  if (seen_text) seen = *seen_text;
  if ((!seen || *seen != h) && o_.plan_changed) o_.plan_changed(p);
  PlanSeen now_seen = plan_seen(seen, reviewed_.reviewed(phase_of_plan(p), h), h);
  plan_hash_.set(p, h);
  if (now_seen != PlanSeen::NeedsReview) return;  // touched, or already reviewed as it is
  changed[p.parent_path()].push_back(p);
  if (!bulk_scan_) announce_changed(p);  // a full scan's are said when it is done
}

void Core::announce_changed(const stdfs::path& p) {
  std::string id = plan_label(p);
  say(Mark::Note, id + (o_.review ? " changed → reviewing" : " changed"),
      {{"event", "plan_changed"}, {"plan_id", id}, {"path", p.string()}, {"hash", plan_hash_.get(p).value_or("")}});
}

std::string Core::plan_label(const stdfs::path& p) const {
  auto l = load_plan(w_, p);
  if (l.plan && (!l.plan->phase.empty() || !l.plan->plan.empty())) return l.plan->id();
  return p.filename().string();
}

// ---- the review ledgers --------------------------------------------------------------

void Core::load_all_ledgers() {
  ledger_seen_.clear();
  const stdfs::path dir = review_ledger::dir(o_.root);
  for (const auto& name : w_.files().list(dir))
    if (classify(planning_, dir / name) == PathKind::Ledger) load_ledger(dir / name);
}

void Core::take_ledger(const stdfs::path& file, const LedgerRead& r) {
  if (!r.error.empty()) {
    say(Mark::Fail, r.error, {{"event", "ledger_error"}, {"error", r.error}});
    return;
  }
  if (!r.fingerprint) return;
  reviewed_.replace(phase_of_ledger(file), r.records);
  ledger_seen_[file] = *r.fingerprint;
}

// A ledger whose bytes are the ones last loaded says the same: no parse, no schema check
// (every review writes one, and its event comes back here). A journal stands for its ledger.
void Core::load_ledger(const stdfs::path& changed) {
  stdfs::path file = changed;
  if (file.extension() == ".jsonl") file.replace_extension(".json");
  auto fp = ledger_fingerprint(w_, file);
  if (!fp) {
    // Gone: its records with it (a review too many, never one too few).
    if (ledger_seen_.erase(file)) reviewed_.replace(phase_of_ledger(file), {});
    return;
  }
  if (auto it = ledger_seen_.find(file); it != ledger_seen_.end() && it->second == *fp) return;
  take_ledger(file, read_ledger(w_, file));
}

void Core::ledger_read(const stdfs::path& dir, LedgerRead r) {
  const stdfs::path file = review_ledger::path_for(o_.root, dir);
  // Only while the phase is still not learnt and nothing has loaded its ledger since (a
  // newer load is never overwritten by an older one).
  if (!phases_pending_.count(dir) || ledger_seen_.count(file)) return;
  phases_pending_.erase(dir);
  take_ledger(file, r);
  plans_pending_.insert(dir);
  learn_next();
}

// ---- the phases, learnt one at a time after the first reconcile ----------------------

// Its ledger now, so the files of the events at hand are judged against it; its other plans
// are learnt next (their backlog, if any, is found then).
void Core::ensure_phase(const stdfs::path& dir) {
  if (!phases_pending_.erase(dir)) return;
  load_ledger(review_ledger::path_for(o_.root, dir));
  plans_pending_.insert(dir);
  learn_next();
}

void Core::learn_next() {
  if (!started_ || learning_) return;
  if (phases_pending_.empty() && plans_pending_.empty()) {
    if (learning_phases_) {
      learning_phases_ = false;
      double ms = static_cast<double>(now() - learn_t0_);
      say(Mark::Ok,
          "every phase read: " + std::to_string(plan_hash_.size()) + " plans known (in " +
              std::to_string(now() - learn_t0_) + " ms after ready)",
          {{"event", "phases_learnt"}, {"plans", plan_hash_.size()}, {"ms", ms}});
      if (learn_backlog_) say_backlog(learn_backlog_);
      learn_backlog_ = 0;
      maybe_backlog_done();
      Action a;
      a.kind = Action::Kind::Warm;
      out_.push_back(std::move(a));
    }
    return;
  }
  if (!learning_phases_) {
    learning_phases_ = true;
    learn_t0_ = now();
  }
  // A save's review runs: it has the machine first (the learning goes on when it ends).
  if (fresh_running()) {
    learn_paused_ = true;
    return;
  }
  Action a;
  a.kind = Action::Kind::Learn;
  // A phase whose ledger an event loaded goes first: its plans are being edited.
  a.plans_only = !plans_pending_.empty();
  a.dir = a.plans_only ? *plans_pending_.begin() : *phases_pending_.begin();
  learning_ = true;
  out_.push_back(std::move(a));
}

// A plan as the learning read it is taken unless an event for it waits (that event's settle
// judges it, as a change); one gone since is not brought back.
void Core::phase_learnt(LearntPhase j) {
  learning_ = false;
  Changed changed;
  if (j.plans_only) {
    if (plans_pending_.erase(j.dir)) {
      bulk_scan_ = true;
      for (const auto& [path, hash] : j.plans)
        if (!dirty_files_.count(path) && !plan_hash_.get(path) && w_.files().is_file(path))
          check_plan_hashed(path, hash, changed);
      bulk_scan_ = false;
    }
  } else if (phases_pending_.erase(j.dir)) {  // else learnt meanwhile by an event or a rescan: that is newer
    take_ledger(review_ledger::path_for(o_.root, j.dir), j.ledger);
    bulk_scan_ = true;
    for (const auto& [path, hash] : j.plans)
      if (!dirty_files_.count(path)) check_plan_hashed(path, hash, changed);
    bulk_scan_ = false;
  }
  Changes found{std::move(changed), false, false, false};
  queue_reviews(decide(found, situation()).reviews, Lane::Backlog);
  learn_next();
}

// ---- reviews ---------------------------------------------------------------------------

// Plans to review go to the review queue: a save to the fresh lane, what a full scan found
// to the backlog (one line says how many; while the phases are learnt, once at the end).
void Core::queue_reviews(const Changed& reviews, Lane lane) {
  size_t n = 0;
  for (const auto& [phase, plans] : reviews)
    for (const auto& p : plans) {
      queue_.push(p, lane);
      ++n;
    }
  if (lane == Lane::Backlog && n) {
    if (backlog_total_ == 0) backlog_t0_ = now();
    backlog_total_ += n;
    if (learning_phases_)
      learn_backlog_ += n;
    else
      say_backlog(n);
  }
  pump();
}

// Starts what may start: one batch per lane, each plan in it still differing from every
// review record of its phase (a review that ended meanwhile may cover it already).
void Core::pump() {
  for (Lane lane : {Lane::Fresh, Lane::Backlog}) {
    while (!queue_.busy(lane)) {
      auto b = queue_.take(lane, batch_size(lane, agents_));
      if (!b) break;
      std::vector<stdfs::path> keep;
      for (auto& p : b->plans)
        if (still_needs_review(reviewed_, phase_of_plan(p), plan_hash_.get(p).value_or("")))
          keep.push_back(std::move(p));
      if (keep.empty()) {
        queue_.finish(lane);
        continue;
      }
      b->plans = std::move(keep);
      Action a;
      a.kind = Action::Kind::Review;
      a.batch = std::move(*b);
      out_.push_back(std::move(a));
    }
  }
}

void Core::say_backlog(size_t n) {
  say(Mark::Note,
      std::to_string(n) + " plan" + (n == 1 ? "" : "s") + " not reviewed as they are: reviewing in the background",
      {{"event", "backlog"}, {"plans", n}});
}

// The backlog is reviewed when its lane is empty and no phase is left to learn.
void Core::maybe_backlog_done() {
  if (backlog() != 0 || !backlog_total_ || learning_ || !phases_pending_.empty() || !plans_pending_.empty()) return;
  long long ms = now() - backlog_t0_;
  say(Mark::Ok, "backlog reviewed: " + std::to_string(backlog_total_) + " plans in " + std::to_string(ms) + " ms",
      {{"event", "backlog_done"}, {"plans", backlog_total_}, {"ms", static_cast<double>(ms)}});
  backlog_total_ = 0;
}

// Nothing else would review them again until they are edited: retried after a pause that
// doubles (5 s to 2 min) while writing keeps failing.
void Core::unrecorded(const std::vector<Reviewed>& rows) {
  for (const auto& row : rows)
    if (!row.plan.empty()) retry_plans_.insert(row.plan.lexically_normal());
  retry_ms_ = retry_ms_ ? std::min<long long>(120000, retry_ms_ * 2) : 5000;
  if (retry_plans_.empty()) return;
  say(Mark::Warn,
      std::to_string(retry_plans_.size()) + " review(s) not recorded: reviewed again in " +
          std::to_string(retry_ms_ / 1000) + " s",
      {{"event", "record_retry"}, {"plans", retry_plans_.size()}, {"in_ms", retry_ms_}});
  Action a;
  a.kind = Action::Kind::ArmRetry;
  a.ms = retry_ms_;
  out_.push_back(std::move(a));
}

void Core::reviews_ended(Lane lane, const std::vector<Reviewed>& rows, bool recorded, bool stopping) {
  queue_.finish(lane);
  if (recorded && retry_plans_.empty()) retry_ms_ = 0;
  if (recorded) {
    for (const auto& row : rows)
      if (!row.hash.empty()) reviewed_.set(phase_of_plan(row.plan), row.plan_id, row.hash);
    // Our own writes of the ledgers come back as events: their bytes now, so those events
    // cost a read, not a parse.
    std::set<stdfs::path> phases;
    for (const auto& row : rows) phases.insert(row.plan.parent_path());
    for (const auto& phase : phases) {
      auto file = review_ledger::path_for(o_.root, phase);
      if (auto fp = ledger_fingerprint(w_, file)) ledger_seen_[file] = *fp;
    }
  }
  if (stopping) return;
  if (!dirty_ledgers_.empty() && !reviews_running()) arm(0);  // the ledger events it held back
  if (lane == Lane::Backlog) maybe_backlog_done();
  if (lane == Lane::Fresh && learn_paused_) {
    learn_paused_ = false;
    learn_next();
  }
  pump();
  if (lane == Lane::Backlog) maybe_backlog_done();
}

void Core::retry_fired() {
  std::set<stdfs::path> plans;
  plans.swap(retry_plans_);
  Changed again;
  for (const auto& p : plans)
    if (w_.files().is_file(p)) again[p.parent_path()].push_back(p);
  queue_reviews(again, Lane::Fresh);
}

}  // namespace yolo::watch
