// `yolo execute` with a `dispatch` block (docs/dispatch.md): each plan a job of a
// cluster engine. The wave's base is pushed to the remote, the job submitted (its handle
// written to the state before yolo waits on it), waited on, its branch fetched, then the
// plan is gated in a worktree slot exactly as a worktree plan (checks, SUMMARY gate, scope
// fence: plan_exec.cc, plan_merge.cc) and merged in plan order. A yolo that was stopped or
// killed re-attaches to the handles in its state; Ctrl-C cancels the jobs it waits on.
// The rules (submit or re-attach, which attempt, what wait's exit means) are
// protocol/run/dispatch.h; every child here is argv through runner/subprocess, never a shell.
#include "protocol/run/dispatch.h"

#include "protocol/findings/make_finding.h"
#include "protocol/plan/plan.h"
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {
namespace {

std::string first_line(const std::string& s) {
  std::string t(text::trim(s));
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

std::vector<std::string> adapter_unset_env() {
  std::vector<std::string> v = dispatch::withheld_env();
  for (const auto& g : git_hook_env()) v.push_back(g);
  return v;
}

}  // namespace

int Run::init_dispatch(const json& doc) {
  if (!dispatched()) return -1;
  if (!cfg_.dispatch.errors.empty()) {
    std::string msg = ".yolo-planning/config.json: ";
    for (size_t k = 0; k < cfg_.dispatch.errors.size(); ++k) msg += (k ? "; " : "") + cfg_.dispatch.errors[k];
    next_ =
        "correct `dispatch` in .yolo-planning/config.json (docs/dispatch.md shows a complete block), then `yolo "
        "execute`";
    return finish(kExecHalted, Result::Error, msg);
  }
  // The remote as the jobs see it: a remote's name becomes its URL; a relative path is made
  // absolute (the job runs elsewhere).
  std::string r = cfg_.dispatch.remote;
  GitRun g = run_git(root_, {"remote", "get-url", r}, 10000);
  std::string url = g.ok() ? first_line(g.out) : r;
  bool is_path = url.find("://") == std::string::npos &&
                 (url.find(':') == std::string::npos || url.front() == '/' || url.front() == '.');
  if (is_path && stdfs::path(url).is_relative()) url = (root_ / url).lexically_normal().string();
  dispatch_url_ = url;
  if (str(doc, "phase_dir") != phase_.rel || !doc.contains("plans") || !doc["plans"].is_array()) return -1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const json* p = execution::find_plan(doc, entries_[i].id);
    if (!p) continue;
    if (auto it = p->find("dispatch"); it != p->end() && it->is_object()) run_of(i).dispatch_rec = *it;
    if (execution::plan_status(*p) == PlanStatus::Failed) run_of(i).dispatch_failed_before = true;
  }
  return -1;
}

std::string Run::dispatch_branch(size_t i) const {
  const PlanRun* r = run_at(i);
  int attempt = 1;
  if (r && !r->dispatch_rec.is_null()) attempt = r->dispatch_rec.value("attempt", 1);
  return dispatch::branch_for_attempt(trees_->branch_for(entries_[i].id), attempt);
}

std::map<std::string, std::string> Run::dispatch_vars(size_t i, long long wave) const {
  auto v = plan_vars(i, wave);
  const PlanRun* r = run_at(i);
  json rec = r && !r->dispatch_rec.is_null() ? r->dispatch_rec : json::object();
  v["attempt"] = std::to_string(rec.value("attempt", 1));
  auto b = wave_base_.find(wave);
  v["base_commit"] = b != wave_base_.end() ? b->second : std::string();
  v["branch"] = dispatch_branch(i);
  v["remote"] = dispatch_url_;
  v["handle"] = str(rec, "handle");
  return v;
}

SpawnSpec Run::adapter_spec(const std::vector<std::string>& argv, long long timeout_ms) const {
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

bool Run::dispatch_on_remote(const std::string& branch) {
  GitRun g = run_git(root_, {"ls-remote", "--heads", dispatch_url_, "refs/heads/" + branch}, 120000);
  return g.ok() && !text::trim(g.out).empty();
}

bool Run::dispatch_cancel(size_t i, std::string& why) {
  const auto& e = entries_[i];
  SpawnResult c = run_process(adapter_spec(expand_argv(cfg_.dispatch.cancel.argv, dispatch_vars(i, e.wave)),
                                           cfg_.timeout_for(cfg_.dispatch.cancel)));
  if (!c.ok()) why = "cancel " + c.describe() + (c.err.empty() ? "" : ": " + first_line(text::tail_lines(c.err, 1)));
  return c.ok();
}

// A `status: ...` line of wait's stderr: what the engine says of the job (a pending reason,
// an image that cannot be pulled), shown live and kept in the plan's record for `yolo status`.
void Run::dispatch_engine_status(size_t i, std::string status) {
  const json& known = run_of(i).dispatch_rec;
  if (known.is_null() || interrupted_ || stopping_) return;
  status = std::string(text::trim(status));
  if (status.size() > 300) status.resize(300);
  if (status.empty() || str(known, "engine_status") == status) return;
  json rec = known;
  rec["engine_status"] = status;
  dispatch_record(i, rec, false);
  const auto& e = entries_[i];
  emit("plan_job_status", {{"plan", e.id}, {"handle", str(rec, "handle")}, {"status", status}}, Sym::Pause,
       "Plan " + e.id + ": job " + str(rec, "handle") + " · " + text::sanitize_for_terminal(status));
}

void Run::dispatch_record(size_t i, json rec, bool flush) {
  if (str(rec, "state") == "submitted") core_.submitted(i, str(rec, "handle"));
  run_of(i).dispatch_rec = rec;
  PlanUpdate u{execution::PlanUpdate{PlanStatus::Running, std::nullopt, nullptr, "", nullptr}};
  u.set = {{"dispatch", std::move(rec)}};
  queue_plan(i, std::move(u));
  if (flush) flush_plans();  // on disk before the next step: a kill -9 finds it
}

void Run::start_dispatched(size_t i, long long wave, const dispatch::Start& s) {
  const auto& e = entries_[i];
  core_.started(i);
  run_of(i).started_at = uv_hrtime();
  if (!wave_base_.count(wave)) {
    std::string h = trees_->head();
    if (h.empty()) {
      dispatch_fail(i, "git rev-parse HEAD failed in " + root_.string(), "check the project's checkout", nullptr,
                    false);
      return;
    }
    wave_base_[wave] = h;
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
      dispatch_fail(i, msg, "correct `resources` in the plan's frontmatter (docs/dispatch.md, Per-plan resources)",
                    nullptr, false);
      return;
    }
    run_of(i).dispatch_res = dispatch::resources_options(res);
  }
  log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"attempt", s.attempt}});
  emit("plan_start", {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"attempt", s.attempt}, {"dispatch", true}},
       Sym::Diamond,
       "Plan " + e.id + " started: " + e.title + " (dispatched, attempt " + std::to_string(s.attempt) + ")");
  if (s.kind == dispatch::Start::Kind::Reattach) {
    emit("plan_reattached", {{"plan", e.id}, {"handle", s.handle}, {"attempt", s.attempt}}, Sym::Diamond,
         "Plan " + e.id + ": re-attaching to its job " + s.handle + " (attempt " + std::to_string(s.attempt) +
             "), submitted by an earlier execute");
    dispatch_wait(i, wave);
    return;
  }
  if (s.previous_attempt > 0) {
    dispatch_look_up_previous(i, wave, s.attempt, s.previous_attempt);
    return;
  }
  if (cfg_.dispatch.wave_form()) {  // submitted with the rest of its wave, as one array
    hold(i, nullptr);               // running meanwhile (no process of its own)
    wave_pending_[wave].push_back({i, s.attempt});
    return;
  }
  dispatch_begin_submit(i, wave, s.attempt, false);
}

