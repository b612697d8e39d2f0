// Dispatch's jobs (runner/dispatch_jobs.h, docs/dispatch.md): waiting on a job (or on a
// wave's array by one poller), what a wait's exit means, cancelling a job or a whole wave, and
// what the engine says of a job while it waits.
#include "protocol/run/dispatch.h"

#include "runner/dispatch_internal.h"
#include "runner/dispatch_jobs.h"

namespace yolo::runner::phase {
using dispatch_detail::first_line;

// The plans of this wave re-attached to jobs of an earlier execute: one wait_wave per array
// it submitted, the rest each by itself (protocol: dispatch::group_reattached decides).
void DispatchJobs::reattach_arrays(long long wave) {
  auto re = wave_reattach_.find(wave);
  if (re == wave_reattach_.end()) return;
  std::vector<std::pair<size_t, json>> records;
  for (size_t i : re->second) records.push_back({i, run_of(i).dispatch_rec});
  wave_reattach_.erase(re);
  auto groups = dispatch::group_reattached(records, e_.host.plans());
  for (const auto& [i, rec] : records) release(i);
  for (const auto& a : groups.arrays) wait_array(wave, a.at, a.key, a.handle);
  for (size_t i : groups.alone) wait(i, wave);
}

// One wait_wave for the array: each `task K ...` line on its stdout is the plan at index K.
void DispatchJobs::wait_array(long long wave, const std::vector<size_t>& plans, const std::string& key,
                                const std::string& handle) {
  struct Tasks {
    std::vector<size_t> plans;
    std::vector<bool> reported;
    std::vector<std::string> text;  // what the engine said of each task, its log: the plan's log
  };
  auto t = std::make_shared<Tasks>();
  t->plans = plans;
  t->reported.assign(plans.size(), false);
  for (size_t k = 0; k < plans.size(); ++k) t->reported[k] = plans[k] == kNoPlan;  // not waited on here
  t->text.assign(plans.size(), std::string());
  long long deadline =
      dispatch::wait_deadline_ms(e_.cfg.dispatch.wait.timeout_ms, e_.cfg.dispatch.wait_wave.timeout_ms);
  std::map<std::string, std::string> vars = {
      {"handle", handle},
      {"correlation_id", e_.host.correlation_id()},
      {"wave", std::to_string(wave)},
      {"wave_key", key}};
  SpawnSpec spec = adapter_spec(expand_argv(e_.cfg.dispatch.wait_wave.argv, vars), deadline);
  spec.output_cap = 256 * 1024;
  spec.on_line = [this, t, wave](SpawnSpec::Stream st, std::string_view line) {
    if (st != SpawnSpec::Stream::Out) return;
    auto wl = dispatch::parse_wave_line(line, t->plans.size());
    if (wl.kind == dispatch::WaveLine::Kind::None || t->reported[wl.index]) return;
    size_t i = t->plans[wl.index];
    std::string& text = t->text[wl.index];
    if (wl.kind == dispatch::WaveLine::Kind::Log) {
      if (text.size() < 200000) text += "  | " + wl.text + "\n";
      return;
    }
    if (wl.kind == dispatch::WaveLine::Kind::Status) {
      text += "status: " + wl.text + "\n";
      engine_status(i, wl.text);
      return;
    }
    t->reported[wl.index] = true;
    if (!wl.text.empty()) text += wl.text + "\n";
    SpawnResult r;
    r.outcome = SpawnResult::Outcome::Exited;
    r.exit_code = dispatch::wait_exit_code(dispatch::wave_line_result(wl.kind));
    r.err = std::move(text);
    release(i);
    waited(i, wave, std::move(r));
  };
  for (size_t i : plans) {
    if (i == kNoPlan) continue;
    e_.host.hold(i, nullptr);
    run_of(i).argv = spec.argv;
  }
  // One poller per array (an array re-attached beside a new one of the same key is another).
  const std::string slot = key + "@" + handle;
  wave_wait_procs_[slot] = Process::start(e_.loop, std::move(spec), [this, t, wave, slot, handle](SpawnResult r) {
    auto w = dispatch::wave_exit_result(r.outcome == SpawnResult::Outcome::Exited, r.exit_code);
    give_up_wave(wave, handle, t->plans, t->reported);  // one cancel, one lookup
    for (size_t k = 0; k < t->plans.size(); ++k) {
      if (t->reported[k]) continue;
      t->reported[k] = true;
      size_t i = t->plans[k];
      SpawnResult rr = r;
      rr.err = t->text[k] + r.err;
      if (rr.outcome == SpawnResult::Outcome::Exited) rr.exit_code = dispatch::wait_exit_code(w);
      release(i);
      waited(i, wave, std::move(rr));
    }
    remote_heads_.reset();  // looked up for these plans only
    wave_wait_procs_.erase(slot);
  });
}

void DispatchJobs::cancel_pollers() {
  for (auto& [k, p] : wave_wait_procs_)
    if (p) p->cancel();
}

void DispatchJobs::wait(size_t i, long long wave) {
  // Every wait has a deadline: past it, yolo gives up on the job and cancels it.
  long long deadline = dispatch::wait_deadline_ms(e_.cfg.dispatch.wait.timeout_ms);
  SpawnSpec spec = adapter_spec(expand_argv(e_.cfg.dispatch.wait.argv, vars_of(i, wave)), deadline);
  spec.output_cap = 256 * 1024;
  spec.on_line = [this, i](SpawnSpec::Stream st, std::string_view line) {
    if (auto status = dispatch::status_line(line); st == SpawnSpec::Stream::Err && status) engine_status(i, *status);
  };
  run_of(i).argv = spec.argv;
  e_.host.hold(i, Process::start(e_.loop, std::move(spec), [this, i, wave](SpawnResult r) {
    release(i);
    waited(i, wave, std::move(r));
  }));
}

void DispatchJobs::waited(size_t i, long long wave, SpawnResult r) {
  // The job's log from the remote when wait's output holds none: waited() again once it is in.
  if (back_.fetch_job_log(i, r, [this, i, wave](SpawnResult rr) { waited(i, wave, std::move(rr)); })) return;
  const auto& e = entry(i);
  json rec = run_of(i).dispatch_rec;
  std::string log_file =
      write_agent_log(e_.world, e_.root, e_.host.phase_rel(), e.id, "dispatch", rec.value("attempt", 1),
                      run_of(i).argv, r);
  if (!log_file.empty()) e_.tell.note("wait output: " + log_file + "  (yolo logs " + e.id + ")", true);
  if (interrupted()) {
    e_.plans.on_interrupt(i);
    return;
  }
  std::string handle = str(rec, "handle"), branch = e_.plans.branch_of(i);
  auto w = dispatch::interpret_wait(r.outcome == SpawnResult::Outcome::Exited, r.exit_code);
  std::string job = "its job " + handle + " (branch " + branch + ")";
  const int attempt = rec.value("attempt", 1);
  const std::string why = dispatch::wait_reason(r.err);  // the adapter's reason (run-job's ✗ line)
  if (dispatch::gives_up(w)) {
    // The engine could not say how the job is (unreachable past the deadline, wait killed or
    // timed out): the job may be alive. It is cancelled before anything else; its branch, if
    // it pushed one meanwhile, is gated; a job that cannot be cancelled stays `submitted`, so
    // the next execute waits on it again instead of running the plan a second time.
    std::string cwhy;
    std::string gave_up = "yolo gave up waiting for " + job + " (wait " + r.describe() +
                          (why.empty() ? "" : ": " + why) + ")";
    if (!cancel(i, cwhy)) {
      fail(i, gave_up + " and could not cancel it (" + cwhy + "): the job may still run",
           "check the engine; `yolo execute` waits on the same job again (no second job is started)", &r);
      return;
    }
    rec = dispatch::record_ended(rec, dispatch::JobState::Cancelled, e_.world.now());
    run_of(i).dispatch_rec = rec;
    emit("plan_cancelled", {{"plan", e.id}, {"handle", handle}, {"ok", true}}, Sym::Warn,
         "Plan " + e.id + ": job " + handle + " cancelled (yolo gave up waiting for it)");
    if (!branch_on_remote(branch)) {
      record(i, rec, false);
      fail(i, gave_up + "; the job was cancelled and its branch is not on the remote",
           "check the engine; `yolo execute` looks the branch up again, then submits attempt " +
               std::to_string(attempt + 1),
           &r);
      return;
    }
    w = dispatch::WaitResult::Done;  // it pushed before the cancel: the gates decide
  }
  bool on_remote = w == dispatch::WaitResult::Unknown && branch_on_remote(branch);
  if (!dispatch::fetch_after_wait(w, on_remote)) {
    std::string cwhy;
    if (w == dispatch::WaitResult::Unknown) cancel(i, cwhy);  // forgotten: make sure it is gone
    record(i, dispatch::record_ended(rec, dispatch::JobState::Failed, e_.world.now()), false);
    std::string error =
        w == dispatch::WaitResult::Failed ? job + " failed" + (why.empty() ? "" : ": " + why)
        : w == dispatch::WaitResult::Unknown
            ? "the engine does not know " + job + " and the branch is not on the remote " + e_.url
            : "waiting for " + job + ": wait " + r.describe();
    fail(i, error,
         "read the job's log (its url, or `yolo logs " + e.id + "`); `yolo execute` submits attempt " +
             std::to_string(attempt + 1),
         &r);
    return;
  }
  back_.fetch(i, wave, std::move(r));
}

bool DispatchJobs::branch_on_remote(const std::string& branch) {
  if (remote_heads_) return remote_heads_->count("refs/heads/" + branch) > 0;
  GitRun g = run_git(e_.root, {"ls-remote", "--heads", e_.url, "refs/heads/" + branch}, 120000);
  return g.ok() && !text::trim(g.out).empty();
}

bool DispatchJobs::cancel(size_t i, std::string& why) {
  const auto& e = entry(i);
  auto with_wave = cancelled_with_wave_.find(i);
  if (with_wave != cancelled_with_wave_.end() && with_wave->second == str(run_of(i).dispatch_rec, "handle"))
    return true;  // its task went with its whole wave's cancel
  SpawnResult c = run_process(adapter_spec(expand_argv(e_.cfg.dispatch.cancel.argv, vars_of(i, e.wave)),
                                           e_.cfg.timeout_for(e_.cfg.dispatch.cancel)));
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
void DispatchJobs::give_up_wave(long long wave, const std::string& handle, const std::vector<size_t>& plans,
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
        adapter_spec(expand_argv(e_.cfg.dispatch.cancel.argv, vars), e_.cfg.timeout_for(e_.cfg.dispatch.cancel)));
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
  GitRun g = run_git(e_.root, {"ls-remote", "--heads", e_.url, "refs/heads/yolo/" + trees()->run_tag() + "/*"},
                     120000);
  if (g.ok()) remote_heads_ = dispatch::remote_heads(g.out);  // else each plan asks on its own
}

// A `status: ...` line of wait's stderr: what the engine says of the job (a pending reason,
// an image that cannot be pulled), shown live and kept in the plan's record for `yolo status`.
void DispatchJobs::engine_status(size_t i, std::string status) {
  const json& known = run_of(i).dispatch_rec;
  if (known.is_null() || interrupted() || e_.host.stopping()) return;
  status = dispatch::engine_status(status);
  if (status.empty() || str(known, "engine_status") == status) return;
  json rec = known;
  rec["engine_status"] = status;
  record(i, rec, false);
  const auto& e = entry(i);
  emit("plan_job_status", {{"plan", e.id}, {"handle", str(rec, "handle")}, {"status", status}}, Sym::Pause,
       "Plan " + e.id + ": job " + str(rec, "handle") + " · " + text::sanitize_for_terminal(status));
}

}  // namespace yolo::runner::phase
