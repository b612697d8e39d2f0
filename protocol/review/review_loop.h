// The two-stage review of a plan and its feedback loop (PROTOCOL.md section 4), as pure
// logic over small ports. Stage 1 (the structural pre-check) runs here; the reviewer and
// the architect are reached through ReviewerPort / ArchitectPort, implemented in runner/
// (runner/agents.h) and by fakes in tests. Nothing here spawns, prints or writes state:
// a LoopObserver hears about every step.
//
// One cycle: Stage 1; a Stage 1 reject skips Stage 2; otherwise the reviewer runs and
//   - could not run (not configured, not found, non-zero exit, timeout) -> the Stage 1
//     verdict and findings (source "fallback");
//   - ran but printed no well-formed VERDICT line -> reject (source "parse_failure");
//   - else its verdict and findings (source "reviewer").
// A high finding id that was high in 2+ cycles is escalated; a cycle with an escalated
// high finding is never approve or conditional (it becomes reject).
// On reject, while cycles remain, the architect revises the plan in place from the delta
// findings (high and medium, new or changed severity since the previous cycle) and the
// next cycle runs. The loop stops early when the architect is missing or fails, when it
// leaves the plan's content hash unchanged, or after a parse failure (fail closed).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/review/stage1.h"
#include "protocol/review/reviewer_output.h"

namespace yolo::review {

enum class Source { Reviewer, Fallback, ParseFailure, Stage1Reject, SandboxRefused };
// reviewer | fallback | parse_failure | stage1_reject | sandbox_refused
const char* to_string(Source s);

// --- ports ------------------------------------------------------------------
struct AgentRun {
  enum class Status { Ran, Unavailable, Interrupted };
  Status status = Status::Unavailable;
  std::string output;  // the agent's standard output (the completion message)
  std::string reason;  // why it is unavailable ("not configured", "exited with status 3", ...)
  bool output_truncated = false;
  json info = json::object();  // what the port wants reported (argv, model, timings)
  // Escape attempts its sandbox refused it ("unshare(CLONE_NEWUSER) by sh (pid 12)"): the
  // review fails closed whatever the agent answered.
  std::vector<std::string> refused;
};

struct ReviewerRequest {
  std::string plan_path, phase_dir, plan_id;
  int cycle = 1, max_cycles = 1;
  std::vector<ReviewerFinding> stage1_findings;
  std::vector<ReviewerFinding> previous_findings;  // the previous cycle's (cycle > 1)
  std::string prompt;                              // reviewer_prompt(*this)
};

struct ArchitectRequest {
  std::string plan_path, phase_dir, plan_id;
  int cycle = 1, max_cycles = 1;               // the cycle whose findings are to be fixed
  std::vector<ReviewerFinding> delta;          // high/medium, new or changed severity
  std::vector<ReviewerFinding> open_findings;  // every finding of that cycle
  std::string prompt;                          // architect_prompt(*this)
};

class ReviewerPort {
 public:
  virtual ~ReviewerPort() = default;
  virtual bool configured() const = 0;
  virtual AgentRun review(const ReviewerRequest& req) = 0;
};

class ArchitectPort {
 public:
  virtual ~ArchitectPort() = default;
  virtual bool configured() const = 0;
  // Rewrites the plan at req.plan_path in place. Ran = it exited 0.
  virtual AgentRun revise(const ArchitectRequest& req) = 0;
};

// --- results ----------------------------------------------------------------
struct CycleResult {
  int cycle = 1;
  std::string hash;  // sha256 hex of the plan as reviewed in this cycle ("" if unreadable)
  StructuralReview stage1;
  Verdict stage1_verdict = Verdict::Approve;
  Source source = Source::Fallback;
  Verdict reviewer_verdict = Verdict::Approve;  // before escalation
  Verdict verdict = Verdict::Approve;           // the cycle's verdict
  std::vector<ReviewerFinding> findings;        // incl. unparsed lines (severity low, status "unparsed")
  std::vector<UnparsedLine> unparsed;
  std::vector<std::string> escalated;  // high ids present in 2+ cycles
  std::string reason;                  // fallback reason / parse failure reason
  std::string output_tail;             // parse failure: last 20 lines of the output
  json reviewer_info = json::object();
  size_t high() const;
  json to_json() const;
};

struct ArchitectAttempt {
  int after_cycle = 0;
  size_t delta_count = 0;
  bool ran = false;
  bool changed = false;
  std::string reason;
  json info = json::object();
};

struct PlanTarget {
  std::filesystem::path plan_path;
  std::optional<std::filesystem::path> phase_dir;  // enables cross-plan checks
  std::string plan_id;                             // "" = from the plan's frontmatter
};

struct PlanLoopResult {
  std::string plan_id, plan_path, phase_dir;
  int max_cycles = 1;
  std::vector<CycleResult> cycles;
  std::vector<ArchitectAttempt> architect;
  Verdict verdict = Verdict::Reject;
  bool loop_entered = false;  // the first cycle rejected and a revision was attempted
  bool interrupted = false;
  std::string stop_reason;
  std::string hash;  // the plan's hash after the loop (what the final verdict is about)

