// `yolo execute`: one plan up to its executor's start: its worktree, sandbox and executor, and
// the executors a killed run left (runner/phase_run_internal.h; what follows the executor:
// plan_conclude.cc).
#include "protocol/state/agent_usage.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/run/sandbox_policy.h"
#include "protocol/base/sha256.h"
#include "runner/phase_run_internal.h"
#include "runner/refusals.h"
#include "runner/sandbox.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {

// The placeholders of the executor's argv and of the plan's checks.
std::map<std::string, std::string> Run::plan_vars(size_t i, long long wave, const std::string* sp) const {
  const auto& e = entries_[i];
  const PlanWorktree* w = worktree_of(i);
  return {{"plan_path", e.path},
          {"plan_id", e.id},
          {"wave", std::to_string(wave)},
          {"phase_dir", phase_.rel},
          {"summary_path", sp ? *sp : summary_rel_for(world_, root_, e.path)},
          {"worktree", w ? w->path.string() : root_.string()},
          {"branch", w ? w->branch : std::string()},
          {"correlation_id", cid_}};
}

std::vector<std::pair<std::string, std::string>> Run::plan_env(size_t i, long long wave, const std::string* sp) const {
  const auto& e = entries_[i];
  const PlanWorktree* w = worktree_of(i);
  std::vector<std::pair<std::string, std::string>> env{
      {"YOLO_CORRELATION_ID", cid_},
      {"YOLO_PLAN_ID", e.id},
      {"YOLO_PHASE_DIR", phase_.rel},
      {"YOLO_PLAN_PATH", e.path},
      {"YOLO_WAVE", std::to_string(wave)},
      {"YOLO_SUMMARY_PATH", sp ? *sp : summary_rel_for(world_, root_, e.path)},
      {"YOLO_WORKTREE", w ? w->path.string() : root_.string()}};
  if (w)
    for (auto& kv : slot_objects::env(w->path)) env.push_back(std::move(kv));
  return env;
}

