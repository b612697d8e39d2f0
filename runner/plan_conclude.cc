// `yolo execute`: one plan once its executor ended: the gates it asked for from its sandbox,
// its own checks one after another on the loop, then its outcome (the SUMMARY gate, the scope
// fence and the checks, decided by protocol/run/execute_rules.h) reported to the run core
// (runner/phase_run_internal.h; its start: plan_exec.cc).
#include "protocol/run/sandbox_policy.h"
#include "runner/phase_run_internal.h"
#include "runner/plan_gate.h"
#include "runner/slot_aside.h"
#include "runner/slot_objects.h"
#include "runner/sandbox.h"

namespace yolo::runner::phase {

void Run::on_done(size_t i, SpawnResult r) {
  // Drop the Process now, inside its own done callback: its handles are still closing, so
  // it detaches cleanly (destroying it after the loop has closed them would touch freed memory).
  release(i);
  core_.executor_exited(i);
  run_of(i).tool.clear();
  open_requested_gates(i);
  const PlanEntry& e = entries_[i];
  // An executor that succeeded and wrote nothing leaves no log: it would hold only its argv
  // and outcome, which the state and the event log already have, and creating a file per
  // plan was a large share of execute's own time on a large phase.
  const bool silent_success = r.ok() && r.out_total == 0 && r.err_total == 0;
  std::string log_file = silent_success
                             ? std::string()
                             : write_agent_log(world_, root_, phase_.rel, e.id, "executor", 0, run_of(i).argv, r);
  if (!log_file.empty()) note("output: " + log_file + "  (yolo logs " + e.id + ")", true);
  record_usage(i, "executor", r.out);
  // Its commits, hashed again into the repository, before its checks and its gate read them.
  // Bytes that are no object fail the plan; its slot and branch go (they name what is gone).
  bool objects_ok = true;
  if (const PlanWorktree* w = worktree_of(i)) {
    std::string err;
    if (!slot_objects::take_in(root_, w->path, err)) {
      run_of(i).objects_error = err;
      worktrees_.drop(*w);
      objects_ok = false;
    }
  }
  if (!interrupted_ && r.ok() && objects_ok) {
    run_checks(i, std::move(r));
    return;
  }
  conclude(i, r);
}

void Run::open_requested_gates(size_t i) {
  const stdfs::path dir = run_of(i).gate_requests;
  if (dir.empty()) return;
  std::error_code ec;
  std::vector<stdfs::path> files;
  for (const auto& f : stdfs::directory_iterator(dir, ec))
    if (f.path().extension() == ".json") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto text = world_.files().read(f, 64 * 1024, /*text=*/true);
    auto parsed = text.ok() ? parse_json_bounded(text.content) : JsonParse{};
    const json& j = parsed.doc;
    auto type = j.is_object() ? gates::parse_gate_type(j.value("gate_type", "")) : std::nullopt;
    if (!type || !j.contains("plan_path") || !j["plan_path"].is_string()) {
      note("a gate request of plan " + entries_[i].id + " is not one (" + f.filename().string() + "): ignored");
      continue;
    }
    gates::RequestInput in;
    in.type = *type;
    in.plan_path = j["plan_path"].get<std::string>();
    in.reason = j.value("reason", "");
    if (j.contains("wave") && j["wave"].is_number_integer()) in.wave = j["wave"].get<int>();
    auto r = gates::request_gate(world_, root_, cfg_, in, &approver_);
    if (!r.ok()) note("the gate plan " + entries_[i].id + " asked for could not be opened: " + r.error);
  }
  stdfs::remove_all(dir, ec);
  run_of(i).gate_requests.clear();
}

