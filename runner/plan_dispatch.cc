// `yolo execute` with a `dispatch` block (issue 18, the yolo side): each plan is a job of a
// cluster engine the organisation already runs; yolo stays the scheduler and the gatekeeper.
//
//   submit  argv template; prints {"handle": "...", "url": "..."} (its last JSON line)
//   wait    argv template with {handle}; exit 0: the job is done, 1: it failed
//   cancel  argv template with {handle}
// Placeholders: {plan_id} {correlation_id} {attempt} {base} {branch} {remote} {plan_path}
// {summary_path} {phase_dir} {wave} {handle}. Jobs are named by the adapter from plan id,
// correlation id and attempt, so an engine that dedupes by name never starts a second one.
//
// Transport is git: yolo pushes the plan's branch at the wave's base to the remote, the job
// clones the remote, works on that branch and pushes it; yolo fetches it into the plan's
// worktree, and the branch goes through the checks, the SUMMARY gate and the scope fence,
// then the ordered merge, exactly as a local plan's. The job never needs the approval key
// or push rights to the run's branch.
//
// The plan's record in the state: dispatch = {handle, url, attempt, base, branch, remote,
// state: submitted|done|failed|cancelled, submitted_at}. It is written before yolo waits, so
// an execute that was stopped or killed re-attaches (waits on the same handle) instead of
// submitting again; Ctrl-C cancels what this execute submitted.
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {
namespace {

// The handle from the submit command's output: the last line that is a JSON object with a
// "handle" (a string or a number).
bool parse_handle(const std::string& out, std::string& handle, std::string& url) {
  auto lines = text::lines(out);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string l(text::trim(*it));
    if (l.empty() || l.front() != '{') continue;
    json j = json::parse(l, nullptr, false);
    if (!j.is_object() || !j.contains("handle")) continue;
    const json& h = j["handle"];
    handle = h.is_string() ? h.get<std::string>() : h.is_number() ? h.dump() : std::string();
    url = str(j, "url");
    return !handle.empty();
  }
  return false;
}

}  // namespace

bool Run::start_dispatch(size_t i, long long wave, const json& prior, std::string& err) {
  const auto& e = entries_[i];
  PlanWorktree& w = worktree_of_[i];
  const DispatchSpec& ds = cfg_.dispatch;
  json d =
      prior.is_object() && prior.contains("dispatch") && prior["dispatch"].is_object() ? prior["dispatch"] : json();
  GitRun url = run_git(root_, {"remote", "get-url", ds.remote});
  std::string remote = url.ok() ? std::string(text::trim(url.out)) : ds.remote;
  // A local remote written relative to the project ("../remote.git") means the same folder
  // to the job, to the worktree's fetch and to the adapter: made absolute.
  size_t colon = remote.find(':'), slash = remote.find('/');
  bool local = remote.find("://") == std::string::npos && (colon == std::string::npos || slash < colon);
  if (local && stdfs::path(remote).is_relative()) {
    std::error_code ec;
    stdfs::path abs = stdfs::weakly_canonical(root_ / remote, ec);
    if (!ec) remote = abs.string();
  }
  bool reattach = d.is_object() && str(d, "state") == "submitted" && !str(d, "handle").empty() &&
                  str(d, "branch") == w.branch && is_commit_hash(str(d, "base"));
  if (reattach) {
    // The job a stopped execute submitted still owns the branch: its base is the plan's base.
    w.base = str(d, "base");
    wt_record_[i]["base"] = w.base;
  } else {
    long long attempt = d.is_object() && d.contains("attempt") && d["attempt"].is_number_integer()
                            ? d["attempt"].get<long long>() + 1
                            : 1;
    // The job's starting point: the plan's branch at the wave's base, on the remote.
    GitRun push = run_git(root_, {"push", "--quiet", "--force", ds.remote, w.base + ":refs/heads/" + w.branch});
    if (!push.ok()) {
      err = "could not push " + w.branch + " to the remote '" + ds.remote + "': " + push.error;
      return false;
    }
    auto vars = plan_vars(i, wave);
    vars["attempt"] = std::to_string(attempt);
    vars["base"] = w.base;
    vars["remote"] = remote;
    SpawnSpec spec;
    spec.argv = expand_argv(ds.submit.argv, vars);
    spec.cwd = root_;
    spec.env = plan_env(i, wave);
    spec.timeout_ms = cfg_.timeout_for(ds.submit);
    SpawnResult r = run_process(spec);
    write_agent_log(root_, phase_.rel, e.id, "submit", static_cast<int>(attempt), spec.argv, r);
    std::string handle, link;
    if (!r.ok() || !parse_handle(r.out, handle, link)) {
      err = "dispatch submit " + (r.ok() ? std::string("printed no {\"handle\": ...} line") : r.describe());
      return false;
    }
    d = {{"handle", handle},
         {"attempt", attempt},
         {"base", w.base},
         {"branch", w.branch},
         {"remote", remote},
         {"state", "submitted"},
         {"submitted_at", now_iso8601()}};
    if (!link.empty()) d["url"] = link;
    log("plan_dispatched", e.plan, {{"plan_id", e.id}, {"handle", handle}, {"attempt", attempt}});
  }
  dispatch_of_[i] = d;
  // On disk before yolo waits: a yolo stopped from here on re-attaches, never submits twice.
  PlanUpdate u{"running", std::nullopt, nullptr, "", nullptr};
  u.set = {{"dispatch", d}, {"worktree", wt_record_[i]}};
  queue_plan(i, std::move(u));
  flush_plans();
  emit("plan_dispatched",
       {{"plan", e.id},
        {"handle", str(d, "handle")},
        {"attempt", d["attempt"]},
        {"reattached", reattach},
        {"branch", w.branch},
        {"url", str(d, "url")}},
       Sym::Diamond,
       "Plan " + e.id + (reattach ? " re-attached to job " : " submitted as job ") + str(d, "handle") + " (attempt " +
           d["attempt"].dump() + ", branch " + w.branch + ")");
  auto vars = plan_vars(i, wave);
  vars["handle"] = str(d, "handle");
  vars["attempt"] = d["attempt"].dump();
  vars["base"] = w.base;
  vars["remote"] = remote;
  SpawnSpec spec;
  spec.argv = expand_argv(cfg_.dispatch.wait.argv, vars);
  spec.cwd = root_;
  spec.env = plan_env(i, wave);
  spec.timeout_ms = cfg_.dispatch.wait.timeout_ms > 0 ? cfg_.dispatch.wait.timeout_ms : 0;  // the job's own bound
  started_at_[i] = uv_hrtime();
  argv_[i] = spec.argv;
  running_[i] =
      Process::start(&loop_, std::move(spec), [this, i](SpawnResult r) { on_dispatch_done(i, std::move(r)); });
  log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"handle", str(d, "handle")}});
  return true;
}