// The wave-level form: the plans start_plans gathered for this wave go to the engine as
// arrays (protocol: dispatch::form_wave_arrays decides which plans share one), one submit_wave
// and one wait_wave per array, whatever the wave's size.
void Run::dispatch_submit_waves(long long wave) {
  auto it = wave_pending_.find(wave);
  if (it == wave_pending_.end()) return;
  auto pending = std::move(it->second);
  wave_pending_.erase(it);
  if (pending.empty()) return;
  for (const auto& [i, attempt] : pending) {
    release(i);
    json rec = run_of(i).dispatch_rec.is_null() ? json::object() : run_of(i).dispatch_rec;
    rec["attempt"] = attempt;
    run_of(i).dispatch_rec = rec;  // dispatch_vars reads the attempt from here
  }
  if (!dispatch_pushed_.count(wave)) {
    std::string ref = "refs/heads/yolo/" + trees_->run_tag() + "/base";
    GitRun g = run_git(root_, {"push", "--quiet", dispatch_url_, "+" + wave_base_[wave] + ":" + ref}, 300000);
    if (!g.ok()) {
      for (const auto& [i, attempt] : pending)
        dispatch_fail(i,
                      "could not push the wave's base " + wave_base_[wave].substr(0, 12) + " to the remote " +
                          dispatch_url_ + ": " + first_line(g.err.empty() ? g.error : g.err),
                      "check `dispatch.remote` and that this machine may push to it", nullptr, false);
      return;
    }
    dispatch_pushed_.insert(wave);
  }
  std::vector<dispatch::WaveCandidate> cands;
  for (const auto& [i, attempt] : pending) {
    std::string key;
    for (const auto& o : dispatch_resources(i)) key += (key.empty() ? "" : " ") + o;
    cands.push_back({i, entries_[i].id, attempt, key});
  }
  for (const auto& arr : dispatch::form_wave_arrays(cid_, cands)) dispatch_submit_array(wave, arr.plans, arr.key);
}

