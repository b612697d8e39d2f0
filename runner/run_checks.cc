// A plan between its executor's end and its outcome (runner/run_checks.h): the gates it asked
// for, its checks one after another on the loop, what its executor left put aside meanwhile.
#include "runner/run_checks.h"

#include "protocol/run/sandbox_policy.h"
#include "runner/phase_parts.h"
#include "runner/sandbox.h"

namespace yolo::runner::phase {

void PlanChecks::open_requested_gates(size_t i) {
  PlanRun& pr = host_.plan(i);
  const stdfs::path dir = pr.gate_requests;
  if (dir.empty()) return;
  const std::string& id = host_.entry(i).id;
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
      tell_.note("a gate request of plan " + id + " is not one (" + f.filename().string() + "): ignored", false);
      continue;
    }
    gates::RequestInput in;
    in.type = *type;
    in.plan_path = j["plan_path"].get<std::string>();
    in.reason = j.value("reason", "");
    if (j.contains("wave") && j["wave"].is_number_integer()) in.wave = j["wave"].get<int>();
    auto r = gates::request_gate(world_, root_, cfg_, in, &approver_);
    if (!r.ok()) tell_.note("the gate plan " + id + " asked for could not be opened: " + r.error, false);
  }
  stdfs::remove_all(dir, ec);
  pr.gate_requests.clear();
}

// must_haves.checks of the plan (as its folder holds it), argv only.
void PlanChecks::run(size_t i, SpawnResult executor, const stdfs::path& dir, bool in_worktree, bool isolated) {
  const auto& e = host_.entry(i);
  PlanRun& pr = host_.plan(i);
  plan_checks::Parsed parsed;
  auto& known = pr.checks_read;
  if (!in_worktree && known && world_.files().stamp(dir / e.path) == known->first) {
    parsed = std::move(known->second);  // the file is the one the run parsed at its start
    known.reset();                      // once: a plan that runs again reads its file again
  } else {
    auto l = load_plan(world_, dir / e.path);
    if (l.plan) parsed = plan_checks::parse(*l.plan);
  }
  pr.check_todo = parsed.checks;
  pr.check_errors = parsed.errors;
  pr.check_out.clear();
  pr.exec_result = std::move(executor);
  pr.check_dir = dir;
  pr.check_in_worktree = in_worktree;
  // The checks judge what would be merged: what the executor left beyond its commits waits
  // aside until they end (put back before the gates, for them to list).
  if (in_worktree && !pr.check_todo.empty() && !halting()) {
    set_aside(i, dir, {summary_rel_for(world_, root_, e.path), e.path});
    return;
  }
  // No check to run and the plan's gates run here, in this process: its slot serves the
  // next plan at once (started before the gates, so that it runs while they do).
  if (parsed.checks.empty() && !isolated && !halting()) host_.slot_free(i);
  next(i);
}

void PlanChecks::finish(size_t i) {
  SpawnResult r = std::exchange(host_.plan(i).exec_result, SpawnResult{});
  host_.done(i, std::move(r));
}

