// Approvals are made by a person (PROTOCOL.md section 6, "Trust"): `yolo approve` and
// `yolo reject` need a terminal (stdin a tty and a controlling terminal) and refuse inside a
// process yolo itself started (an agent, executor, reviewer or approver): the environment
// marker yolo gives its children, and any ancestor whose /proc/PID/exe is a yolo binary.
// Automation approves through the approvers configured in config.json, which the vision
// approval covers.
#pragma once
#include <string>

namespace yolo::runner {

// The variable yolo sets (to its pid) for every child it starts.
inline constexpr const char* kStartedByYolo = "YOLO_STARTED_BY";

// Called once at start-up: every child of this process carries the marker.
void mark_children_as_started_by_yolo();

struct PersonCheck {
  bool ok = false;
  std::string problem;  // why this is not a person at a terminal (a sentence)
};
// Whether the current process may act as a person deciding a gate.
PersonCheck person_at_terminal();

// After a person decided a gate: the pid and user namespaces they decided in, kept beside the
// approval key (once), so a later decision from another namespace is refused.
void remember_person_namespaces();

// Asks `question` on stderr and reads one line from stdin: true for y / yes (any case).
bool confirm(const std::string& question);

}  // namespace yolo::runner