void Run::dispatch_submit_array(long long wave, const std::vector<size_t>& plans, const std::string& key) {
  const std::string base = wave_base_[wave];
  std::vector<std::vector<std::string>> tasks;
  for (size_t i : plans) {
    json rec = dispatch::record_submitting(run_of(i).dispatch_rec.value("attempt", 1));
    rec["base"] = base;
    rec["wave_key"] = key;
    dispatch_record(i, rec, false);
    tasks.push_back(dispatch::task_arguments(dispatch::submit_argv(cfg_.dispatch.submit.argv, cfg_.executor.argv,
                                                                   dispatch_vars(i, wave), dispatch_resources(i))));
  }
  flush_plans();  // `submitting` on disk before the engine hears of the array
  // The task file: read by submit_wave, removed once it has ended.
  stdfs::path tasks_path = stdfs::temp_directory_path() / ("yolo-tasks-" + std::to_string(::getpid()) + "-" + key);
  std::string werr = fs::write_atomic(tasks_path, dispatch::tasks_file(tasks)).error;
  if (!werr.empty()) {
    for (size_t i : plans)
      dispatch_fail(i, "could not write the wave's task file: " + werr, "check the temporary folder", nullptr, true);
    return;
  }
  std::map<std::string, std::string> vars = {{"tasks", tasks_path.string()},
                                             {"correlation_id", cid_},
                                             {"wave", std::to_string(wave)},
                                             {"max_parallel", std::to_string(dispatch_parallel())},
                                             {"base_commit", base},
                                             {"remote", dispatch_url_},
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
  wave_submit_procs_[key] = Process::start(&loop_, std::move(spec), [this, wave, plans, key, base, tasks_path](SpawnResult r) {
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
      json rec = dispatch::record_submitted(run_of(i).dispatch_rec.value("attempt", 1), s, now_iso8601());
      rec["base"] = base;
      rec["wave_key"] = key;
      rec["wave_handle"] = ws.handle;
      rec["wave_index"] = k;
      dispatch_record(i, rec, false);
    };
    if (interrupted_) {
      if (r.ok() && ws.ok())
        for (size_t k = 0; k < plans.size(); ++k) submitted(k);
      flush_plans();
      for (size_t i : plans) dispatch_interrupted(i);
      wave_submit_procs_.erase(key);
      return;
    }
    if (!r.ok() || !ws.ok()) {
      std::string error = !r.ok() ? "submit_wave " + r.describe() + ": " + first_line(text::tail_lines(r.err, 3))
                                  : ws.error;
      for (size_t i : plans)
        dispatch_fail(i, error,
                      "run the submit_wave command of `dispatch` by hand to see why (yolo logs " + entries_[i].id + ")",
                      &r, true);
      wave_submit_procs_.erase(key);
      return;
    }
    for (size_t k = 0; k < plans.size(); ++k) submitted(k);
    flush_plans();
    emit("wave_submitted",
         {{"wave", wave}, {"handle", ws.handle}, {"tasks", plans.size()}, {"reused", ws.reused}, {"key", key}},
         Sym::Diamond,
         "Wave " + std::to_string(wave) + ": " + std::to_string(plans.size()) + " plans as one job " + ws.handle +
             (ws.reused ? " (submitted before, reused)" : " submitted") + (ws.url.empty() ? "" : "  " + ws.url));
    for (size_t k = 0; k < plans.size(); ++k) {
      size_t i = plans[k];
      json d = {{"plan", entries_[i].id},        {"handle", ws.tasks[k]}, {"attempt", run_of(i).dispatch_rec.value("attempt", 1)},
                {"reused", ws.reused},            {"branch", dispatch_branch(i)}, {"wave_handle", ws.handle},
                {"wave_index", k}};
      emit("plan_submitted", d, Sym::Diamond, "Plan " + entries_[i].id + ": task " + ws.tasks[k] + " of job " + ws.handle);
    }
    std::string handle = ws.handle;
    wave_submit_procs_.erase(key);  // r, ws and the captures are not used past this point
    dispatch_wait_array(wave, plans, key, handle);
  });
}

