// The reviewer agent's completion message (PROTOCOL.md section 4):
//
//   VERDICT: approve|reject|conditional
//   CYCLE: 2/3            RESOLVED: n   PERSISTENT: n   NEW: n     (re-reviews)
//   FINDINGS:
//   - [id:f-001] [severity:high] [file:src/a.cc] [status:persistent] issue: ... | suggestion: ...
//
// Tolerant of prose around the block, Markdown fences and emphasis, CRLF and leading
// spaces; strict about the verdict: a well-formed `VERDICT:` line (one known word and
// nothing else) outside fenced blocks; fenced ones only when there is none outside (the
// reviewer's own fenced answer); never a quoted (`>`) line, so a plan the reviewer echoes
// cannot steer it. Two different verdicts fail closed: reject, `conflict` says why (also
// as a high finding). An unknown word is no verdict. Finding lines that cannot be
// read are reported in `unparsed`, never silently dropped.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"
#include "protocol/base/result.h"

namespace yolo::review {

// One finding in the shape every review step passes around:
// {"id","severity","file","title","description","suggestion"} (+"status" when given).
struct ReviewerFinding {
  std::string id;
  Severity severity = Severity::Low;
  std::string file;
  std::string title;
  std::string description;
  std::string suggestion;
  std::string status;  // persistent | new | resolved | changed | unparsed | ... ; empty when absent
  json to_json() const;
  static std::optional<ReviewerFinding> from_json(const json& j);
};

struct UnparsedLine {
  int line = 0;  // 1-based line in the reviewer's output
  std::string text;
  std::string reason;
};

struct ReviewerOutput {
  std::optional<Verdict> verdict;
  int verdict_line = 0;  // 1-based, when verdict is set
  std::optional<int> cycle, cycle_max;
  std::optional<int> resolved, persistent, new_count;
  bool findings_block = false;  // a FINDINGS: header was seen
  std::vector<ReviewerFinding> findings;
  std::vector<UnparsedLine> unparsed;          // finding-like lines that could not be read
  std::vector<std::string> rejected_verdicts;  // "line N: VERDICT: maybe" (ill-formed VERDICT lines)
  std::string conflict;                        // conflicting verdicts (then verdict is reject); empty otherwise
  bool ok() const { return verdict.has_value(); }
  // Why there is no verdict (empty when there is one).
  std::string why_no_verdict() const;
};

ReviewerOutput parse_reviewer_output(std::string_view text);

// Parses one finding line (with or without its list bullet); the failure says what it lacks.
Result<ReviewerFinding> parse_finding_line(std::string_view line);

// A stable id for a finding that came without one ("f-" + 8 hex of its text).
std::string synthetic_finding_id(std::string_view prefix, std::string_view text);

// A Stage 1 finding in the reviewer shape (id "s1-<check>-<hash>").
ReviewerFinding from_stage1(const Finding& f);

}  // namespace yolo::review