  const CycleResult& last() const { return cycles.back(); }
  bool passed() const { return verdict != Verdict::Reject; }
  // The loop's status word: "running" while it is not finished, then "passed" or "failed".
  const char* loop_status(bool finished = true) const;
  // review_loops["{id}"] = {cycle, max, status, findings_per_cycle: [{verdict, finding_count, high}]}
  json review_loop_entry(bool finished = true) const;
  // Every finding of every cycle, de-duplicated by id (latest version wins, first-seen order).
  std::vector<ReviewerFinding> accumulated() const;
};

struct PhaseLoopResult {
  std::vector<PlanLoopResult> plans;
  bool halted = false;  // some plan ended rejected
  bool interrupted = false;
  Verdict worst = Verdict::Approve;
  // Accumulated findings of every plan, de-duplicated by (plan id, finding id), each
  // with "plan_id" added.
  json accumulated_findings() const;
};

class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  virtual void plan_start(const PlanTarget&, const std::string& /*plan_id*/, int /*max_cycles*/) {}
  virtual void cycle_start(const PlanLoopResult&, int /*cycle*/) {}
  virtual void stage1_done(const PlanLoopResult&, const CycleResult&) {}
  virtual void cycle_done(const PlanLoopResult&, const CycleResult&) {}
  virtual void loop_start(const PlanLoopResult&) {}
  virtual void architect_start(const PlanLoopResult&, const ArchitectRequest&) {}
  virtual void architect_done(const PlanLoopResult&, const ArchitectAttempt&) {}
  virtual void plan_end(const PlanLoopResult&) {}
};

struct LoopOptions {
  int max_cycles = 3;  // review_max_cycles (>= 1)
  Stage1Options stage1;
  // reviewer_required (config): a reviewer that could not run rejects (no Stage 1 fallback).
  bool reviewer_required = false;
};

// Delta findings: high and medium findings of `current` whose id was not in `previous`
// or had another severity there.
std::vector<ReviewerFinding> delta_findings(const std::vector<ReviewerFinding>& current,
                                            const std::vector<ReviewerFinding>& previous);

std::string reviewer_prompt(const ReviewerRequest& req);
std::string architect_prompt(const ArchitectRequest& req);

// sha256 hex of the file's bytes on the world's disk ("" when it cannot be read).
std::string file_hash(const World& w, const std::filesystem::path& p);

// Plans are read (Stage 1, hashes) through the world's disk.
PlanLoopResult run_plan_loop(const World& w, const PlanTarget& target, const LoopOptions& opts, ReviewerPort& reviewer,
                             ArchitectPort& architect, LoopObserver& observer);

// Plans in order, each with its own loop; every plan is reviewed even after a reject.
PhaseLoopResult run_phase_loops(const World& w, const std::vector<PlanTarget>& targets, const LoopOptions& opts,
                                ReviewerPort& reviewer, ArchitectPort& architect, LoopObserver& observer);

}  // namespace yolo::review