// One wait_wave for the array: each `task K ...` line on its stdout is the plan at index K.
void Run::dispatch_wait_array(long long wave, const std::vector<size_t>& plans, const std::string& key,
                              const std::string& handle) {
  struct Tasks {
    std::vector<size_t> plans;
    std::vector<bool> reported;
    std::vector<std::string> text;  // what the engine said of each task, its log: the plan's log
  };
  auto t = std::make_shared<Tasks>();
  t->plans = plans;
  t->reported.assign(plans.size(), false);
  t->text.assign(plans.size(), std::string());
  long long deadline = cfg_.dispatch.wait_wave.timeout_ms > 0  ? cfg_.dispatch.wait_wave.timeout_ms
                       : cfg_.dispatch.wait.timeout_ms > 0 ? cfg_.dispatch.wait.timeout_ms
                                                           : 24LL * 3600 * 1000;
  std::map<std::string, std::string> vars = {
      {"handle", handle}, {"correlation_id", cid_}, {"wave", std::to_string(wave)}, {"wave_key", key}};
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
      dispatch_engine_status(i, wl.text);
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
    dispatch_waited(i, wave, std::move(r));
  };
  for (size_t i : plans) {
    hold(i, nullptr);
    run_of(i).argv = spec.argv;
  }
  wave_wait_procs_[key] = Process::start(&loop_, std::move(spec), [this, t, wave, key](SpawnResult r) {
    auto w = dispatch::wave_exit_result(r.outcome == SpawnResult::Outcome::Exited, r.exit_code);
    for (size_t k = 0; k < t->plans.size(); ++k) {
      if (t->reported[k]) continue;
      t->reported[k] = true;
      size_t i = t->plans[k];
      SpawnResult rr = r;
      rr.err = t->text[k] + r.err;
      if (rr.outcome == SpawnResult::Outcome::Exited)
        rr.exit_code = w == dispatch::WaitResult::Unknown ? 2 : w == dispatch::WaitResult::Unreachable ? 3 : 4;
      release(i);
      dispatch_waited(i, wave, std::move(rr));
    }
    wave_wait_procs_.erase(key);
  });
}

// Attempt N ended without its branch being gated (its job failed, was cancelled, or yolo gave
// up on it): a job that pushed after all is gated, not run a second time. The lookup runs as
// a child of the loop (the plan counts as running meanwhile).
void Run::dispatch_look_up_previous(size_t i, long long wave, int attempt, int previous) {
  const std::string prev_branch = dispatch::branch_for_attempt(trees_->branch_for(entries_[i].id), previous);
  SpawnSpec spec;
  spec.argv = {"git", "ls-remote", "--heads", dispatch_url_, "refs/heads/" + prev_branch};
  spec.cwd = root_;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = 120000;
  run_of(i).argv = spec.argv;
  hold(i, Process::start(&loop_, std::move(spec), [this, i, wave, attempt, previous, prev_branch](SpawnResult r) {
    release(i);
    if (interrupted_) {
      dispatch_interrupted(i);
      return;
    }
    const auto& e = entries_[i];
    if (r.ok() && !text::trim(r.out).empty()) {
      json prev = run_of(i).dispatch_rec.is_null() ? json::object() : run_of(i).dispatch_rec;
      prev["attempt"] = previous;
      prev["state"] = "submitted";
      run_of(i).dispatch_rec = prev;
      emit("plan_found_on_remote", {{"plan", e.id}, {"branch", prev_branch}, {"attempt", previous}}, Sym::Diamond,
           "Plan " + e.id + ": attempt " + std::to_string(previous) + "'s branch " + prev_branch +
               " is on the remote (its job pushed it after all): gating it, no new job");
      SpawnResult none;
      none.outcome = SpawnResult::Outcome::Exited;
      none.exit_code = 0;
      dispatch_fetch(i, wave, std::move(none));
      return;
    }
    dispatch_begin_submit(i, wave, attempt, true);
  }));
}

void Run::dispatch_begin_submit(size_t i, long long wave, int attempt, bool reschedule) {
  if (!dispatch_pushed_.count(wave)) {
    // The job clones the remote and checks out the base: it must be there (a branch of its
    // own, so a clone fetches it; forced: a later run's wave starts from another commit).
    std::string ref = "refs/heads/yolo/" + trees_->run_tag() + "/base";
    GitRun g = run_git(root_, {"push", "--quiet", dispatch_url_, "+" + wave_base_[wave] + ":" + ref}, 300000);
    if (!g.ok()) {
      dispatch_fail(i,
                    "could not push the wave's base " + wave_base_[wave].substr(0, 12) + " to the remote " +
                        dispatch_url_ + ": " + first_line(g.err.empty() ? g.error : g.err),
                    "check `dispatch.remote` and that this machine may push to it", nullptr, reschedule);
      return;
    }
    dispatch_pushed_.insert(wave);
  }
  dispatch_submit(i, wave, attempt);
}

