// The reviewer and architect agents as child processes: argv templates from config
// (`reviewer.command` / `architect.command`), placeholders substituted inside single argv
// elements (never a shell), each child in its own process group with the configured
// timeout, output capped. Implements the ports of protocol/review_loop.h.
//
// Placeholders: {plan_path} {phase_dir} {plan_id} {plan_title} {model} {max_turns} {cycle}
// {prompt} {prompt_file} (a temp file holding the prompt, removed afterwards). When the
// template uses neither {prompt} nor {prompt_file}, the prompt is given on stdin.
// Environment: YOLO_CORRELATION_ID, YOLO_PLAN_ID, YOLO_PHASE_DIR, YOLO_CYCLE (and
// YOLO_PLAN_PATH, YOLO_AGENT, YOLO_MODEL, YOLO_MAX_TURNS).
//
// SIGINT/SIGTERM/SIGHUP while an agent runs: its whole process group is stopped (SIGTERM,
// then SIGKILL) and the run reports Interrupted with the signal, so the caller can exit.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/config.h"
#include "protocol/review_loop.h"
#include "runner/subprocess.h"

namespace yolo::runner {

struct AgentContext {
  std::filesystem::path root;  // the project root: the child's working folder
  std::string plan_path, phase_dir, plan_id, plan_title;
  int cycle = 1;
  std::string prompt;
  std::string correlation_id;
};

struct AgentSpawn {
  SpawnResult result;
  std::vector<std::string> argv;
  std::string model;
  long long max_turns = 0;
  long long timeout_ms = 0;
  double child_cpu_ms = 0;  // the child's own CPU time (user + system), from rusage
  double parent_cpu_ms = 0; // yolo's own CPU time spent around the spawn (fork, pipes, loop)
  int interrupt_signal = 0; // set when SIGINT/SIGTERM/SIGHUP stopped the run
  std::string setup_error;  // e.g. the prompt file could not be written
  // {"agent","argv0","model","max_turns","timeout_ms","outcome","elapsed_ms","child_cpu_ms",...}
  json info(const std::string& agent) const;
};

// The model for an agent: model_overrides[agent], else the profiles file
// ($YOLO_MODEL_PROFILES, else <root>/.yolo-planning/model-profiles.json) through
// resolve_model; with no profiles file, "sonnet". A warning is set when a profiles file
// exists but cannot be used.
std::string agent_model(const std::filesystem::path& root, const Config& cfg, const std::string& agent, std::string* warning);
// The turn budget from resolve_turns (config effort), else the agent's default base.
long long agent_turns(const Config& cfg, const std::string& agent);

// Spawns `agent` ("reviewer" | "architect") from its command spec and waits for it.
AgentSpawn spawn_agent(const std::string& agent, const Config& cfg, const AgentContext& ctx);

// Maps a finished spawn to the loop's AgentRun (Ran only for exit status 0).
review::AgentRun to_agent_run(const std::string& agent, const AgentSpawn& s);

// The ports, backed by spawn_agent.
class ReviewerAgent : public review::ReviewerPort {
 public:
  ReviewerAgent(std::filesystem::path root, const Config& cfg, std::string correlation_id)
      : root_(std::move(root)), cfg_(cfg), correlation_id_(std::move(correlation_id)) {}
  bool configured() const override { return !cfg_.reviewer.argv.empty(); }
  review::AgentRun review(const review::ReviewerRequest& req) override;
  int interrupt_signal() const { return interrupt_signal_; }

 private:
  std::filesystem::path root_;
  const Config& cfg_;
  std::string correlation_id_;
  int interrupt_signal_ = 0;
};

class ArchitectAgent : public review::ArchitectPort {
 public:
  ArchitectAgent(std::filesystem::path root, const Config& cfg, std::string correlation_id)
      : root_(std::move(root)), cfg_(cfg), correlation_id_(std::move(correlation_id)) {}
  bool configured() const override { return !cfg_.architect.argv.empty(); }
  review::AgentRun revise(const review::ArchitectRequest& req) override;
  int interrupt_signal() const { return interrupt_signal_; }

 private:
  std::filesystem::path root_;
  const Config& cfg_;
  std::string correlation_id_;
  int interrupt_signal_ = 0;
};

}  // namespace yolo::runner
