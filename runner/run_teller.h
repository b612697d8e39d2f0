// What a part of `yolo execute`'s run says (runner/phase_run_internal.h), the one way each
// part speaks: an event, a line for people, a line of the event log. The run's report
// (RunReport, runner/run_report.h) is the Teller of a run; a unit test of a part gives a fake
// that records what was said (tests/runner/fake_teller.h).
#pragma once
#include <string>

#include "protocol/base/json.h"
#include "runner/output.h"

namespace yolo::runner::phase {

class Teller {
 public:
  virtual ~Teller() = default;
  // An event: a JSON line with its data (--json), or for people sym and human.
  virtual void emit(const std::string& event, json data, out::Sym sym, const std::string& human) = 0;
  // An extra line for people only (dim: a detail, drawn faint on a terminal).
  virtual void note(const std::string& human, bool dim = false) = 0;
  // A line of the event log (when the config enables it); plan: the plan's number or "".
  virtual void log(const std::string& type, const std::string& plan, json data = json::object()) = 0;

 protected:
  Teller() = default;
  Teller(const Teller&) = default;
  Teller& operator=(const Teller&) = default;
};

}  // namespace yolo::runner::phase
