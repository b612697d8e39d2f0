// The one constructor of a Stage 1 / SUMMARY gate finding.
#pragma once
#include <string>
#include <utility>

#include "protocol/findings/findings.h"

namespace yolo {

inline Finding make_finding(Severity s, std::string check, std::string issue, std::string fix,
                            bool auto_fixable = false) {
  Finding f;
  f.severity = s;
  f.check = std::move(check);
  f.issue = std::move(issue);
  f.suggested_fix = std::move(fix);
  f.auto_fixable = auto_fixable;
  return f;
}

}  // namespace yolo
