// A plan's executor started on this machine (runner/run_launch.h).
#include "runner/run_launch.h"

#include "protocol/base/sha256.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/run/sandbox_policy.h"
#include "protocol/state/agent_usage.h"
#include "runner/sandbox.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {

// The placeholders of the executor's argv and of the plan's checks.
std::map<std::string, std::string> ExecutorStarter::vars(size_t i, long long wave, const std::string* sp) const {
  const auto& e = host_.entry(i);
  const PlanWorktree* w = worktree(i);
  return {{"plan_path", e.path},
          {"plan_id", e.id},
          {"wave", std::to_string(wave)},
          {"phase_dir", phase_.rel},
          {"summary_path", sp ? *sp : summary_rel_for(world_, root_, e.path)},
          {"worktree", w ? w->path.string() : root_.string()},
          {"branch", w ? w->branch : std::string()},
          {"correlation_id", cid_}};
}

std::vector<std::pair<std::string, std::string>> ExecutorStarter::env(size_t i, long long wave,
                                                                      const std::string* sp) const {
  const auto& e = host_.entry(i);
  const PlanWorktree* w = worktree(i);
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

std::string ExecutorStarter::unchanged(size_t i, const json& ledger, std::string& bytes) const {
  const auto& e = host_.entry(i);
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
  const PlanRun& pr = host_.plan(i);
  if (!pr.load_hash || !review::same_content(*pr.load_hash, now))
    return "its PLAN file changed after this run read it (" + e.path + "); `yolo execute` again reviews it";
  return "";
}

// Each plan starts from the content that was reviewed and approved, checked just before its
// start: a plan an earlier plan's executor (or anyone) rewrote does not run as rewritten.
ExecutorStarter::Reviewed ExecutorStarter::reviewed(const std::vector<size_t>& idx) const {
  Reviewed out;
  auto ledger = review_ledger::load(world_, root_, phase_.abs);
  for (size_t i : idx)
    if (std::string why = unchanged(i, ledger.ok() ? ledger.doc : json(nullptr), out.bytes[i]); !why.empty())
      out.changed.emplace_back(i, std::move(why));
  return out;
}

ExecutorStarter::Start ExecutorStarter::start(size_t i, long long wave, const std::string& reviewed) {
  const auto& e = host_.entry(i);
  PlanRun& run = host_.plan(i);
  const bool isolated = host_.isolated();
  // The slot's copy of the plan is the reviewed content, whatever its branch holds.
  if (const PlanWorktree* w = isolated ? worktree(i) : nullptr) {
    auto slot_copy = world_.files().read(w->path / e.path, 64u << 20, /*text=*/false);
    if (!slot_copy.ok() || slot_copy.content != reviewed)
      if (std::string werr = world_.files().write_atomic(w->path / e.path, reviewed).error; !werr.empty())
        tell_.note("could not put the reviewed plan into its worktree: " + werr, false);
  }
  // The executor's sandbox: its slot (or the checkout without .yolo-planning, and its own
  // phase folder), the git objects and its branch; never the state, the gates or the key.
  SandboxRequest sreq;
  sreq.role = sandbox::Role::Executor;
  sreq.project_root = root_;
  std::string objects_err;  // its git objects go to a folder of its own (slot_objects.h)
  if (const PlanWorktree* w = worktree(i)) {
    sreq.worktree = w->path;
    sreq.branch = w->branch;
    slot_objects::prepare(w->path, objects_err);
    run.objects_error.clear();  // an earlier attempt's, in this run
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
      run.gate_requests = req_dir;
      sreq.extra_write.push_back(req_dir.string());
    }
  }
  ConfinementResult confined = objects_err.empty() ? confine(world_, cfg_, sreq) : ConfinementResult{nullptr, objects_err};
  if (!confined.ok()) return {confined.error, nullptr, true};
  run.sandbox = confined.confinement->record();
  if (confined.confinement->refusals) run.refused = confined.confinement->refusals;
  SpawnSpec spec;
  spec.confinement = confined.confinement;
  const std::string sp = summary_rel_for(world_, root_, e.path);  // looked up once for the argv and the environment
  spec.argv = expand_argv(cfg_.executor.argv, vars(i, wave, &sp));
  spec.cwd = isolated && worktree(i) ? worktree(i)->path : root_;
  if (isolated && !spec.argv.empty() && spec.argv[0].find('/') != std::string::npos &&
      stdfs::path(spec.argv[0]).is_relative()) {
    std::error_code ec;  // the executor the config names, from the project root (not the plan's branch)
    if (stdfs::exists(root_ / spec.argv[0], ec)) spec.argv[0] = (root_ / spec.argv[0]).string();
  }
  spec.env = env(i, wave, &sp);
  if (const auto& g = run.gate_requests; !g.empty()) spec.env.emplace_back("YOLO_GATE_REQUESTS", g.string());
  spec.timeout_ms = cfg_.timeout_for(cfg_.executor);
  // The tool call the agent is making, from its CLI's event stream: on the live line, and
  // one event per call in the log.
  spec.on_line = [this, i](SpawnSpec::Stream s, std::string_view line) {
    if (s != SpawnSpec::Stream::Out) return;
    auto t = usage::tool_call(line);
    if (!t) return;
    host_.plan(i).tool = *t;
    const auto& pe = host_.entry(i);
    tell_.log("agent_tool", pe.plan, {{"plan_id", pe.id}, {"agent", "executor"}, {"tool", *t}});
  };
  host_.started(i);
  run.started_at = uv_hrtime();
  run.argv = spec.argv;
  Process* proc =
      host_.hold(i, Process::start(loop_, std::move(spec), [this, i](SpawnResult r) { host_.done(i, std::move(r)); }));
  Start out;
  int pid = proc->pid();
  if (pid > 0) {
    out.executor = executor_record(pid, proc->start_ticks());
    // Who runs it: in the journal at once (a later run ends it after a kill -9 of this one),
    // in the state with its `running`, in the next batched write.
    out.journaled = host_.journal(e.id, out.executor);
    if (execution::PlanUpdate* q = host_.queued(i)) {
      q->set["executor"] = out.executor;
      q->set["sandbox"] = run.sandbox;  // kept once the plan ends (its executor record is not)
      q->set["sandbox_seal"] =
          sandbox::seal_plan_record(gates::project_id(world_, root_), cid_, e.id, run.sandbox, world_.sealing_key());
    }
  }
  tell_.log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"pid", pid}});
  const size_t running = host_.running();
  json data = {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"pid", pid}, {"running", running}};
  if (const PlanWorktree* w = worktree(i)) {
    data["worktree"] = w->path.string();
    data["branch"] = w->branch;
    data["base"] = w->base;
    if (!w->prepared.empty()) data["worktree_prepared"] = w->prepared;
  }
  tell_.emit("plan_start", data, Sym::Diamond,
             "Plan " + e.id + " started: " + e.title + "  (" + std::to_string(running) + " running)");
  if (const PlanWorktree* w = worktree(i))
    tell_.note("worktree " + w->path.string() + " on branch " + w->branch + " from " + w->base.substr(0, 12) +
                   (w->prepared == "paths"   ? " (" + std::to_string(w->restored) + " path(s) put back)"
                    : w->prepared == "reset" ? " (full reset)"
                    : w->prepared.empty()    ? std::string()
                                             : " (new checkout)"),
               true);
  return out;
}

