// `yolo execute` with a `dispatch` block: submitting the plans (one by one, or a wave as
// arrays), re-attaching, waiting, and what a wait's exit means (docs/dispatch.md).
#include "protocol/run/dispatch.h"

#include "protocol/findings/make_finding.h"
#include "protocol/plan/plan.h"
#include "runner/dispatch_internal.h"
#include "runner/run_dispatch.h"

namespace yolo::runner::phase {
using dispatch_detail::adapter_unset_env;
using dispatch_detail::first_line;

// The wave-level form: the plans start_plans gathered for this wave go to the engine as
// arrays (protocol: dispatch::form_wave_arrays decides which plans share one), one submit_wave
// and one wait_wave per array, whatever the wave's size.
void DispatchDriver::submit_waves(long long wave) {
  reattach_arrays(wave);
  auto it = wave_pending_.find(wave);
  if (it == wave_pending_.end()) return;
  auto pending = std::move(it->second);
  wave_pending_.erase(it);
  if (pending.empty()) return;
  for (const auto& [i, attempt] : pending) {
    release(i);
    json rec = run_of(i).dispatch_rec.is_null() ? json::object() : run_of(i).dispatch_rec;
    rec["attempt"] = attempt;
    run_of(i).dispatch_rec = rec;  // vars_of reads the attempt from here
  }
  if (!pushed_.count(wave)) {
    std::string ref = "refs/heads/yolo/" + trees()->run_tag() + "/base";
    GitRun g = run_git(root_, {"push", "--quiet", url_, "+" + wave_base()[wave] + ":" + ref}, 300000);
    if (!g.ok()) {
      for (const auto& [i, attempt] : pending)
        fail(i,
             "could not push the wave's base " + wave_base()[wave].substr(0, 12) + " to the remote " + url_ + ": " +
                 first_line(g.err.empty() ? g.error : g.err),
             "check `dispatch.remote` and that this machine may push to it", nullptr, false);
      return;
    }
    pushed_.insert(wave);
  }
  std::vector<dispatch::WaveCandidate> cands;
  for (const auto& [i, attempt] : pending) {
    std::string key;
    for (const auto& o : resources(i)) key += (key.empty() ? "" : " ") + o;
    cands.push_back({i, entry(i).id, attempt, key});
  }
  for (const auto& arr : dispatch::form_wave_arrays(host_.correlation_id(), cands)) submit_array(wave, arr.plans, arr.key);
}

void DispatchDriver::submit_array(long long wave, const std::vector<size_t>& plans, const std::string& key) {
  const std::string base = wave_base()[wave];
  std::vector<std::vector<std::string>> tasks;
  for (size_t i : plans) {
    json rec = dispatch::record_submitting(run_of(i).dispatch_rec.value("attempt", 1));
    rec["base"] = base;
    rec["wave_key"] = key;
    record(i, rec, false);
    tasks.push_back(dispatch::task_arguments(dispatch::submit_argv(cfg_.dispatch.submit.argv, cfg_.executor.argv,
                                                                   vars_of(i, wave), resources(i))));
  }
  host_.flush();  // `submitting` on disk before the engine hears of the array
  // The task file: read by submit_wave, removed once it has ended.
  stdfs::path tasks_path = stdfs::temp_directory_path() / ("yolo-tasks-" + std::to_string(::getpid()) + "-" + key);
  std::string werr = fs::write_atomic(tasks_path, dispatch::tasks_file(tasks)).error;
  if (!werr.empty()) {
    for (size_t i : plans)
      fail(i, "could not write the wave's task file: " + werr, "check the temporary folder", nullptr, true);
    return;
  }
  std::map<std::string, std::string> vars = {{"tasks", tasks_path.string()},
                                             {"correlation_id", host_.correlation_id()},
                                             {"wave", std::to_string(wave)},
                                             {"max_parallel", std::to_string(parallel())},
                                             {"base_commit", base},
                                             {"remote", url_},
                                             {"wave_key", key}};
  const CommandSpec& cs = cfg_.dispatch.submit_wave;
  SpawnSpec spec = adapter_spec(expand_argv(cs.argv, vars),
                                cs.timeout_ms > 0 ? cs.timeout_ms : cfg_.timeout_for(cfg_.dispatch.submit));
  spec.output_cap = 4 * 1024 * 1024;
  for (size_t i : plans) {
    hold(i, nullptr);
    run_of(i).argv = spec.argv;
    run_of(i).dispatch_submitting = true;
  }
  wave_submit_procs_[key] = Process::start(loop_, std::move(spec), [this, wave, plans, key, base, tasks_path](SpawnResult r) {
    std::error_code ec;
    stdfs::remove(tasks_path, ec);
    for (size_t i : plans) {
      release(i);
      run_of(i).dispatch_submitting = false;
    }
    auto ws = dispatch::parse_wave_submit_output(r.out, plans.size());
    auto submitted = [&](size_t k) {
      size_t i = plans[k];
      dispatch::Submitted s;
      s.handle = ws.tasks[k];
      s.url = ws.url;
      s.job_name = ws.job_name;
      s.reused = ws.reused;
      json rec = dispatch::record_submitted(run_of(i).dispatch_rec.value("attempt", 1), s, world_.now());
      rec["base"] = base;
      rec["wave_key"] = key;
      rec["wave_handle"] = ws.handle;
      rec["wave_index"] = k;
      record(i, rec, false);
    };
    if (interrupted()) {
      if (r.ok() && ws.ok())
        for (size_t k = 0; k < plans.size(); ++k) submitted(k);
      host_.flush();
      for (size_t i : plans) on_interrupt(i);
      wave_submit_procs_.erase(key);
      return;
    }
    if (!r.ok() || !ws.ok()) {
      std::string error = !r.ok() ? "submit_wave " + r.describe() + ": " + first_line(text::tail_lines(r.err, 3))
                                  : ws.error;
      for (size_t i : plans)
        fail(i, error, "run the submit_wave command of `dispatch` by hand to see why (yolo logs " + entry(i).id + ")",
             &r, true);
      wave_submit_procs_.erase(key);
      return;
    }
    for (size_t k = 0; k < plans.size(); ++k) submitted(k);
    host_.flush();
    emit("wave_submitted",
         {{"wave", wave}, {"handle", ws.handle}, {"tasks", plans.size()}, {"reused", ws.reused}, {"key", key}},
         Sym::Diamond,
         "Wave " + std::to_string(wave) + ": " + std::to_string(plans.size()) + " plans as one job " + ws.handle +
             (ws.reused ? " (submitted before, reused)" : " submitted") + (ws.url.empty() ? "" : "  " + ws.url));
    for (size_t k = 0; k < plans.size(); ++k) {
      size_t i = plans[k];
      json d = {{"plan", entry(i).id},        {"handle", ws.tasks[k]}, {"attempt", run_of(i).dispatch_rec.value("attempt", 1)},
                {"reused", ws.reused},            {"branch", branch_of(i)}, {"wave_handle", ws.handle},
                {"wave_index", k}};
      emit("plan_submitted", d, Sym::Diamond, "Plan " + entry(i).id + ": task " + ws.tasks[k] + " of job " + ws.handle);
    }
    std::string handle = ws.handle;
    wave_submit_procs_.erase(key);  // r, ws and the captures are not used past this point
    wait_array(wave, plans, key, handle);
  });
}

// One wait_wave for the array: each `task K ...` line on its stdout is the plan at index K.
void DispatchDriver::wait_array(long long wave, const std::vector<size_t>& plans, const std::string& key,
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
  long long deadline = cfg_.dispatch.wait_wave.timeout_ms > 0  ? cfg_.dispatch.wait_wave.timeout_ms
                       : cfg_.dispatch.wait.timeout_ms > 0 ? cfg_.dispatch.wait.timeout_ms
                                                           : 24LL * 3600 * 1000;
  std::map<std::string, std::string> vars = {
      {"handle", handle}, {"correlation_id", host_.correlation_id()}, {"wave", std::to_string(wave)}, {"wave_key", key}};
  SpawnSpec spec = adapter_spec(expand_argv(cfg_.dispatch.wait_wave.argv, vars), deadline);
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
    auto w = dispatch::wave_line_result(wl.kind);
    r.exit_code = w == dispatch::WaitResult::Done ? 0 : w == dispatch::WaitResult::Failed ? 1 : 2;
    r.err = std::move(text);
    release(i);
    waited(i, wave, std::move(r));
  };
  for (size_t i : plans) {
    if (i == kNoPlan) continue;
    hold(i, nullptr);
    run_of(i).argv = spec.argv;
  }
  // One poller per array (an array re-attached beside a new one of the same key is another).
  const std::string slot = key + "@" + handle;
  wave_wait_procs_[slot] = Process::start(loop_, std::move(spec), [this, t, wave, slot, handle](SpawnResult r) {
    auto w = dispatch::wave_exit_result(r.outcome == SpawnResult::Outcome::Exited, r.exit_code);
    give_up_wave(wave, handle, t->plans, t->reported);  // one cancel, one lookup
    for (size_t k = 0; k < t->plans.size(); ++k) {
      if (t->reported[k]) continue;
      t->reported[k] = true;
      size_t i = t->plans[k];
      SpawnResult rr = r;
      rr.err = t->text[k] + r.err;
      if (rr.outcome == SpawnResult::Outcome::Exited)
        rr.exit_code = w == dispatch::WaitResult::Unknown ? 2 : w == dispatch::WaitResult::Unreachable ? 3 : 4;
      release(i);
      waited(i, wave, std::move(rr));
    }
    remote_heads_.reset();  // looked up for these plans only
    wave_wait_procs_.erase(slot);
  });
}