void Run::dispatch_submit(size_t i, long long wave, int attempt) {
  const std::string base = wave_base_[wave];  // the job's base, kept: the scope fence diffs against it
  json submitting = dispatch::record_submitting(attempt);
  submitting["base"] = base;
  dispatch_record(i, submitting, true);
  SpawnSpec spec =
      adapter_spec(dispatch::submit_argv(cfg_.dispatch.submit.argv, cfg_.executor.argv, dispatch_vars(i, wave),
                                         dispatch_resources(i)),
                   cfg_.timeout_for(cfg_.dispatch.submit));
  spec.output_cap = 64 * 1024;
  run_of(i).argv = spec.argv;
  run_of(i).dispatch_submitting = true;
  hold(i, Process::start(&loop_, std::move(spec), [this, i, wave, attempt, base](SpawnResult r) {
    release(i);
    run_of(i).dispatch_submitting = false;
    const auto& e = entries_[i];
    if (interrupted_) {
      // When submit got as far as a handle, the job is cancelled; else the record stays
      // `submitting` and the next execute submits the same attempt (the adapter answers
      // with the job if it was started).
      if (r.ok())
        if (auto s = dispatch::parse_submit_output(r.out); s.ok()) {
          json rec = dispatch::record_submitted(attempt, s, now_iso8601());
          rec["base"] = base;
          dispatch_record(i, rec, true);
        }
      dispatch_interrupted(i);
      return;
    }
    if (!r.ok()) {
      dispatch_fail(i, "submit " + r.describe() + ": " + first_line(text::tail_lines(r.err, 3)),
                    "run the submit command of `dispatch` by hand to see why (yolo logs " + e.id + ")", &r);
      return;
    }
    auto s = dispatch::parse_submit_output(r.out);
    if (!s.ok()) {
      dispatch_fail(i, s.error, "the adapter must print {\"handle\": ...} on stdout (docs/dispatch.md)", &r);
      return;
    }
    json rec = dispatch::record_submitted(attempt, s, now_iso8601());
    rec["base"] = base;
    dispatch_record(i, rec, true);
    json d = {{"plan", e.id},
              {"handle", s.handle},
              {"attempt", attempt},
              {"reused", s.reused},
              {"branch", dispatch_branch(i)}};
    if (!s.url.empty()) d["url"] = s.url;
    emit("plan_submitted", d, Sym::Diamond,
         "Plan " + e.id + ": job " + s.handle + (s.reused ? " (submitted before, reused)" : " submitted") +
             (s.url.empty() ? "" : "  " + s.url));
    dispatch_wait(i, wave);
  }));
}

void Run::dispatch_wait(size_t i, long long wave) {
  // Every wait has a deadline (a day unless the config gives one): past it, yolo gives up on
  // the job and cancels it.
  long long deadline = cfg_.dispatch.wait.timeout_ms > 0 ? cfg_.dispatch.wait.timeout_ms : 24LL * 3600 * 1000;
  SpawnSpec spec = adapter_spec(expand_argv(cfg_.dispatch.wait.argv, dispatch_vars(i, wave)), deadline);
  spec.output_cap = 256 * 1024;
  spec.on_line = [this, i](SpawnSpec::Stream st, std::string_view line) {
    if (st == SpawnSpec::Stream::Err && line.rfind("status: ", 0) == 0)
      dispatch_engine_status(i, std::string(line.substr(8)));
  };
  run_of(i).argv = spec.argv;
  hold(i, Process::start(&loop_, std::move(spec), [this, i, wave](SpawnResult r) {
    release(i);
    dispatch_waited(i, wave, std::move(r));
  }));
}

void Run::dispatch_waited(size_t i, long long wave, SpawnResult r) {
  const auto& e = entries_[i];
  json rec = run_of(i).dispatch_rec;
  std::string log_file = write_agent_log(root_, phase_.rel, e.id, "dispatch", rec.value("attempt", 1), run_of(i).argv, r);
  if (!log_file.empty()) note("wait output: " + log_file + "  (yolo logs " + e.id + ")", true);
  if (interrupted_) {
    dispatch_interrupted(i);
    return;
  }
  std::string handle = str(rec, "handle"), branch = dispatch_branch(i);
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
    if (!dispatch_cancel(i, cwhy)) {
      dispatch_fail(i, gave_up + " and could not cancel it (" + cwhy + "): the job may still run",
                    "check the engine; `yolo execute` waits on the same job again (no second job is started)", &r);
      return;
    }
    rec = dispatch::record_ended(rec, "cancelled", now_iso8601());
    run_of(i).dispatch_rec = rec;
    emit("plan_cancelled", {{"plan", e.id}, {"handle", handle}, {"ok", true}}, Sym::Warn,
         "Plan " + e.id + ": job " + handle + " cancelled (yolo gave up waiting for it)");
    if (!dispatch_on_remote(branch)) {
      dispatch_record(i, rec, false);
      dispatch_fail(i, gave_up + "; the job was cancelled and its branch is not on the remote",
                    "check the engine; `yolo execute` looks the branch up again, then submits attempt " +
                        std::to_string(attempt + 1),
                    &r);
      return;
    }
    w = dispatch::WaitResult::Done;  // it pushed before the cancel: the gates decide
  }
  bool on_remote = w == dispatch::WaitResult::Unknown && dispatch_on_remote(branch);
  if (!dispatch::fetch_after_wait(w, on_remote)) {
    std::string cwhy;
    if (w == dispatch::WaitResult::Unknown) dispatch_cancel(i, cwhy);  // forgotten: make sure it is gone
    dispatch_record(i, dispatch::record_ended(rec, "failed", now_iso8601()), false);
    std::string error =
        w == dispatch::WaitResult::Failed ? job + " failed" + (why.empty() ? "" : ": " + why)
        : w == dispatch::WaitResult::Unknown
            ? "the engine does not know " + job + " and the branch is not on the remote " + dispatch_url_
            : "waiting for " + job + ": wait " + r.describe();
    dispatch_fail(i, error,
                  "read the job's log (its url, or `yolo logs " + e.id + "`); `yolo execute` submits attempt " +
                      std::to_string(attempt + 1),
                  &r);
    return;
  }
  dispatch_fetch(i, wave, std::move(r));
}