// must_haves.checks of the plan (as the worktree holds it), one after another on the loop,
// in the plan's worktree (the checkout without isolation), argv only.
void Run::run_checks(size_t i, SpawnResult executor) {
  const auto& e = entries_[i];
  const PlanWorktree* w = worktree_of(i);
  stdfs::path dir = w ? w->path : root_;
  plan_checks::Parsed parsed;
  auto& known = run_of(i).checks_read;
  if (!w && known && world_.files().stamp(dir / e.path) == known->first) {
    parsed = std::move(known->second);  // the file is the one load_plans parsed
    known.reset();                      // once: a plan that runs again reads its file again
  } else {
    auto l = load_plan(world_, dir / e.path);
    if (l.plan) parsed = plan_checks::parse(*l.plan);
  }
  PlanRun& pr = run_of(i);
  pr.check_todo = parsed.checks;
  pr.check_errors = parsed.errors;
  pr.check_out.clear();
  pr.exec_result = std::move(executor);
  // The checks judge what would be merged: what the executor left beyond its commits waits
  // aside until they end (conclude puts it back, for the gate to list).
  if (w && !pr.check_todo.empty() && !interrupted_ && !stopping_) {
    set_aside(i, w->path, {summary_rel_for(world_, root_, e.path), e.path});
    return;
  }
  // No check to run and the plan's gates run here, in this process: its slot serves the
  // next plan at once (started before the gates, so that it runs while they do).
  if (parsed.checks.empty() && !isolated() && !dispatched() && !interrupted_ && !stopping_) {
    core_.gating(i);
    schedule();
  }
  next_check(i);
}

void Run::next_check(size_t i) {
  const auto& e = entries_[i];
  const auto& todo = run_of(i).check_todo;
  size_t k = run_of(i).check_out.size();
  if (interrupted_ || stopping_ || k >= todo.size()) {
    SpawnResult r = std::exchange(run_of(i).exec_result, SpawnResult{});
    conclude(i, r);
    return;
  }
  const plan_checks::Spec c = todo[k];
  const PlanWorktree* w = worktree_of(i);
  SpawnSpec spec;
  SandboxRequest sreq;  // a check reads the project (its slot) and writes only its temp folder
  sreq.role = sandbox::Role::Check;
  sreq.project_root = root_;
  ConfinementResult confined = confine(cfg_, sreq);
  spec.confinement = confined.confinement;
  if (!confined.ok()) {
    spec.argv = {"/bin/sh", "-c", "echo \"$0\" >&2; exit 126", confined.error};
  } else {
    spec.argv = expand_argv(c.argv, plan_vars(i, e.wave));
    // A check program the checkout holds runs as the checkout has it, not as the executor
    // left it in its slot (edited and uncommitted, or committed on its branch).
    if (w && !spec.argv.empty() && spec.argv[0].find('/') != std::string::npos &&
        stdfs::path(spec.argv[0]).is_relative()) {
      std::error_code ec;
      if (stdfs::exists(root_ / spec.argv[0], ec)) spec.argv[0] = (root_ / spec.argv[0]).string();
    }
  }
  spec.cwd = w ? w->path : root_;
  spec.env = plan_env(i, e.wave);
  spec.timeout_ms = c.timeout_ms > 0 ? c.timeout_ms : cfg_.timeout_for(cfg_.executor);
  spec.output_cap = 64 * 1024;
  emit("check_start", {{"plan", e.id}, {"check", c.name}, {"argv", spec.argv}}, Sym::Diamond,
       "Plan " + e.id + ": check " + c.name);
  std::vector<std::string> argv = spec.argv;
  hold(i, Process::start(&loop_, std::move(spec), [this, i, c, argv](SpawnResult cr) {
    release(i);
    plan_checks::Outcome o;
    o.name = c.name;
    o.argv = argv;
    o.ran = cr.outcome == SpawnResult::Outcome::Exited;
    o.exit_code = cr.exit_code;
    o.describe = cr.describe();
    o.duration_ms = static_cast<long long>(cr.elapsed_ms);
    o.output_tail = text::tail_lines(cr.out + (cr.err.empty() ? "" : "\n" + cr.err), 20);
    const auto& e2 = entries_[i];
    write_agent_log(world_, root_, phase_.rel, e2.id, "check", static_cast<int>(run_of(i).check_out.size()) + 1, argv,
                    cr);
    json d = o.to_json();
    d["plan"] = e2.id;
    emit("check_end", d, o.passed() ? Sym::Ok : Sym::Fail,
         "Plan " + e2.id + ": check " + o.name + (o.passed() ? " passed" : " failed: " + o.describe) + " (" +
             fmt_secs(cr.elapsed_ms) + ")");
    if (!o.passed()) {
      const std::string tail = text::tail_lines(o.output_tail, 5);  // lines() views it: it must outlive the loop
      for (const auto& l : text::lines(tail))
        if (!text::trim(l).empty()) note(std::string(l), true);
    }
    run_of(i).check_out.push_back(std::move(o));
    if (interrupted_) {
      SpawnResult r = std::exchange(run_of(i).exec_result, SpawnResult{});
      conclude(i, r);
      return;
    }
    next_check(i);
  }));
}

