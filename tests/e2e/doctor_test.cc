// yolo doctor, end to end: the real binary against stand-in agent CLIs the test writes
// (shell scripts named claude and codex on a PATH of the test's own), with a HOME and
// credentials of the test's own. The stand-ins answer --version and --help as the real CLIs
// do and log every call, so a test also sees that doctor never asks them for a model call.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "runner/sandbox.h"
#include "test_support.h"

namespace yolo::test {
namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
std::string report(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// A stand-in CLI: `--version` prints `version`, `[SUB] --help` prints `help`; anything else
// is a call doctor must never make (it would reach a model): it is logged and fails. Shell
// builtins only: the test's PATH holds nothing but its stand-ins and git.
std::string standin(const std::string& name, const std::string& version, const std::string& sub,
                    const std::string& help) {
  std::string is_help = "[ \"$1\" = --help ]";
  if (!sub.empty()) is_help += " || { [ \"$1\" = " + sub + " ] && [ \"$2\" = --help ]; }";
  return "#!/bin/sh\n"
         "echo \"$*\" >> \"$STANDIN_LOG\"\n"
         "if [ \"$1\" = --version ]; then echo '" +
         version +
         "'; exit 0; fi\n"
         "if " +
         is_help + "; then printf '%s\\n' '" + help +
         "'; exit 0; fi\n"
         "echo \"" +
         name +
         ": a model call: $*\" >&2\n"
         "exit 3\n";
}

const char* kClaudeHelp =
    "Usage: claude [options] [command] [prompt]\n\n"
    "Options:\n"
    "  -p, --print                        Print response and exit\n"
    "  --model <model>                    Model for the current session\n"
    "  --output-format <format>           Output format: \"text\", \"json\", \"stream-json\"\n"
    "  --permission-mode <mode>           Permission mode\n"
    "  -h, --help                         Display help for command";

const char* kCodexExecHelp =
    "Run Codex non-interactively\n\n"
    "Usage: codex exec [OPTIONS] [PROMPT]\n\n"
    "Options:\n"
    "  -m, --model <MODEL>     Model the agent should use\n"
    "  -s, --sandbox <MODE>    Select the sandbox policy\n"
    "      --json              Print events to stdout as JSONL\n"
    "  -h, --help              Print help";

class Doctor : public ::testing::Test {
 protected:
  void SetUp() override {
    stdfs::create_directories(bin());
    stdfs::create_directories(home());
    stdfs::create_directories(repo() / ".yolo-planning");
    ASSERT_EQ(run_program({"git", "init", "-q"}, repo()).exit_code, 0);
    ASSERT_EQ(run_program({"git", "config", "user.name", "Tester"}, repo()).exit_code, 0);
    ASSERT_EQ(run_program({"git", "config", "user.email", "tester@example.invalid"}, repo()).exit_code, 0);
    // Only the test's stand-ins and git: never a real agent CLI installed on this machine.
    auto git = run_program({"sh", "-c", "command -v git"});
    ASSERT_EQ(git.exit_code, 0) << "git is not installed";
    stdfs::create_symlink(std::string(git.out.substr(0, git.out.find('\n'))), bin() / "git");
    path_ = bin().string();
  }
  stdfs::path bin() const { return dir_.path() / "bin"; }
  stdfs::path home() const { return dir_.path() / "home"; }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path calls() const { return dir_.path() / "calls.log"; }

  void install(const std::string& name, const std::string& script) {
    write_file(bin() / name, script);
    ::chmod((bin() / name).c_str(), 0755);
  }
  void config(const json& c) { write_file(repo() / ".yolo-planning" / "config.json", c.dump(2)); }
  json claude_roles() {
    return {
        {"reviewer", {{"command", {"claude", "-p", "{prompt}", "--model", "{model}", "--max-turns", "{max_turns}"}}}},
        {"architect", {{"command", {"claude", "-p", "{prompt}", "--permission-mode", "acceptEdits"}}}},
        {"executor", {{"command", {"claude", "-p", "{prompt}", "--output-format", "json"}}}},
        {"approvers", {{"vision", "manual"}, {"wave", "skip"}}}};
  }

  // Every credential variable the CLIs read is emptied (doctor counts an empty one as unset).
  RunResult doctor(std::vector<std::string> extra_env = {}, std::vector<std::string> args = {}) {
    std::vector<std::string> env = {"PATH=" + path_,
                                    "HOME=" + home().string(),
                                    "XDG_CONFIG_HOME=",
                                    "YOLO_APPROVAL_KEY_FILE=" + (home() / "approval.key").string(),
                                    "YOLO_SIGNING_KEY=",
                                    "NO_COLOR=1",
                                    "STANDIN_LOG=" + calls().string()};
    for (const char* k :
         {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "OPENAI_API_KEY",
          "CODEX_API_KEY", "CODEX_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"})
      env.push_back(std::string(k) + "=");
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    return with_env(env, args, repo());
  }
  // yolo doctor through env(1): the variables are replaced, not added after the test's own
  // (a child's getenv finds the first of two).
  static RunResult with_env(const std::vector<std::string>& env, const std::vector<std::string>& args,
                            const stdfs::path& cwd) {
    std::vector<std::string> argv = {"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(yolo_bin());
    argv.push_back("doctor");
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, cwd);
  }
  // The checks of `doctor --json` for one role.
  static json checks_of(const json& doc, const std::string& role, const std::string& check) {
    for (const auto& c : doc["checks"])
      if (c["role"] == role && c["check"] == check) return c;
    return nullptr;
  }
  std::string standin_calls() { return stdfs::exists(calls()) ? read_file(calls()) : std::string(); }

  TempDir dir_;
  std::string path_;
};

TEST_F(Doctor, AMissingProgramIsAProblemWithANextStep) {
  config(claude_roles());
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << report(r);
  EXPECT_TRUE(has(r.out, "✗ reviewer program: claude not found on PATH  Next: install claude")) << r.out;
  EXPECT_TRUE(has(r.out, "✗ executor program: claude not found on PATH")) << r.out;
  EXPECT_TRUE(has(r.out, "problems")) << r.out;

  auto j = doctor({}, {"--json"});
  EXPECT_EQ(j.exit_code, 1) << report(j);
  json doc = j.json_out();
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["cmd"], "doctor");
  json c = checks_of(doc, "reviewer", "program");
  ASSERT_TRUE(c.is_object()) << doc.dump(2);
  EXPECT_EQ(c["status"], "fail");
  EXPECT_TRUE(c.contains("next")) << c.dump();
  EXPECT_EQ(doc["problems"], 3) << "reviewer, architect, executor";
}

TEST_F(Doctor, AFlagTheCliRefusesIsNamed) {
  config({{"reviewer", {{"command", {"codex", "exec", "{prompt}"}}}},
          {"executor", {{"command", {"codex", "exec", "--full-auto", "-m", "{model}", "{prompt}"}}}}});
  install("codex", standin("codex", "codex-cli 0.171.0", "exec", kCodexExecHelp));
  auto r = doctor({"OPENAI_API_KEY=not-a-real-key"});
  EXPECT_EQ(r.exit_code, 1) << report(r);
  EXPECT_TRUE(has(r.out, "✓ reviewer version: Codex CLI 0.171.0 (tested: >= 0.171.0, < 0.172.0)")) << r.out;
  EXPECT_TRUE(has(r.out, "✗ executor flags: codex exec does not accept --full-auto (its --help does not list it)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Next: remove --full-auto from executor.command")) << r.out;
  EXPECT_FALSE(has(r.out, "does not accept -m")) << "-m is listed\n" << r.out;
  EXPECT_TRUE(has(r.out, "✓ executor credentials: $OPENAI_API_KEY is set")) << r.out;
  EXPECT_FALSE(has(r.out, "not-a-real-key")) << "a credential is never shown\n" << r.out;
  // The CLI's own parser was asked (exec --help), never a model.
  std::string c = standin_calls();
  EXPECT_TRUE(has(c, "exec --help")) << c;
  EXPECT_FALSE(has(c, "--full-auto")) << c;

  auto j = doctor({"OPENAI_API_KEY=not-a-real-key"}, {"--json"});
  json f = checks_of(j.json_out(), "executor", "flags");
  ASSERT_TRUE(f.is_object()) << j.out;
  EXPECT_EQ(f["status"], "fail");
  EXPECT_EQ(f["refused"], json::array({"--full-auto"}));
}

TEST_F(Doctor, MissingCredentialsAreAProblemAndTheFileIsEnough) {
  config(claude_roles());
  install("claude", standin("claude", "2.1.332 (Claude Code)", "", kClaudeHelp));
  auto r = doctor();
  EXPECT_EQ(r.exit_code, 1) << report(r);
  EXPECT_TRUE(has(r.out, "✗ reviewer credentials: no credentials for Claude Code: none of $ANTHROPIC_API_KEY"))
      << r.out;
  EXPECT_TRUE(has(r.out, (home() / ".claude" / ".credentials.json").string())) << r.out;
  EXPECT_TRUE(has(r.out, "Next: log in once with `claude`")) << r.out;

  // The CLI's credential file, there (its content is never read: doctor tests existence).
  stdfs::create_directories(home() / ".claude");
  write_file(home() / ".claude" / ".credentials.json", "{\"secret\": \"never shown\"}");
  auto ok = doctor();
  EXPECT_EQ(ok.exit_code, 0) << report(ok);
  EXPECT_TRUE(has(ok.out, "✓ reviewer credentials: " + (home() / ".claude" / ".credentials.json").string() + " exists"))
      << ok.out;
  EXPECT_FALSE(has(ok.out, "never shown")) << ok.out;
}

TEST_F(Doctor, AllGood) {
  config(claude_roles());
  install("claude", standin("claude", "2.1.332 (Claude Code)", "", kClaudeHelp));
  auto r = doctor({"ANTHROPIC_API_KEY=not-a-real-key"});
  EXPECT_EQ(r.exit_code, 0) << report(r);
  for (const char* role : {"reviewer", "architect", "executor"}) {
    std::string p = std::string("✓ ") + role + " ";
    EXPECT_TRUE(has(r.out, p + "program: claude → " + (bin() / "claude").string())) << r.out;
    EXPECT_TRUE(has(r.out, p + "version: Claude Code 2.1.332 (tested: >= 2.1.197, < 2.2.0)")) << r.out;
    EXPECT_TRUE(has(r.out, p + "credentials: $ANTHROPIC_API_KEY is set")) << r.out;
  }
  // --max-turns is accepted by claude's parser though its --help does not list it.
  EXPECT_TRUE(has(r.out, "✓ reviewer flags: claude accepts -p --model --max-turns")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ executor flags: claude accepts -p --output-format")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ approvers gates: vision manual, wave skip")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ git repository")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ git identity: commits as Tester")) << r.out;
  EXPECT_TRUE(has(r.out, "○ key approval key: ")) << r.out;
  if (runner::landlock_abi() > 0) {
    EXPECT_TRUE(has(r.out, "✓ sandbox: Landlock ABI " + std::to_string(runner::landlock_abi()))) << r.out;
  } else {
    EXPECT_TRUE(has(r.out, "✗ sandbox: this kernel has no Landlock")) << r.out;
  }
  EXPECT_TRUE(has(r.out, "○ signing ssh signatures: not required")) << r.out;
  EXPECT_TRUE(has(r.out, "○ hooks git hooks: not installed")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ Ready: every check passed. Next: `yolo execute`")) << r.out;
  EXPECT_FALSE(has(r.out, "⚠")) << r.out;
  // One --version and one --help for the three roles (the answers are shared), no model call.
  std::string c = standin_calls();
  EXPECT_EQ(c, "--version\n--help\n") << c;

  auto j = doctor({"ANTHROPIC_API_KEY=not-a-real-key"}, {"--json"});
  EXPECT_EQ(j.exit_code, 0) << report(j);
  json doc = j.json_out();
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["problems"], 0);
  EXPECT_EQ(doc["warnings"], 0);
  EXPECT_EQ(checks_of(doc, "executor", "version")["version"], "2.1.332");
}

