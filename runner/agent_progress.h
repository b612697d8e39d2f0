// A live line per agent call: which plan, which agent, how long it has run and
// how long it may run. On a terminal it is redrawn in place about once a second
// ("◆ 01-02 reviewer 12s/600s", like the executors' line); piped, nothing moves: one line per event.
//
// `yolo review` shows its own calls. Inside `yolo execute` the review gate is a `yolo review
// --json` child whose output is read when it ends: the parent asks it (YOLO_AGENT_PROGRESS=1)
// for one JSON line per call event on stderr ({"type":"agent_progress",...}) and shows them
// while the child runs (run_review_child).
#pragma once
#include <string>

#include "protocol/json.h"
#include "runner/agents.h"
#include "runner/subprocess.h"

namespace yolo::runner {

// "01-02 reviewer 12s/600s" (no timeout: "01-02 reviewer 12s"); plan ids are sanitised.
std::string agent_call_text(const std::string& plan_id, const std::string& agent, double elapsed_ms,
                            long long timeout_ms);

// The JSON line of one call event: {"type":"agent_progress","event":"started|running|ended",
// "plan_id","agent","cycle","timeout_ms","elapsed_ms"(,"outcome")}.
json agent_call_json(const AgentCall& c);

// How `yolo review` shows its agent calls: `live` (a terminal, not --json) redraws the live
// line; `json_events` (the parent set YOLO_AGENT_PROGRESS=1) writes the start and end events
// as JSON lines on stderr. Neither: an empty progress (the review's own lines say when a
// call starts and what it gave).
AgentProgress agent_progress(bool live, bool json_events);
// Whether the parent asked for the events: YOLO_AGENT_PROGRESS=1.
bool agent_progress_requested();

// Runs execute's `yolo review --json` child (spec) and shows its agent calls as they happen:
// with `live`, the line "◆ Review gate: 01-02 reviewer 12s/600s · 40s in all" (between calls
// "◆ <what>  40s") redrawn about once a second;
// without, one line per call start and end. The progress lines are removed from the
// result's err; the result is otherwise run_process's.
SpawnResult run_review_child(SpawnSpec spec, const std::string& what, bool live);

}  // namespace yolo::runner
