#!/usr/bin/env python3
"""One real agent CLI through the whole yolo loop, against the scripted model server.

Usage: run_e2e.py claude|codex|gemini      (YOLO_BIN names the built yolo; KEEP=1 keeps the folder,
                                            with every request the CLI sent, NNNNNN.json)

Like scripts/demo, on a copy of tests/agents/project (two waves: 01-01, then 01-02 and 01-03 in
parallel, each in its own worktree), with the reviewer, architect and executor that
`yolo init --agent NAME` writes, run as the real program installed from tests/agents/package.json:
  1. `yolo execute`: the reviewer rejects 01-02 with findings, the architect revises the plan with
     the CLI's own edit tool, the re-review approves; the vision gate pauses (exit 3).
  2. A person approves ROADMAP.md at a terminal (a pty; the answer "y").
  3. `yolo execute`: wave 1, then wave 2 in parallel; each executor writes its file with the
     CLI's write tool, commits with its shell tool and writes the SUMMARY; the strict SUMMARY
     gate passes and the plans are merged in plan order (exit 0).
The model is tests/agents/model_server.py on 127.0.0.1 with tests/agents/scenarios/NAME.json;
each CLI is pointed at it by its own configuration and keeps its state in the test's folder,
never in the real home. Exits 77 (skipped) when the CLI is not installed, with the reason.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "node_modules", ".bin")
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}


def fail(msg, *files):
    print("✗ " + msg, file=sys.stderr)
    for f in files:
        if f and os.path.exists(f):
            print("---- " + f, file=sys.stderr)
            with open(f, encoding="utf-8", errors="replace") as fh:
                print(fh.read()[-6000:], file=sys.stderr)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def start_server(work, cli):
    port_file = os.path.join(work, "model.port")
    log = os.path.join(work, "model.log.jsonl")
    out = open(os.path.join(work, "model.out"), "w")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "model_server.py"), "--scenario",
                             os.path.join(HERE, "scenarios", cli + ".json"), "--port", "0", "--port-file", port_file,
                             "--log", log] + (["--dump-dir", work] if os.environ.get("KEEP") else []),
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(600):  # 30 s: a loaded machine starts python slowly
        if os.path.exists(port_file):
            return proc, int(open(port_file).read()), log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    fail("the scripted model server did not start", os.path.join(work, "model.out"))


def cli_environment(cli, work, port):
    """The CLI's own configuration for the scripted server. Its state stays where the CLI keeps it
    by default, under HOME, which is the test's folder: the folders the template's `state` names
    (and init declares writable for the sandbox) are the ones it writes."""
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ)
    for k in list(env):  # a developer's real credentials or endpoints must not leak into the test
        if k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_")) or k == "IS_SANDBOX":
            del env[k]
    env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_DATA_HOME": os.path.join(home, ".local/share"),
                "PATH": BIN + os.pathsep + env.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1",
                "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@example.invalid",
                "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@example.invalid"})
    url = "http://127.0.0.1:%d" % port
    for state in (".claude", ".codex", ".gemini"):  # as after a first login: the sandbox grants what exists
        os.makedirs(os.path.join(home, state), exist_ok=True)
    if cli == "claude":
        # CLAUDE_CONFIG_DIR at its default folder moves .claude.json (else a file in HOME) into it.
        env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-scripted-not-a-key",
                    "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"})
    elif cli == "codex":
        codex_home = os.path.join(home, ".codex")
        os.makedirs(codex_home, exist_ok=True)
        with open(os.path.join(codex_home, "config.toml"), "w") as f:
            # gpt-5.5: a model Codex knows, so it offers its apply_patch tool (an unknown one gets
            # fallback metadata and only the shell)
            f.write('model = "gpt-5.5"\nmodel_provider = "scripted"\n\n'
                    '[model_providers.scripted]\nname = "scripted model server"\n'
                    'base_url = "%s/v1"\nwire_api = "responses"\nenv_key = "YOLO_SCRIPTED_API_KEY"\n' % url)
        env.update({"CODEX_HOME": codex_home, "YOLO_SCRIPTED_API_KEY": "scripted-not-a-key"})
    elif cli == "gemini":
        os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
        with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}}}, f)
        env.update({"GEMINI_API_KEY": "scripted-not-a-key", "GOOGLE_GEMINI_BASE_URL": url})
    return env


def yolo(args, cwd, env, log_to, timeout=600):
    with open(log_to, "a") as out:
        out.write("\n$ yolo %s\n" % " ".join(args))
        out.flush()
        r = subprocess.run([os.environ["YOLO_BIN"]] + args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    return r.returncode


def approve_at_terminal(cwd, env, log_to):
    """`yolo approve` is a person's: run it at a pseudo-terminal and answer "y"."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(os.environ["YOLO_BIN"], [os.environ["YOLO_BIN"], "approve", "--by", "e2e-person"], env)
    out = b""
    sent = False
    deadline = time.time() + 60
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not sent and (b"?" in out or b"[y/N]" in out or b"y/n" in out.lower()):
            os.write(fd, b"y\n")
            sent = True
    _, status = os.waitpid(pid, 0)
    with open(log_to, "a") as f:
        f.write("\n$ yolo approve --by e2e-person   (at a pty, answered y)\n" + out.decode(errors="replace"))
    return os.waitstatus_to_exitcode(status)