void PlanChecks::next(size_t i) {
  const auto& e = host_.entry(i);
  PlanRun& pr = host_.plan(i);
  const size_t k = pr.check_out.size();
  if (halting() || k >= pr.check_todo.size()) return finish(i);
  const plan_checks::Spec c = pr.check_todo[k];
  SpawnSpec spec;
  SandboxRequest sreq;  // a check reads the project (its slot) and writes only its temp folder
  sreq.role = sandbox::Role::Check;
  sreq.project_root = root_;
  ConfinementResult confined = confine(world_, cfg_, sreq);
  spec.confinement = confined.confinement;
  if (!confined.ok()) {
    spec.argv = {"/bin/sh", "-c", "echo \"$0\" >&2; exit 126", confined.error};
  } else {
    spec.argv = expand_argv(c.argv, host_.vars(i));
    // A check program the checkout holds runs as the checkout has it, not as the executor
    // left it in its slot (edited and uncommitted, or committed on its branch).
    if (pr.check_in_worktree && !spec.argv.empty() && spec.argv[0].find('/') != std::string::npos &&
        stdfs::path(spec.argv[0]).is_relative()) {
      std::error_code ec;
      if (stdfs::exists(root_ / spec.argv[0], ec)) spec.argv[0] = (root_ / spec.argv[0]).string();
    }
  }
  spec.cwd = pr.check_dir;
  spec.env = host_.env(i);
  spec.timeout_ms = c.timeout_ms > 0 ? c.timeout_ms : cfg_.timeout_for(cfg_.executor);
  spec.output_cap = 64 * 1024;
  tell_.emit("check_start", {{"plan", e.id}, {"check", c.name}, {"argv", spec.argv}}, out::Sym::Diamond,
             "Plan " + e.id + ": check " + c.name);
  std::vector<std::string> argv = spec.argv;
  host_.hold(i, Process::start(loop_, std::move(spec), [this, i, c, argv](SpawnResult cr) {
    host_.release(i);
    plan_checks::Outcome o;
    o.name = c.name;
    o.argv = argv;
    o.ran = cr.outcome == SpawnResult::Outcome::Exited;
    o.exit_code = cr.exit_code;
    o.describe = cr.describe();
    o.duration_ms = static_cast<long long>(cr.elapsed_ms);
    o.output_tail = text::tail_lines(cr.out + (cr.err.empty() ? "" : "\n" + cr.err), 20);
    const std::string& id = host_.entry(i).id;
    PlanRun& p = host_.plan(i);
    write_agent_log(world_, root_, phase_rel_, id, "check", static_cast<int>(p.check_out.size()) + 1, argv, cr);
    json d = o.to_json();
    d["plan"] = id;
    tell_.emit("check_end", d, o.passed() ? out::Sym::Ok : out::Sym::Fail,
               "Plan " + id + ": check " + o.name + (o.passed() ? " passed" : " failed: " + o.describe) + " (" +
                   fmt_secs(cr.elapsed_ms) + ")");
    if (!o.passed()) {
      const std::string tail = text::tail_lines(o.output_tail, 5);  // lines() views it: it must outlive the loop
      for (const auto& l : text::lines(tail))
        if (!text::trim(l).empty()) tell_.note(std::string(l), true);
    }
    p.check_out.push_back(std::move(o));
    if (host_.interrupted()) return finish(i);
    next(i);
  }));
}

namespace {

// One move of a slot's leftovers, on a worker thread of the loop.
struct AsideJob {
  uv_work_t req{};
  size_t plan = 0;
  stdfs::path slot;
  std::vector<std::string> keep;
  slot_aside::Aside aside;
  SpawnResult executor;  // put back: what the outcome goes on with
  bool back = false, ok = false;
  std::string err;
  std::function<void(AsideJob&)> then;  // on the loop
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

void queue(uv_loop_t* loop, AsideJob* j) {
  j->req.data = j;
  uv_queue_work(loop, &j->req, move_aside, [](uv_work_t* req, int) {
    std::unique_ptr<AsideJob> job(static_cast<AsideJob*>(req->data));
    job->then(*job);
  });
}

}  // namespace

void PlanChecks::set_aside(size_t i, const stdfs::path& slot, std::vector<std::string> keep) {
  auto* j = new AsideJob;
  j->plan = i;
  j->slot = slot;
  j->keep = std::move(keep);
  host_.plan(i).aside_step = "putting aside what its executor left uncommitted";
  j->then = [this](AsideJob& job) {
    PlanRun& pr = host_.plan(job.plan);
    pr.aside_step = nullptr;
    pr.aside = std::move(job.aside);  // what to put back, even after a failure half way
    if (!job.ok) {
      pr.check_errors.push_back("what the executor left beyond its commits could not be put aside for the checks, "
                                "so they did not run: " + job.err);
      pr.check_todo.clear();
    }
    next(job.plan);
  };
  queue(loop_, j);
}

void PlanChecks::put_back(size_t i, const stdfs::path& slot, slot_aside::Aside a, SpawnResult r) {
  auto* j = new AsideJob;
  j->plan = i;
  j->slot = slot;
  j->aside = std::move(a);
  j->executor = std::move(r);
  j->back = true;
  host_.plan(i).aside_step = "putting back what its executor left uncommitted";
  j->then = [this](AsideJob& job) {
    PlanRun& pr = host_.plan(job.plan);
    pr.aside_step = nullptr;
    if (!job.ok)
      pr.check_errors.push_back("what the executor left beyond its commits could not be put back after the checks: " +
                                job.err);
    host_.done(job.plan, std::move(job.executor));
  };
  queue(loop_, j);
}

}  // namespace yolo::runner::phase
