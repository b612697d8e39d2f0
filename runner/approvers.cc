#include "runner/approvers.h"

#include <map>

#include "protocol/base/argv_template.h"
#include "protocol/base/text.h"
#include "runner/sandbox.h"
#include "runner/subprocess.h"

namespace yolo::runner {

gates::ApproverVerdict CommandApprover::decide(const gates::ApproverRequest& req) {
  gates::ApproverVerdict v;
  if (req.argv_template.empty()) {
    v.error = "approver command is empty";
    return v;
  }
  std::map<std::string, std::string> vars = {
      {"plan_path", req.plan_path}, {"gate_type", req.gate_type}, {"gate_id", req.gate_id}, {"reason", req.reason}};
  // The approver runs in the approver's sandbox: it reads the project, writes only its temp
  // folder, and can reach neither the key nor the gates it decides.
  Config cfg;
  if (auto c = load_config(world_, req.root); c.ok()) cfg = c.config;
  SandboxRequest sreq;
  sreq.role = sandbox::Role::Approver;
  sreq.project_root = req.root;
  ConfinementResult confined = confine(world_, cfg, sreq);
  if (!confined.ok()) {
    v.error = "approver " + req.argv_template[0] + " not started: " + confined.error;
    return v;
  }
  SpawnSpec spec;
  spec.confinement = confined.confinement;
  spec.argv = expand_argv(req.argv_template, vars);
  spec.cwd = req.root;
  spec.timeout_ms = req.timeout_ms;
  spec.output_cap = 64 * 1024;
  spec.env = {{"YOLO_GATE_ID", req.gate_id}, {"YOLO_GATE_TYPE", req.gate_type}, {"YOLO_PLAN_PATH", req.plan_path}};
  SpawnResult r = run_process(spec);
  std::string name = "approver " + req.argv_template[0];
  if (!r.ok()) {
    v.error = name + " " + r.describe();
    std::string tail = text::tail_lines(text::trim(r.err), 3);
    if (!tail.empty()) v.error += ": " + tail;
    return v;
  }
  if (r.out_truncated()) {
    v.error = name + " printed more than " + std::to_string(spec.output_cap) + " bytes; expected one JSON verdict";
    return v;
  }
  v = gates::parse_verdict(r.out);
  if (!v.error.empty()) v.error = name + ": " + v.error;
  return v;
}

}  // namespace yolo::runner
