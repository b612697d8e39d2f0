// What the files of `yolo execute`'s Run (runner/phase_run_internal.h) share beside the class:
// the headers they use, the phase folders, a plan's SUMMARY name, the executors' records and
// how many of them the open files limit allows (phase_parts.cc).
// Internal to those files.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "protocol/base/argv_template.h"
#include "protocol/ports/clock.h"
#include "protocol/state/config.h"
#include "protocol/ports/disk.h"
#include "protocol/state/events.h"
#include "protocol/run/execution.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/gate_step.h"
#include "protocol/gates/approvals.h"
#include "protocol/gates/approver_policy.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gate_run.h"
#include "protocol/gates/gates.h"
#include "protocol/base/json_field.h"
#include "protocol/base/numbers.h"
#include "protocol/plan/plan.h"
#include "protocol/review/stage1.h"
#include "protocol/review/review_ledger.h"
#include "protocol/review/review_loop.h"
#include "protocol/review/review_report.h"
#include "protocol/run/run_core.h"
#include "protocol/review/reviewed.h"
#include "protocol/state/state.h"
#include "protocol/summary/summary.h"
#include "protocol/summary/summary_gate.h"
#include "protocol/base/text.h"
#include "protocol/plan/waves.h"
#include "runner/agent_logs.h"
#include "runner/approvers.h"
#include "runner/config_report.h"
#include "runner/git.h"
#include "runner/instance_lock.h"
#include "runner/output.h"
#include "runner/render.h"
#include "runner/agent_progress.h"
#include "runner/review_gate.h"
#include "runner/subprocess.h"

#include "runner/phase_run.h"
#include "runner/plan_run.h"
#include "runner/refusals.h"
#include "runner/worktree.h"
#include "protocol/plan/plan_checks.h"
#include "protocol/plan/scope_fence.h"

namespace yolo::runner::phase {

using execution::MergeState;
using execution::PlanStatus;
using execution::Result;
using execution::RunStatus;

namespace stdfs = std::filesystem;
using execution::PlanEntry;
using execution::SummaryState;
using json_field::str;
using out::Sym;

inline constexpr const char* kRoadmap = ".yolo-planning/ROADMAP.md";

std::optional<long long> as_int(const std::string& s);

struct PhaseDir {
  long long number = 0;
  std::string folder;  // "01-demo"
  std::string slug;    // "demo"
  stdfs::path abs;
  std::string rel;  // ".yolo-planning/phases/01-demo"
};

std::vector<PhaseDir> list_phases(const stdfs::path& root);
// The plan's SUMMARY, relative to the root: the one that exists under any name the corpus
// uses (`NN-MM-SUMMARY.md` beside `MM-PLAN.md` too), else the name the phase's naming asks for.
std::string summary_rel_for(const World& w, const stdfs::path& root, const std::string& plan_rel);
std::string fmt_secs(double ms);
// /proc/sys/kernel/random/boot_id: a pid and start time name a process only within one boot.
std::string boot_id();
// What a later execute needs to know whether this executor still runs (its pid may be reused).
json executor_record(int pid, unsigned long long start_ticks);
bool executor_configured(const Config& c);
// This process's limit of open files (`ulimit -n`; -1: unknown).
long open_files_limit();
// How many executors can run at once within that limit, the files open now counted.
int fd_parallel_cap(bool isolated);
// want, lowered to fd_parallel_cap(isolated) when that is less; then lowered(cap, the
// limit of open files) is called first.
int parallel_within_fd_limit(int want, bool isolated, const std::function<void(int, long)>& lowered);

}  // namespace yolo::runner::phase
