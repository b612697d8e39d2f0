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

std::map<std::string, std::string> DispatchDriver::vars_of(size_t i, long long wave) const {
  auto v = host_.plan_vars(i, wave);
  const PlanRun* r = run_at(i);
  json rec = r && !r->dispatch_rec.is_null() ? r->dispatch_rec : json::object();
  v["attempt"] = std::to_string(rec.value("attempt", 1));
  auto b = wave_base().find(wave);
  v["base_commit"] = b != wave_base().end() ? b->second : std::string();
  v["branch"] = branch_of(i);
  v["remote"] = url_;
  v["handle"] = str(rec, "handle");
  return v;
}

SpawnSpec DispatchDriver::adapter_spec(const std::vector<std::string>& argv, long long timeout_ms) const {
  SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = root_;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = timeout_ms;
  // dispatch.unreachable_timeout_ms (the schema checks it): how long the adapters wait out an
  // engine that does not answer before they say so (wait's exit 3).
  long long unreachable_ms = 600000;
  if (auto d = cfg_.raw.find("dispatch"); d != cfg_.raw.end() && d->is_object())
    if (auto u = d->find("unreachable_timeout_ms"); u != d->end() && u->is_number_integer())
      unreachable_ms = std::max(1000LL, u->get<long long>());
  spec.env.emplace_back("YOLO_DISPATCH_UNREACHABLE_SECONDS", std::to_string(unreachable_ms / 1000));
  return spec;
}

bool DispatchDriver::branch_on_remote(const std::string& branch) {
  if (remote_heads_) return remote_heads_->count("refs/heads/" + branch) > 0;
  GitRun g = run_git(root_, {"ls-remote", "--heads", url_, "refs/heads/" + branch}, 120000);
  return g.ok() && !text::trim(g.out).empty();
}

bool DispatchDriver::cancel(size_t i, std::string& why) {
  const auto& e = entry(i);
  auto with_wave = cancelled_with_wave_.find(i);
  if (with_wave != cancelled_with_wave_.end() && with_wave->second == str(run_of(i).dispatch_rec, "handle"))
    return true;  // its task went with its whole wave's cancel
  SpawnResult c = run_process(adapter_spec(expand_argv(cfg_.dispatch.cancel.argv, vars_of(i, e.wave)),
                                           cfg_.timeout_for(cfg_.dispatch.cancel)));
  if (!c.ok()) why = "cancel " + c.describe() + (c.err.empty() ? "" : ": " + first_line(text::tail_lines(c.err, 1)));
  return c.ok();
}

// A wave's poller ended with tasks unreported (Ctrl-C, the engine unreachable or not knowing
// the wave, the poller killed): what each plan's steps would ask one task at a time is asked
// once for the wave. When two or more of its tasks may still run, one `cancel` of the wave's
// handle (the engine cancels every task of it; tasks that ended are left as they are), and the
// plans count as cancelled with it; a cancel that fails leaves each task to its own, as
// before. When the tasks are given up on (not Ctrl-C), one `git ls-remote` of the run's
// branches, after that cancel, answers whether each pushed before it ended.
void DispatchDriver::give_up_wave(long long wave, const std::string& handle, const std::vector<size_t>& plans,
                                  const std::vector<bool>& reported) {
  size_t left = 0;  // tasks the poller did not report
  for (size_t k = 0; k < plans.size() && k < reported.size(); ++k) left += !reported[k];
  if (left == 0) return;
  std::vector<size_t> live;
  // With a task of the array not waited on here (a re-attach of part of it), its tasks are
  // cancelled one by one: the array's cancel would reach that task too.
  const bool whole = std::find(plans.begin(), plans.end(), kNoPlan) == plans.end();
  for (size_t i : plans) {
    if (i == kNoPlan) continue;
    const json& rec = run_of(i).dispatch_rec;
    if (dispatch::job_state(rec) == dispatch::JobState::Submitted && str(rec, "wave_handle") == handle &&
        !str(rec, "handle").empty())
      live.push_back(i);
  }
  if (whole && live.size() >= 2 && !handle.empty()) {
    auto vars = vars_of(live.front(), wave);
    vars["handle"] = handle;
    SpawnResult c = run_process(
        adapter_spec(expand_argv(cfg_.dispatch.cancel.argv, vars), cfg_.timeout_for(cfg_.dispatch.cancel)));
    std::string why = c.ok() ? "" : c.describe() + (c.err.empty() ? "" : ": " + first_line(text::tail_lines(c.err, 1)));
    emit("wave_cancelled", {{"wave", wave}, {"handle", handle}, {"tasks", live.size()}, {"ok", c.ok()}},
         c.ok() ? Sym::Warn : Sym::Fail,
         "Wave " + std::to_string(wave) + ": job " + handle + (c.ok() ? " cancelled (" + std::to_string(live.size()) +
                                                                            " tasks, one call)"
                                                                      : " could not be cancelled as a whole (" + why +
                                                                            "): cancelling its tasks one by one"));
    if (!c.ok()) return;
    for (size_t i : live) cancelled_with_wave_[i] = str(run_of(i).dispatch_rec, "handle");
  }
  if (interrupted() || left < 2) return;
  GitRun g = run_git(root_, {"ls-remote", "--heads", url_, "refs/heads/yolo/" + trees()->run_tag() + "/*"},
                     120000);
  if (!g.ok()) return;  // each plan asks on its own
  remote_heads_.emplace();
  for (const auto& l : text::lines(g.out)) {
    auto tab = l.find('\t');
    if (tab != std::string_view::npos) remote_heads_->insert(std::string(text::trim(l.substr(tab + 1))));
  }
}

