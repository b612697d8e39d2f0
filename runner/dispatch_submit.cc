// Dispatch's jobs (runner/dispatch_jobs.h, docs/dispatch.md): the wave's base pushed to the
// remote, the plans submitted (one by one, or a wave as arrays), their records written before
// the engine hears of them.
#include "protocol/run/dispatch.h"

#include "runner/dispatch_internal.h"
#include "runner/dispatch_jobs.h"

namespace yolo::runner::phase {
using dispatch_detail::adapter_unset_env;
using dispatch_detail::first_line;

std::map<std::string, std::string> DispatchJobs::vars_of(size_t i, long long wave) const {
  auto v = e_.host.plan_vars(i, wave);
  const PlanRun* r = e_.host.plan_at(i);
  json rec = r && !r->dispatch_rec.is_null() ? r->dispatch_rec : json::object();
  v["attempt"] = std::to_string(rec.value("attempt", 1));
  auto b = wave_base().find(wave);
  v["base_commit"] = b != wave_base().end() ? b->second : std::string();
  v["branch"] = e_.plans.branch_of(i);
  v["remote"] = e_.url;
  v["handle"] = str(rec, "handle");
  return v;
}

SpawnSpec DispatchJobs::adapter_spec(const std::vector<std::string>& argv, long long timeout_ms) const {
  SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = e_.root;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = timeout_ms;
  // How long the adapters wait out an engine that does not answer before they say so (exit 3).
  spec.env.emplace_back("YOLO_DISPATCH_UNREACHABLE_SECONDS", std::to_string(dispatch::unreachable_seconds(e_.cfg.raw)));
  return spec;
}

void DispatchJobs::gather(size_t i, long long wave, int attempt) {
  e_.host.hold(i, nullptr);  // running meanwhile (no process of its own)
  wave_pending_[wave].push_back({i, attempt});
}

void DispatchJobs::gather_reattached(size_t i, long long wave) {
  e_.host.hold(i, nullptr);  // running meanwhile (no process of its own)
  wave_reattach_[wave].push_back(i);
}

// The job clones the remote and checks out the base: it must be there (a branch of its own,
// so a clone fetches it; forced: a later run's wave starts from another commit).
bool DispatchJobs::push_base(long long wave, std::string& err) {
  if (pushed_.count(wave)) return true;
  std::string ref = "refs/heads/yolo/" + trees()->run_tag() + "/base";
  GitRun g = run_git(e_.root, {"push", "--quiet", e_.url, "+" + wave_base()[wave] + ":" + ref}, 300000);
  if (!g.ok()) {
    err = "could not push the wave's base " + wave_base()[wave].substr(0, 12) + " to the remote " + e_.url + ": " +
          first_line(g.err.empty() ? g.error : g.err);
    return false;
  }
  pushed_.insert(wave);
  return true;
}

// The wave-level form: the plans start_plans gathered for this wave go to the engine as
// arrays (protocol: dispatch::form_wave_arrays decides which plans share one), one submit_wave
// and one wait_wave per array, whatever the wave's size.
void DispatchJobs::submit_waves(long long wave) {
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
  if (std::string err; !push_base(wave, err)) {
    for (const auto& [i, attempt] : pending)
      fail(i, err, "check `dispatch.remote` and that this machine may push to it", nullptr, false);
    return;
  }
  std::vector<dispatch::WaveCandidate> cands;
  for (const auto& [i, attempt] : pending) {
    std::string key;
    for (const auto& o : resources(i)) key += (key.empty() ? "" : " ") + o;
    cands.push_back({i, entry(i).id, attempt, key});
  }
  for (const auto& arr : dispatch::form_wave_arrays(e_.host.correlation_id(), cands))
    submit_array(wave, arr.plans, arr.key);
}

void DispatchJobs::submit_array(long long wave, const std::vector<size_t>& plans, const std::string& key) {
  const std::string base = wave_base()[wave];
  std::vector<std::vector<std::string>> tasks;
  for (size_t i : plans) {
    record(i, dispatch::record_wave_submitting(run_of(i).dispatch_rec.value("attempt", 1), base, key), false);
    tasks.push_back(dispatch::task_arguments(dispatch::submit_argv(e_.cfg.dispatch.submit.argv, e_.cfg.executor.argv,
                                                                   vars_of(i, wave), resources(i))));
  }
  e_.host.flush();  // `submitting` on disk before the engine hears of the array
  // The task file: read by submit_wave, removed once it has ended.
  stdfs::path tasks_path = stdfs::temp_directory_path() / ("yolo-tasks-" + std::to_string(::getpid()) + "-" + key);
  std::string werr = fs::write_atomic(tasks_path, dispatch::tasks_file(tasks)).error;
  if (!werr.empty()) {
    for (size_t i : plans)
      fail(i, "could not write the wave's task file: " + werr, "check the temporary folder", nullptr, true);
    return;
  }
  std::map<std::string, std::string> vars = {{"tasks", tasks_path.string()},
                                             {"correlation_id", e_.host.correlation_id()},
                                             {"wave", std::to_string(wave)},
                                             {"max_parallel", std::to_string(parallel())},
                                             {"base_commit", base},
                                             {"remote", e_.url},
                                             {"wave_key", key}};
  const CommandSpec& cs = e_.cfg.dispatch.submit_wave;
  SpawnSpec spec = adapter_spec(expand_argv(cs.argv, vars),
                                cs.timeout_ms > 0 ? cs.timeout_ms : e_.cfg.timeout_for(e_.cfg.dispatch.submit));
  spec.output_cap = 4 * 1024 * 1024;
  for (size_t i : plans) {
    e_.host.hold(i, nullptr);
    run_of(i).argv = spec.argv;
    run_of(i).dispatch_submitting = true;
  }
  const auto submitted_wave = [this, wave, plans, key, base, tasks_path](SpawnResult r) {
    std::error_code ec;
    stdfs::remove(tasks_path, ec);
    for (size_t i : plans) {
      release(i);
      run_of(i).dispatch_submitting = false;
    }
    auto ws = dispatch::parse_wave_submit_output(r.out, plans.size());
    auto submitted = [&](size_t k) {
      const int attempt = run_of(plans[k]).dispatch_rec.value("attempt", 1);
      record(plans[k], dispatch::record_wave_submitted(attempt, ws, k, base, key, e_.world.now()), false);
    };
    if (interrupted()) {
      if (r.ok() && ws.ok())
        for (size_t k = 0; k < plans.size(); ++k) submitted(k);
      e_.host.flush();
      for (size_t i : plans) e_.plans.on_interrupt(i);
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
    e_.host.flush();
    emit("wave_submitted",
         {{"wave", wave}, {"handle", ws.handle}, {"tasks", plans.size()}, {"reused", ws.reused}, {"key", key}},
         Sym::Diamond,
         "Wave " + std::to_string(wave) + ": " + std::to_string(plans.size()) + " plans as one job " + ws.handle +
             (ws.reused ? " (submitted before, reused)" : " submitted") + (ws.url.empty() ? "" : "  " + ws.url));
    for (size_t k = 0; k < plans.size(); ++k) {
      size_t i = plans[k];
      json d = {{"plan", entry(i).id},        {"handle", ws.tasks[k]}, {"attempt", run_of(i).dispatch_rec.value("attempt", 1)},
                {"reused", ws.reused},            {"branch", e_.plans.branch_of(i)}, {"wave_handle", ws.handle},
                {"wave_index", k}};
      emit("plan_submitted", d, Sym::Diamond, "Plan " + entry(i).id + ": task " + ws.tasks[k] + " of job " + ws.handle);
    }
    std::string handle = ws.handle;
    wave_submit_procs_.erase(key);  // r, ws and the captures are not used past this point
    wait_array(wave, plans, key, handle);
  };
  wave_submit_procs_[key] = Process::start(e_.loop, std::move(spec), submitted_wave);
}

void DispatchJobs::begin_submit(size_t i, long long wave, int attempt, bool reschedule) {
  if (std::string err; !push_base(wave, err)) {
    fail(i, err, "check `dispatch.remote` and that this machine may push to it", nullptr, reschedule);
    return;
  }
  submit(i, wave, attempt);
}

void DispatchJobs::submit(size_t i, long long wave, int attempt) {
  const std::string base = wave_base()[wave];  // the job's base, kept: the scope fence diffs against it
  json submitting = dispatch::record_submitting(attempt);
  submitting["base"] = base;
  record(i, submitting, true);
  SpawnSpec spec =
      adapter_spec(dispatch::submit_argv(e_.cfg.dispatch.submit.argv, e_.cfg.executor.argv, vars_of(i, wave),
                                         resources(i)),
                   e_.cfg.timeout_for(e_.cfg.dispatch.submit));
  spec.output_cap = 64 * 1024;
  run_of(i).argv = spec.argv;
  run_of(i).dispatch_submitting = true;
  e_.host.hold(i, Process::start(e_.loop, std::move(spec), [this, i, wave, attempt, base](SpawnResult r) {
    release(i);
    run_of(i).dispatch_submitting = false;
    const auto& e = entry(i);
    if (interrupted()) {
      // When submit got as far as a handle, the job is cancelled; else the record stays
      // `submitting` and the next execute submits the same attempt (the adapter answers
      // with the job if it was started).
      if (r.ok())
        if (auto s = dispatch::parse_submit_output(r.out); s.ok()) {
          json rec = dispatch::record_submitted(attempt, s, e_.world.now());
          rec["base"] = base;
          record(i, rec, true);
        }
      e_.plans.on_interrupt(i);
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
    json rec = dispatch::record_submitted(attempt, s, e_.world.now());
    rec["base"] = base;
    record(i, rec, true);
    json d = {{"plan", e.id},
              {"handle", s.handle},
              {"attempt", attempt},
              {"reused", s.reused},
              {"branch", e_.plans.branch_of(i)}};
    if (!s.url.empty()) d["url"] = s.url;
    emit("plan_submitted", d, Sym::Diamond,
         "Plan " + e.id + ": job " + s.handle + (s.reused ? " (submitted before, reused)" : " submitted") +
             (s.url.empty() ? "" : "  " + s.url));
    wait(i, wave);
  }));
}

}  // namespace yolo::runner::phase
