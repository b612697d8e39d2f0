// yolo init [DIR] [--agent claude|codex|gemini|aider] [--force]: scaffolds .yolo-planning
// (ROADMAP, a first phase with an example plan, a config with argv templates for the common
// agent CLIs) and a .gitignore for what yolo writes that is not meant to be committed.
#include <iostream>

#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "protocol/review/stage1.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string dir, agent;
  bool force = false, json = false;
};

// Executor instruction shared by the templates: what yolo's SUMMARY gate will check.
const char* const kExecPrompt =
    "Execute the plan {plan_path} (plan {plan_id}, wave {wave}). Commit your work with git. Then write {summary_path}: "
    "YAML frontmatter with phase, plan, title, status (complete|partial|failed), completed (YYYY-MM-DD), "
    "tasks_completed, tasks_total, commit_hashes (the commits you made), deviations; then the sections "
    "## What Was Built, ## Files Modified, ## Deviations.";

// Argv templates per agent CLI: no shell, each {placeholder} stays one argument. Each names the
// CLI versions it was run with end to end (tests/agents: the real CLIs against a scripted model)
// and the folders and files where the CLI keeps its own state (`state`, at their defaults);
// docs/agents.md says why each flag is there. yolo confines what it starts, so the templates turn
// the CLIs' own prompts and sandboxes off where they would stop an unattended run. Each asks its
// CLI for the machine-readable output: yolo reads the agent's answer inside it and records what
// every call cost (protocol/state/agent_usage.h); the executors' is a stream of events, whose tool
// calls yolo shows on the live line as they start.
json agent_templates() {
  return {
      {"claude",
       {{"about", "Claude Code in print mode (claude -p)"},
        {"tested_with", "Claude Code 2.1.332"},
        {"state", {"~/.claude", "~/.claude.json"}},
        {"reviewer",
         {{"command", {"claude", "-p", "{prompt}", "--model", "{model}", "--max-turns", "{max_turns}", "--output-format",
                       "json"}},
          {"timeout_ms", 600000}}},
        // acceptEdits approves edits inside the working folder only, and no shell; print mode asks
        // nobody, so what is not allowed is refused. The architect may revise a copy of the plan
        // outside the working folder: Read and Edit are allowed anywhere (yolo confines it).
        {"architect",
         {{"command",
           {"claude", "-p", "{prompt}", "--model", "{model}", "--max-turns", "{max_turns}", "--permission-mode",
            "acceptEdits", "--allowedTools", "Read,Edit", "--output-format", "json"}},
          {"timeout_ms", 600000}}},
        // The executor runs git, and its worktree is inside .git, where Claude Code refuses every
        // edit unless permission checks are skipped; as root it skips them only when told that it
        // runs in a sandbox (IS_SANDBOX=1), which it does: yolo confines the executor.
        {"executor",
         {{"command", {"env", "IS_SANDBOX=1", "claude", "-p", kExecPrompt, "--dangerously-skip-permissions", "--output-format",
                       "stream-json", "--verbose"}},
          {"timeout_ms", 3600000}}}}},
      {"codex",
       {{"about", "OpenAI Codex CLI (codex exec)"},
        {"tested_with", "Codex CLI 0.171.0"},
        {"state", {"~/.codex"}},
        // `codex exec` never asks for approval; its own Linux sandbox is off (yolo confines it),
        // and a reviewer may run outside a git checkout.
        {"reviewer",
         {{"command", {"codex", "exec", "--json", "--sandbox", "danger-full-access", "--skip-git-repo-check", "{prompt}"}},
          {"timeout_ms", 600000}}},
        {"architect",
         {{"command", {"codex", "exec", "--json", "--sandbox", "danger-full-access", "--skip-git-repo-check", "{prompt}"}},
          {"timeout_ms", 600000}}},
        {"executor",
         {{"command", {"codex", "exec", "--json", "--sandbox", "danger-full-access", "--skip-git-repo-check", kExecPrompt}},
          {"timeout_ms", 3600000}}}}},
      {"gemini",
       {{"about", "Gemini CLI (gemini -p)"},
        {"tested_with", "Gemini CLI 0.61.0"},
        {"state", {"~/.gemini"}},
        // In a folder it does not trust, Gemini CLI turns --yolo and auto_edit back into asking;
        // --skip-trust keeps the approval mode the template asks for. Its file tools stay inside
        // the working folder unless told (the architect may revise a copy of the plan elsewhere).
        {"reviewer",
         {{"command", {"gemini", "-p", "{prompt}", "--skip-trust", "--output-format", "json"}}, {"timeout_ms", 600000}}},
        {"architect",
         {{"command",
           {"gemini", "-p", "{prompt}", "--approval-mode", "auto_edit", "--skip-trust", "--include-directories",
            "{plan_dir}", "--output-format", "json"}},
          {"timeout_ms", 600000}}},
        {"executor",
         {{"command", {"gemini", "-p", kExecPrompt, "--approval-mode", "yolo", "--skip-trust", "--output-format", "stream-json"}},
          {"timeout_ms", 3600000}}}}},
      {"aider",
       {{"about", "aider (--message runs one instruction and exits)"},
        {"tested_with", "untested: aider could not be installed where yolo is tested"},
        {"reviewer",
         {{"command", {"aider", "--message", "{prompt}", "--no-auto-commits", "--yes-always", "{plan_path}"}},
          {"timeout_ms", 600000}}},
        {"architect",
         {{"command", {"aider", "--message", "{prompt}", "--no-auto-commits", "--yes-always", "{plan_path}"}},
          {"timeout_ms", 600000}}},
        {"executor", {{"command", {"aider", "--message", kExecPrompt, "--yes-always"}}, {"timeout_ms", 3600000}}}}},
  };
}