// A `status: ...` line of wait's stderr: what the engine says of the job (a pending reason,
// an image that cannot be pulled), shown live and kept in the plan's record for `yolo status`.
void DispatchDriver::engine_status(size_t i, std::string status) {
  const json& known = run_of(i).dispatch_rec;
  if (known.is_null() || interrupted() || host_.stopping()) return;
  status = std::string(text::trim(status));
  if (status.size() > 300) status.resize(300);
  if (status.empty() || str(known, "engine_status") == status) return;
  json rec = known;
  rec["engine_status"] = status;
  record(i, rec, false);
  const auto& e = entry(i);
  emit("plan_job_status", {{"plan", e.id}, {"handle", str(rec, "handle")}, {"status", status}}, Sym::Pause,
       "Plan " + e.id + ": job " + str(rec, "handle") + " · " + text::sanitize_for_terminal(status));
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
  host_.log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"attempt", s.attempt}});
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
      hold(i, nullptr);  // running meanwhile (no process of its own)
      wave_reattach_[wave].push_back(i);
      return;
    }
    wait(i, wave);
    return;
  }
  if (s.previous_attempt > 0) {
    look_up_previous(i, wave, s.attempt, s.previous_attempt);
    return;
  }
  if (cfg_.dispatch.wave_form()) {  // submitted with the rest of its wave, as one array
    hold(i, nullptr);               // running meanwhile (no process of its own)
    wave_pending_[wave].push_back({i, s.attempt});
    return;
  }
  begin_submit(i, wave, s.attempt, false);
}

// The plans of this wave re-attached to jobs of an earlier execute: one wait_wave per array
// it submitted, the rest each by itself (protocol: dispatch::group_reattached decides).
void DispatchDriver::reattach_arrays(long long wave) {
  auto re = wave_reattach_.find(wave);
  if (re == wave_reattach_.end()) return;
  std::vector<std::pair<size_t, json>> records;
  for (size_t i : re->second) records.push_back({i, run_of(i).dispatch_rec});
  wave_reattach_.erase(re);
  auto groups = dispatch::group_reattached(records, host_.plans());
  for (const auto& [i, rec] : records) release(i);
  for (const auto& a : groups.arrays) wait_array(wave, a.at, a.key, a.handle);
  for (size_t i : groups.alone) wait(i, wave);
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
  hold(i, Process::start(loop_, std::move(spec), [this, i, wave, attempt, previous, prev_branch](SpawnResult r) {
    release(i);
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
      fetch(i, wave, std::move(none));
      return;
    }
    begin_submit(i, wave, attempt, true);
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
  host_.log("plan_end", e.plan,
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
    bool ok = cancel(i, why);
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