void Run::conclude(size_t i, const SpawnResult& r) {
  const PlanEntry& e = entries_[i];
  std::string sp = summary_rel_for(world_, root_, e.path);
  json set = json::object();
  if (auto& a = run_of(i).aside) {
    const PlanWorktree* w = worktree_of(i);
    slot_aside::Aside taken = std::move(*a);
    a.reset();
    if (taken.active() && w) return put_back(i, w->path, std::move(taken), r);  // then here again
  }
  PlanRun& pr = run_of(i);
  // A plan that did well in its worktree: its gates run on a worker thread (plan_gate.cc),
  // then here again with their answer.
  std::unique_ptr<GateOut> answer = std::move(pr.gated);
  if (!answer && !interrupted_ && pr.dispatch_error.empty() && r.ok() && isolated() && worktree_of(i))
    return worktrees_.gate(i, r);
  // The facts: how the executor (or its job) ended, and once it did well, what the checks and
  // the SUMMARY gate found; protocol/run/execute_rules.h decides the plan from them.
  execution::PlanFacts facts;
  facts.summary_path = sp;
  facts.interrupted = interrupted_ && !answer;  // gates that ended after a Ctrl-C count
  facts.dispatch_error = pr.dispatch_error;
  facts.executor_ok = r.ok();
  facts.executor_outcome = r.describe();
  facts.executor_err = r.err;
  facts.executor_out = r.out;
  facts.plan_id = e.id;
  if (pr.refused) {
    facts.refused = pr.refused->list();
    pr.refused.reset();
  }
  if (!facts.interrupted && facts.dispatch_error.empty() && facts.executor_ok) {
    // The checks yolo ran: the evidence. A failing one fails the plan whatever the SUMMARY says.
    json checks = json::array();
    for (const auto& o : pr.check_out) checks.push_back(o.to_json());
    facts.check_findings = plan_checks::findings(pr.check_out, pr.check_errors);
    if (!pr.check_out.empty() || !pr.check_errors.empty()) set["checks"] = checks;
    if (answer) {
      facts.summary = answer->state;
      facts.summary_findings = std::move(answer->findings);
      for (auto it = answer->set.begin(); it != answer->set.end(); ++it) set[it.key()] = it.value();
    } else {
      facts.summary = check_summary(e, facts.summary_findings, &sp);
    }
  }
  const execution::PlanOutcome outcome = execution::plan_outcome(facts);
  const PlanStatus status = outcome.end.status;
  const std::string& error = outcome.end.error;
  const json& findings = outcome.end.findings;
  const bool summary_failed = outcome.summary_failed;
  if (!facts.refused.empty() && status != PlanStatus::Pending)
    log("sandbox_refused", e.plan, {{"plan_id", e.id}, {"refused", facts.refused}});
  pr.dispatch_error.clear();
  pr.check_out.clear();
  pr.check_todo.clear();
  pr.check_errors.clear();
  std::string now = world_.now();
  {
    // Its gates ran: the slot serves the next plan (the branch keeps the work); a plan that
    // passed in its worktree waits for its merge, in plan order.
    const json& wt = pr.worktree_record;
    const bool gated = status == PlanStatus::Complete && wt.is_object() && set.contains("worktree");
    core_.concluded(i, outcome.end, gated ? execution::merge_state(wt) : MergeState::None,
                    gated ? str(wt, "head") : std::string());
  }
  execution::PlanUpdate u = execution::ended(outcome.end, now);
  u.set = set;
  queue_plan(i, std::move(u));
  long long ms = static_cast<long long>(r.elapsed_ms);
  if (summary_failed) {
    int high = 0;
    for (const auto& f : findings) high += str(f, "severity") == "high";
    log("summary_claims_failed", e.plan,
        {{"plan_id", e.id}, {"summary_path", sp}, {"findings", findings.size()}, {"high", high}});
  }
  log("plan_end", e.plan, {{"plan_id", e.id}, {"status", to_string(status)}, {"elapsed_ms", ms}, {"outcome", r.describe()}});
  json data = {{"plan", e.id}, {"status", to_string(status)}, {"wave", e.wave}, {"elapsed_ms", ms}};
  if (!error.empty()) data["error"] = error;
  if (!findings.empty()) data["findings"] = findings;
  for (const char* k : {"worktree", "scope", "checks"})
    if (set.contains(k)) data[k] = set[k];
  if (status == PlanStatus::Complete) {
    emit("plan_end", data, Sym::Ok, "Plan " + e.id + " complete (" + fmt_secs(r.elapsed_ms) + ")");
    if (set.contains("scope"))
      for (const auto& f : set["scope"].value("findings", json::array()))
        note("[" + str(f, "severity") + "] " + str(f, "check") + ": " + str(f, "issue"));
  } else if (status == PlanStatus::Pending) {
    emit("plan_end", data, Sym::Warn, "Plan " + e.id + " stopped (interrupted)");
  } else {
    data["stderr_tail"] = text::tail_lines(r.err, 10);
    emit("plan_end", data, Sym::Fail, "Plan " + e.id + " failed: " + error);
    size_t shown = 0;
    for (const auto& f : findings) {
      if (shown++ == 5) {
        note("... " + std::to_string(findings.size() - 5) + " more (yolo status --json)");
        break;
      }
      note("[" + str(f, "severity") + "] " + str(f, "check") + ": " + str(f, "issue"));
    }
    if (!r.ok()) {
      std::string tail = text::tail_lines(r.err, 5);
      for (const auto& l : text::lines(tail))
        if (!text::trim(l).empty()) note(std::string(l), true);
      note("Next: " + agent_next_step(r.outcome != SpawnResult::Outcome::SpawnFailed, e.id));
    }
  }
  if (dispatched()) dispatch_premerge();
  // Worktree isolation: once nothing runs, the plans that passed are merged in plan order
  // (the core's Merge), then the wave's end and what starts next.
  schedule();
}

