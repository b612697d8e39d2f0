// `yolo execute`'s gates, a part of the Run (runner/phase_run_internal.h) with a class of its
// own: the vision, wave and budget gates a run passes, pauses at or halts on, and the pause at
// a gate opened while the run went on.
//
// What a gate needs is protocol's decision (gates::ensure: proceed, pause, halt, reopen a
// stale approval, request one); this class carries it out against the state file and says
// what happened: an event for people and machines and a note through its Teller
// (runner/run_teller.h), the run's stop and halt and the person's next step through its
// Host. It reads the state through the run's StateWrites (runner/run_state_writes.h), so a
// gate sees the plans' statuses the run queued, and hands back the document a gate's write
// left, so the run does not read it again.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/gates/gates.h"
#include "protocol/ports/world.h"
#include "protocol/run/execute_rules.h"
#include "protocol/run/execution.h"
#include "protocol/run/run_core.h"
#include "protocol/state/config.h"
#include "runner/approvers.h"
#include "runner/output.h"
#include "runner/run_state_writes.h"
#include "runner/run_teller.h"

namespace yolo::runner::phase {

enum class GateOutcome { Passed, Paused, Halted };
// The run core's answer to its question for a gate: passed, or the run stopped (paused, halted).
inline run::Answer run_answer(GateOutcome g) {
  return g == GateOutcome::Passed ? run::Answer::Passed : run::Answer::Stopped;
}

class RunGates {
 public:
  struct Host {
    std::function<void(int code, execution::Result result, const std::string& message)> stop;
    std::function<void(const std::string& reason)> set_halted;  // the state's status, with why
    std::function<void(std::string)> next_step;                 // the person's next step
  };
  RunGates(const World& world, std::filesystem::path root, const Config& cfg, StateWrites& writes,
           CommandApprover& approver, Teller& tell, Host host)
      : world_(world), root_(std::move(root)), cfg_(cfg), writes_(writes), approver_(approver), tell_(tell),
        host_(std::move(host)) {}

  // The gate of `type` on the file `rel` (root-relative), passed before the run goes on:
  // Passed (go on), Paused or Halted (the run was stopped through the Host). files: what an
  // approval covers beside rel (a wave's plans); wave: the wave it is for.
  GateOutcome ensure(gates::GateType type, const std::string& rel, const std::string& reason,
                     std::optional<int> wave, const std::vector<std::string>& files = {});
  // Before wave w of `phase`: a budget of the config passed (by this run, cid) opens the
  // budget gate on a statement of it. Passed when within budget or approved.
  GateOutcome budget(long long w, const std::string& phase, const std::string& cid);
  // Before wave w of `phase`: its wave gate, which covers every plan of the wave (of entries,
  // the phase's plans). Passed (go on), Paused or Halted (the run was stopped).
  GateOutcome wave_gate(long long w, const std::vector<execution::PlanEntry>& entries, const std::string& phase);
  // Nothing runs and the state (doc) has a gate open, or lacks the approval the waves need:
  // the run pauses (stopped through the Host) at that gate, said with how to approve it.
  void pause(const json& doc);
  // The run waits at the open gate g: said, with how to approve or reject it.
  void pause_for(const json& g);
  // How the config approves a gate of this type, for people ("manual", "command NAME", ...).
  std::string approver_note_for(gates::GateType type) const;

 private:
  const World& world_;
  std::filesystem::path root_;
  const Config& cfg_;
  StateWrites& writes_;
  CommandApprover& approver_;  // the gates' approver commands (config approvers)
  Teller& tell_;               // what it says: events and notes
  Host host_;
};

}  // namespace yolo::runner::phase