// The return path: a plan whose job ended joins the queue; one `git fetch` child (off the
// event loop) brings every branch of this run that is on the remote, and the plans queued
// meanwhile go with the next one: one fetch per batch of ended jobs, not one per plan.
void Run::dispatch_fetch(size_t i, long long wave, SpawnResult r) {
  hold(i, nullptr);  // still running for the scheduler until its branch is checked out
  fetch_queue_.push_back({i, wave, std::move(r)});
  if (!fetch_proc_) dispatch_fetch_batch();
}

void Run::dispatch_fetch_batch() {
  if (fetch_queue_.empty()) return;
  fetch_batch_ = std::move(fetch_queue_);
  fetch_queue_.clear();
  const std::string prefix = "yolo/" + trees_->run_tag() + "/";
  SpawnSpec spec;
  spec.argv = {"git",         "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", dispatch_url_,
               "+refs/heads/" + prefix + "*:refs/yolo-dispatch/" + prefix + "*"};
  spec.cwd = root_;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = 600000;
  spec.output_cap = 64 * 1024;
  fetch_proc_ = Process::start(&loop_, std::move(spec), [this](SpawnResult fr) {
    if (!fr.ok()) return dispatch_fetched_batch(std::move(fr), "");
    // The fetched heads, read once for the batch by a second child (not on the loop either).
    SpawnSpec h = git_child_spec(root_,
                                 {"for-each-ref", "--format=%(objectname) %(refname)",
                                  "refs/yolo-dispatch/yolo/" + trees_->run_tag() + "/"},
                                 30000);
    h.unset_env = adapter_unset_env();
    auto fetched = std::make_shared<SpawnResult>(std::move(fr));
    fetch_proc_ = Process::start(&loop_, std::move(h), [this, fetched](SpawnResult hr) {
      dispatch_fetched_batch(std::move(*fetched), hr.ok() ? std::move(hr.out) : std::string());
    });
  });
}

void Run::dispatch_fetched_batch(SpawnResult fr, std::string heads_out) {
  auto batch = std::move(fetch_batch_);
  fetch_batch_.clear();
  auto held = std::move(after_fetch_);  // the fetch has ended: the slots' resets may run now
  after_fetch_.clear();
  for (auto& reset : held) reset();
  std::map<std::string, std::string> heads;
  for (const auto& l : text::lines(heads_out)) {
    auto sp = l.find(' ');
    if (sp != std::string_view::npos) heads[std::string(l.substr(sp + 1))] = std::string(l.substr(0, sp));
  }
  for (auto& item : batch) {
    size_t i = item.plan;
    release(i);
    if (interrupted_) {
      dispatch_interrupted(i);
      continue;
    }
    const auto& e = entries_[i];
    json rec = run_of(i).dispatch_rec;
    std::string handle = str(rec, "handle"), branch = dispatch_branch(i);
    std::string job = "its job " + handle + " (branch " + branch + ")";
    auto hit = heads.find("refs/yolo-dispatch/" + branch);
    if (!fr.ok() || hit == heads.end()) {
      dispatch_record(i, dispatch::record_ended(rec, "failed", now_iso8601()), false);
      std::string error = fr.ok() ? job + " ended but pushed nothing: the branch is not on the remote " + dispatch_url_
                                  : "git fetch of " + job + " from " + dispatch_url_ + " failed: " +
                                        first_line(fr.err.empty() ? fr.describe() : fr.err);
      dispatch_fail(i, error,
                    "the job must commit the plan's work and push its branch (docs/dispatch.md, The job); read its "
                    "log (`yolo logs " +
                        e.id + "`)",
                    &item.r);
      continue;
    }
    dispatch_record(i, dispatch::record_ended(rec, "done", now_iso8601()), false);
    dispatch_fetched(i, item.wave, hit->second, std::move(item.r));
  }
  fetch_proc_.reset();  // ended: its callback is this one, which is done with it
  if (!fetch_queue_.empty()) dispatch_fetch_batch();
}