def git(cwd, *args):
    return subprocess.run(["git"] + list(args), cwd=cwd, capture_output=True, text=True, check=True).stdout


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else ""
    if cli not in PACKAGES:
        print("usage: run_e2e.py claude|codex|gemini", file=sys.stderr)
        return 64
    if not os.environ.get("YOLO_BIN") or not os.path.exists(os.environ["YOLO_BIN"]):
        print("YOLO_BIN must name the built yolo binary", file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(BIN, cli)):
        skip("%s is not installed; run `npm ci --prefix tests/agents` (scripts/test does when npm is present)"
             % PACKAGES[cli])
    work = tempfile.mkdtemp(prefix="yolo-agents-%s." % cli)
    server = None
    try:
        server, port, model_log = start_server(work, cli)
        env = cli_environment(cli, work, port)
        version = subprocess.run([cli, "--version"], env=env, capture_output=True, text=True, timeout=120)
        print("%s %s" % (cli, (version.stdout or version.stderr).strip().splitlines()[-1:] or ["?"]))
        run_log = os.path.join(work, "run.log")

        # The project, with the agent templates that `yolo init --agent NAME` writes.
        proj = os.path.join(work, "project")
        shutil.copytree(os.path.join(HERE, "project"), proj)
        scratch = os.path.join(work, "init")
        os.makedirs(scratch)
        if yolo(["init", "--agent", cli], scratch, env, run_log) != 0:
            fail("yolo init --agent %s failed" % cli, run_log)
        templates = json.load(open(os.path.join(scratch, ".yolo-planning", "config.json")))
        config_path = os.path.join(proj, ".yolo-planning", "config.json")
        config = json.load(open(config_path))
        for key in ("reviewer", "architect", "executor", "sandbox"):
            if key in templates:
                config[key] = templates[key]
        with open(config_path, "w") as f:
            json.dump(config, f, indent=2)
        git(proj, "init", "-q")
        git(proj, "add", "-A")
        git(proj, "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-qm", "agents e2e project")

        # 1. Review loop, then the vision gate pauses.
        rc = yolo(["execute"], proj, env, run_log)
        if rc != 3:
            fail("first `yolo execute`: expected exit 3 (paused at the vision gate), got %d" % rc, run_log, model_log)
        plan2 = open(os.path.join(proj, ".yolo-planning/phases/01-greetings/01-02-PLAN.md")).read()
        if "REVIEW-FIX-APPLIED" not in plan2:
            fail("the architect did not revise plan 01-02 with its edit tool", run_log, model_log)
        state = json.load(open(os.path.join(proj, ".yolo-planning", ".execution-state.json")))
        loop = state.get("review_loops", {}).get("01-02", {})
        verdicts = [c.get("verdict") for c in loop.get("findings_per_cycle", [])]
        if verdicts[:2] != ["reject", "approve"] or loop.get("status") != "passed":
            fail("review loop of 01-02: expected reject then approve, got %s (%s)" % (verdicts, loop.get("status")),
                 run_log, model_log)

        # Every plan was reviewed by the CLI itself, not by the Stage 1 fallback.
        reviewed = set()
        for line in open(model_log):
            e = json.loads(line)
            if e.get("rule", "").startswith("reviewer") and e.get("vars", {}).get("plan_path"):
                reviewed.add(os.path.basename(e["vars"]["plan_path"])[:5])
        if reviewed != {"01-01", "01-02", "01-03"}:
            fail("the reviewer CLI reviewed %s, not every plan (see the fallbacks in run.log)" % sorted(reviewed),
                 run_log)

        # 2. A person approves the roadmap at a terminal.
        rc = approve_at_terminal(proj, env, run_log)
        if rc != 0:
            fail("yolo approve at a terminal exited %d" % rc, run_log)

        # 3. Two waves, worktrees in parallel, strict SUMMARY gate, merged in plan order.
        rc = yolo(["execute"], proj, env, run_log, timeout=900)
        if rc != 0:
            fail("second `yolo execute`: expected exit 0 (phase complete), got %d" % rc, run_log, model_log)
        for plan, name in (("01", "text.txt"), ("02", "en.txt"), ("03", "fr.txt")):
            path = os.path.join(proj, "greeting", name)
            if not os.path.exists(path) or ("plan 01-%s" % plan) not in open(path).read():
                fail("greeting/%s was not written by plan 01-%s's executor" % (name, plan), run_log, model_log)
            summary = os.path.join(proj, ".yolo-planning/phases/01-greetings/01-%s-SUMMARY.md" % plan)
            if not os.path.exists(summary):
                fail("no SUMMARY for plan 01-%s" % plan, run_log)
        state = json.load(open(os.path.join(proj, ".yolo-planning", ".execution-state.json")))
        if state.get("status") != "complete":
            fail("the run ended %s, not complete" % state.get("status"), run_log)
        # Each plan's branch holds the commit its executor made with the CLI's shell tool; the
        # branches are merged in plan order.
        subjects = git(proj, "log", "--format=%s").splitlines()
        for plan in ("01", "02", "03"):
            if not any(s.startswith("plan 01-%s:" % plan) for s in subjects):
                fail("no commit of plan 01-%s's executor: %s" % (plan, subjects), run_log)
        merges = [s for s in git(proj, "log", "--first-parent", "--reverse", "--format=%s").splitlines()
                  if re.match(r"yolo: merge plan 01-0\d", s)]
        if [m[len("yolo: merge plan "):][:5] for m in merges] != ["01-01", "01-02", "01-03"]:
            fail("the plans were not merged in plan order: %s" % merges, run_log)
        # Wave 2's two plans ran at the same time, each in its own worktree.
        if not re.search(r"Plan 01-0[23] started: .*\(2 running\)", open(run_log).read()):
            fail("wave 2's plans did not run at the same time (no \"(2 running)\")", run_log)
        cwds = {}
        for line in open(model_log):
            e = json.loads(line)
            v = e.get("vars", {})
            if e.get("rule", "").startswith("executor") and v.get("plan_id") and v.get("cwd"):
                cwds[v["plan_id"]] = v["cwd"]
        if not cwds.get("01-02") or cwds.get("01-02") == cwds.get("01-03") or "yolo-worktrees" not in cwds["01-02"]:
            fail("wave 2's executors did not each run in their own worktree: %s" % cwds, model_log)
        # The templates ask each CLI for its machine-readable output: what every call cost in
        # tokens (the scripted model reports them) is recorded per agent, and the reviewer's
        # verdict was read from inside that output (the review loop above).
        usage_file = os.path.join(proj, ".yolo-planning", ".costs", "usage.jsonl")
        if not os.path.exists(usage_file):
            fail("no usage recorded (.yolo-planning/.costs/usage.jsonl): the CLI's output was not read", run_log)
        agents = {}
        for line in open(usage_file):
            r = json.loads(line)
            u = r.get("usage", {})
            tokens = sum(u.get(k, 0) or 0 for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                     "cache_write_tokens"))
            agents[r.get("agent")] = agents.get(r.get("agent"), 0) + tokens
        for role in ("reviewer", "architect", "executor"):
            if not agents.get(role):
                fail("no tokens recorded for the %s (recorded: %s)" % (role, agents), usage_file, run_log)
        # The executors' tool calls, read from each CLI's event stream as they started (the live
        # line shows the current one): the shell tool's git commit among them.
        tools = {}
        events_file = os.path.join(proj, ".yolo-planning", ".events", "event-log.jsonl")
        for line in open(events_file) if os.path.exists(events_file) else []:
            ev = json.loads(line)
            if ev.get("event") == "agent_tool":
                d = ev.get("data", ev)
                tools.setdefault(d.get("plan_id"), []).append(d.get("tool", ""))
        for plan in ("01-01", "01-02", "01-03"):
            if not any(re.search(r"\bgit\b.*\bcommit\b", t) for t in tools.get(plan, [])):
                fail("no `git commit` tool call seen in %s's stream (seen: %s)" % (plan, tools.get(plan)),
                     events_file, run_log)
        unmatched = [json.loads(l) for l in open(model_log) if '"unmatched"' in l]
        print("✓ %s: review loop (reject → architect → approve), vision gate approved at a terminal, "
              "two waves (01-02 and 01-03 in parallel worktrees), strict SUMMARY gate, merged in plan order"
              % cli)
        print("  tokens recorded per agent: %s" % ", ".join("%s %d" % kv for kv in sorted(agents.items())))
        print("  executor tool calls seen: %s" % ", ".join("%s %d" % (p, len(t)) for p, t in sorted(tools.items())))
        if unmatched:
            print("  (%d requests answered by the scenario's default)" % len(unmatched))
        return 0
    finally:
        if server:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()
        if os.environ.get("KEEP"):
            print("folder kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