// A plan left `running` by an execute that died (kill -9): if its executor still lives (the
// same pid, boot and start time), end its process group before the plan starts again, so
// no plan ever runs twice at once.
void ExecutorStarter::end_leftovers(const json& doc) {
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
    tell_.emit("leftover_executor", {{"plan", str(p, "id")}, {"pid", pid}, {"pgid", pgid}}, Sym::Warn,
               "Plan " + str(p, "id") + ": its executor (pid " + std::to_string(pid) +
                   ") from an execute that stopped without cleaning up still runs; ending it before the plan starts "
                   "again");
    auto alive = [&] { return process_start_ticks(pid) == ticks; };
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGTERM);
    ::kill(pid, SIGTERM);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(50 * 1000);  // 5 s to finish cleanly
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGKILL);
    if (alive()) ::kill(pid, SIGKILL);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(20 * 1000);
  }
}

void ExecutorStarter::end_leftovers_and_journal(const json& doc) {
  end_leftovers(doc);
  const stdfs::path file = root_ / execution::kExecutorsJournal;
  auto r = world_.files().read(file, 16u << 20, false);
  if (!r.ok()) return;  // none (the usual case), or unreadable: the state's records remain
  end_leftovers(execution::journal_plans(r.content));
  ::unlink(file.c_str());
}

}  // namespace yolo::runner::phase