void Run::dispatch_delete_merged(const std::vector<std::string>& branches) {
  std::vector<std::string> argv = {"push", "--quiet", "--delete", dispatch_url_};
  const std::string prefix = "yolo/" + trees_->run_tag() + "/";
  for (const auto& b : branches)
    if (b.rfind(prefix, 0) == 0 && b != prefix + "base") argv.push_back("refs/heads/" + b);
  if (argv.size() == 4) return;
  // Best effort: a branch left on the remote is only clutter (the merge is in the checkout).
  // A child of the loop, not waited for here: the loop (and so the run) ends after it does.
  SpawnSpec spec = git_child_spec(root_, argv, 120000);
  spec.unset_env = adapter_unset_env();
  delete_procs_.push_back(Process::start(&loop_, std::move(spec), [this](SpawnResult g) {
    if (!g.ok())
      note("could not delete the merged branches from the remote " + dispatch_url_ + ": " +
               first_line(g.err.empty() ? g.describe() : g.err),
           true);
  }));
}

void Run::dispatch_premerge() {
  if (premerge_proc_ || premerge_stuck_ || interrupted_ || stopping_ || !trees_) return;
  if (premerge_tip_.empty()) {
    premerge_tip_ = trees_->head();
    if (premerge_tip_.empty()) return;
  }
  // The next step is the first gated plan in plan order not in the chain yet; a plan still
  // running before it may join the merge ahead of it, so the chain waits for it.
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (premerge_done_.count(i)) continue;
    const auto& p = core_.plan(i);
    if (p.status == PlanStatus::Running) return;
    if (p.merge != MergeState::Pending || p.status != PlanStatus::Complete || p.head.empty()) continue;
    const json& r = run_of(i).worktree_record;
    if (!r.is_object() || !is_commit_hash(str(r, "head"))) return;
    dispatch_premerge_step(i, premerge_tip_, str(r, "head"), merge_message(entries_[i], r));
    return;
  }
}

void Run::dispatch_premerge_step(size_t i, const std::string& onto, const std::string& commit,
                                 const std::string& message) {
  const int gen = premerge_gen_;
  SpawnSpec spec = trees_->merge_tree_spec(onto, commit);
  spec.unset_env = adapter_unset_env();
  premerge_proc_ = Process::start(&loop_, std::move(spec), [this, i, gen, onto, commit, message](SpawnResult t) {
    auto stuck = [&] {
      premerge_stuck_ = gen == premerge_gen_;  // an answer from before a merge says nothing now
      premerge_proc_.reset();                  // ended: its callback is this one, which is done with it
    };
    std::string tree = first_line(t.out);
    if (gen != premerge_gen_ || !t.ok() || !is_commit_hash(tree)) return stuck();  // a conflict: merge_all's
    SpawnSpec c = trees_->commit_tree_spec(tree, onto, commit, message);
    c.unset_env = adapter_unset_env();
    premerge_proc_ = Process::start(&loop_, std::move(c), [this, i, gen, onto, commit, message](SpawnResult cr) {
      std::string id = first_line(cr.out);
      if (gen != premerge_gen_ || !cr.ok() || !is_commit_hash(id)) {
        premerge_stuck_ = gen == premerge_gen_;
        premerge_proc_.reset();
        return;
      }
      trees_->remember_merge(onto, commit, message, id);
      premerge_tip_ = id;
      premerge_done_.insert(i);
      premerge_proc_.reset();
      dispatch_premerge();
    });
  });
}

void Run::dispatch_premerge_reset() {
  ++premerge_gen_;
  premerge_tip_.clear();
  premerge_done_.clear();
  premerge_stuck_ = false;
  if (trees_) trees_->forget_merges();
}

void Run::dispatch_fetched(size_t i, long long wave, const std::string& head, SpawnResult r) {
  const int slot = core_.free_slot();
  core_.take_slot(i, slot);  // the slot is this plan's while its checkout runs
  auto c = std::make_shared<DispatchCheckout>();
  c->plan = i;
  c->wave = wave;
  c->head = head;
  c->slot = slot;
  c->r = std::move(r);
  std::string err;
  c->steps = trees_->switch_steps(entries_[i].id, head, slot, dispatch_branch(i), c->w, err);
  if (c->steps.empty()) {
    dispatch_fail(i, "could not check out the fetched branch " + dispatch_branch(i) + " (" + head.substr(0, 12) + "): " + err,
                  "check the project's git repository", &c->r);
    return;
  }
  dispatch_checkout_step(std::move(c));
}