void DispatchDriver::cancel_pollers() {
  for (auto& [k, p] : wave_wait_procs_)
    if (p) p->cancel();
}

void DispatchDriver::begin_submit(size_t i, long long wave, int attempt, bool reschedule) {
  if (!pushed_.count(wave)) {
    // The job clones the remote and checks out the base: it must be there (a branch of its
    // own, so a clone fetches it; forced: a later run's wave starts from another commit).
    std::string ref = "refs/heads/yolo/" + trees()->run_tag() + "/base";
    GitRun g = run_git(root_, {"push", "--quiet", url_, "+" + wave_base()[wave] + ":" + ref}, 300000);
    if (!g.ok()) {
      fail(i,
           "could not push the wave's base " + wave_base()[wave].substr(0, 12) + " to the remote " + url_ + ": " +
               first_line(g.err.empty() ? g.error : g.err),
           "check `dispatch.remote` and that this machine may push to it", nullptr, reschedule);
      return;
    }
    pushed_.insert(wave);
  }
  submit(i, wave, attempt);
}

void DispatchDriver::submit(size_t i, long long wave, int attempt) {
  const std::string base = wave_base()[wave];  // the job's base, kept: the scope fence diffs against it
  json submitting = dispatch::record_submitting(attempt);
  submitting["base"] = base;
  record(i, submitting, true);
  SpawnSpec spec =
      adapter_spec(dispatch::submit_argv(cfg_.dispatch.submit.argv, cfg_.executor.argv, vars_of(i, wave),
                                         resources(i)),
                   cfg_.timeout_for(cfg_.dispatch.submit));
  spec.output_cap = 64 * 1024;
  run_of(i).argv = spec.argv;
  run_of(i).dispatch_submitting = true;
  hold(i, Process::start(loop_, std::move(spec), [this, i, wave, attempt, base](SpawnResult r) {
    release(i);
    run_of(i).dispatch_submitting = false;
    const auto& e = entry(i);
    if (interrupted()) {
      // When submit got as far as a handle, the job is cancelled; else the record stays
      // `submitting` and the next execute submits the same attempt (the adapter answers
      // with the job if it was started).
      if (r.ok())
        if (auto s = dispatch::parse_submit_output(r.out); s.ok()) {
          json rec = dispatch::record_submitted(attempt, s, world_.now());
          rec["base"] = base;
          record(i, rec, true);
        }
      on_interrupt(i);
      return;
    }
    if (!r.ok()) {
      fail(i, "submit " + r.describe() + ": " + first_line(text::tail_lines(r.err, 3)),
           "run the submit command of `dispatch` by hand to see why (yolo logs " + e.id + ")", &r);
      return;
    }
    auto s = dispatch::parse_submit_output(r.out);
    if (!s.ok()) {
      fail(i, s.error, "the adapter must print {\"handle\": ...} on stdout (docs/dispatch.md)", &r);
      return;
    }
    json rec = dispatch::record_submitted(attempt, s, world_.now());
    rec["base"] = base;
    record(i, rec, true);
    json d = {{"plan", e.id},
              {"handle", s.handle},
              {"attempt", attempt},
              {"reused", s.reused},
              {"branch", branch_of(i)}};
    if (!s.url.empty()) d["url"] = s.url;
    emit("plan_submitted", d, Sym::Diamond,
         "Plan " + e.id + ": job " + s.handle + (s.reused ? " (submitted before, reused)" : " submitted") +
             (s.url.empty() ? "" : "  " + s.url));
    wait(i, wave);
  }));
}

