// Dispatch: the rules of handing a wave's plans to a cluster engine through three
// argv templates (submit, wait, cancel; docs/dispatch.md), with git as the transport. Pure:
// the runner (runner/plan_dispatch.cc) spawns, this file decides.
//
// The plan's record in the state (schemas/execution-state.json, plans[].dispatch):
//   {attempt, state: submitting|submitted|done|failed|cancelled, handle, url, job_name,
//    submitted_at, ended_at}
// `submitting` is written before submit runs and `submitted` (with the handle) before wait
// runs, so a yolo stopped or killed at any point re-attaches or submits the same attempt
// again (which the adapter answers with the same job): no plan is started twice.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"

namespace yolo::dispatch {

// The placeholders the templates may use.
// {dispatch_dir} (where the adapters are installed) is replaced when the config is loaded.
inline const char* const kPlaceholders[] = {"plan_id", "correlation_id", "attempt",      "base_commit", "branch",
                                            "remote",  "plan_path",      "summary_path", "handle"};

// What to do for a plan about to run, from its dispatch record (null/absent: never dispatched)
// and whether the plan had failed (its job's work did not pass: a new attempt, a new job).
struct Start {
  enum class Kind { Submit, Reattach } kind = Kind::Submit;
  int attempt = 1;
  std::string handle;  // Reattach
  // Submit of attempt N+1 after attempt N ended without being gated (its job failed, was
  // cancelled, or yolo gave up on it): N, whose branch is looked up on the remote first and
  // gated when it is there (its job pushed it after all) instead of running the plan again.
  int previous_attempt = 0;
};
Start decide_start(const json& record, bool plan_failed);
// The branch a job of this attempt pushes: the plan's branch; attempt N > 1 gets "-aN" (the
// branch of a failed attempt stays on the remote as it was: a job never force-pushes).
std::string branch_for_attempt(const std::string& plan_branch, int attempt);

// submit's stdout: the last line that is a JSON object with a non-empty string "handle".
struct Submitted {
  std::string handle, url, job_name;
  bool reused = false;
  std::string error;  // set when none was found
  bool ok() const { return error.empty(); }
};
Submitted parse_submit_output(const std::string& out);

// What wait's exit says: 0 done, 1 failed, 2 the engine does not know the job, 3 the engine
// could not be reached (or kept erroring) until its deadline: the job may be alive. Error:
// killed, timed out, or another status: yolo does not know how the job is.
enum class WaitResult { Done, Failed, Unknown, Unreachable, Error };
// exited: the wait command exited (not killed, not timed out); code: its exit status.
WaitResult interpret_wait(bool exited, int code);
// After wait: whether the branch is to be fetched (Done; Unknown when the branch is on the
// remote, the job having ended while the engine forgot it).
bool fetch_after_wait(WaitResult w, bool branch_on_remote);
// After wait: whether yolo gives up on a job that may still run (it is cancelled before
// anything else, never left running beside a later attempt).
bool gives_up(WaitResult w);

// The record fields, as written at each step.
json record_submitting(int attempt);
json record_submitted(int attempt, const Submitted& s, const std::string& now);
json record_ended(json record, const std::string& state, const std::string& now);

// The config's dispatch block, checked beyond the schema: errors name the key.
struct Templates {
  std::vector<std::string> submit, wait, cancel;
};
std::vector<std::string> check_templates(const Templates& t);

// The submit argv: the template with the placeholders replaced; when its last element is
// "--", the executor's argv (placeholders replaced too) follows it.
std::vector<std::string> submit_argv(const std::vector<std::string>& tmpl, const std::vector<std::string>& executor,
                                     const std::map<std::string, std::string>& vars);

// The names removed from the adapter's environment (the approval key, signing key, yolo's
// markers of an agent or gate child): the job never holds them.
const std::vector<std::string>& withheld_env();

}  // namespace yolo::dispatch
