// What `yolo execute` says, a part of the Run (runner/phase_run_internal.h) with a class of
// its own: its events as JSON lines (--json) or lines for people (✓ ⚠ ✗ ◆ ⏸ ○, coloured only
// when its output is a terminal and NO_COLOR is unset), the event log, the live line at the
// bottom of a terminal, step 2's words (the phase started, SUMMARY files not counted), the
// texts of the run core's actions (a wave started or ended, a gate rejected, the run frozen,
// halted or complete) and the run's last word with its `Next:` line.
//
// It writes to stdout and stderr (through runner/output.h, which keeps the live line below
// the other lines) or, in a test, to the files it is given. The run reaches it through the
// typed methods below, the run's parts through the Teller it is (runner/run_teller.h). Of
// the run it reads the plans as read (their statuses in the state file make its last JSON
// line) and, through a function it is given, what the live line shows.
#pragma once
#include <uv.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/ports/world.h"
#include "protocol/run/execution.h"
#include "protocol/state/config.h"
#include "runner/output.h"
#include "runner/phase_parts.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

// What the live line shows: "[████░░░░] 2/4 plans · ◆ 01-02 executor 3.1s/60s · ...".
struct LiveView {
  size_t done = 0, total = 0;  // plans complete, plans of the phase
  struct Running {             // a plan whose executor runs
    std::string id;
    double secs = 0;           // since its executor started
    long long timeout_ms = 0;  // the executor's timeout
    std::string tool;          // its current tool call ("" when none is known)
  };
  std::vector<Running> running;
  struct Aside {  // a plan at a step of its own beside its executor ("checks", "gates", ...)
    std::string id, step;
  };
  std::vector<Aside> aside;
};
// What the live line shows of a run now (now_ns: uv_hrtime()): the plans done (complete for
// the run core, or with a SUMMARY that passes and no executor running), the executors
// running (timeout_ms: the executor's timeout) with their time and tool, and the plans at a
// step of their own beside their executor.
LiveView live_view(const run::Core& core, const std::vector<PlanEntry>& entries, const std::vector<PlanRun>& runs,
                   long long timeout_ms, uint64_t now_ns);

// A plan made ready for an agent or a person (no executor is configured).
struct ReadyPlan {
  std::string id;
  long long wave = 0;
  std::string path, summary;  // the plan file and the SUMMARY it waits for, root-relative
};

// Where the report writes: stdout and stderr unless a test names other files.
struct ReportStreams {
  FILE* out = stdout;
  FILE* err = stderr;
};

class RunReport final : public Teller {
 public:
  using Live = std::function<LiveView()>;  // what the live line shows now
  using Streams = ReportStreams;
  // phase, cid, entries: the run's, read each time they are needed (known only after the
  // run has started); json: --json.
  RunReport(const World& world, std::filesystem::path root, const Config& cfg, const PhaseDir& phase,
            const std::string& cid, const std::vector<PlanEntry>& entries, bool json, Live live, Streams streams = {});

  double elapsed_ms() const { return static_cast<double>(uv_hrtime() - t0_) / 1e6; }
  bool color() const { return color_; }

  // ---- what any part of the run says -----------------------------------------------------
  // An event: a JSON line with its data and elapsed_ms, or for people sym, human, [elapsed].
  void emit(const std::string& event, json data, out::Sym sym, const std::string& human) override;
  void note(const std::string& human, bool dim = false) override;  // an extra line for people only
  // A line of the event log (when the config enables it); plan: the plan's number or "".
  void log(const std::string& type, const std::string& plan, json data = json::object()) override;

  // ---- step 2 ------------------------------------------------------------------------------
  // The phase starts (or resumes: `done` plans complete) with `plans` plans in `total_waves`
  // waves; was_running: an earlier run left plans running, pending again now. Logged and said.
  void phase_start(size_t plans, long long total_waves, bool resumed, size_t done, bool was_running);
  // Plan id's SUMMARY appeared after the run began, written by no executor of its own.
  void summary_not_counted(const std::string& id);
  // Plan id's SUMMARY fails the SUMMARY gate (no executor to run it again): with its findings.
  void summary_failed(const std::string& id, const json& findings);
  // Every plan of the phase (`plans`) has a SUMMARY that passes: nothing to run.
  void already_complete(size_t plans);

  // ---- the run core's actions -------------------------------------------------------------
  // The fd limit lowered max_parallel from want to now (files_limit: `ulimit -n`).
  void max_parallel_lowered(int want, int now, long files_limit);
  // Wave `wave` of `total` starts with these plans (people see the first 8 names).
  void wave_start(long long wave, long long total, const std::vector<std::string>& ids);
  void wave_end(long long wave, bool failed);
  // The run is halted (the state says so): a rejected gate last in `state` is said with how to
  // revise it. Returns the run's stop message.
  std::string halted(const json& state);
  void frozen(size_t running);  // a gate is open: no new plan starts
  // The core halted the phase for `reason` (said only in JSON: the last word says it for
  // people). Returns the run's stop message.
  std::string halt(const std::string& reason);
  // --plan's plan is complete: the next step is the rest of the phase. Returns the stop message.
  std::string plan_complete(const std::string& plan);
  // The phase is complete with its `plans` plans: logged and said.
  void phase_complete(size_t plans);
  // A plan passed its gates but its merge was refused: the stop message.
  std::string merge_refused(const std::string& plan) const;
  // No executor: these plans are ready for an agent or a person. Returns the stop message.
  std::string plans_ready(const std::vector<ReadyPlan>& plans);

  // ---- the run's stop messages (said by its last word alone) -------------------------------
  // (A wave gate's and an open gate's pause: RunGates says them, as the budget's; the vision
  // gate's: RunPrelude, runner/run_prelude.h.)
  // SIGINT or SIGTERM (signum) stopped the run.
  std::string interrupted(int signum) const;
  // The loop ran dry without the core deciding an end.
  std::string nothing_left() const;

  // ---- the live line ------------------------------------------------------------------------
  // The live line of v (no more than a terminal's width: runner/output.h cuts it).
  std::string live_line(const LiveView& v) const;
  // On a terminal without --json: the live line drawn every 250 ms on loop, until stop_live().
  void start_live(uv_loop_t* loop);
  void stop_live();
  void draw_live();

  // ---- the last word ------------------------------------------------------------------------
  // The next step for the person, when a step knows better than the exit code.
  std::string& next() { return next_; }
  // The one `Next:` line every stop ends with: next() when a step set it, else by exit code.
  std::string next_step(int code) const;
  // The run's last word: its JSON line, or its message and `Next:` line (on stderr when it
  // halted or was misused). Returns code.
  int finish(int code, execution::Result result, const std::string& message);

 private:
  std::string sym(out::Sym s) const;
  std::string dim(const std::string& s) const;
  void line(const std::string& s);
  void err(const std::string& s);
  void json_line(const json& j);
  json plans() const;  // [{id, status}] as the state file says, for the last JSON line

  const World& world_;
  std::filesystem::path root_;
  const Config& cfg_;
  const PhaseDir& phase_;
  const std::string& cid_;
  const std::vector<PlanEntry>& entries_;
  bool json_;
  Live live_view_;
  Streams streams_;
  bool color_;
  uint64_t t0_;
  bool log_warned_ = false;
  std::string next_;
  bool live_ = false;  // the live line's timer runs
  uv_timer_t live_timer_{};
};

}  // namespace yolo::runner::phase