TEST_F(Doctor, AnUntestedVersionIsAWarningAndAnUnknownProgramIsOnlyLookedUp) {
  config({{"reviewer", {{"command", {"claude", "-p", "{prompt}"}}}},
          {"executor", {{"command", {"agents/run-plan", "{plan_path}"}}}}});
  install("claude", standin("claude", "3.0.1 (Claude Code)", "", kClaudeHelp));
  stdfs::create_directories(repo() / "agents");
  write_file(repo() / "agents" / "run-plan", "#!/bin/sh\necho \"$*\" >> \"$STANDIN_LOG\"\nexit 3\n");
  ::chmod((repo() / "agents" / "run-plan").c_str(), 0755);
  auto r = doctor({"ANTHROPIC_API_KEY=x"});
  EXPECT_EQ(r.exit_code, 0) << "warnings alone pass\n" << report(r);
  EXPECT_TRUE(has(r.out, "⚠ reviewer version: Claude Code 3.0.1 is outside the tested range (>= 2.1.197, < 2.2.0)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "✓ executor program: agents/run-plan → ")) << r.out;
  EXPECT_TRUE(has(r.out, "○ executor version: not a known agent CLI")) << r.out;
  EXPECT_TRUE(has(r.out, "○ architect configured: not configured")) << r.out;
  EXPECT_EQ(standin_calls(), "--version\n--help\n") << "a program doctor does not know is never run";
}

TEST_F(Doctor, OutsideAProjectItSaysSoAndStillChecksGit) {
  TempDir empty;
  auto r = with_env({"NO_COLOR=1", "PATH=" + path_}, {}, empty.path());
  EXPECT_EQ(r.exit_code, 1) << report(r);
  EXPECT_TRUE(has(r.out, "✗ project: ")) << r.out;
  EXPECT_TRUE(has(r.out, "Next: `yolo init`")) << r.out;
  EXPECT_TRUE(has(r.out, "✓ git program: git")) << r.out;
}

TEST_F(Doctor, IsInTheCommandList) {
  auto h = run_yolo({"help"});
  EXPECT_TRUE(has(h.out, "doctor")) << h.out;
  auto c = run_yolo({"completion", "bash"});
  EXPECT_TRUE(has(c.out, "doctor")) << c.out;
  auto hd = run_yolo({"help", "doctor"});
  EXPECT_EQ(hd.exit_code, 0);
  EXPECT_TRUE(has(hd.out, "--json")) << hd.out;
}

}  // namespace
}  // namespace yolo::test
