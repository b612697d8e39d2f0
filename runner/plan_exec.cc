// `yolo execute`: one plan from start to its gates (runner/phase_run_internal.h).
#include "protocol/state/agent_usage.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/run/sandbox_policy.h"
#include "protocol/base/sha256.h"
#include "runner/phase_run_internal.h"
#include "runner/refusals.h"
#include "runner/sandbox.h"
#include "runner/world.h"

namespace yolo::runner::phase {

// The placeholders of the executor's argv and of the plan's checks.
std::map<std::string, std::string> Run::plan_vars(size_t i, long long wave, const std::string* sp) const {
  const auto& e = entries_[i];
  const PlanWorktree* w = worktree_of(i);
  return {{"plan_path", e.path},
          {"plan_id", e.id},
          {"wave", std::to_string(wave)},
          {"phase_dir", phase_.rel},
          {"summary_path", sp ? *sp : summary_rel_for(root_, e.path)},
          {"worktree", w ? w->path.string() : root_.string()},
          {"branch", w ? w->branch : std::string()},
          {"correlation_id", cid_}};
}

std::vector<std::pair<std::string, std::string>> Run::plan_env(size_t i, long long wave, const std::string* sp) const {
  const auto& e = entries_[i];
  const PlanWorktree* w = worktree_of(i);
  return {{"YOLO_CORRELATION_ID", cid_},
          {"YOLO_PLAN_ID", e.id},
          {"YOLO_PHASE_DIR", phase_.rel},
          {"YOLO_PLAN_PATH", e.path},
          {"YOLO_WAVE", std::to_string(wave)},
          {"YOLO_SUMMARY_PATH", sp ? *sp : summary_rel_for(root_, e.path)},
          {"YOLO_WORKTREE", w ? w->path.string() : root_.string()}};
}

std::string Run::plan_unchanged(size_t i, const json& ledger, std::string& bytes) const {
  const auto& e = entries_[i];
  auto read = fs::read_bytes(root_ / e.path);
  if (!read.ok()) return "its PLAN file cannot be read: " + read.error->message;
  bytes = std::move(read.content);
  std::string now = sha256_hex(bytes);
  const json* rec = ledger.is_object() ? review_ledger::find(ledger, e.id) : nullptr;
  if (rec) {
    if (!review::reviewed_as_is(rec, now))
      return "its PLAN file changed after it was reviewed (" + e.path + "); `yolo execute` again reviews it and opens "
             "its gate again";
    return "";
  }
  const PlanRun* pr = run_at(i);
  if (!pr || !pr->load_hash || !review::same_content(*pr->load_hash, now))
    return "its PLAN file changed after this run read it (" + e.path + "); `yolo execute` again reviews it";
  return "";
}

// Called by schedule() only, right after it read the state and decided these starts.
void Run::start_plans(const std::vector<size_t>& idx, long long wave) {
  std::string now = now_iso8601();
  // Each plan starts from the content that was reviewed and approved, checked just before its
  // start: a plan an earlier plan's executor (or anyone) rewrote does not run as rewritten.
  auto ledger = review_ledger::load(world(), root_, phase_.abs);
  std::map<size_t, std::string> plan_bytes;
  std::vector<size_t> changed;
  for (size_t i : idx) {
    if (std::string why = plan_unchanged(i, ledger.ok() ? ledger.doc : json(nullptr), plan_bytes[i]); !why.empty()) {
      core_.not_started(i, {PlanStatus::Failed, "not started: " + why, json::array()});
      queue_plan(i, execution::ended({PlanStatus::Failed, "not started: " + why, json::array()}, now));
      emit("plan_end", {{"plan", entries_[i].id}, {"status", to_string(PlanStatus::Failed)}, {"error", why}}, Sym::Fail,
           "Plan " + entries_[i].id + " not started: " + why);
      changed.push_back(i);
    }
  }
  if (!changed.empty()) {
    for (size_t i : idx)  // the batch is given up: its other plans wait for the next decision
      if (std::find(changed.begin(), changed.end(), i) == changed.end()) core_.put_back(i);
    flush_plans();
    schedule();  // the phase halts on the failed plan; nothing else of this wave starts
    return;
  }
  for (size_t i : idx) {  // running for the waves since the core decided their start
    execution::PlanUpdate u = execution::started(now);
    u.set = {{"scope", nullptr}, {"checks", nullptr}};
    queue_plan(i, std::move(u));
  }
  json spawned = json::object();  // plan id -> who runs it, for a later run to find (kill -9 of this one)
  bool failed_to_start = false, journal_failed = false;
  for (size_t i : idx) {
    const auto& e = entries_[i];
    if (dispatched()) {  // a job of the cluster engine: submitted, waited on, fetched (plan_dispatch.cc)
      start_dispatched(i, wave);
      continue;
    }
    if (isolated() && resume_finished(i)) {
      const PlanWorktree& w = *run_of(i).worktree;  // resume_finished adopted it
      emit("plan_resumed", {{"plan", e.id}, {"worktree", w.path.string()}, {"branch", w.branch}, {"base", w.base}},
           Sym::Ok,
           "Plan " + e.id + ": its executor had finished before the last execute stopped (its commits on " + w.branch +
               ", its SUMMARY in " + w.path.string() + "): gated now, not run again");
      log("plan_resumed", e.plan, {{"plan_id", e.id}, {"branch", w.branch}});
      core_.started(i);
      run_of(i).started_at = uv_hrtime();
      run_of(i).argv = {};
      resumed_.push_back(i);
      continue;
    }
    if (isolated()) {
      std::string err;
      if (!prepare_worktree(i, wave, err)) {
        core_.not_started(i, {PlanStatus::Failed, err, json::array()});
        queue_plan(i, execution::ended({PlanStatus::Failed, err, json::array()}, now_iso8601()));
        emit("plan_end", {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", err}}, Sym::Fail,
             "Plan " + e.id + " failed: " + err);
        failed_to_start = true;
        continue;
      }
      // The slot's copy of the plan is the reviewed content, whatever its branch holds.
      if (const PlanWorktree* w = worktree_of(i)) {
        auto slot_copy = fs::read_bytes(w->path / e.path);
        if (!slot_copy.ok() || slot_copy.content != plan_bytes[i])
          if (std::string werr = fs::write_atomic(w->path / e.path, plan_bytes[i]); !werr.empty())
            note("could not put the reviewed plan into its worktree: " + werr);
      }
    }
    // The executor's sandbox: its slot (or the checkout without .yolo-planning, and its own
    // phase folder), the git objects and its branch; never the state, the gates or the key.
    SandboxRequest sreq;
    sreq.role = sandbox::Role::Executor;
    sreq.project_root = root_;
    if (const PlanWorktree* w = worktree_of(i)) {
      sreq.worktree = w->path;
      sreq.branch = w->branch;
    } else {
      sreq.phase_dir = (root_ / e.path).parent_path();
      sreq.own_summary = root_ / summary_rel_for(root_, e.path);
      sreq.protected_programs = check_programs_;
    }
    // A folder of its own for the gates it asks for (yolo request-approval in the sandbox).
    {
      std::error_code ec;
      stdfs::path req_dir = private_temp_dir() / ("gate-requests-" + std::to_string(i));
      stdfs::create_directories(req_dir, ec);
      if (!ec) {
        run_of(i).gate_requests = req_dir;
        sreq.extra_write.push_back(req_dir.string());
      }
    }
    ConfinementResult confined = confine(cfg_, sreq);
    if (!confined.ok()) {
      core_.not_started(i, {PlanStatus::Failed, confined.error, json::array()});
      queue_plan(i, execution::ended({PlanStatus::Failed, confined.error, json::array()}, now_iso8601()));
      emit("plan_end", {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", confined.error}},
           Sym::Fail,
           "Plan " + e.id + " not started: " + confined.error);
      failed_to_start = true;
      continue;
    }
    run_of(i).sandbox = confined.confinement->record();
    if (confined.confinement->refusals) run_of(i).refused = confined.confinement->refusals;
    SpawnSpec spec;
    spec.confinement = confined.confinement;
    const std::string sp = summary_rel_for(root_, e.path);  // looked up once for the argv and the environment
    spec.argv = expand_argv(cfg_.executor.argv, plan_vars(i, wave, &sp));
    spec.cwd = isolated() && worktree_of(i) ? worktree_of(i)->path : root_;
    if (isolated() && !spec.argv.empty() && spec.argv[0].find('/') != std::string::npos &&
        stdfs::path(spec.argv[0]).is_relative()) {
      std::error_code ec;  // the executor the config names, from the project root (not the plan's branch)
      if (stdfs::exists(root_ / spec.argv[0], ec)) spec.argv[0] = (root_ / spec.argv[0]).string();
    }
    spec.env = plan_env(i, wave, &sp);
    if (const auto& g = run_of(i).gate_requests; !g.empty()) spec.env.emplace_back("YOLO_GATE_REQUESTS", g.string());
    spec.timeout_ms = cfg_.timeout_for(cfg_.executor);
    // The tool call the agent is making, from its CLI's event stream: on the live line, and
    // one event per call in the log.
    spec.on_line = [this, i](SpawnSpec::Stream s, std::string_view line) {
      if (s != SpawnSpec::Stream::Out) return;
      auto t = usage::tool_call(line);
      if (!t) return;
      run_of(i).tool = *t;
      log("agent_tool", entries_[i].plan, {{"plan_id", entries_[i].id}, {"agent", "executor"}, {"tool", *t}});
    };
    core_.started(i);
    run_of(i).started_at = uv_hrtime();
    run_of(i).argv = spec.argv;
    running_[i] = Process::start(&loop_, std::move(spec), [this, i](SpawnResult r) { on_done(i, std::move(r)); });
    int pid = running_[i]->pid();
    if (pid > 0) {
      spawned[e.id] = executor_record(pid, running_[i]->start_ticks());
      // Who runs it: in the journal at once (a later run ends it after a kill -9 of this one),
      // in the state with its `running`, in the next batched write.
      if (!journal_executor(e.id, spawned[e.id])) journal_failed = true;
      if (auto it = pending_.find(i); it != pending_.end()) {
        it->second.set["executor"] = spawned[e.id];
        it->second.set["sandbox"] = run_of(i).sandbox;  // kept once the plan ends (its executor record is not)
        it->second.set["sandbox_seal"] = sandbox::seal_plan_record(gates::project_id(world(), root_), cid_, e.id,
                                                                   run_of(i).sandbox, world().sealing_key());
      }
    }
    log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"pid", pid}});
    json data = {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"pid", pid}, {"running", running_.size()}};
    if (const PlanWorktree* w = worktree_of(i)) {
      data["worktree"] = w->path.string();
      data["branch"] = w->branch;
      data["base"] = w->base;
      if (!w->prepared.empty()) data["worktree_prepared"] = w->prepared;
    }
    emit("plan_start", data, Sym::Diamond,
         "Plan " + e.id + " started: " + e.title + "  (" + std::to_string(running_.size()) + " running)");
    if (const PlanWorktree* w = worktree_of(i))
      note("worktree " + w->path.string() + " on branch " + w->branch + " from " +
               w->base.substr(0, 12) +
               (w->prepared == "paths"   ? " (" + std::to_string(w->restored) + " path(s) put back)"
                : w->prepared == "reset" ? " (full reset)"
                : w->prepared.empty()    ? std::string()
                                                : " (new checkout)"),
           true);
  }
  if (!resumed_.empty())  // gated from the loop, as an executor that ends is (never inside schedule())
    uv_timer_start(
        &resume_timer_,
        [](uv_timer_t* t) {
          auto* self = static_cast<Run*>(t->data);
          std::vector<size_t> todo;
          todo.swap(self->resumed_);
          for (size_t k : todo) {
            SpawnResult r;
            r.outcome = SpawnResult::Outcome::Exited;
            r.exit_code = 0;
            self->on_done(k, std::move(r));
          }
        },
        0, 0);
  if (dispatched()) dispatch_submit_waves(wave);  // the wave-level form: the plans gathered above, as arrays
  if (dispatch_start_failed_) {  // a dispatched plan failed before its submit (plan_dispatch.cc)
    dispatch_start_failed_ = false;
    if (running_.empty()) {
      flush_plans();
      schedule();
    }
  }
  if (!spawned.empty()) {
    // Who runs each plan is in the journal; the plans' `running` and executors reach the
    // state in the next batched write (queue_plan armed it). Without the journal, they are
    // written now: a later execute (after a kill -9 of this one) must find the executors to
    // end them. A plan whose `running` was already written (flushed before its spawn) gets
    // its executor here.
    bool missing = false;
    for (auto& [id, r] : spawned.items()) {
      bool queued = false;
      for (size_t k : idx)
        if (entries_[k].id == id) queued = queued || pending_.count(k);
      missing = missing || !queued;
    }
    if (journal_failed || missing) flush_plans();
    if (missing) {
      auto rec = state::update(world(), root_, [&](json& doc, std::string&) {
        bool any = false;
        for (auto& [id, r] : spawned.items())
          if (json* p = execution::find_plan(doc, id);
              p && execution::plan_status(*p) == PlanStatus::Running && !p->contains("executor")) {
            (*p)["executor"] = r;
            any = true;
          }
        return any;
      });
      if (!rec.ok()) note("could not record the executors' pids: " + rec.error);
    }
  } else if (failed_to_start) {
    flush_plans();
    schedule();  // nothing runs: the failure halts the phase now
  }
}

