// Findings as JSON rows (a ledger record's, `yolo review --json`'s) or typed (a review's
// rows in the reviewing process): what a person is told about a rejected plan in one line
// (`yolo status`, the watcher), decided once.
#pragma once
#include <string>

#include <vector>

#include "protocol/base/json.h"
#include "protocol/review/reviewer_output.h"

namespace yolo {

// The first row of the highest severity present ("high", then "medium", then "low"), or
// nullptr (no array, no row with one of those severities). Rows of any other shape are skipped.
const json* most_severe_finding(const json& findings);
// The same rule on typed findings.
const review::ReviewerFinding* most_severe_finding(const std::vector<review::ReviewerFinding>& findings);
// A row's one line: its title, else its issue (Stage 1's word), else its description.
std::string finding_headline(const json& finding);
std::string finding_headline(const review::ReviewerFinding& finding);

}  // namespace yolo