json initial_config(const std::string& agent) {
  json c = {
      {"_comment",
       "yolo settings (docs/configuration.md). To use an agent CLI, copy the reviewer, architect and executor of one "
       "entry of _agent_templates to the top level (or run `yolo init --agent NAME` in a new project). Keys starting "
       "with '_' are ignored by yolo."},
      {"review_gate", "always"},
      {"review_max_cycles", 3},
      {"summary_checks", "strict"},
      {"max_parallel", 2},
      {"reviewer_required", true},
      {"approvers", {{"vision", "manual"}, {"wave", "manual"}, {"default", "manual"}}},
      {"_agent_templates", agent_templates()}};
  if (!agent.empty()) {
    const json& t = c["_agent_templates"][agent];
    for (const char* role : {"reviewer", "architect", "executor"}) c[role] = t[role];
    // The CLI's own state (settings, sessions, logs): the sandbox lets each role write it too.
    if (t.contains("state"))
      for (const char* role : {"reviewer", "architect", "executor"}) c["sandbox"]["write"][role] = t["state"];
  }
  return c;
}

const char* const kRoadmap =
    "# Roadmap\n\n"
    "What this project builds, and in which phases. `yolo execute` asks a person to approve this file (the vision\n"
    "gate) before any plan runs; editing it later opens the gate again.\n\n"
    "## Vision\n\nOne paragraph: who it is for and what they can do when it is done.\n\n"
    "## Phases\n\n"
    "1. **01-first-phase**: the first slice that works end to end.\n\n"
    "## Conventions\n\n"
    "- Plans: `.yolo-planning/phases/NN-slug/MM-PLAN.md`; their SUMMARY beside them as `MM-SUMMARY.md`.\n";

const char* const kExamplePlan =
    "---\n"
    "phase: \"01\"\n"
    "plan: \"01\"\n"
    "title: Example plan — replace with your first real plan\n"
    "wave: 1\n"
    "depends_on: []\n"
    "must_haves:\n"
    "  truths:\n"
    "    - \"The README explains how to run the project\"\n"
    "  artifacts:\n"
    "    - path: README.md\n"
    "      provides: how to run the project\n"
    "---\n\n"
    "# Plan 01-01: Example plan\n\n"
    "## Goal\n\nOne sentence: what is true when this plan is done.\n\n"
    "### Task 1: Write the README\n\n"
    "**Files:** README.md (new)\n\n"
    "Describe how to build and run the project.\n\n"
    "## Verification\n\n- `cat README.md` shows the instructions.\n";

// What yolo writes that belongs to one person's machine and run, not to the repository.
const char* const kGitignore =
    "# Written by yolo; not meant to be committed (see the README: \"The daily loop\").\n"
    ".execution-state.json\n"
    ".execution-state.json.*\n"
    ".execute-executors.jsonl\n"
    ".lock\n"
    ".*.lock\n"
    ".reviews/\n"
    ".cache/\n"
    ".costs/\n"
    ".events/\n"
    ".logs/\n"
    "# The gates' audit log: each entry sealed with this machine's key, chained to this\n"
    "# machine's approvals (`yolo verify` checks both); another clone can neither verify nor merge it.\n"
    "audit-log.jsonl\n"
    "*.tmp\n";

