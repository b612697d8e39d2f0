// One plan's outcome of a review pass, typed: what the review gate (runner/review_gate.h)
// hands the callers in its own process (`yolo execute`'s review gate, the watcher, `yolo
// review` itself). Nothing inside one program reads the review back as JSON; to_json is for
// the machines outside it (`yolo review --json`'s per-plan line adds the loop's history to
// it; execute's `review_gate` event carries it).
//
// What a person is told about a rejected review (rejected_plans) is chosen here too; the
// runner only draws it (runner/render.h: rejected_plans_report).
#pragma once
#include <string>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/review/review_loop.h"
#include "protocol/review/reviewer_output.h"

namespace yolo::review {

struct PlanReview {
  std::string plan_id;
  std::string plan;  // the plan file, relative to the project root
  std::string hash;  // sha256 of the plan the verdict is about ("" when it could not be read)
  Verdict verdict = Verdict::Reject;
  // Reviewed as it is (`--changed`): the ledger's verdict and findings are kept, nothing ran.
  bool skipped = false;
  Source source = Source::Fallback;             // what decided the last cycle (not set when skipped)
  std::vector<ReviewerFinding> findings;        // the last cycle's (skipped: the ledger record's)
  std::vector<ReviewerFinding> stage1_findings;  // the last cycle's Stage 1 findings
  std::vector<ReviewerFinding> accumulated;     // every cycle's, de-duplicated by id
  size_t cycles = 0;                            // 0 when skipped
  std::string stop_reason;
  std::string reason;                  // why the reviewer fell back or its output was not read
  std::vector<std::string> escalated;  // high finding ids of 2+ cycles: never approved
  std::vector<ArchitectAttempt> architect;
  // The configured reviewer could not run and the plan passed on Stage 1 alone (allowed by
  // reviewer_required: false): not a real review.
  bool fallback = false;
  json reviewer = json::object();  // the reviewer call's record (argv, model, outcome, sandbox)

  bool passed() const { return verdict != Verdict::Reject; }
  // "reviewer" | "fallback" | "parse_failure" | "stage1_reject", or "unchanged" when skipped.
  std::string source_name() const;
  // Whether the architect rewrote the plan during the loop.
  bool revised() const;
  // {"plan_id","plan","hash","verdict","ok","source","skipped","findings","cycles",
  //  "stop_reason","escalated","fallback"(,"reason")}
  json to_json() const;
};

// The row of a plan whose loop ran: plan is its path relative to the project root.
PlanReview plan_review(const PlanLoopResult& loop, std::string plan);

// Findings from JSON rows (a ledger record's): rows that are not findings are left out.
std::vector<ReviewerFinding> findings_from_json(const json& rows);

// A plan the review rejected, as a person is told about it: what, why, what was
// escalated and the findings most worth reading first.
struct RejectedPlan {
  std::string plan_id, plan, source, stop_reason;
  size_t cycles = 0;
  std::vector<std::string> escalated;         // finding ids high in 2+ cycles, never approved
  std::vector<ReviewerFinding> top_findings;  // at most `top`, high first, then medium, then the rest
  size_t more = 0;                            // findings left out of top_findings
};
// The rejected plans of `rows`, in order. Their findings: the last cycle's, else every
// cycle's, else Stage 1's.
std::vector<RejectedPlan> rejected_plans(const std::vector<PlanReview>& rows, size_t top = 3);
// The plan files of the rejected plans, in order.
std::vector<std::string> rejected_plan_paths(const std::vector<PlanReview>& rows);

}  // namespace yolo::review