namespace {

// One move of a slot's leftovers, on a worker thread of the loop.
struct AsideJob {
  uv_work_t req{};
  Run* run = nullptr;
  size_t plan = 0;
  stdfs::path slot;
  std::vector<std::string> keep;
  slot_aside::Aside aside;
  SpawnResult executor;  // put back: what conclude goes on with
  bool back = false, ok = false;
  std::string err;
};

void move_aside(uv_work_t* req) {
  auto* j = static_cast<AsideJob*>(req->data);
  try {
    j->ok = j->back ? slot_aside::put_back(j->slot, j->aside, j->err) : slot_aside::put_aside(j->slot, j->keep, j->aside, j->err);
  } catch (const std::exception& e) {  // never escapes the thread (that would end the process)
    j->ok = false;
    j->err = e.what();
  }
}

AsideJob* aside_job(Run* run, size_t plan, const stdfs::path& slot) {
  auto* j = new AsideJob;
  j->req.data = j;
  j->run = run;
  j->plan = plan;
  j->slot = slot;
  return j;
}

}  // namespace

void Run::set_aside(size_t i, const stdfs::path& slot, std::vector<std::string> keep) {
  AsideJob* j = aside_job(this, i, slot);
  j->keep = std::move(keep);
  run_of(i).aside_step = "putting aside what its executor left uncommitted";
  uv_queue_work(&loop_, &j->req, move_aside, [](uv_work_t* req, int) {
    std::unique_ptr<AsideJob> job(static_cast<AsideJob*>(req->data));
    Run& run = *job->run;
    PlanRun& pr = run.run_of(job->plan);
    pr.aside_step = nullptr;
    pr.aside = std::move(job->aside);  // what to put back, even after a failure half way
    if (!job->ok) {
      pr.check_errors.push_back("what the executor left beyond its commits could not be put aside for the checks, "
                                "so they did not run: " + job->err);
      pr.check_todo.clear();
    }
    run.next_check(job->plan);
  });
}

void Run::put_back(size_t i, const stdfs::path& slot, slot_aside::Aside a, SpawnResult r) {
  AsideJob* j = aside_job(this, i, slot);
  j->aside = std::move(a);
  j->executor = std::move(r);
  j->back = true;
  run_of(i).aside_step = "putting back what its executor left uncommitted";
  uv_queue_work(&loop_, &j->req, move_aside, [](uv_work_t* req, int) {
    std::unique_ptr<AsideJob> job(static_cast<AsideJob*>(req->data));
    Run& run = *job->run;
    run.run_of(job->plan).aside_step = nullptr;
    if (!job->ok)
      run.run_of(job->plan).check_errors.push_back(
          "what the executor left beyond its commits could not be put back after the checks: " + job->err);
    run.conclude(job->plan, job->executor);
  });
}

}  // namespace yolo::runner::phase
