// Dispatch's return path (runner/dispatch_return.h): a job's own log brought back by git (docs/dispatch.md,
// The job's log). run-job pushes its log to the remote as a ref of its own,
// refs/yolo-logs/BRANCH; when wait's output holds no line of the job's log (the engine keeps it
// on a node whose files are not readable here), that ref is fetched and its log put into the
// plan's log (`yolo logs PLAN`) before what wait said is read; the fetched ref
// (refs/yolo-dispatch-logs/BRANCH) is deleted once read. The remote's log refs go when the
// plan's branch is deleted from it (delete_merged: every attempt's).
#include "protocol/run/dispatch.h"

#include "runner/dispatch_internal.h"
#include "runner/dispatch_return.h"

namespace yolo::runner::phase {
using dispatch_detail::adapter_unset_env;

namespace {

// The adapters show a job's log as lines indented by "  | " (Slurm's wait and wait-wave's
// `task K log` lines as yolo keeps them, Kubernetes' kubectl logs, local's log).
bool holds_job_log(const std::string& out) {
  for (const auto& l : text::lines(out))
    if (l.substr(0, 4) == "  | ") return true;
  return false;
}

}  // namespace

bool DispatchReturn::fetch_job_log(size_t i, SpawnResult& r, std::function<void(SpawnResult)> then) {
  const std::string branch = e_.plans.branch_of(i);
  if (e_.url.empty() || interrupted() || e_.host.stopping() || holds_job_log(r.err)) return false;
  if (!logs_asked_.insert(branch).second) return false;  // asked once per job
  const std::string ref = "refs/yolo-logs/" + branch, local = "refs/yolo-dispatch-logs/" + branch;
  SpawnSpec f = git_child_spec(
      e_.root, {"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", e_.url, "+" + ref + ":" + local}, 30000);
  f.unset_env = adapter_unset_env();
  f.output_cap = 16 * 1024;
  auto held = std::make_shared<SpawnResult>(std::move(r));
  e_.host.hold(i, Process::start(e_.loop, std::move(f), [this, i, held, then, ref, local](SpawnResult fr) {
    release(i);
    // No log there (a job that never cloned, an adapter whose job is not run-job): wait's
    // output is the plan's log, as before.
    if (!fr.ok() || interrupted()) return then(std::move(*held));
    SpawnSpec c = git_child_spec(e_.root, {"cat-file", "blob", local + ":log"}, 30000);
    c.unset_env = adapter_unset_env();
    c.output_cap = 1100 * 1024;
    e_.host.hold(i, Process::start(e_.loop, std::move(c), [this, i, held, then, ref, local](SpawnResult cr) {
      release(i);
      if (cr.ok() && !cr.out.empty()) {
        std::string log = "--- the job's log (" + ref + " on the remote " + e_.url + ") ---\n";
        for (const auto& l : text::lines(cr.out)) log += "  | " + std::string(l) + "\n";
        log += "--- end of the job's log ---\n";
        held->err = log + held->err;  // before wait's own lines: its last ones say why
      }
      // Read: the local ref goes (the log is the plan's log from now on, `yolo logs PLAN`).
      SpawnSpec d = git_child_spec(e_.root, {"update-ref", "-d", local}, 30000);
      d.unset_env = adapter_unset_env();
      e_.host.hold(i, Process::start(e_.loop, std::move(d), [this, i, held, then](SpawnResult) {
        release(i);
        then(std::move(*held));
      }));
    }));
  }));
  return true;
}

}  // namespace yolo::runner::phase
