#include "runner/agents.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "protocol/state/agent_usage.h"
#include "protocol/base/argv_template.h"
#include "protocol/ports/clock.h"
#include "protocol/findings/failure_line.h"
#include "protocol/ports/fs.h"
#include "protocol/plan/plan.h"
#include "protocol/base/text.h"
#include "runner/agent_logs.h"
#include "runner/refusals.h"
#include "runner/sandbox.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

std::string agent_model(const World& w, const stdfs::path& root, const Config& cfg, const std::string& agent,
                        std::string* warning) {
  if (auto ov = cfg.raw.find("model_overrides"); ov != cfg.raw.end() && ov->is_object())
    if (auto m = ov->find(agent); m != ov->end() && m->is_string() && cost_weight(m->get<std::string>()) > 0)
      return m->get<std::string>();
  stdfs::path profiles_path;
  if (const char* p = std::getenv("YOLO_MODEL_PROFILES"); p && *p)
    profiles_path = p;
  else
    profiles_path = root / ".yolo-planning" / "model-profiles.json";
  auto read = w.files().read(profiles_path, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!read.ok()) {
    if (read.error->kind != fs::FileError::Kind::NotFound && warning)
      *warning = read.error->message + " (using sonnet)";
    return "sonnet";
  }
  JsonParse parsed = parse_json_bounded(read.content);
  const json& profiles = parsed.doc;
  if (!parsed.ok()) {
    if (warning) *warning = profiles_path.string() + ": " + parsed.message + " (using sonnet)";
    return "sonnet";
  }
  ModelChoice c = resolve_model(agent, cfg.raw, profiles);
  if (!c.error.empty()) {
    if (warning) *warning = profiles_path.string() + ": " + c.error + " (using sonnet)";
    return "sonnet";
  }
  return c.model;
}

long long agent_turns(const Config& cfg, const std::string& agent) {
  TurnsChoice t = resolve_turns(agent, cfg.raw, "");
  if (t.error.empty()) return t.turns;
  return default_base_turns(agent);
}

