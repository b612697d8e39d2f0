// The reviewer and architect agents as child processes: argv templates from config
// (`reviewer.command` / `architect.command`), placeholders substituted inside single argv
// elements (never a shell), each child in its own process group with the configured
// timeout, output capped. Implements the ports of protocol/review/review_loop.h.
//
// Placeholders: {plan_path} {plan_dir} (the folder holding it) {phase_dir} {plan_id} {plan_title}
// {model} {max_turns} {cycle} {prompt} {prompt_file} (a temp file holding the prompt, removed
// afterwards). When the
// template uses neither {prompt} nor {prompt_file}, the prompt is given on stdin.
// Environment: YOLO_CORRELATION_ID, YOLO_PLAN_ID, YOLO_PHASE_DIR, YOLO_CYCLE (and
// YOLO_PLAN_PATH, YOLO_AGENT, YOLO_MODEL, YOLO_MAX_TURNS).
//
// SIGINT/SIGTERM/SIGHUP while an agent runs: its whole process group is stopped (SIGTERM,
// then SIGKILL) and the run reports Interrupted with the signal, so the caller can exit.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/state/config.h"
#include "protocol/review/review_loop.h"
#include "protocol/ports/world.h"
#include "runner/subprocess.h"

namespace yolo::runner {

// One agent call as it runs, for a progress line (plan, agent, elapsed, timeout).
struct AgentCall {
  enum class Event { Started, Running, Ended };
  Event event = Event::Started;
  std::string agent, plan_id;
  int cycle = 1;
  long long timeout_ms = 0;
  double elapsed_ms = 0;
  const SpawnResult* result = nullptr;  // Ended: how it ended
};
// Called when the call starts, about once a second while it runs, and when it ends.
using AgentProgress = std::function<void(const AgentCall&)>;

struct AgentContext {
  const World& world;          // the plan (and the architect's copy of it) read and written through it
  std::filesystem::path root;  // the project root: the child's working folder
  std::string plan_path, phase_dir, plan_id, plan_title;
  int cycle = 1;
  std::string prompt;
  std::string correlation_id;
  AgentProgress progress;  // may be empty
};

struct AgentSpawn {
  SpawnResult result;
  std::vector<std::string> argv;
  std::string model;
  long long max_turns = 0;
  long long timeout_ms = 0;
  double child_cpu_ms = 0;   // the child's own CPU time (user + system), from rusage
  double parent_cpu_ms = 0;  // yolo's own CPU time spent around the spawn (the clone, pipes, loop)
  int interrupt_signal = 0;  // set when SIGINT/SIGTERM/SIGHUP stopped the run
  std::string setup_error;   // e.g. the prompt file could not be written, or no sandbox
  json sandbox;              // what the child ran under (runner/sandbox.h, Confinement::record)
  // The architect's private copy of the plan, the plan it came from and the plan's text then.
  std::filesystem::path plan_copy, plan_real;
  std::string plan_before;
  std::string revise_error;  // the copy could not be taken back
  std::vector<std::string> refused;  // escape attempts its sandbox refused (runner/refusals.h)
  // {"agent","argv0","model","max_turns","timeout_ms","outcome","elapsed_ms","child_cpu_ms",...}
  json info(const std::string& agent) const;
};

// The model for an agent: model_overrides[agent], else the profiles file
// ($YOLO_MODEL_PROFILES, else <root>/.yolo-planning/model-profiles.json) through
// resolve_model; with no profiles file, "sonnet". A warning is set when a profiles file
// exists but cannot be used. The profiles file is read through w.
std::string agent_model(const World& w, const std::filesystem::path& root, const Config& cfg, const std::string& agent,
                        std::string* warning);
// The turn budget from resolve_turns (config effort), else the agent's default base.
long long agent_turns(const Config& cfg, const std::string& agent);

// Spawns `agent` ("reviewer" | "architect") from its command spec and waits for it.
AgentSpawn spawn_agent(const std::string& agent, const Config& cfg, const AgentContext& ctx);

// Writes the architect's revised copy back over the plan (atomically, only when it changed
// and nobody else changed the plan meanwhile), through w. "" or why not.
std::string revise_from_copy(const World& w, AgentSpawn& s);

// What a person does next about an agent call that failed: `yolo doctor` when the program
// could not start (nothing was logged), else `yolo logs PLAN` (its whole output). `info` is
// AgentSpawn::info (its "outcome").
std::string agent_next_step(bool started, const std::string& plan_id);
std::string agent_next_step(const json& info, const std::string& plan_id);

// Maps a finished spawn to the loop's AgentRun (Ran only for exit status 0).
review::AgentRun to_agent_run(const std::string& agent, const AgentSpawn& s);

// One agent of the review loop ("reviewer" or "architect") as a child process: its command
// from config, spawned with spawn_agent, mapped with to_agent_run; remembers the signal
// that interrupted it. The two ports below are this, seen through each port's interface.
class AgentProcess {
 public:
  AgentProcess(const World& w, std::string agent, std::filesystem::path root, const Config& cfg,
               std::string correlation_id)
      : world_(w),
        agent_(std::move(agent)),
        root_(std::move(root)),
        cfg_(cfg),
        correlation_id_(std::move(correlation_id)) {}
  bool configured() const;
  review::AgentRun run(const std::string& plan_path, const std::string& phase_dir, const std::string& plan_id,
                       int cycle, const std::string& prompt);
  int interrupt_signal() const { return interrupt_signal_; }
  void set_progress(AgentProgress p) { progress_ = std::move(p); }

 private:
  const World& world_;  // the plan read for its title, the usage record written
  std::string agent_;
  std::filesystem::path root_;
  const Config& cfg_;
  std::string correlation_id_;
  int interrupt_signal_ = 0;
  AgentProgress progress_;
};

// A port of the review loop (Port) backed by an AgentProcess; Request carries plan_path,
// phase_dir, plan_id, cycle and prompt.
template <class Port, class Request>
class AgentPort : public Port {
 public:
  bool configured() const override { return p_.configured(); }
  int interrupt_signal() const { return p_.interrupt_signal(); }
  void set_progress(AgentProgress p) { p_.set_progress(std::move(p)); }

 protected:
  AgentPort(const World& w, const char* agent, std::filesystem::path root, const Config& cfg,
            std::string correlation_id)
      : p_(w, agent, std::move(root), cfg, std::move(correlation_id)) {}
  review::AgentRun run(const Request& r) { return p_.run(r.plan_path, r.phase_dir, r.plan_id, r.cycle, r.prompt); }

 private:
  AgentProcess p_;
};

class ReviewerAgent : public AgentPort<review::ReviewerPort, review::ReviewerRequest> {
 public:
  ReviewerAgent(const World& w, std::filesystem::path root, const Config& cfg, std::string correlation_id)
      : AgentPort(w, "reviewer", std::move(root), cfg, std::move(correlation_id)) {}
  review::AgentRun review(const review::ReviewerRequest& r) override { return run(r); }
};

class ArchitectAgent : public AgentPort<review::ArchitectPort, review::ArchitectRequest> {
 public:
  ArchitectAgent(const World& w, std::filesystem::path root, const Config& cfg, std::string correlation_id)
      : AgentPort(w, "architect", std::move(root), cfg, std::move(correlation_id)) {}
  review::AgentRun revise(const review::ArchitectRequest& r) override { return run(r); }
};

}  // namespace yolo::runner