void Run::on_dispatch_done(size_t i, SpawnResult r) {
  if (auto it = running_.find(i); it != running_.end()) running_.erase(it);
  const auto& e = entries_[i];
  write_agent_log(root_, phase_.rel, e.id, "wait", 0, argv_[i], r);
  json d = dispatch_of_[i];
  dispatch_of_.erase(i);
  auto record = [&](const std::string& state) {
    d["state"] = state;
    PlanUpdate u{"running", std::nullopt, nullptr, "", nullptr};
    u.set = {{"dispatch", d}};
    queue_plan(i, std::move(u));
  };
  if (interrupted_) {  // cancel_dispatched() cancelled the job and recorded it
    conclude(i, r);
    return;
  }
  if (!r.ok()) {
    record("failed");
    dispatch_error_[i] = "the job " + str(d, "handle") + " failed (wait " + r.describe() + ")";
    conclude(i, r);
    return;
  }
  // The job's branch, fetched into the plan's worktree.
  const PlanWorktree& w = worktree_of_[i];
  GitRun f = run_git(w.path, {"fetch", "--quiet", str(d, "remote"), "refs/heads/" + w.branch});
  GitRun tip = f.ok() ? run_git(w.path, {"rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"}) : GitRun{};
  std::string t = tip.ok() ? std::string(text::trim(tip.out)) : std::string();
  if (t.empty()) {
    record("failed");
    dispatch_error_[i] = "the job " + str(d, "handle") + " is done but its branch " + w.branch +
                         " could not be fetched: " + (f.ok() ? tip.error : f.error);
  } else if (t == w.base) {
    record("failed");
    dispatch_error_[i] = "the job " + str(d, "handle") + " pushed nothing on " + w.branch + " (still at its base)";
  } else if (GitRun reset = run_git(w.path, {"reset", "--quiet", "--hard", t}); !reset.ok()) {
    record("failed");
    dispatch_error_[i] = "could not check out the job's branch in " + w.path.string() + ": " + reset.error;
  } else {
    record("done");
    emit("plan_fetched", {{"plan", e.id}, {"branch", w.branch}, {"commit", t}}, Sym::Diamond,
         "Plan " + e.id + ": job done, branch " + w.branch + " fetched at " + t.substr(0, 12));
    run_checks(i, std::move(r));
    return;
  }
  conclude(i, r);
}

// Ctrl-C: the jobs this execute waits for are cancelled on the engine too.
void Run::cancel_dispatched() {
  for (auto& [i, d] : dispatch_of_) {
    if (!cfg_.dispatch.cancel.argv.empty()) {
      auto vars = plan_vars(i, entries_[i].wave);
      vars["handle"] = str(d, "handle");
      SpawnSpec spec;
      spec.argv = expand_argv(cfg_.dispatch.cancel.argv, vars);
      spec.cwd = root_;
      spec.env = plan_env(i, entries_[i].wave);
      spec.timeout_ms = cfg_.timeout_for(cfg_.dispatch.cancel);
      SpawnResult r = run_process(spec);
      note("cancel " + str(d, "handle") + ": " + r.describe());
    }
    d["state"] = "cancelled";
    PlanUpdate u{"running", std::nullopt, nullptr, "", nullptr};
    u.set = {{"dispatch", d}};
    queue_plan(i, std::move(u));
  }
}

}  // namespace yolo::runner::phase
