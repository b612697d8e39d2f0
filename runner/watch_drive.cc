// `yolo watch`, what it sets going: the reviews of changed plans (runner/watch_reviews.h,
// in this process), the vision gate request on a new ROADMAP.md, and `yolo execute` runs
// when driving execution (runner/watcher_impl.h lists the parts).
#include <algorithm>

#include "protocol/cross_facts.h"
#include "protocol/execute_rules.h"
#include "protocol/finding_rows.h"
#include "protocol/fs.h"
#include "protocol/json_field.h"
#include "protocol/plan.h"
#include "protocol/review_ledger.h"
#include "protocol/stage1.h"
#include "protocol/text.h"
#include "protocol/text_diff.h"
#include "runner/watcher_impl.h"
#include "runner/world.h"

namespace yolo::runner::watch_impl {

SpawnSpec Watcher::child(std::vector<std::string> args) {
  SpawnSpec s;
  s.argv = {o_.self_exe};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.cwd = o_.root;
  s.timeout_ms = 0;  // the child applies its own per-agent timeouts
  s.kill_grace_ms = 300;
  return s;
}

// After the first reconcile, the siblings the cross-plan checks read are parsed ahead, a few
// plans per loop turn (a few milliseconds: events are handled between turns, whatever the
// size of a phase), as many as the cache keeps, so the first save in a phase costs the
// review of one plan, not the parse of its whole phase. Then the loop sleeps. With the
// phases' stores of cross-plan facts (protocol/cross_facts.h; the learning filled them), a
// phase's siblings are one file and a stat each: nothing is parsed ahead, nor kept.
void Watcher::start_warming() {
  if (!o_.review || cross_facts::usable(world(), o_.root)) return;
  warm_queue_.clear();
  warm_queue_ = plan_hash_.paths(plan_cache_.capacity());
  std::reverse(warm_queue_.begin(), warm_queue_.end());  // taken from the back: in path order
  if (warm_queue_.empty()) return;
  uv_idle_init(&loop_, &warm_);
  warm_.data = this;
  uv_idle_start(&warm_, [](uv_idle_t* h) { static_cast<Watcher*>(h->data)->warm_one(); });
}

void Watcher::warm_one() {
  if (stopping_ || warm_queue_.empty()) {
    uv_idle_stop(&warm_);
    std::vector<stdfs::path>().swap(warm_queue_);
    return;
  }
  if (reviews_->fresh_running()) {  // its worker uses the cache now: go on when it ends
    uv_idle_stop(&warm_);
    warm_paused_ = true;
    return;
  }
  for (int i = 0; i < 16 && !warm_queue_.empty(); ++i) {
    plan_cache_.load_sibling(world(), warm_queue_.back(), Stage1Options{}.max_file_bytes);
    warm_queue_.pop_back();
  }
}

void Watcher::announce_review(const review::PlanReview& row, double ms,
                              const std::map<stdfs::path, std::string>& before) {
  const std::string& id = row.plan_id.empty() ? row.plan : row.plan_id;
  const Verdict v = row.verdict;
  std::string word = v == Verdict::Approve ? "approved" : v == Verdict::Conditional ? "conditional" : "rejected";
  std::string why;
  if (v == Verdict::Reject)  // say why: its most severe finding
    if (const review::ReviewerFinding* top = most_severe_finding(row.findings))
      why = " — [" + std::string(to_string(top->severity)) + "] " + finding_headline(*top);
  // What the architect changed (only with --fix / watch.fix): the plan before the review
  // against the plan now, as a unified diff.
  if (row.revised()) {
    const std::string& path = row.plan;
    stdfs::path abs = stdfs::path(path).is_relative() ? o_.root / path : stdfs::path(path);
    std::string diff;
    if (auto b = before.find(abs.lexically_normal()); b != before.end())
      if (auto now = fs::read_text(abs, Stage1Options{}.max_file_bytes); now.ok())
        diff = text::unified_diff(b->second, now.content, "a/" + path, "b/" + path);
    emit(out::Sym::Warn,
         id + " was rewritten by the architect:" +
             (diff.empty() ? " `git diff -- " + path + "` shows the change" : "\n" + diff),
         {{"event", "plan_revised"}, {"plan_id", id}, {"path", path}, {"diff", diff}});
  }
  emit(out::sym_for(v), id + " " + word + " (" + fmt_ms(ms) + ")" + why,
       {{"event", "reviewed"},
        {"plan_id", id},
        {"verdict", to_string(v)},
        {"ms", ms},
        {"path", row.plan},
        {"source", row.source_name()}});
}

void Watcher::request_vision_gate() {
  if (gate_proc_ && gate_proc_->running()) return;
  gate_proc_ = Process::start(&loop_,
                              child({"request-approval", "--plan-path", (planning_ / "ROADMAP.md").string(),
                                     "--gate-type", "vision", "--json"}),
                              [this](SpawnResult r) {
                                if (stopping_) return maybe_finish_shutdown();
                                if (!r.ok())
                                  emit(out::Sym::Fail,
                                       "vision gate request failed: " + r.describe() + " " +
                                           std::string(text::trim(text::tail_lines(r.err, 3))),
                                       {{"event", "gate_error"}, {"error", r.describe()}});
                                load_state(true);
                              });
}

void Watcher::consider_execution(bool force) {
  if (stopping_) return;
  if (exec_proc_ && exec_proc_->running()) {
    exec_rerun_ = true;
    return;
  }
  if (!force && !driving()) return;
  exec_rerun_ = false;
  auto t0 = Clock::now();
  std::vector<std::string> args{"execute", "--json"};
  args.insert(args.end(), o_.execute_args.begin(), o_.execute_args.end());
  exec_proc_ = Process::start(&loop_, child(std::move(args)), [this, t0](SpawnResult r) {
    if (stopping_) return maybe_finish_shutdown();
    on_execute_done(std::move(r), ms_since(t0));
  });
}

void Watcher::on_execute_done(SpawnResult r, double ms) {
  std::string what;
  out::Sym s = out::Sym::Fail;
  const bool exited = r.outcome == SpawnResult::Outcome::Exited;
  const execution::ExecuteEnd end = execution::execute_end(r.exit_code);
  if (exited) {
    switch (end) {
      case execution::ExecuteEnd::Complete:
        what = "phase complete";
        s = out::Sym::Ok;
        break;
      case execution::ExecuteEnd::HaltedOrFailed:
        what = "run halted or failed";
        s = out::Sym::Fail;
        break;
      case execution::ExecuteEnd::Paused:
        what = "paused at a gate";
        s = out::Sym::Pause;
        break;
      case execution::ExecuteEnd::WaitingForSummaries:
        what = "waiting for SUMMARY files";
        s = out::Sym::Skip;
        break;
      case execution::ExecuteEnd::Other:
        what = "execute " + r.describe();
        break;
    }
  } else {
    what = "execute " + r.describe();
  }
  std::string tail = exited && execution::expected_end(end) ? "" : std::string(text::trim(text::tail_lines(r.err, 5)));
  emit(s, what + " (" + fmt_ms(ms) + ")" + (tail.empty() ? "" : "\n" + tail),
       {{"event", "execute_done"}, {"exit_code", r.exit_code}, {"outcome", what}, {"ms", ms}});
  load_state(/*announce=*/true);
  approvals_changed_ = false;  // what execute itself wrote is not news...
  // ...but an approval that landed while it was pausing is: the state says so (the run
  // is not awaiting approval any more). Once per state of the approvals, so a run that
  // pauses again on the same state does not loop.
  bool paused = exited && end == execution::ExecuteEnd::Paused;
  if (watch::gate_resolved_since_pause(paused, run_status_) && approvals_fp_ != resumed_fp_) {
    resumed_fp_ = approvals_fp_;
    exec_rerun_ = true;
  }
  if (exec_rerun_) consider_execution(true);
}

// Plans to review go to the review queue: a save to the fresh lane, what a full scan found
// to the backlog (reviewed in the background while events are handled; one line says how
// many). A phase listed with no plans (a plan came or went) needs nothing by itself.
// While the phases are learnt (after `ready`), what each phase adds to the backlog is said
// once, when the last phase is learnt.
void Watcher::start_reviews(const Changed& reviews, watch::Lane lane) {
  size_t n = 0;
  for (const auto& [phase, plans] : reviews)
    for (const auto& p : plans) {
      reviews_->push(p, lane);
      ++n;
    }
  if (lane == watch::Lane::Backlog && n) {
    if (backlog_total_ == 0) backlog_t0_ = Clock::now();
    backlog_total_ += n;
    if (learn_t0_ != Clock::time_point{})
      learn_backlog_ += n;
    else
      say_backlog(n);
  }
  reviews_->pump();
}

void Watcher::say_backlog(size_t n) {
  emit(out::Sym::Diamond,
       std::to_string(n) + " plan" + (n == 1 ? "" : "s") + " not reviewed as they are: reviewing in the background",
       {{"event", "backlog"}, {"plans", n}});
}

// The backlog is reviewed when its lane is empty and no phase is left to learn.
void Watcher::maybe_backlog_done() {
  if (reviews_->backlog() != 0 || !backlog_total_ || learning_ || !phases_pending_.empty() || !plans_pending_.empty())
    return;
  emit(out::Sym::Ok,
       "backlog reviewed: " + std::to_string(backlog_total_) + " plans in " + fmt_ms(ms_since(backlog_t0_)),
       {{"event", "backlog_done"}, {"plans", backlog_total_}, {"ms", ms_since(backlog_t0_)}});
  backlog_total_ = 0;
}

void Watcher::retry_unrecorded() {
  if (stopping_) return;
  std::set<stdfs::path> plans;
  plans.swap(record_retry_plans_);
  Changed again;
  std::error_code ec;
  for (const auto& p : plans)
    if (stdfs::is_regular_file(p, ec)) again[p.parent_path()].push_back(p);
  start_reviews(again, watch::Lane::Fresh);
}

void Watcher::on_reviews_ended(watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                               const std::set<stdfs::path>& phases, const std::map<stdfs::path, std::string>& before) {
  if (!error.empty()) emit(out::Sym::Fail, "review failed: " + error, {{"event", "review_failed"}, {"error", error}});
  for (const auto& e : res.state_errors)
    emit(out::Sym::Warn, "review result not recorded: " + e, {{"event", "record_error"}, {"error", e}});
  bool recorded = res.state_errors.empty();
  if (!recorded && !stopping_) {
    // Nothing else would review them again until they are edited: retried after a pause.
    for (const auto& row : res.rows) {
      stdfs::path p = row.plan;
      if (p.empty()) continue;
      if (p.is_relative()) p = o_.root / p;
      record_retry_plans_.insert(p.lexically_normal());
    }
    record_retry_ms_ = record_retry_ms_ ? std::min<long long>(120000, record_retry_ms_ * 2) : 5000;
    if (!record_retry_plans_.empty()) {
      emit(out::Sym::Warn,
           std::to_string(record_retry_plans_.size()) + " review(s) not recorded: reviewed again in " +
               std::to_string(record_retry_ms_ / 1000) + " s",
           {{"event", "record_retry"}, {"plans", record_retry_plans_.size()}, {"in_ms", record_retry_ms_}});
      uv_timer_start(
          &record_retry_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->retry_unrecorded(); },
          static_cast<uint64_t>(record_retry_ms_), 0);
    }
  } else if (recorded && record_retry_plans_.empty()) {
    record_retry_ms_ = 0;
  }
  for (const auto& row : res.rows) {
    if (recorded && !row.hash.empty()) {
      stdfs::path p = row.plan;
      if (p.is_relative()) p = o_.root / p;
      reviewed_.set(phase_of_plan(p), row.plan_id, row.hash);
    }
    announce_review(row, ms, before);
  }
  // Our own writes of the ledgers come back as events: remember their bytes now, so those
  // events cost a read, not a parse.
  if (recorded)
    for (const auto& phase : phases) {
      auto file = review_ledger::path_for(o_.root, phase);
      if (auto fp = ledger_fingerprint(file)) ledger_seen_[file] = *fp;
    }
  if (lane == watch::Lane::Fresh) {
    for (const auto& p : snapshot_pending_) fresh_snapshots_.changed(world(), p);
    std::vector<stdfs::path>().swap(snapshot_pending_);
    adopt_snapshots();  // the phases prepared while the batch ran
  }
  if (stopping_) return maybe_finish_shutdown();
  if (!dirty_ledgers_.empty() && !reviews_->running()) schedule();  // the ledger events it held back
  if (lane == watch::Lane::Backlog) maybe_backlog_done();
  if (lane == watch::Lane::Fresh && learn_paused_ && !reviews_->fresh_running()) {
    learn_paused_ = false;
    learn_next_phase();
  }
  if (lane == watch::Lane::Fresh && warm_paused_ && !warm_queue_.empty()) {
    warm_paused_ = false;
    uv_idle_start(&warm_, [](uv_idle_t* h) { static_cast<Watcher*>(h->data)->warm_one(); });
  }
}

}  // namespace yolo::runner::watch_impl
