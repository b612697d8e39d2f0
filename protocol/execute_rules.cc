#include "protocol/execute_rules.h"

namespace yolo::execution {

ExecuteEnd execute_end(int exit_code) {
  switch (exit_code) {
    case kExitComplete:
      return ExecuteEnd::Complete;
    case kExitHalted:
      return ExecuteEnd::HaltedOrFailed;
    case kExitPaused:
      return ExecuteEnd::Paused;
    case kExitWaitingSummary:
      return ExecuteEnd::WaitingForSummaries;
    default:
      return ExecuteEnd::Other;
  }
}

bool expected_end(ExecuteEnd e) {
  return e == ExecuteEnd::Complete || e == ExecuteEnd::Paused || e == ExecuteEnd::WaitingForSummaries;
}

ReviewGate review_gate(const std::string& setting, bool review_flag) {
  if (setting == "never") return ReviewGate::OffByConfig;
  if (setting == "always" || review_flag) return ReviewGate::Runs;
  return ReviewGate::NotRequested;
}

}  // namespace yolo::execution
