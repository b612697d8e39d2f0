// `yolo execute` with a `dispatch` block (docs/dispatch.md): each plan a job of a
// cluster engine. The wave's base is pushed to the remote, the job submitted (its handle
// written to the state before yolo waits on it), waited on, its branch fetched, then the
// plan is gated in a worktree slot exactly as a worktree plan (checks, SUMMARY gate, scope
// fence: plan_gate.cc, run_worktrees_merge.cc) and merged in plan order. A yolo that was stopped or
// killed re-attaches to the handles in its state; Ctrl-C cancels the jobs it waits on.
// The rules (submit or re-attach, which attempt, what wait's exit means) are
// protocol/run/dispatch.h; every child here is argv through runner/subprocess, never a shell.
// This file: the config, the records, a plan's start (a re-attach, the look-up of an earlier
// attempt's branch), its failure and Ctrl-C; submitting and waiting are dispatch_submit.cc,
// the fetch, checkout and merge-ahead dispatch_return.cc.
#include "protocol/run/dispatch.h"

#include "protocol/findings/make_finding.h"
#include "protocol/plan/plan.h"
#include "runner/dispatch_internal.h"
#include "runner/run_dispatch.h"

namespace yolo::runner::phase {
using dispatch_detail::adapter_unset_env;
using dispatch_detail::first_line;

DispatchDriver::DispatchDriver(const Config& cfg, const World& world, const stdfs::path& root, uv_loop_t* loop,
                               Teller& tell, Host host)
    : cfg_(cfg), world_(world), root_(root), loop_(loop), tell_(tell), host_(std::move(host)) {
  plans_.branch_of = [this](size_t i) { return branch_of(i); };
  plans_.record = [this](size_t i, json rec, bool flush) { record(i, std::move(rec), flush); };
  plans_.fail = [this](size_t i, const std::string& error, const std::string& fix, const SpawnResult* r,
                       bool reschedule) { fail(i, error, fix, r, reschedule); };
  plans_.on_interrupt = [this](size_t i) { on_interrupt(i); };
}

std::string DispatchDriver::config_error() const {
  if (cfg_.dispatch.errors.empty()) return "";
  std::string msg = ".yolo-planning/config.json: ";
  for (size_t k = 0; k < cfg_.dispatch.errors.size(); ++k) msg += (k ? "; " : "") + cfg_.dispatch.errors[k];
  return msg;
}

void DispatchDriver::init(const json& doc) {
  // The remote as the jobs see it: a remote's name becomes its URL; a relative path is made
  // absolute (the job runs elsewhere).
  std::string r = cfg_.dispatch.remote;
  GitRun g = run_git(root_, {"remote", "get-url", r}, 10000);
  std::string url = g.ok() ? first_line(g.out) : r;
  bool is_path = url.find("://") == std::string::npos &&
                 (url.find(':') == std::string::npos || url.front() == '/' || url.front() == '.');
  if (is_path && stdfs::path(url).is_relative()) url = (root_ / url).lexically_normal().string();
  url_ = url;
  if (str(doc, "phase_dir") != host_.phase_rel() || !doc.contains("plans") || !doc["plans"].is_array()) return;
  for (size_t i = 0; i < host_.plans(); ++i) {
    const json* p = execution::find_plan(doc, entry(i).id);
    if (!p) continue;
    if (auto it = p->find("dispatch"); it != p->end() && it->is_object()) run_of(i).dispatch_rec = *it;
    if (execution::plan_status(*p) == PlanStatus::Failed) run_of(i).dispatch_failed_before = true;
  }
}

std::string DispatchDriver::branch_of(size_t i) const {
  const PlanRun* r = run_at(i);
  int attempt = 1;
  if (r && !r->dispatch_rec.is_null()) attempt = r->dispatch_rec.value("attempt", 1);
  return dispatch::branch_for_attempt(trees()->branch_for(entry(i).id), attempt);
}

void DispatchDriver::record(size_t i, json rec, bool flush) {
  if (dispatch::job_state(rec) == dispatch::JobState::Submitted) core().submitted(i, str(rec, "handle"));
  run_of(i).dispatch_rec = rec;
  execution::PlanUpdate u{PlanStatus::Running, std::nullopt, nullptr, "", nullptr};
  u.set = {{"dispatch", std::move(rec)}};
  queue_plan(i, std::move(u));
  if (flush) host_.flush();  // on disk before the next step: a kill -9 finds it
}

void DispatchDriver::start(size_t i, long long wave, const dispatch::Start& s) {
  const auto& e = entry(i);
  core().started(i);
  run_of(i).started_at = uv_hrtime();
  if (!wave_base().count(wave)) {
    std::string h = trees()->head();
    if (h.empty()) {
      fail(i, "git rev-parse HEAD failed in " + root_.string(), "check the project's checkout", nullptr, false);
      return;
    }
    wave_base()[wave] = h;
  }
  {
    // The plan's resources (its frontmatter, which the wave's approval covered and which was
    // checked unchanged just before this start), as the adapter's options.
    auto bytes = fs::read_bytes(root_ / e.path);
    std::vector<std::string> errs;
    dispatch::Resources res;
    if (bytes.ok()) res = dispatch::resources_of(parse_plan(bytes.content, e.path).frontmatter, errs);
    if (!errs.empty()) {
      std::string msg = e.path + ": ";
      for (size_t k = 0; k < errs.size(); ++k) msg += (k ? "; " : "") + errs[k];
      fail(i, msg, "correct `resources` in the plan's frontmatter (docs/dispatch.md, Per-plan resources)", nullptr,
           false);
      return;
    }
    run_of(i).dispatch_res = dispatch::resources_options(res);
  }
  tell_.log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"attempt", s.attempt}});
  emit("plan_start", {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"attempt", s.attempt}, {"dispatch", true}},
       Sym::Diamond,
       "Plan " + e.id + " started: " + e.title + " (dispatched, attempt " + std::to_string(s.attempt) + ")");
  if (s.kind == dispatch::Start::Kind::Reattach) {
    emit("plan_reattached", {{"plan", e.id}, {"handle", s.handle}, {"attempt", s.attempt}}, Sym::Diamond,
         "Plan " + e.id + ": re-attaching to its job " + s.handle + " (attempt " + std::to_string(s.attempt) +
             "), submitted by an earlier execute");
    // In the wave-level form, waited on with the rest of its wave's re-attached plans once
    // start_plans has started them (reattach_arrays): one wait_wave per array.
    if (cfg_.dispatch.wave_form()) {
      jobs_.gather_reattached(i, wave);
      return;
    }
    jobs_.wait(i, wave);
    return;
  }
  if (s.previous_attempt > 0) {
    look_up_previous(i, wave, s.attempt, s.previous_attempt);
    return;
  }
  if (cfg_.dispatch.wave_form()) {  // submitted with the rest of its wave, as one array
    jobs_.gather(i, wave, s.attempt);
    return;
  }
  jobs_.begin_submit(i, wave, s.attempt, false);
}

