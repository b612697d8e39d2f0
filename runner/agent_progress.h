// A live line per agent call: which plan, which agent, how long it has run and
// how long it may run. On a terminal it is redrawn in place about once a second
// ("◆ 01-02 reviewer 12s/600s", like the executors' line); piped, nothing moves: one line per event.
//
// `yolo review` shows its calls with the review's own lines; `yolo execute` runs the same
// review quietly and shows only its calls, on the review gate's line (ReviewGateProgress).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "runner/agents.h"
#include "runner/subprocess.h"

namespace yolo::runner {

// "01-02 reviewer 12s/600s" (no timeout: "01-02 reviewer 12s"); plan ids are sanitised.
std::string agent_call_text(const std::string& plan_id, const std::string& agent, double elapsed_ms,
                            long long timeout_ms);

// How `yolo review` shows its agent calls: `live` (a terminal, not --json) redraws the live
// line; otherwise an empty progress (the review's own lines say when a call starts and what
// it gave).
AgentProgress agent_progress(bool live);

// The agent calls of execute's review gate as they happen: with `live`, the line
// "◆ Review gate: 01-02 reviewer 12s/600s · 40s in all" (between calls "◆ <what>  40s")
// redrawn at each call event (about once a second while a call runs) and cleared when this
// ends; without, one line per call start and end.
class ReviewGateProgress {
 public:
  ReviewGateProgress(std::string what, bool live);
  ~ReviewGateProgress();
  ReviewGateProgress(const ReviewGateProgress&) = delete;
  ReviewGateProgress& operator=(const ReviewGateProgress&) = delete;
  // The callback for ReviewGateOptions::progress; valid while this lives.
  AgentProgress progress();
  void on_call(const AgentCall& c);

 private:
  void draw() const;
  std::string what_;
  bool live_;
  uint64_t t0_;
  std::optional<AgentCall> call_;  // the call running now (its result pointer is not kept)
};

}  // namespace yolo::runner