// One step of a fetched branch's checkout; a failed one leaves the slot to create(), which
// removes and adds it again (a lock a killed git left, a slot broken by hand).
void Run::dispatch_checkout_step(std::shared_ptr<DispatchCheckout> c) {
  const size_t i = c->plan;
  if (c->next == c->steps.size()) return dispatch_checked_out(i, c->wave, c->head, c->slot, c->w, std::move(c->r));
  SpawnSpec spec = std::move(c->steps[c->next++]);
  spec.unset_env = adapter_unset_env();
  std::string what;
  for (const auto& a : spec.argv) what += (what.empty() ? "" : " ") + a;
  hold(i, Process::start(&loop_, std::move(spec), [this, c, i, what](SpawnResult g) {
    release(i);
    if (interrupted_) return dispatch_interrupted(i);
    if (g.ok()) return dispatch_checkout_step(c);
    const std::string why = g.describe() + ": " + text::tail_lines(g.err, 5);
    emit("plan_checkout_retried", {{"plan", entries_[i].id}, {"step", what}, {"error", why}}, Sym::Warn,
         "Plan " + entries_[i].id + ": `" + what + "` " + why + "; checking the slot out again");
    trees_->forget(c->w.path);
    auto reset = [this, c, i] {
      release(i);
      if (interrupted_) return dispatch_interrupted(i);
      std::string err;
      auto w = trees_->create(entries_[i].id, c->head, c->slot, err, dispatch_branch(i));
      if (!w) {
        dispatch_fail(i,
                      "could not check out the fetched branch " + dispatch_branch(i) + " (" + c->head.substr(0, 12) +
                          "): " + err,
                      "check the project's git repository", &c->r);
        return;
      }
      dispatch_checked_out(i, c->wave, c->head, c->slot, std::move(w), std::move(c->r));
    };
    if (!fetch_proc_) return reset();
    hold(i, nullptr);  // still running for the scheduler until its reset
    after_fetch_.push_back(std::move(reset));
  }));
}

void Run::dispatch_checked_out(size_t i, long long wave, const std::string& head, int slot,
                               std::optional<PlanWorktree> w, SpawnResult r) {
  const auto& e = entries_[i];
  std::string err;
  // The scope fence diffs the job's commits against the base the job started from (recorded at
  // submit: a re-attached job's wave may have moved since, when a stopped run merged some plans).
  std::string job_base = str(run_of(i).dispatch_rec, "base");
  w->base = is_commit_hash(job_base) ? job_base : wave_base_[wave];
  if (!adopt_worktree(i, *w, slot, err)) {
    dispatch_fail(i, err, "check the project's git repository", &r);
    return;
  }
  emit("plan_fetched", {{"plan", e.id}, {"branch", dispatch_branch(i)}, {"commit", head}}, Sym::Diamond,
       "Plan " + e.id + ": branch " + dispatch_branch(i) + " fetched (" + head.substr(0, 12) + "), gating it here");
  r.outcome = SpawnResult::Outcome::Exited;
  r.exit_code = 0;
  r.elapsed_ms = static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e6;
  run_checks(i, std::move(r));  // then conclude(): SUMMARY gate, scope fence, checks; merged in plan order
}

void Run::dispatch_fail(size_t i, const std::string& error, const std::string& fix, const SpawnResult* r,
                        bool reschedule) {
  const auto& e = entries_[i];
  Finding f = make_finding(Severity::High, "dispatch", error, fix);
  const json& rec = run_of(i).dispatch_rec;
  if (!rec.is_null()) {
    if (!str(rec, "handle").empty()) f.extra["handle"] = str(rec, "handle");
    f.extra["branch"] = dispatch_branch(i);
  }
  json findings = json::array({f.to_json()});
  core_.concluded(i, {PlanStatus::Failed, error, findings});
  PlanUpdate u{execution::PlanUpdate{PlanStatus::Failed, std::nullopt, json(now_iso8601()), error, findings}};
  if (!rec.is_null()) u.set = {{"dispatch", rec}};
  queue_plan(i, std::move(u));
  double ms = run_of(i).started_at ? static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e6 : 0;
  log("plan_end", e.plan,
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
    dispatch_start_failed_ = true;
    return;
  }
  schedule();
}

void Run::dispatch_interrupted(size_t i) {
  const auto& e = entries_[i];
  json rec = run_of(i).dispatch_rec;
  if (rec.is_object() && str(rec, "state") == "submitted" && !str(rec, "handle").empty()) {
    std::string why;
    bool ok = dispatch_cancel(i, why);
    // A job that could not be cancelled stays `submitted`: the next execute waits on it.
    if (ok) rec = dispatch::record_ended(rec, "cancelled", now_iso8601());
    emit("plan_cancelled", {{"plan", e.id}, {"handle", str(rec, "handle")}, {"ok", ok}}, ok ? Sym::Warn : Sym::Fail,
         "Plan " + e.id + ": job " + str(rec, "handle") + (ok ? " cancelled" : " could not be cancelled: " + why));
  }
  core_.concluded(i, {PlanStatus::Pending, "interrupted", json::array()});
  PlanUpdate u{execution::PlanUpdate{PlanStatus::Pending, std::nullopt, nullptr, "interrupted", nullptr}};
  if (rec.is_object()) {
    run_of(i).dispatch_rec = rec;
    u.set = {{"dispatch", rec}};
  }
  queue_plan(i, std::move(u));
  emit("plan_end", {{"plan", e.id}, {"status", to_string(PlanStatus::Pending)}, {"wave", e.wave}}, Sym::Warn,
       "Plan " + e.id + " stopped (interrupted)");
  schedule();
}

}  // namespace yolo::runner::phase
