// `yolo watch`, what it sets going when the watch core asks: the review batches
// (runner/watch_reviews.h, in this process), the vision gate request on a new ROADMAP.md,
// `yolo execute` runs, and what each says when it ends (runner/watcher_impl.h lists the parts).
#include <algorithm>

#include "protocol/run/execute_rules.h"
#include "protocol/review/finding_rows.h"
#include "protocol/ports/fs.h"
#include "protocol/base/json_field.h"
#include "protocol/plan/plan.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/stage1.h"
#include "protocol/base/text.h"
#include "protocol/base/text_diff.h"
#include "runner/watcher_impl.h"

namespace yolo::runner::watch_impl {

SpawnSpec Watcher::child(std::vector<std::string> args) {
  SpawnSpec s;
  s.argv = {o_.self_exe};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.cwd = ctx_.root;
  s.timeout_ms = 0;  // the child applies its own per-agent timeouts
  s.kill_grace_ms = 300;
  return s;
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
    stdfs::path abs = stdfs::path(path).is_relative() ? ctx_.root / path : stdfs::path(path);
    std::string diff;
    if (auto b = before.find(abs.lexically_normal()); b != before.end())
      if (auto now = world_.files().read(abs, Stage1Options{}.max_file_bytes, /*text=*/true); now.ok())
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
  if (stopping_) return;
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
                                core_->gate_request_ended();
                                carry_out();
                              });
}

void Watcher::start_execute() {
  if (stopping_) return;
  std::vector<std::string> args{"execute", "--json"};
  args.insert(args.end(), o_.execute_args.begin(), o_.execute_args.end());
  exec_proc_ = Process::start(&loop_, child(std::move(args)), [this](SpawnResult r) {
    if (stopping_) return maybe_finish_shutdown();
    core_->execute_ended(r.outcome == SpawnResult::Outcome::Exited, r.exit_code, r.describe(),
                         std::string(text::trim(text::tail_lines(r.err, 5))));
    carry_out();
  });
}

void Watcher::on_reviews_ended(watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                               const std::map<stdfs::path, std::string>& before) {
  if (!error.empty()) emit(out::Sym::Fail, "review failed: " + error, {{"event", "review_failed"}, {"error", error}});
  for (const auto& e : res.state_errors)
    emit(out::Sym::Warn, "review result not recorded: " + e, {{"event", "record_error"}, {"error", e}});
  std::vector<watch::Core::Reviewed> rows;
  for (const auto& row : res.rows) {
    if (row.plan.empty()) continue;
    stdfs::path p = row.plan;
    if (p.is_relative()) p = ctx_.root / p;
    rows.push_back({p.lexically_normal(), row.plan_id, row.hash});
  }
  const bool recorded = res.state_errors.empty();
  if (!recorded && !stopping_) {
    core_->unrecorded(rows);
    carry_out();
  }
  for (const auto& row : res.rows) announce_review(row, ms, before);
  core_->reviews_ended(lane, rows, recorded, stopping_);
  if (lane == watch::Lane::Fresh) read_ahead_.fresh_batch_ended();
  if (stopping_) return maybe_finish_shutdown();
  carry_out();
  if (lane == watch::Lane::Backlog && core_->backlog() == 0) reviews_->backlog_done();
  if (lane == watch::Lane::Fresh) read_ahead_.resume_warming();
}

}  // namespace yolo::runner::watch_impl
