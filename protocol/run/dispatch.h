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
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/json.h"

namespace yolo::dispatch {

// Where a plan's job stands, as its record's "state" says.
enum class JobState { Submitting, Submitted, Done, Failed, Cancelled };
const char* job_state_name(JobState s);
// The record's state; nullopt when it has none or one of another name.
std::optional<JobState> job_state(const json& record);

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
// A wave task's line (wave_line_result) or the wave's exit for a task it did not report
// (wave_exit_result), as the exit the plan's own wait would have given: 0 done, 1 failed,
// 2 unknown, 3 unreachable, 4 anything else (interpret_wait reads it back the same).
int wait_exit_code(WaitResult w);
// Why wait says what it says: the last two lines of its stderr that are not blank, trimmed
// and joined by "; " (the adapter's reason, run-job's ✗ line, and the line before it).
std::string wait_reason(std::string_view err);
// What the engine says of a job while wait waits (a pending reason, an image that cannot be
// pulled): a line "status: TEXT" of wait's stderr (nullopt: not such a line). engine_status:
// the text as it is shown and kept in the record, trimmed, at most 300 bytes ("": none).
std::optional<std::string> status_line(std::string_view err_line);
std::string engine_status(std::string_view text);
// How long yolo waits on a job (wait's timeout_ms) or a wave's array (wait_wave's, else
// wait's) before it gives up on it: a day unless the config says (0: not given).
long long wait_deadline_ms(long long wait_timeout_ms, long long wait_wave_timeout_ms = 0);
// dispatch.unreachable_timeout_ms of the config's JSON (10 minutes unless given, at least a
// second) in seconds: the adapters wait out an engine that does not answer that long
// (YOLO_DISPATCH_UNREACHABLE_SECONDS), then wait exits 3.
long long unreachable_seconds(const json& raw_config);
// `git ls-remote --heads`' output: the refs it names ("refs/heads/...").
std::set<std::string> remote_heads(std::string_view ls_remote_out);

// The record fields, as written at each step.
json record_submitting(int attempt);
json record_submitted(int attempt, const Submitted& s, const std::string& now);
json record_ended(json record, JobState state, const std::string& now);

// The config's dispatch block, checked beyond the schema: errors name the key.
struct Templates {
  std::vector<std::string> submit, wait, cancel;
};
std::vector<std::string> check_templates(const Templates& t);

// The submit argv: the template with the placeholders replaced; when its last element is
// "--", the executor's argv (placeholders replaced too) follows it. extra_opts (the plan's
// resources) go just before that "--" (else at the end).
std::vector<std::string> submit_argv(const std::vector<std::string>& tmpl, const std::vector<std::string>& executor,
                                     const std::map<std::string, std::string>& vars,
                                     const std::vector<std::string>& extra_opts = {});

// ---- Per-plan resources ----------------------------------------------------------------
// The plan's frontmatter `resources: {time, cpus, memory, gpus}` (schemas/plan-frontmatter.json):
// time in minutes (90) or with a unit ("90m", "2h", "1d"); memory in MiB (4096) or with a unit
// ("512M", "4G"); cpus and gpus whole numbers >= 1 (gpus >= 0). It is part of the plan's text,
// so the wave's approval covers it (a change re-opens the gate). Given to every adapter as
// `--time-minutes N --cpus N --memory-mb N --gpus N` (Slurm: sbatch --time/--cpus-per-task/
// --mem/--gpus; Kubernetes: the container's requests and limits, its deadline).
struct Resources {
  long long time_minutes = 0, memory_mb = 0;
  int cpus = 0, gpus = 0;
  bool any() const { return time_minutes > 0 || memory_mb > 0 || cpus > 0 || gpus > 0; }
};
// errors: one line per bad value, naming the key ("resources.memory: '4X' is not ...").
Resources resources_of(const json& frontmatter, std::vector<std::string>& errors);
std::vector<std::string> resources_options(const Resources& r);
// The key plans share an array by: equal options, one request.
std::string resources_key(const Resources& r);

// ---- The wave-level form (docs/dispatch.md, "A wave as one unit") ------------------------
// An engine with arrays (a Slurm job array, a Kubernetes Indexed Job, a GitHub matrix run)
// takes a wave's plans as one submission and is polled once per wave, not once per plan:
// `submit_wave` gets a task file ({tasks}: each plan's submit arguments, one task each, index
// = position), prints the wave's handle and one handle per task; `wait_wave` ({handle}: the
// wave's) reports each task on stdout as it ends. The per-plan form stays for the rest.
inline const char* const kWavePlaceholders[] = {"tasks", "correlation_id", "wave", "max_parallel",
                                                "base_commit", "remote", "wave_key", "handle"};
std::vector<std::string> check_wave_templates(const std::vector<std::string>& submit_wave,
                                              const std::vector<std::string>& wait_wave);

// A plan about to be submitted, as the wave form sees it.
struct WaveCandidate {
  size_t plan = 0;            // the runner's index of the plan
  std::string plan_id;        // its id (a task's identity, with the attempt)
  int attempt = 1;
  std::string resources_key;  // the engine flags its resources give (see resources_flags); "" none
};
// The arrays a wave's submissions form: plans that ask for the same resources share one array
// (an array's tasks share one resource request); each array's tasks in plan-id order, which is
// the index order. key: the array's identity, from the correlation id and its (plan id,
// attempt) tasks, so that a submit repeated after a kill finds the same array.
struct WaveArray {
  std::vector<size_t> plans;  // index k of the array -> runner's plan index
  std::string key;            // 12 hex
};
std::vector<WaveArray> form_wave_arrays(const std::string& correlation_id, std::vector<WaveCandidate> c);

// The plans of a wave re-attached to jobs an earlier execute submitted, as the state's records
// name them (plan index, its dispatch record). A record of a task of an array (wave_handle,
// wave_index) joins that array's wait, at its task's index; the array's other tasks (merged
// already, or of plans not in this run) are kNoPlan. A record that names no array, an index
// of max_tasks or more, or an index another plan of the array already holds (the state is a
// file a person may edit) is waited on by itself.
inline constexpr size_t kNoPlan = static_cast<size_t>(-1);
struct ReattachedArray {
  std::string handle;       // the array's job
  std::string key;          // its wave_key (the first plan's record)
  std::vector<size_t> at;   // task index -> plan index, or kNoPlan
};
struct Reattached {
  std::vector<ReattachedArray> arrays;  // in the order their first plan came
  std::vector<size_t> alone;            // each waited on by itself
};
Reattached group_reattached(const std::vector<std::pair<size_t, json>>& records, size_t max_tasks);

// The task file given to submit_wave: for each task, its argument count, then each argument,
// every one NUL-terminated ("3\0--plan-id\001-01\0..."): binary-safe, read by bash with
// `read -d ''`. The arguments of a task are the plan's submit argv from its first option on
// (the adapter's program and subcommand, before it, are the wave's).
std::vector<std::string> task_arguments(const std::vector<std::string>& plan_submit_argv);
std::string tasks_file(const std::vector<std::vector<std::string>>& tasks);

// submit_wave's stdout: {"handle": H, "url": U, "job_name": N, "reused": B, "tasks": [h0, h1, ...]}
// with exactly one task handle per task.
struct WaveSubmitted {
  std::string handle, url, job_name;
  std::vector<std::string> tasks;
  bool reused = false;
  std::string error;
  bool ok() const { return error.empty(); }
};
WaveSubmitted parse_wave_submit_output(const std::string& out, size_t n_tasks);
// A task of a wave's array, as its plan's record: record_submitting, then record_submitted
// with the task's handle (ws.tasks[k]), each with the wave's base and the array's key; once
// submitted, the array's handle and the task's index too.
json record_wave_submitting(int attempt, const std::string& base, const std::string& key);
json record_wave_submitted(int attempt, const WaveSubmitted& ws, size_t k, const std::string& base,
                           const std::string& key, const std::string& now);

// One stdout line of wait_wave: "task K status TEXT" (what the engine says of task K),
// "task K done", "task K failed [TEXT]", "task K unknown" (the engine says it does not know
// it), "task K log TEXT" (a line of the task's own log, for `yolo logs PLAN`). Anything else
// (the adapter's notes) is not a task line.
struct WaveLine {
  enum class Kind { None, Status, Done, Failed, Unknown, Log } kind = Kind::None;
  size_t index = 0;
  std::string text;
};
WaveLine parse_wave_line(std::string_view line, size_t n_tasks);
// What a task's line means for its plan, as wait's exit would (Done, Failed, Unknown).
WaitResult wave_line_result(WaveLine::Kind k);
// A task wait_wave did not report before it exited: its exit for the whole wave says it (0
// with a task unreported is an adapter error; 2 the engine does not know the wave; 3 the
// engine could not be reached: the tasks may be alive).
WaitResult wave_exit_result(bool exited, int code);

// The names removed from the adapter's environment (the approval key, signing key, yolo's
// markers of an agent or gate child): the job never holds them.
const std::vector<std::string>& withheld_env();

}  // namespace yolo::dispatch