int run(const World& world, const Options& o) {
  fs::Disk& disk = world.files();
  std::error_code ec;
  stdfs::path dir = o.dir.empty() ? stdfs::current_path(ec) : stdfs::path(o.dir);
  if (!o.agent.empty() && !agent_templates().contains(o.agent)) {
    out::err("✗ init: unknown --agent '" + o.agent + "' (claude, codex, gemini or aider)");
    return kExitUsage;
  }
  if (!disk.is_directory(dir)) {
    out::err("✗ init: " + dir.string() + " is not a folder");
    return kExitUsage;
  }
  stdfs::path yp = dir / ".yolo-planning";
  if (disk.exists(yp) && !o.force) {
    out::err(out::sym(out::Sym::Fail) + " init: " + yp.string() + " already exists; nothing written");
    out::err("Next: `yolo status` shows the project (`yolo init --force` only adds the files that are missing)");
    return kExitFail;
  }
  struct File {
    stdfs::path path;
    std::string content;
  };
  std::vector<File> files = {
      {yp / "config.json", initial_config(o.agent).dump(2) + "\n"},
      {yp / "ROADMAP.md", kRoadmap},
      {yp / "phases" / "01-first-phase" / "01-PLAN.md", kExamplePlan},
      {yp / ".gitignore", kGitignore},
  };
  json written = json::array(), kept = json::array();
  for (const auto& f : files) {
    if (disk.exists(f.path)) {
      kept.push_back(stdfs::relative(f.path, dir, ec).generic_string());
      continue;
    }
    std::string e = disk.make_dirs(f.path.parent_path()).error;
    if (e.empty()) e = disk.write_atomic(f.path, f.content).error;
    if (!e.empty()) {
      out::err(out::sym(out::Sym::Fail) + " init: " + e);
      return kExitFail;
    }
    written.push_back(stdfs::relative(f.path, dir, ec).generic_string());
  }
  bool git = disk.exists(dir / ".git");
  if (o.json) {
    out::json_line(
        {{"ok", true}, {"cmd", "init"}, {"root", dir.string()}, {"written", written}, {"kept", kept}, {"git", git}});
    return kExitOk;
  }
  for (const auto& w : written) out::line(out::sym(out::Sym::Ok) + " wrote " + w.get<std::string>());
  for (const auto& k : kept) out::line(out::sym(out::Sym::Skip) + " kept " + k.get<std::string>() + " (exists)");
  if (!git)
    out::line(out::sym(out::Sym::Warn) + " not a git repository: the SUMMARY gate checks commits (run `git init`)");
  if (!o.agent.empty()) {
    std::string tested = agent_templates()[o.agent].value("tested_with", "");
    if (tested.rfind("untested", 0) == 0)
      out::line(out::sym(out::Sym::Warn) + " the " + o.agent + " template is " + tested +
                "; check it on a small plan first (docs/agents.md)");
    else
      out::line(out::sym(out::Sym::Ok) + " agents: " + o.agent + " (template tested with " + tested +
                "; docs/agents.md)");
  }
  if (o.agent.empty())
    out::line(out::sym(out::Sym::Skip) +
              " no agents configured: reviews use Stage 1 only, execute waits for SUMMARY files. "
              "Templates for claude, codex, gemini and aider are in config.json under _agent_templates");
  out::line("Commit .yolo-planning/config.json, ROADMAP.md, .gitignore and phases/; the rest is local to your run.");
  out::line(
      "Next: edit .yolo-planning/ROADMAP.md and phases/01-first-phase/01-PLAN.md, then `yolo review-plan "
      ".yolo-planning/phases/01-first-phase/01-PLAN.md` and `yolo execute`");
  return kExitOk;
}

const CommandRegistrar reg{Command{
    "init", "Start a project: .yolo-planning with a ROADMAP, a first phase and plan, a config with agent templates",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("DIR", o->dir, "Project folder (default: the current folder)");
      sub.add_option("--agent", o->agent,
                     "Configure reviewer, architect and executor for claude, codex, gemini or aider");
      sub.add_flag("--force", o->force, "Add the missing files to an existing .yolo-planning (never overwrites)");
      sub.add_flag("--json", o->json, "One JSON line on stdout");
      return [o](const Context& ctx) { return run(ctx.world, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