// Attempt N ended without its branch being gated (its job failed, was cancelled, or yolo gave
// up on it): a job that pushed after all is gated, not run a second time. The lookup runs as
// a child of the loop (the plan counts as running meanwhile).
void DispatchDriver::look_up_previous(size_t i, long long wave, int attempt, int previous) {
  const std::string prev_branch = dispatch::branch_for_attempt(trees()->branch_for(entry(i).id), previous);
  SpawnSpec spec;
  spec.argv = {"git", "ls-remote", "--heads", url_, "refs/heads/" + prev_branch};
  spec.cwd = root_;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = 120000;
  run_of(i).argv = spec.argv;
  host_.hold(i, Process::start(loop_, std::move(spec), [this, i, wave, attempt, previous, prev_branch](SpawnResult r) {
    host_.release(i);
    if (interrupted()) {
      on_interrupt(i);
      return;
    }
    const auto& e = entry(i);
    if (r.ok() && !text::trim(r.out).empty()) {
      json prev = run_of(i).dispatch_rec.is_null() ? json::object() : run_of(i).dispatch_rec;
      prev["attempt"] = previous;
      prev["state"] = dispatch::job_state_name(dispatch::JobState::Submitted);
      run_of(i).dispatch_rec = prev;
      emit("plan_found_on_remote", {{"plan", e.id}, {"branch", prev_branch}, {"attempt", previous}}, Sym::Diamond,
           "Plan " + e.id + ": attempt " + std::to_string(previous) + "'s branch " + prev_branch +
               " is on the remote (its job pushed it after all): gating it, no new job");
      SpawnResult none;
      none.outcome = SpawnResult::Outcome::Exited;
      none.exit_code = 0;
      back_.fetch(i, wave, std::move(none));
      return;
    }
    jobs_.begin_submit(i, wave, attempt, true);
  }));
}