// A plan left `running` by an execute that died (kill -9): if its executor still lives (the
// same pid, boot and start time), end its process group before the plan starts again, so
// no plan ever runs twice at once.
void Run::end_leftover_executors(const json& doc) {
  if (!doc.contains("plans") || !doc["plans"].is_array()) return;
  std::string boot = boot_id();
  for (const auto& p : doc["plans"]) {
    if (execution::plan_status(p) != PlanStatus::Running || !p.contains("executor") || !p["executor"].is_object())
      continue;
    const json& r = p["executor"];
    int pid = r.value("pid", 0), pgid = r.value("pgid", 0);
    unsigned long long ticks = r.value("start_ticks", 0ULL);
    if (pid <= 0 || ticks == 0 || r.value("boot_id", std::string()) != boot || process_start_ticks(pid) != ticks)
      continue;
    emit("leftover_executor", {{"plan", str(p, "id")}, {"pid", pid}, {"pgid", pgid}}, Sym::Warn,
         "Plan " + str(p, "id") + ": its executor (pid " + std::to_string(pid) +
             ") from an execute that stopped without cleaning up still runs; ending it before the plan starts again");
    auto alive = [&] { return process_start_ticks(pid) == ticks; };
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGTERM);
    ::kill(pid, SIGTERM);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(50 * 1000);  // 5 s to finish cleanly
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGKILL);
    if (alive()) ::kill(pid, SIGKILL);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(20 * 1000);
  }
}