namespace {

const char* outcome_name(SpawnResult::Outcome o) {
  switch (o) {
    case SpawnResult::Outcome::Exited:
      return "exited";
    case SpawnResult::Outcome::Signaled:
      return "signaled";
    case SpawnResult::Outcome::TimedOut:
      return "timed_out";
    case SpawnResult::Outcome::Cancelled:
      return "cancelled";
    case SpawnResult::Outcome::SpawnFailed:
      return "spawn_failed";
  }
  return "unknown";
}

double cpu_ms(int who) {
  rusage ru{};
  ::getrusage(who, &ru);
  return (static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3) +
         (static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
}

bool uses(const std::vector<std::string>& tmpl, const std::string& placeholder) {
  for (const auto& a : tmpl)
    if (a.find(placeholder) != std::string::npos) return true;
  return false;
}

// A temp file holding the prompt, removed when this goes out of scope.
struct PromptFile {
  std::string path;
  std::string error;
  // In the agent's own temp folder (inside our private one: the keeper removes it even if we
  // are killed, subprocess.h), the only part of it the agent can read.
  PromptFile(const std::string& content, stdfs::path dir) {
    std::string tmpl = (dir / "yolo-prompt-XXXXXX").string();
    int fd = dir.empty() ? -1 : ::mkstemp(tmpl.data());
    if (fd < 0) {
      error = "cannot create a prompt file in " + (dir.empty() ? stdfs::temp_directory_path().string() : dir.string());
      return;
    }
    size_t done = 0;
    while (done < content.size()) {
      ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    path = tmpl;
    if (done != content.size()) error = "cannot write the prompt file " + path;
  }
  ~PromptFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
  PromptFile(const PromptFile&) = delete;
  PromptFile& operator=(const PromptFile&) = delete;
};

}  // namespace

json AgentSpawn::info(const std::string& agent) const {
  json j = {{"agent", agent},
            {"argv0", argv.empty() ? std::string() : argv[0]},
            {"model", model},
            {"max_turns", max_turns},
            {"timeout_ms", timeout_ms},
            {"outcome", outcome_name(result.outcome)},
            {"describe", result.describe()},
            {"elapsed_ms", result.elapsed_ms},
            {"child_cpu_ms", child_cpu_ms},
            {"parent_cpu_ms", parent_cpu_ms},
            {"out_bytes", result.out_total},
            {"err_bytes", result.err_total},
            {"out_truncated", result.out_truncated()}};
  if (result.outcome == SpawnResult::Outcome::Exited) j["exit_code"] = result.exit_code;
  if (interrupt_signal) j["interrupt_signal"] = interrupt_signal;
  if (!setup_error.empty()) j["setup_error"] = setup_error;
  if (!sandbox.is_null()) j["sandbox"] = sandbox;
  return j;
}

namespace {
// The folder holding the plan the agent works on: the agent CLIs that keep their file tools to
// the working folder are told to allow this one too (Gemini CLI's --include-directories).
std::string plan_dir_of(const std::string& plan_path) {
  std::string d = stdfs::path(plan_path).parent_path().string();
  return d.empty() ? "." : d;
}
}  // namespace

AgentSpawn spawn_agent(const std::string& agent, const Config& cfg, const AgentContext& ctx) {
  AgentSpawn s;
  const CommandSpec& spec = agent == "architect" ? cfg.architect : cfg.reviewer;
  s.model = agent_model(ctx.world, ctx.root, cfg, agent, nullptr);
  s.max_turns = agent_turns(cfg, agent);
  s.timeout_ms = cfg.timeout_for(spec);
  std::unique_ptr<PromptFile> prompt_file;
  const bool architect = agent == "architect";
  SandboxRequest req;
  req.role = architect ? sandbox::Role::Architect : sandbox::Role::Reviewer;
  req.project_root = ctx.root;
  ConfinementResult confined = confine(ctx.world, cfg, req);
  s.sandbox = confined.confinement->record();
  if (!confined.ok()) {
    s.setup_error = confined.error;
    s.result.outcome = SpawnResult::Outcome::SpawnFailed;
    s.result.spawn_error = confined.error;
    return s;
  }
  // The architect revises a private copy of the plan: it can write nothing else, and yolo
  // takes the copy back itself (revise_from_copy).
  std::string plan_path = ctx.plan_path, prompt = ctx.prompt;
  if (architect && !confined.confinement->temp_dir.empty()) {
    stdfs::path real = stdfs::path(ctx.plan_path).is_absolute() ? stdfs::path(ctx.plan_path) : ctx.root / ctx.plan_path;
    stdfs::path copy = confined.confinement->temp_dir / real.filename();
    auto text = ctx.world.files().read(real, fs::kDefaultMaxFileBytes, /*text=*/true);
    if (text.ok() && ctx.world.files().write_atomic(copy, text.content).ok()) {
      plan_path = copy.string();
      s.plan_copy = copy;
      s.plan_real = real;
      s.plan_before = text.content;
      const std::string from = "Plan path: " + ctx.plan_path + "\n", to = "Plan path: " + plan_path + "\n";
      if (auto at = prompt.find(from); at != std::string::npos) prompt.replace(at, from.size(), to);
    }
  }
  std::map<std::string, std::string> vars = {
      {"plan_path", plan_path},             {"phase_dir", ctx.phase_dir}, {"plan_id", ctx.plan_id},
      {"plan_title", ctx.plan_title},       {"model", s.model},           {"max_turns", std::to_string(s.max_turns)},
      {"cycle", std::to_string(ctx.cycle)}, {"prompt", prompt},           {"plan_dir", plan_dir_of(plan_path)}};
  if (uses(spec.argv, "{prompt_file}")) {
    prompt_file = std::make_unique<PromptFile>(prompt, confined.confinement->temp_dir);
    if (!prompt_file->error.empty()) {
      s.setup_error = prompt_file->error;
      s.result.outcome = SpawnResult::Outcome::SpawnFailed;
      s.result.spawn_error = prompt_file->error;
      return s;
    }
    vars["prompt_file"] = prompt_file->path;
  }
  s.argv = expand_argv(spec.argv, vars);
  SpawnSpec sp;
  sp.argv = s.argv;
  sp.cwd = ctx.root;
  sp.timeout_ms = s.timeout_ms;
  sp.env = {{"YOLO_CORRELATION_ID", ctx.correlation_id},
            {"YOLO_PLAN_ID", ctx.plan_id},
            {"YOLO_PHASE_DIR", ctx.phase_dir},
            {"YOLO_CYCLE", std::to_string(ctx.cycle)},
            {"YOLO_PLAN_PATH", plan_path},
            {"YOLO_AGENT", agent},
            {"YOLO_MODEL", s.model},
            {"YOLO_MAX_TURNS", std::to_string(s.max_turns)}};
  if (!uses(spec.argv, "{prompt}") && !prompt_file) sp.stdin_data = prompt;
  sp.confinement = confined.confinement;
  RunOptions ro;
  ro.stop_on_signals = true;  // SIGINT/SIGTERM/SIGHUP stop the agent's group; the caller exits
  AgentCall call{AgentCall::Event::Started, agent, ctx.plan_id, ctx.cycle, s.timeout_ms, 0, nullptr};
  if (ctx.progress) {
    ctx.progress(call);
    ro.tick_ms = 1000;
    ro.on_tick = [&](double elapsed_ms) {
      call.event = AgentCall::Event::Running;
      call.elapsed_ms = elapsed_ms;
      ctx.progress(call);
    };
  }
  double child0 = cpu_ms(RUSAGE_CHILDREN), self0 = cpu_ms(RUSAGE_SELF);
  s.result = run_process(sp, ro);
  s.interrupt_signal = s.result.interrupt_signal;
  if (ctx.progress) {
    call.event = AgentCall::Event::Ended;
    call.elapsed_ms = s.result.elapsed_ms;
    call.result = &s.result;
    ctx.progress(call);
  }
  s.child_cpu_ms = cpu_ms(RUSAGE_CHILDREN) - child0;
  s.parent_cpu_ms = cpu_ms(RUSAGE_SELF) - self0;
  if (const auto& log = confined.confinement->refusals; log && !log->empty()) s.refused = log->list();
  // An architect that tried to leave its sandbox: its revision is not taken.
  if (!s.plan_copy.empty() && s.result.ok() && s.refused.empty()) s.revise_error = revise_from_copy(ctx.world, s);
  return s;
}

std::string revise_from_copy(const World& w, AgentSpawn& s) {
  auto text = w.files().read(s.plan_copy, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!text.ok()) return "the architect's copy of the plan is gone (" + s.plan_copy.string() + ")";
  if (text.content == s.plan_before) return "";
  // The plan in the checkout changed while the architect worked on its copy: someone else's
  // edit wins, the revision is dropped (the next review sees that edit).
  auto now = w.files().read(s.plan_real, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!now.ok() || now.content != s.plan_before) return "the plan changed while the architect revised it";
  return w.files().write_atomic(s.plan_real, text.content).error;
}

std::string agent_next_step(bool started, const std::string& plan_id) {
  if (!started) return "`yolo doctor` checks the configured agents (program, version, flags, credentials)";
  return "`yolo logs " + text::sanitize_for_terminal(plan_id) + "` shows its whole output";
}

std::string agent_next_step(const json& info, const std::string& plan_id) {
  auto o = info.is_object() ? info.find("outcome") : info.end();
  bool started = !(info.is_object() && o != info.end() && o->is_string() && o->get<std::string>() == "spawn_failed");
  return agent_next_step(started, plan_id);
}

review::AgentRun to_agent_run(const std::string& agent, const AgentSpawn& s) {
  review::AgentRun r;
  r.info = s.info(agent);
  // A CLI asked for machine-readable output (to report its cost) wraps its answer: the
  // verdict is read from the answer itself.
  if (auto answer = usage::result_text(s.result.out))
    r.output = *answer;
  else
    r.output = s.result.out;
  r.output_truncated = s.result.out_truncated();
  r.refused = s.refused;
  if (!s.refused.empty()) r.info["sandbox_refused"] = s.refused;
  if (s.interrupt_signal) {
    r.status = review::AgentRun::Status::Interrupted;
    r.reason = "interrupted by signal " + std::to_string(s.interrupt_signal);
    return r;
  }
  if (!s.refused.empty() && agent == "architect") {
    r.status = review::AgentRun::Status::Unavailable;
    std::string what;
    for (const auto& x : s.refused) what += (what.empty() ? "" : "; ") + x;
    r.reason = agent + ": the sandbox refused " + what + " (its revision is not taken)";
    return r;
  }
  if (s.result.ok()) {
    r.status = review::AgentRun::Status::Ran;
    return r;
  }
  if (s.result.ok() && !s.revise_error.empty()) {
    r.status = review::AgentRun::Status::Unavailable;
    r.reason = agent + ": " + s.revise_error;
    return r;
  }
  r.status = review::AgentRun::Status::Unavailable;
  r.reason = agent + " " + s.result.describe();
  if (s.result.outcome == SpawnResult::Outcome::Exited || s.result.outcome == SpawnResult::Outcome::Signaled) {
    // The line that says why (an `error:` line, not the usage tail printed after it).
    std::string why = failure::explaining_line(s.result.err, s.result.out);
    if (!why.empty()) r.reason += ": " + why;
  }
  return r;
}

namespace {
std::string title_of(const World& w, const std::string& plan_path) {
  auto loaded = load_plan(w, plan_path);
  return loaded.plan ? loaded.plan->title : std::string();
}
}  // namespace

bool AgentProcess::configured() const { return !(agent_ == "architect" ? cfg_.architect : cfg_.reviewer).argv.empty(); }

review::AgentRun AgentProcess::run(const std::string& plan_path, const std::string& phase_dir,
                                   const std::string& plan_id, int cycle, const std::string& prompt) {
  const std::string title = title_of(world_, plan_path);
  AgentContext c{world_, root_, plan_path, phase_dir, plan_id, title, cycle, prompt, correlation_id_, progress_};
  AgentSpawn s = spawn_agent(agent_, cfg_, c);
  if (s.interrupt_signal) interrupt_signal_ = s.interrupt_signal;
  if (s.result.outcome != SpawnResult::Outcome::SpawnFailed)
    write_agent_log(world_, root_, phase_dir, plan_id, agent_, cycle, s.argv, s.result);
  if (auto u = usage::parse(s.result.out)) {  // what the call cost, when the CLI says
    std::string phase = stdfs::path(phase_dir).lexically_normal().filename().string();
    if (phase.empty()) phase = stdfs::path(phase_dir).lexically_normal().parent_path().filename().string();
    (void)usage::append(world_, root_, usage::Record{world_.now(), correlation_id_, phase, plan_id, agent_, cycle, *u});
  }
  return to_agent_run(agent_, s);
}

}  // namespace yolo::runner