std::string Run::plan_unchanged(size_t i, const json& ledger, std::string& bytes) const {
  const auto& e = entries_[i];
  auto read = world_.files().read(root_ / e.path, 64u << 20, /*text=*/false);
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
void Run::start_plans(const std::vector<size_t>& idx, long long wave, const std::vector<dispatch::Start>& jobs) {
  std::string now = world_.now();
  // Each plan starts from the content that was reviewed and approved, checked just before its
  // start: a plan an earlier plan's executor (or anyone) rewrote does not run as rewritten.
  auto ledger = review_ledger::load(world_, root_, phase_.abs);
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
  for (size_t k = 0; k < idx.size(); ++k) {
    const size_t i = idx[k];
    const auto& e = entries_[i];
    if (dispatched()) {  // a job of the cluster engine: submitted, waited on, fetched (runner/run_dispatch.h)
      dispatch_.start(i, wave, jobs[k]);
      continue;
    }
    if (isolated() && worktrees_.resume_finished(i)) {
      const PlanWorktree& w = *run_of(i).worktree;  // resume_finished adopted it
      emit("plan_resumed", {{"plan", e.id}, {"worktree", w.path.string()}, {"branch", w.branch}, {"base", w.base}},
           Sym::Ok,
           "Plan " + e.id + ": its executor had finished before the last execute stopped (its commits on " + w.branch +
               ", its SUMMARY in " + w.path.string() + "): gated now, not run again");
      log("plan_resumed", e.plan, {{"plan_id", e.id}, {"branch", w.branch}});
      core_.started(i);
      run_of(i).started_at = uv_hrtime();
      run_of(i).argv = {};
      worktrees_.resume_later(i);
      continue;
    }
    if (isolated()) {
      std::string err;
      if (!worktrees_.prepare(i, wave, err)) {
        core_.not_started(i, {PlanStatus::Failed, err, json::array()});
        queue_plan(i, execution::ended({PlanStatus::Failed, err, json::array()}, world_.now()));
        emit("plan_end", {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", err}}, Sym::Fail,
             "Plan " + e.id + " failed: " + err);
        failed_to_start = true;
        continue;
      }
      // The slot's copy of the plan is the reviewed content, whatever its branch holds.
      if (const PlanWorktree* w = worktree_of(i)) {
        auto slot_copy = world_.files().read(w->path / e.path, 64u << 20, /*text=*/false);
        if (!slot_copy.ok() || slot_copy.content != plan_bytes[i])
          if (std::string werr = world_.files().write_atomic(w->path / e.path, plan_bytes[i]).error; !werr.empty())
            note("could not put the reviewed plan into its worktree: " + werr);
      }
    }
    // The executor's sandbox: its slot (or the checkout without .yolo-planning, and its own
    // phase folder), the git objects and its branch; never the state, the gates or the key.
    SandboxRequest sreq;
    sreq.role = sandbox::Role::Executor;
    sreq.project_root = root_;
    std::string objects_err;  // its git objects go to a folder of its own (slot_objects.h)
    if (const PlanWorktree* w = worktree_of(i)) {
      sreq.worktree = w->path;
      sreq.branch = w->branch;
      slot_objects::prepare(w->path, objects_err);
      run_of(i).objects_error.clear();  // an earlier attempt's, in this run
    } else {
      sreq.phase_dir = (root_ / e.path).parent_path();
      sreq.own_summary = root_ / summary_rel_for(world_, root_, e.path);
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
    ConfinementResult confined = objects_err.empty() ? confine(cfg_, sreq) : ConfinementResult{nullptr, objects_err};
    if (!confined.ok()) {
      core_.not_started(i, {PlanStatus::Failed, confined.error, json::array()});
      queue_plan(i, execution::ended({PlanStatus::Failed, confined.error, json::array()}, world_.now()));
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
    const std::string sp = summary_rel_for(world_, root_, e.path);  // looked up once for the argv and the environment
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
    Process* proc =
        hold(i, Process::start(&loop_, std::move(spec), [this, i](SpawnResult r) { on_done(i, std::move(r)); }));
    int pid = proc->pid();
    if (pid > 0) {
      spawned[e.id] = executor_record(pid, proc->start_ticks());
      // Who runs it: in the journal at once (a later run ends it after a kill -9 of this one),
      // in the state with its `running`, in the next batched write.
      if (!writes_.journal(e.id, spawned[e.id])) journal_failed = true;
      if (execution::PlanUpdate* q = writes_.queued(i)) {
        q->set["executor"] = spawned[e.id];
        q->set["sandbox"] = run_of(i).sandbox;  // kept once the plan ends (its executor record is not)
        q->set["sandbox_seal"] = sandbox::seal_plan_record(gates::project_id(world_, root_), cid_, e.id,
                                                                   run_of(i).sandbox, world_.sealing_key());
      }
    }
    log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"pid", pid}});
    json data = {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"pid", pid}, {"running", running_count_}};
    if (const PlanWorktree* w = worktree_of(i)) {
      data["worktree"] = w->path.string();
      data["branch"] = w->branch;
      data["base"] = w->base;
      if (!w->prepared.empty()) data["worktree_prepared"] = w->prepared;
    }
    emit("plan_start", data, Sym::Diamond,
         "Plan " + e.id + " started: " + e.title + "  (" + std::to_string(running_count_) + " running)");
    if (const PlanWorktree* w = worktree_of(i))
      note("worktree " + w->path.string() + " on branch " + w->branch + " from " +
               w->base.substr(0, 12) +
               (w->prepared == "paths"   ? " (" + std::to_string(w->restored) + " path(s) put back)"
                : w->prepared == "reset" ? " (full reset)"
                : w->prepared.empty()    ? std::string()
                                                : " (new checkout)"),
           true);
  }
  worktrees_.start_resumed();  // gated from the loop, as an executor that ends is (never inside schedule())
  if (dispatched()) dispatch_.submit_waves(wave);  // the wave-level form: the plans gathered above, as arrays
  if (dispatch_.take_start_failed()) {  // a dispatched plan failed before its submit (plan_dispatch.cc)
    if (running_count_ == 0) {
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
        if (entries_[k].id == id) queued = queued || writes_.queued(k) != nullptr;
      missing = missing || !queued;
    }
    if (journal_failed || missing) flush_plans();
    if (missing) {
      auto rec = state::update(world_, root_, [&](json& doc) {
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

int Run::init_worktrees(const json& doc) {
  if (!isolated()) return -1;
  auto stop = worktrees_.init(doc, phase_.rel, fresh_cid_, mode_);
  return stop ? finish(stop->code, stop->result, stop->message) : -1;
}

// What worktree isolation (runner/run_worktrees.h) reaches of the run.
WorktreeDriver::Host Run::worktrees_host() {
  WorktreeDriver::Host h;
  h.plans = [this] { return entries_.size(); };
  h.entry = [this](size_t i) -> const PlanEntry& { return entries_[i]; };
  h.plan = [this](size_t i) -> PlanRun& { return run_of(i); };
  h.core = [this]() -> run::Core& { return core_; };
  h.emit = [this](const std::string& event, json data, Sym sym, const std::string& human) {
    emit(event, std::move(data), sym, human);
  };
  h.note = [this](const std::string& human) { note(human); };
  h.log = [this](const std::string& type, const std::string& plan, json data) { log(type, plan, std::move(data)); };
  h.queue = [this](size_t i, execution::PlanUpdate u) { queue_plan(i, std::move(u)); };
  h.flush = [this] { flush_plans(); };
  h.next_step = [this](std::string s) { next_ = std::move(s); };
  h.gated = [this](size_t i, SpawnResult r) { conclude(i, r); };
  h.resumed = [this](size_t i, SpawnResult r) { on_done(i, std::move(r)); };
  h.merged = [this](const std::vector<std::string>& branches) {
    if (!dispatched()) return;
    dispatch_premerge_reset();  // the checkout moved: a chain computed ahead starts again from it
    dispatch_delete_merged(branches);  // a child of the loop: runs while the local ones go
  };
  return h;
}

}  // namespace yolo::runner::phase