void Run::on_done(size_t i, SpawnResult r) {
  // Drop the Process now, inside its own done callback: its handles are still closing, so
  // it detaches cleanly (destroying it after the loop has closed them would touch freed memory).
  if (auto it = running_.find(i); it != running_.end()) running_.erase(it);
  core_.executor_exited(i);
  run_of(i).tool.clear();
  open_requested_gates(i);
  const PlanEntry& e = entries_[i];
  // An executor that succeeded and wrote nothing leaves no log: it would hold only its argv
  // and outcome, which the state and the event log already have, and creating a file per
  // plan was a large share of execute's own time on a large phase.
  const bool silent_success = r.ok() && r.out_total == 0 && r.err_total == 0;
  std::string log_file =
      silent_success ? std::string() : write_agent_log(root_, phase_.rel, e.id, "executor", 0, run_of(i).argv, r);
  if (!log_file.empty()) note("output: " + log_file + "  (yolo logs " + e.id + ")", true);
  record_usage(i, "executor", r.out);
  if (!interrupted_ && r.ok()) {
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
    auto text = fs::read_text(f, 64 * 1024);
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
    auto r = gates::request_gate(world(), root_, cfg_, in, &command_approver());
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
  if (!w && known && world().files().stamp(dir / e.path) == known->first) {
    parsed = std::move(known->second);  // the file is the one load_plans parsed
    known.reset();                      // once: a plan that runs again reads its file again
  } else {
    auto l = load_plan(world(), dir / e.path);
    if (l.plan) parsed = plan_checks::parse(*l.plan);
  }
  PlanRun& pr = run_of(i);
  pr.check_todo = parsed.checks;
  pr.check_errors = parsed.errors;
  pr.check_out.clear();
  pr.exec_result = std::move(executor);
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
  running_[i] = Process::start(&loop_, std::move(spec), [this, i, c, argv](SpawnResult cr) {
    if (auto it = running_.find(i); it != running_.end()) running_.erase(it);
    plan_checks::Outcome o;
    o.name = c.name;
    o.argv = argv;
    o.ran = cr.outcome == SpawnResult::Outcome::Exited;
    o.exit_code = cr.exit_code;
    o.describe = cr.describe();
    o.duration_ms = static_cast<long long>(cr.elapsed_ms);
    o.output_tail = text::tail_lines(cr.out + (cr.err.empty() ? "" : "\n" + cr.err), 20);
    const auto& e2 = entries_[i];
    write_agent_log(root_, phase_.rel, e2.id, "check", static_cast<int>(run_of(i).check_out.size()) + 1, argv, cr);
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
  });
}

void Run::conclude(size_t i, const SpawnResult& r) {
  const PlanEntry& e = entries_[i];
  std::string sp = summary_rel_for(root_, e.path);
  json set = json::object();
  // The facts: how the executor (or its job) ended, and once it did well, what the checks and
  // the SUMMARY gate found; protocol/run/execute_rules.h decides the plan from them.
  execution::PlanFacts facts;
  facts.summary_path = sp;
  facts.interrupted = interrupted_;
  PlanRun& pr = run_of(i);
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
    facts.summary = isolated() && worktree_of(i)
                        ? gate_in_worktree(i, facts.summary_findings, set, facts.check_findings.empty())
                        : check_summary(e, facts.summary_findings, &sp);
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
  std::string now = now_iso8601();
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

}  // namespace yolo::runner::phase