void DispatchDriver::wait(size_t i, long long wave) {
  // Every wait has a deadline (a day unless the config gives one): past it, yolo gives up on
  // the job and cancels it.
  long long deadline = cfg_.dispatch.wait.timeout_ms > 0 ? cfg_.dispatch.wait.timeout_ms : 24LL * 3600 * 1000;
  SpawnSpec spec = adapter_spec(expand_argv(cfg_.dispatch.wait.argv, vars_of(i, wave)), deadline);
  spec.output_cap = 256 * 1024;
  spec.on_line = [this, i](SpawnSpec::Stream st, std::string_view line) {
    if (st == SpawnSpec::Stream::Err && line.rfind("status: ", 0) == 0)
      engine_status(i, std::string(line.substr(8)));
  };
  run_of(i).argv = spec.argv;
  hold(i, Process::start(loop_, std::move(spec), [this, i, wave](SpawnResult r) {
    release(i);
    waited(i, wave, std::move(r));
  }));
}

void DispatchDriver::waited(size_t i, long long wave, SpawnResult r) {
  if (fetch_job_log(i, wave, r)) return;  // waited() again with the job's log from the remote
  const auto& e = entry(i);
  json rec = run_of(i).dispatch_rec;
  std::string log_file =
      write_agent_log(world_, root_, host_.phase_rel(), e.id, "dispatch", rec.value("attempt", 1), run_of(i).argv, r);
  if (!log_file.empty()) note("wait output: " + log_file + "  (yolo logs " + e.id + ")", true);
  if (interrupted()) {
    on_interrupt(i);
    return;
  }
  std::string handle = str(rec, "handle"), branch = branch_of(i);
  auto w = dispatch::interpret_wait(r.outcome == SpawnResult::Outcome::Exited, r.exit_code);
  std::string job = "its job " + handle + " (branch " + branch + ")";
  const int attempt = rec.value("attempt", 1);
  std::string why;  // wait's last two lines: the adapter's reason (run-job's ✗ line) and the log
  {
    const std::string tail = text::tail_lines(r.err, 2);  // lines() views it: it must outlive the loop
    for (const auto& l : text::lines(tail))
      if (!text::trim(l).empty()) why += (why.empty() ? "" : "; ") + std::string(text::trim(l));
  }
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
    rec = dispatch::record_ended(rec, dispatch::JobState::Cancelled, world_.now());
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
    record(i, dispatch::record_ended(rec, dispatch::JobState::Failed, world_.now()), false);
    std::string error =
        w == dispatch::WaitResult::Failed ? job + " failed" + (why.empty() ? "" : ": " + why)
        : w == dispatch::WaitResult::Unknown
            ? "the engine does not know " + job + " and the branch is not on the remote " + url_
            : "waiting for " + job + ": wait " + r.describe();
    fail(i, error,
         "read the job's log (its url, or `yolo logs " + e.id + "`); `yolo execute` submits attempt " +
             std::to_string(attempt + 1),
         &r);
    return;
  }
  fetch(i, wave, std::move(r));
}

}  // namespace yolo::runner::phase