void DispatchDriver::fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r,
                          bool reschedule) {
  const auto& e = entry(i);
  Finding f = make_finding(Severity::High, "dispatch", error, fix);
  const json& rec = run_of(i).dispatch_rec;
  if (!rec.is_null()) {
    if (!str(rec, "handle").empty()) f.extra["handle"] = str(rec, "handle");
    f.extra["branch"] = branch_of(i);
  }
  json findings = json::array({f.to_json()});
  core().concluded(i, {PlanStatus::Failed, error, findings});
  execution::PlanUpdate u{PlanStatus::Failed, std::nullopt, json(world_.now()), error, findings};
  if (!rec.is_null()) u.set = {{"dispatch", rec}};
  queue_plan(i, std::move(u));
  double ms = run_of(i).started_at ? static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e6 : 0;
  tell_.log("plan_end", e.plan,
      {{"plan_id", e.id}, {"status", to_string(PlanStatus::Failed)}, {"elapsed_ms", static_cast<long long>(ms)}, {"error", error}});
  json data = {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"wave", e.wave}, {"error", error}, {"findings", findings}};
  if (r) data["stderr_tail"] = text::tail_lines(r->err, 10);
  emit("plan_end", data, Sym::Fail, "Plan " + e.id + " failed: " + error);
  note("[high] dispatch: " + fix);
  if (r) {
    const std::string tail = text::tail_lines(r->err, 5);
    for (const auto& l : text::lines(tail))
      if (!text::trim(l).empty()) note(std::string(l), true);
  }
  if (!reschedule) {
    start_failed_ = true;
    return;
  }
  host_.schedule();
}

void DispatchDriver::on_interrupt(size_t i) {
  const auto& e = entry(i);
  json rec = run_of(i).dispatch_rec;
  if (dispatch::job_state(rec) == dispatch::JobState::Submitted && !str(rec, "handle").empty()) {
    std::string why;
    bool ok = jobs_.cancel(i, why);
    // A job that could not be cancelled stays `submitted`: the next execute waits on it.
    if (ok) rec = dispatch::record_ended(rec, dispatch::JobState::Cancelled, world_.now());
    emit("plan_cancelled", {{"plan", e.id}, {"handle", str(rec, "handle")}, {"ok", ok}}, ok ? Sym::Warn : Sym::Fail,
         "Plan " + e.id + ": job " + str(rec, "handle") + (ok ? " cancelled" : " could not be cancelled: " + why));
  }
  core().concluded(i, {PlanStatus::Pending, "interrupted", json::array()});
  execution::PlanUpdate u{PlanStatus::Pending, std::nullopt, nullptr, "interrupted", nullptr};
  if (rec.is_object()) {
    run_of(i).dispatch_rec = rec;
    u.set = {{"dispatch", rec}};
  }
  queue_plan(i, std::move(u));
  emit("plan_end", {{"plan", e.id}, {"status", to_string(PlanStatus::Pending)}, {"wave", e.wave}}, Sym::Warn,
       "Plan " + e.id + " stopped (interrupted)");
  host_.schedule();
}

}  // namespace yolo::runner::phase
