// Checks yolo runs itself: `must_haves.checks` of a plan, argv lists yolo runs in
// the plan's worktree after the executor, never through a shell. A failing check fails the
// plan; the agent's own claims are hints, the checks are the evidence. Pure: parsing the
// entries and judging the results; runner/plan_exec runs them.
//
//   must_haves:
//     checks:
//       - ["make", "test"]                                   # an argv list
//       - {argv: ["./scripts/lint", "{worktree}"], timeout_ms: 60000, name: lint}
#pragma once
#include <string>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/plan/plan.h"

namespace yolo::plan_checks {

struct Spec {
  std::string name;               // given, else argv[0]
  std::vector<std::string> argv;  // placeholders ({worktree}, {plan_id}, ...) expanded by the runner
  long long timeout_ms = 0;       // 0: the runner's default
};

struct Parsed {
  std::vector<Spec> checks;
  std::vector<std::string> errors;  // "must_haves.checks[1]: ..." one per malformed entry
};

// The checks of a plan (none when must_haves is a list or has no `checks`).
Parsed parse(const Plan& plan);
Parsed parse(const json& must_haves);

struct Outcome {
  std::string name;
  std::vector<std::string> argv;
  bool ran = false;      // started and exited (any status)
  int exit_code = -1;    // when ran
  std::string describe;  // "exited with status 1", "timed out after ..."
  long long duration_ms = 0;
  std::string output_tail;  // last lines of stdout+stderr
  bool passed() const { return ran && exit_code == 0; }
  // {"name","argv","passed","exit","outcome","duration_ms","output_tail"}
  json to_json() const;
};

// One high finding (check "checks") per failed check, one per malformed entry.
std::vector<Finding> findings(const std::vector<Outcome>& outcomes, const std::vector<std::string>& errors);

}  // namespace yolo::plan_checks
