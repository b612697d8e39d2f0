// End to end: real projects just work (SUMMARY naming, real SUMMARY files, the
// reference's event types, an incremental review gate), config that catches mistakes, a
// discoverable CLI, `yolo init`, `execute --dry-run`, `yolo graph`, `yolo logs`, readable
// outcomes and a status that says what to do next. The real binary, real git, real children.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <signal.h>

#include <chrono>
#include <memory>

#include "bg_process.h"
#include "test_support.h"

namespace yolo::test {
namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
std::string dump(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}
bool have_program(const std::string& name) { return run_program({"sh", "-c", "command -v " + name}).exit_code == 0; }

// A copy of fixtures/demo (4 plans, 3 waves) in a git repository, with the fixture agents.
class Ux : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    for (const char* a : {"executor-ok", "reviewer-approve", "reviewer-reject-until-marker", "architect-fix"})
      stdfs::copy_file(source_dir() / "fixtures" / "agents" / a, repo() / "agents" / a);
    // A reviewer that counts its calls (one line per call in calls.log).
    write_file(repo() / "agents" / "reviewer-count",
               "#!/bin/sh\necho \"$1\" >> \"$YOLO_TEST_CALLS\"\necho 'VERDICT: approve'\necho 'FINDINGS:'\n");
    stdfs::permissions(repo() / "agents" / "reviewer-count", stdfs::perms::owner_all, stdfs::perm_options::add);
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture"});
    set_config({{"review_gate", "never"},
                {"approvers", {{"vision", "skip"}}},
                {"reviewer", {{"command", {"agents/reviewer-approve", "{plan_path}"}}, {"timeout_ms", 10000}}},
                {"architect", nullptr},
                // reviewer-count's calls.log lies beside the project: granted to the reviewer.
                {"sandbox", {{"write", {{"reviewer", {dir_.path().string()}}}}}}});
  }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path phase_dir() const { return repo() / ".yolo-planning" / "phases" / "01-demo"; }
  stdfs::path state_path() const { return repo() / ".yolo-planning" / ".execution-state.json"; }
  stdfs::path calls() const { return dir_.path() / "calls.log"; }
  size_t call_count() const {
    std::ifstream f(calls());
    return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n'));
  }

  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv, repo());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  json config() { return json::parse(read_file(repo() / ".yolo-planning" / "config.json")); }
  void set_config(const json& patch) {
    json c = config();
    c.merge_patch(patch);
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  void use_executor() {
    set_config(
        {{"executor", {{"command", {"agents/executor-ok", "{plan_path}", "{summary_path}"}}, {"timeout_ms", 30000}}}});
  }
  RunResult yolo(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    env.push_back("NO_COLOR=1");
    env.push_back("YOLO_TEST_CALLS=" + calls().string());
    return run_yolo(args, repo(), env);
  }
  // The demo's plans renamed to the corpus's other spelling: `MM-PLAN.md`.
  void short_plan_names() {
    for (const char* n : {"01", "02", "03", "04"})
      stdfs::rename(phase_dir() / ("01-" + std::string(n) + "-PLAN.md"), phase_dir() / (std::string(n) + "-PLAN.md"));
    git({"add", "-A"});
    git({"commit", "-q", "-m", "short plan names"});
  }

  TempDir dir_;
};

// 1. `MM-PLAN.md` with `NN-MM-SUMMARY.md` beside it (12 corpus folders): execute counts the
// plan complete instead of waiting for `MM-SUMMARY.md` forever, and `{summary_path}` follows
// the naming the phase already uses.
TEST_F(Ux, SummaryNamedNNMMBesideMMPlanCompletesAndSummaryPathFollowsThePhase) {
  short_plan_names();
  // Plan 01 was executed by a person, who wrote its SUMMARY as NN-MM-SUMMARY.md.
  auto by_hand = run_program({(repo() / "agents" / "executor-ok").string(), ".yolo-planning/phases/01-demo/01-PLAN.md",
                              ".yolo-planning/phases/01-demo/01-01-SUMMARY.md"},
                             repo(), {"YOLO_PLAN_ID=01-01"});
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  // Without an executor, execute waits only for the plans that have no SUMMARY.
  set_config({{"executor", nullptr}});
  auto wait = yolo({"execute"});
  EXPECT_EQ(wait.exit_code, 4) << dump(wait);
  EXPECT_FALSE(has(wait.out, "waiting for .yolo-planning/phases/01-demo/01-SUMMARY.md")) << wait.out;
  EXPECT_TRUE(has(wait.out, "02-01-SUMMARY.md") || has(wait.out, "01-02-SUMMARY.md")) << wait.out;
  use_executor();
  auto r = yolo({"execute"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  for (const char* n : {"01", "02", "03", "04"}) {
    EXPECT_TRUE(stdfs::exists(phase_dir() / ("01-" + std::string(n) + "-SUMMARY.md"))) << n;
    EXPECT_FALSE(stdfs::exists(phase_dir() / (std::string(n) + "-SUMMARY.md"))) << n;
  }
  EXPECT_TRUE(has(r.out, "Next:")) << r.out;
}

// 2. A real SUMMARY without `completed` and `deviations` passes with warnings; one without
// commit_hashes still fails.
TEST_F(Ux, DescriptiveSummaryKeysAreWarningsClaimsStayStrict) {
  std::string s =
      "---\nphase: \"01\"\nplan: \"01\"\ntitle: Shared text\nstatus: complete\ntasks_completed: 1\ntasks_total: 1\n"
      "commit_hashes: [abc1234]\n---\n\n## What Was Built\nText.\n\n## Files Modified\n- `greeting/shared.txt`\n";
  write_file(phase_dir() / "01-01-SUMMARY.md", s);
  auto r = yolo({"verify-summary", (phase_dir() / "01-01-SUMMARY.md").string(), "--mode", "structural", "--json"});
  EXPECT_EQ(r.exit_code, 2) << dump(r);
  EXPECT_TRUE(has(r.out, "missing key 'completed'")) << r.out;
  std::string no_commits = s;
  no_commits.replace(no_commits.find("commit_hashes: [abc1234]\n"), 25, "");
  write_file(phase_dir() / "01-01-SUMMARY.md", no_commits);
  auto f = yolo({"verify-summary", (phase_dir() / "01-01-SUMMARY.md").string(), "--mode", "structural", "--json"});
  EXPECT_EQ(f.exit_code, 1) << dump(f);
}

// 3. With v2_typed_protocol, the reference's own event types are accepted.
TEST_F(Ux, TypedProtocolAcceptsTheReferencesEventTypes) {
  set_config({{"v3_event_log", true}, {"v2_typed_protocol", true}});
  for (const char* t :
       {"checkpoint", "task_claimed", "token_overage", "file_conflict", "shutdown_received", "message_rejected"}) {
    auto r = yolo({"log-event", t, "1", "2"});
    EXPECT_EQ(r.exit_code, 0) << t << dump(r);
  }
  EXPECT_EQ(yolo({"log-event", "totally_unknown_event", "1"}).exit_code, 3);
}

// 4. After one plan is edited, the execute review gate reviews that plan only; plans reviewed
// with `yolo review` and unchanged keep their verdict.
TEST_F(Ux, ExecuteReviewGateReviewsOnlyChangedPlans) {
  set_config({{"review_gate", "always"},
              {"executor", nullptr},
              {"reviewer", {{"command", {"agents/reviewer-count", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  auto first = yolo({"review", phase_dir().string(), "--json"});
  ASSERT_EQ(first.exit_code, 0) << dump(first);
  EXPECT_EQ(call_count(), 4u);
  std::string p2 = read_file(phase_dir() / "01-02-PLAN.md");
  write_file(phase_dir() / "01-02-PLAN.md", p2 + "\nOne more sentence.\n");
  auto r = yolo({"execute"});
  EXPECT_EQ(r.exit_code, 4) << dump(r);  // no executor: waiting for SUMMARY files
  EXPECT_EQ(call_count(), 5u) << "only the edited plan is reviewed again\n" << dump(r);
}

// 9. Unknown keys are warned about, with the nearest known key, by every command that loads
// the config; every schema error is listed.
TEST_F(Ux, UnknownConfigKeysAreWarnedWithTheNearestKnownKey) {
  set_config({{"reveiw_gate", "always"}});
  const std::string want = "unknown key 'reveiw_gate' (did you mean 'review_gate'?)";
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"execute", "--dry-run"},
                                             {"review-plan", (phase_dir() / "01-01-PLAN.md").string()},
                                             {"review", (phase_dir() / "01-01-PLAN.md").string()},
                                             {"status"}}) {
    auto r = yolo(args);
    EXPECT_TRUE(has(r.err, want)) << args[0] << "\n" << dump(r);
  }
  // The reference's own keys are not unknown.
  set_config(
      {{"reveiw_gate", nullptr}, {"autonomy", "standard"}, {"v3_lease_locks", false}, {"qa_gate", "on_request"}});
  auto quiet = yolo({"execute", "--dry-run"});
  EXPECT_FALSE(has(quiet.err, "unknown key")) << dump(quiet);
  // Two bad values: both are reported.
  set_config({{"review_gate", "sometimes"}, {"max_parallel", 0}});
  auto bad = yolo({"execute"});
  EXPECT_EQ(bad.exit_code, 1) << dump(bad);
  EXPECT_TRUE(has(bad.err, "/review_gate")) << bad.err;
  EXPECT_TRUE(has(bad.err, "/max_parallel")) << bad.err;
}

// 9. A configured program that does not exist is reported before the run starts; the Stage 1
// fallback is loud, and reviewer_required refuses it.
TEST_F(Ux, MissingAgentProgramsAreReportedBeforeTheRun) {
  set_config({{"executor", {{"command", {"no-such-executor-xyz", "{plan_path}"}}}}});
  auto r = yolo({"execute"});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_TRUE(has(r.err, "executor program 'no-such-executor-xyz' not found")) << dump(r);
  EXPECT_FALSE(stdfs::exists(state_path())) << "nothing ran, nothing was written";

  set_config({{"executor", nullptr},
              {"review_gate", "always"},
              {"reviewer_required", false},  // the person allows the fallback: it is loud
              {"reviewer", {{"command", {"no-such-reviewer-xyz", "{plan_path}"}}}}});
  auto loud = yolo({"execute"});
  EXPECT_TRUE(has(loud.out, "reviewer program 'no-such-reviewer-xyz' not found")) << dump(loud);
  EXPECT_TRUE(has(loud.out, "Stage 1 verdict only")) << dump(loud);
  auto st = yolo({"status"});
  EXPECT_TRUE(has(st.out, "no real review")) << "status shows the fallback\n" << dump(st);

  stdfs::remove(state_path());
  stdfs::remove_all(repo() / ".yolo-planning" / ".reviews");
  set_config({{"reviewer_required", true}});
  auto req = yolo({"execute"});
  EXPECT_EQ(req.exit_code, 1) << dump(req);
  EXPECT_TRUE(has(req.err, "reviewer_required")) << dump(req);
  // And `yolo review` itself fails closed instead of falling back.
  auto rv = yolo({"review", (phase_dir() / "01-01-PLAN.md").string()});
  EXPECT_EQ(rv.exit_code, 1) << dump(rv);
}

// 8. A discoverable CLI.
TEST_F(Ux, BareYoloListsCommandsAndTyposSuggestTheNearest) {
  auto bare = yolo({});
  EXPECT_EQ(bare.exit_code, 0) << dump(bare);
  for (const char* c : {"execute", "status", "init", "graph", "logs", "completion", "help"})
    EXPECT_TRUE(has(bare.out, c)) << c;
  auto typo = yolo({"stauts"});
  EXPECT_EQ(typo.exit_code, 64) << dump(typo);
  EXPECT_TRUE(has(typo.err, "unknown command 'stauts'. Did you mean 'status'?")) << typo.err;
  auto help = yolo({"help", "execute"});
  EXPECT_EQ(help.exit_code, 0) << dump(help);
  EXPECT_TRUE(has(help.out, "--dry-run")) << help.out;
  EXPECT_EQ(yolo({"help", "nope"}).exit_code, 64);
}

TEST_F(Ux, CompletionScriptsParseInTheirShells) {
  for (const char* sh : {"bash", "zsh", "fish"}) {
    auto r = yolo({"completion", sh});
    ASSERT_EQ(r.exit_code, 0) << sh << dump(r);
    EXPECT_TRUE(has(r.out, "execute")) << sh;
    EXPECT_TRUE(has(r.out, std::string(sh) == "fish" ? "-l dry-run" : "--dry-run")) << sh;
    if (!have_program(sh)) continue;
    write_file(dir_ / (std::string("c.") + sh), r.out);
    auto check = run_program({sh, "-n", (dir_ / (std::string("c.") + sh)).string()});
    EXPECT_EQ(check.exit_code, 0) << sh << " -n: " << check.err;
  }
  EXPECT_EQ(yolo({"completion", "tcsh"}).exit_code, 64);
  // bash: completing `yolo ex` offers execute.
  auto b = run_program({"bash", "-c",
                        "source <(\"$0\" completion bash); COMP_WORDS=(yolo ex); COMP_CWORD=1; _yolo; "
                        "printf '%s\\n' \"${COMPREPLY[@]}\"",
                        yolo_bin()});
  EXPECT_TRUE(has(b.out, "execute")) << dump(b);
}

TEST_F(Ux, ManPageIsGeneratedAndInstalled) {
  auto m = yolo({"man"});
  ASSERT_EQ(m.exit_code, 0) << dump(m);
  EXPECT_TRUE(has(m.out, ".TH YOLO 1")) << m.out;
  EXPECT_TRUE(has(m.out, "execute")) << m.out;
  stdfs::path build = stdfs::path(yolo_bin()).parent_path();
  if (!stdfs::exists(build / "cmake_install.cmake")) GTEST_SKIP() << "no cmake_install.cmake beside " << yolo_bin();
  auto gen = run_program({"cmake", "--build", build.string(), "--target", "yolo_docs"});
  ASSERT_EQ(gen.exit_code, 0) << dump(gen);
  auto inst = run_program({"cmake", "--install", build.string(), "--prefix", (dir_ / "prefix").string()});
  ASSERT_EQ(inst.exit_code, 0) << dump(inst);
  EXPECT_TRUE(stdfs::exists(dir_ / "prefix" / "share" / "man" / "man1" / "yolo.1"));
  EXPECT_TRUE(stdfs::exists(dir_ / "prefix" / "share" / "bash-completion" / "completions" / "yolo"));
  if (have_program("man")) {
    auto shown = run_program({"man", "-l", (dir_ / "prefix" / "share" / "man" / "man1" / "yolo.1").string()},
                             dir_.path(), {"MANPAGER=cat", "PAGER=cat"});
    EXPECT_TRUE(has(shown.out, "execute")) << dump(shown);
  }
}

TEST_F(Ux, ExecuteUnknownPlanIsAUsageErrorAndWritesNothing) {
  auto r = yolo({"execute", "--plan", "07"});
  EXPECT_EQ(r.exit_code, 64) << dump(r);
  EXPECT_TRUE(has(r.err, "no plan '07'")) << r.err;
  EXPECT_TRUE(has(r.err, "Next:")) << r.err;
  EXPECT_FALSE(stdfs::exists(state_path())) << "no HALTED state for a typo";
}

// 10. `yolo init`.
TEST(UxInit, InitScaffoldsAProjectThatWorks) {
  TempDir d;
  ASSERT_EQ(run_program({"git", "init", "-q", d.path().string()}).exit_code, 0);
  auto r = run_yolo({"init"}, d.path(), {"NO_COLOR=1"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  stdfs::path yp = d / ".yolo-planning";
  for (const char* f : {"config.json", "ROADMAP.md", ".gitignore", "phases/01-first-phase/01-PLAN.md"})
    EXPECT_TRUE(stdfs::exists(yp / f)) << f;
  EXPECT_TRUE(has(r.out, "Next:")) << r.out;
  json c = json::parse(read_file(yp / "config.json"));
  for (const char* a : {"claude", "codex", "gemini", "aider"}) EXPECT_TRUE(c["_agent_templates"].contains(a)) << a;
  EXPECT_EQ(c["_agent_templates"]["claude"]["reviewer"]["command"][0], "claude");
  EXPECT_EQ(c["_agent_templates"]["claude"]["reviewer"]["command"][1], "-p");
  EXPECT_EQ(c["_agent_templates"]["codex"]["reviewer"]["command"][1], "exec");
  EXPECT_EQ(c["_agent_templates"]["gemini"]["reviewer"]["command"][1], "-p");
  // The config validates, warns about nothing, and the example plan passes Stage 1.
  auto v = run_yolo({"validate", (yp / "config.json").string()}, d.path());
  EXPECT_EQ(v.exit_code, 0) << dump(v);
  auto rp = run_yolo(
      {"review-plan", (yp / "phases/01-first-phase/01-PLAN.md").string(), (yp / "phases/01-first-phase").string()},
      d.path());
  EXPECT_NE(rp.exit_code, 1) << dump(rp);
  EXPECT_FALSE(has(rp.err, "unknown key")) << rp.err;
  // The .gitignore keeps yolo's run files out of git.
  run_yolo({"execute"}, d.path());
  auto st = run_program({"git", "status", "--porcelain", "--untracked-files=all"}, d.path());
  EXPECT_FALSE(has(st.out, ".execution-state.json")) << st.out;
  EXPECT_TRUE(has(st.out, "config.json")) << st.out;
  // Again: refused, nothing overwritten.
  auto again = run_yolo({"init"}, d.path());
  EXPECT_EQ(again.exit_code, 1) << dump(again);
  // --agent fills in the roles.
  TempDir e;
  auto withagent = run_yolo({"init", "--agent", "codex", e.path().string()}, e.path());
  ASSERT_EQ(withagent.exit_code, 0) << dump(withagent);
  json ce = json::parse(read_file(e / ".yolo-planning/config.json"));
  EXPECT_EQ(ce["executor"]["command"][0], "codex");
  EXPECT_EQ(run_yolo({"init", "--agent", "nope", (e / "x").string()}, e.path()).exit_code, 64);
}

// 10. execute --dry-run shows the waves and what would run, and runs nothing.
TEST_F(Ux, DryRunShowsWavesAndRunsNothing) {
  use_executor();
  auto r = yolo({"execute", "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  for (const char* s :
       {"Wave 1", "Wave 2", "Wave 3", "01-01", "01-04", "would run: agents/executor-ok", "after 01-01", "Next:"})
    EXPECT_TRUE(has(r.out, s)) << s << "\n" << r.out;
  EXPECT_FALSE(stdfs::exists(state_path()));
  EXPECT_FALSE(stdfs::exists(phase_dir() / "01-01-SUMMARY.md"));
  auto j = yolo({"execute", "--dry-run", "--json"});
  json doc = j.json_out();
  EXPECT_EQ(doc["dry_run"], true);
  EXPECT_EQ(doc["waves"].size(), 3u);
}

// 10. yolo graph: Mermaid and DOT; DOT renders with Graphviz when it is installed.
TEST_F(Ux, GraphPrintsMermaidAndDotThatRenders) {
  auto m = yolo({"graph"});
  ASSERT_EQ(m.exit_code, 0) << dump(m);
  EXPECT_TRUE(has(m.out, "flowchart TD")) << m.out;
  EXPECT_TRUE(has(m.out, "-->")) << m.out;
  auto d = yolo({"graph", "--format", "dot"});
  ASSERT_EQ(d.exit_code, 0) << dump(d);
  EXPECT_TRUE(has(d.out, "digraph yolo")) << d.out;
  EXPECT_TRUE(has(d.out, "->")) << d.out;
  EXPECT_EQ(yolo({"graph", "--format", "png"}).exit_code, 64);
  if (!have_program("dot"))
    GTEST_SKIP() << "Graphviz `dot` is not installed (scripts/setup --with-tools installs it): DOT not rendered";
  write_file(dir_ / "g.dot", d.out);
  auto svg = run_program({"dot", "-Tsvg", (dir_ / "g.dot").string()});
  EXPECT_EQ(svg.exit_code, 0) << dump(svg);
  EXPECT_TRUE(has(svg.out, "<svg")) << svg.out.substr(0, 200);
  EXPECT_TRUE(has(svg.out, "Shared greeting text")) << "the plans are drawn";
}

// 5. An executor's output is kept per plan and shown by `yolo logs PLAN`.
TEST_F(Ux, ExecutorOutputIsKeptAndShownByLogs) {
  use_executor();
  set_config({{"executor",
               {{"command",
                 {"sh", "-c", "echo executor says hello for $YOLO_PLAN_ID; exec agents/executor-ok \"$0\" \"$1\"",
                  "{plan_path}", "{summary_path}"}}}}});
  auto r = yolo({"execute"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto l = yolo({"logs", "01-02"});
  EXPECT_EQ(l.exit_code, 0) << dump(l);
  EXPECT_TRUE(has(l.out, "executor says hello for 01-02")) << l.out;
  EXPECT_FALSE(has(l.out, "hello for 01-03")) << l.out;
  auto all = yolo({"logs"});
  EXPECT_TRUE(has(all.out, "01-04")) << all.out;
  EXPECT_EQ(yolo({"logs", "09"}).exit_code, 1);
}

// A phase where many plans have Stage 1 warnings: execute shows the first few in full and
// says how many more there are (and how to list them), and a wave of many plans names the
// first few; the run itself is the same. --json still reports every plan's warnings.
TEST_F(Ux, ManyPlansWithWarningsAreSummedUpNotPrintedInFull) {
  use_executor();
  for (int i = 11; i <= 20; ++i) {
    std::string id = std::to_string(i);
    write_file(phase_dir() / ("01-" + id + "-PLAN.md"),
               "---\nphase: \"01\"\nplan: \"" + id + "\"\ntitle: \"Extra " + id +
                   "\"\nwave: 1\ndepends_on: []\nmust_haves:\n  truths:\n    - \"notes/" + id +
                   ".txt exists\"\n---\n\n# Plan " + id + "\n\n### Task 1: Read the notes\n**Files:** `notes/missing-" +
                   id + ".md`\n\nRead them.\n");
  }
  git({"add", "-A"});
  git({"commit", "-q", "-m", "ten plans with warnings"});
  const std::string base = run_program({"git", "rev-parse", "HEAD"}, repo()).out.substr(0, 40);
  // The command the summary names lists every one of them.
  auto all = yolo({"review-plan", "--human", "--phase", ".yolo-planning/phases/01-demo"});
  for (int i = 11; i <= 20; ++i) EXPECT_TRUE(has(all.out, "missing-" + std::to_string(i) + ".md")) << all.out;
  // Machines get every plan's warnings.
  auto j = yolo({"execute", "--json"});
  ASSERT_EQ(j.exit_code, 0) << dump(j);
  size_t events = 0;
  for (size_t at = 0; (at = j.out.find("\"event\":\"precheck\",\"findings\"", at)) != std::string::npos; ++at) ++events;
  EXPECT_EQ(events, 10u) << j.out;
  // Again for people, from the same start (the executors wrote and committed the missing files).
  git({"reset", "-q", "--hard", base});
  git({"clean", "-q", "-fdx"});
  ASSERT_FALSE(stdfs::exists(repo() / "notes")) << "the files the plans name are missing again";
  auto r = yolo({"execute"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  size_t shown = 0;
  for (size_t at = 0; (at = r.out.find("conditional", at)) != std::string::npos; ++at) ++shown;
  EXPECT_EQ(shown, 5u) << r.out;
  EXPECT_TRUE(has(r.out,
                  "5 more plan(s) with warnings not shown: `yolo review-plan --human --phase "
                  ".yolo-planning/phases/01-demo` lists them all"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Cross-plan validation: 14 plans, 10 with warnings")) << r.out;
  EXPECT_TRUE(has(r.out, "Wave 1/3: 01-01, 01-11, 01-12, 01-13, 01-14, 01-15, 01-16, 01-17 and 3 more")) << r.out;
}

// An executor that succeeds without a word keeps no log (nothing but its argv and outcome,
// which the state has); one that fails keeps its log, even when it said nothing.
TEST_F(Ux, ASilentSuccessfulExecutorKeepsNoLogAFailingOneDoes) {
  use_executor();
  set_config({{"executor",
               {{"command",
                 {"sh", "-c",
                  "agents/executor-ok \"$0\" \"$1\" >/dev/null 2>&1; "
                  "[ \"$YOLO_PLAN_ID\" != 01-04 ] || exit 3",
                  "{plan_path}", "{summary_path}"}}}}});
  auto r = yolo({"execute"});
  ASSERT_EQ(r.exit_code, 1) << dump(r);
  auto quiet = yolo({"logs", "01-01"});
  EXPECT_EQ(quiet.exit_code, 1) << dump(quiet);
  EXPECT_TRUE(has(quiet.err, "no output kept for plan '01-01'")) << quiet.err;
  auto failed = yolo({"logs", "01-04"});
  EXPECT_EQ(failed.exit_code, 0) << dump(failed);
  EXPECT_TRUE(has(failed.out, "exited with 3") || has(failed.out, "exit 3") || has(failed.out, "code 3")) << failed.out;
}

// 6. A review-gate reject in execute: plan, verdict, escalated ids, top findings, next step,
// and no raw JSON.
TEST_F(Ux, ReviewRejectInExecuteIsReadable) {
  set_config(
      {{"review_gate", "always"},
       {"review_max_cycles", 2},
       {"reviewer",
        {{"command", {"agents/reviewer-reject-until-marker", "{plan_path}", "{cycle}"}}, {"timeout_ms", 10000}}},
       {"architect",
        {{"command", {"sh", "-c", "echo '<!-- touched -->' >> \"$0\"", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  auto r = yolo({"execute"});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  std::string all = r.out + r.err;
  EXPECT_TRUE(has(all, "01-01 rejected")) << all;
  EXPECT_TRUE(has(all, "escalated")) << all;
  EXPECT_TRUE(has(all, "f-001")) << all;
  EXPECT_TRUE(has(all, "No error handling for a missing input file")) << all;
  EXPECT_TRUE(has(all, "Next: edit .yolo-planning/phases/01-demo/01-01-PLAN.md")) << all;
  EXPECT_FALSE(has(all, "{\"cmd\"")) << "no raw JSON for people\n" << all;
  // status says why, and does not call the halted run "awaiting approval".
  auto st = yolo({"status"});
  EXPECT_TRUE(has(st.out, "No error handling for a missing input file")) << st.out;
  EXPECT_FALSE(has(st.out, "awaiting approval")) << st.out;
  EXPECT_TRUE(has(st.out, "Next: edit the rejected plan")) << st.out;
}

// 7. status before any run: the whole project; a long title does not run into the status.
TEST_F(Ux, StatusBeforeAnyRunShowsTheProjectAndEndsWithNext) {
  auto st = yolo({"status"});
  EXPECT_EQ(st.exit_code, 0) << dump(st);
  EXPECT_TRUE(has(st.out, "01-demo")) << st.out;
  EXPECT_TRUE(has(st.out, "0/4 done")) << st.out;
  EXPECT_TRUE(has(st.out, "Next: `yolo execute --dry-run`")) << st.out;
  std::string p1 = read_file(phase_dir() / "01-01-PLAN.md");
  p1.replace(p1.find("title: "), 7,
             "title: \"Ein sehr langer Titel mit Umlauten äöü, der nicht in die Statusspalte läuft\" #");
  write_file(phase_dir() / "01-01-PLAN.md", p1);
  yolo({"execute"});
  auto st2 = yolo({"status"});
  std::istringstream in(st2.out);
  std::string line;
  bool seen = false;
  while (std::getline(in, line))
    if (has(line, "Ein sehr langer")) {
      seen = true;
      EXPECT_TRUE(has(line, "…  ")) << "cut, then two spaces before the status: " << line;
    }
  EXPECT_TRUE(seen) << st2.out;
}

// A status that takes a while (the first one on a large project) shows on a terminal how far
// it is: a live line redrawn in place (a real pty, through util-linux `script`), gone before
// the table; piped, or with --json, there is none. YOLO_LIVE_AFTER_MS=0 shows it at once
// (the demo's one phase is read in a moment; a first status at 100,000 plans takes a second).
TEST_F(Ux, AFirstStatusOnATerminalShowsItsProgressLive) {
  if (!have_program("script")) GTEST_SKIP() << "util-linux script is not installed";
  // Four phases, no cache yet: every row is computed.
  for (const char* p : {"02-more", "03-more", "04-more"})
    stdfs::copy(phase_dir(), repo() / ".yolo-planning" / "phases" / p, stdfs::copy_options::recursive);
  std::string cmd = "'" + yolo_bin() + "' status";
  auto r = run_program({"env", "TERM=xterm", "NO_COLOR=1", "YOLO_LIVE_AFTER_MS=0", "script", "-qec", cmd, "/dev/null"},
                       repo());
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_TRUE(has(r.out, "\r\033[K")) << "drawn in place, and cleared\n" << r.out;
  EXPECT_TRUE(has(r.out, "◆ Reading the phases' review ledgers: 1/4")) << r.out;
  EXPECT_TRUE(has(r.out, "01-demo")) << r.out;
  auto piped = run_yolo({"status"}, repo(), {"NO_COLOR=1", "YOLO_LIVE_AFTER_MS=0"});
  EXPECT_EQ(piped.exit_code, 0) << dump(piped);
  EXPECT_FALSE(has(piped.out, "Reading the phases")) << piped.out;
  EXPECT_FALSE(has(piped.out, "\r")) << piped.out;
  stdfs::remove_all(repo() / ".yolo-planning" / ".cache");
  auto js = run_program(
      {"env", "TERM=xterm", "NO_COLOR=1", "YOLO_LIVE_AFTER_MS=0", "script", "-qec", cmd + " --json", "/dev/null"},
      repo());
  EXPECT_FALSE(has(js.out, "Reading the phases")) << js.out;
}

// 11. Quiet hooks: post-checkout prints nothing when no plan changed, one line otherwise; the
// pre-commit hint is a command that cannot rewrite the plan.
TEST(UxHooks, PostHooksAreQuietUnlessAPlanChanged) {
  TempDir t;
  stdfs::path root = t / "repo";
  stdfs::create_directories(root);
  write_file(t / "gitconfig", "");
  std::vector<std::string> env = {"GIT_CONFIG_GLOBAL=" + (t / "gitconfig").string(), "GIT_CONFIG_NOSYSTEM=1",
                                  "NO_COLOR=1"};
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"});
    return run_program(args, root, env);
  };
  ASSERT_EQ(git({"init", "-q", "-b", "main"}).exit_code, 0);
  write_file(
      root / ".gitignore",
      ".yolo-planning/.execution-state.json\n.yolo-planning/.reviews/\n.yolo-planning/.lock\n.yolo-planning/.logs/\n");
  write_file(root / ".yolo-planning" / "config.json", "{}\n");
  stdfs::path plan = root / ".yolo-planning/phases/01-core/01-01-PLAN.md";
  auto plan_text = [](const std::string& title) {
    return "---\nphase: \"01\"\nplan: \"01\"\ntitle: " + title +
           "\nwave: 1\ndepends_on: []\nmust_haves:\n  - core works\n---\n\n### Task 1: Do it\n";
  };
  write_file(plan, plan_text("Core"));
  write_file(root / "README.md", "one\n");
  ASSERT_EQ(git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(git({"commit", "-q", "-m", "init"}).exit_code, 0);
  ASSERT_EQ(run_yolo({"hooks", "install"}, root, env).exit_code, 0);
  ASSERT_NE(run_yolo({"review", plan.string()}, root, env).exit_code, 1);
  // `git checkout -- file` with no plan changed: not a word.
  write_file(root / "README.md", "two\n");
  auto co = git({"checkout", "--", "README.md"});
  ASSERT_EQ(co.exit_code, 0) << co.err;
  EXPECT_EQ(co.err, "") << "post-checkout printed with no plan changed";
  // A branch with another plan: one line.
  ASSERT_EQ(git({"checkout", "-q", "-b", "other"}).exit_code, 0);
  write_file(plan, plan_text("Core, differently"));
  ASSERT_EQ(git({"commit", "-q", "-a", "--no-verify", "-m", "v2"}).exit_code, 0);
  // Back on main the plan is what was reviewed: quiet again.
  auto same = git({"checkout", "-q", "main"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.err, "") << "the plan is as it was reviewed";
  auto back = git({"checkout", "-q", "other"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_TRUE(has(back.err, "re-reviewed 1 changed plan(s): 01-01")) << back.err;
  EXPECT_EQ(std::count(back.err.begin(), back.err.end(), '\n'), 1) << back.err;
}

// 12. Watch does not fight the person: without --fix the architect never rewrites a plan;
// with --fix it may, and the rewrite is announced. --no-review does not say "reviewing".
TEST_F(Ux, WatchRunsTheArchitectOnlyWhenAsked) {
  using namespace std::chrono_literals;
  set_config({{"reviewer",
               {{"command", {"agents/reviewer-reject-until-marker", "{plan_path}", "{cycle}"}}, {"timeout_ms", 10000}}},
              {"architect", {{"command", {"agents/architect-fix", "{plan_path}"}}, {"timeout_ms", 10000}}}});
  std::string before = read_file(phase_dir() / "01-01-PLAN.md");
  {
    BgProcess w({yolo_bin(), "watch", repo().string(), "--json"}, repo());
    auto rej = w.wait_for(
        [](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == "01-01"; }, 30s);
    ASSERT_TRUE(rej) << w.stderr_text();
    EXPECT_EQ((*rej)["verdict"], "reject");
    w.collect(1500ms);
    w.signal(SIGINT);
    w.wait_exit(10s);
  }
  EXPECT_EQ(read_file(phase_dir() / "01-01-PLAN.md"), before) << "the architect rewrote a plan without --fix";
  {
    write_file(phase_dir() / "01-01-PLAN.md", before + "\nSaved again.\n");
    BgProcess w({yolo_bin(), "watch", repo().string(), "--json", "--fix"}, repo());
    auto rev = w.wait_for([](const json& j) { return j.value("event", "") == "plan_revised"; }, 30s);
    ASSERT_TRUE(rev) << w.stderr_text();
    // What the architect changed is shown: a unified diff of the plan before and after.
    std::string diff = (*rev).value("diff", "");
    EXPECT_TRUE(has(diff, "--- a/.yolo-planning/phases/01-demo/01-01-PLAN.md\n")) << diff;
    EXPECT_TRUE(has(diff, "\n+<!-- REVIEW-FIX-APPLIED -->\n")) << diff;
    EXPECT_TRUE(has(diff, "\n Saved again.\n")) << "context lines: " << diff;
    w.signal(SIGINT);
    w.wait_exit(10s);
  }
  EXPECT_TRUE(has(read_file(phase_dir() / "01-01-PLAN.md"), "REVIEW-FIX-APPLIED")) << "--fix lets the architect revise";
}

TEST_F(Ux, WatchNoReviewDoesNotSayReviewing) {
  using namespace std::chrono_literals;
  BgProcess w({yolo_bin(), "watch", repo().string(), "--no-review"}, repo());
  w.collect(1500ms);
  write_file(phase_dir() / "01-02-PLAN.md", read_file(phase_dir() / "01-02-PLAN.md") + "\nEdited.\n");
  w.collect(2000ms);
  w.signal(SIGINT);
  w.wait_exit(10s);
  std::string all;
  for (const auto& l : w.other_lines) all += l + "\n";
  EXPECT_TRUE(has(all, "01-02 changed")) << all;
  EXPECT_FALSE(has(all, "reviewing")) << all;
}

// 5. On a terminal a live line shows the progress and each running executor; piped, there
// is none.
TEST_F(Ux, LiveProgressLineOnATerminalOnly) {
  if (!have_program("script")) GTEST_SKIP() << "util-linux script is not installed";
  use_executor();
  std::string cmd = "'" + yolo_bin() + "' execute";
  auto tty =
      run_program({"env", "TERM=xterm", "NO_COLOR=1", "YOLO_EXEC_SLEEP=1", "script", "-qec", cmd, "/dev/null"}, repo());
  EXPECT_EQ(tty.exit_code, 0) << dump(tty);
  EXPECT_TRUE(has(tty.out, "\r\033[K")) << "the live line is redrawn in place";
  EXPECT_TRUE(has(tty.out, "plans · ◆ 01-")) << tty.out;
  EXPECT_TRUE(has(tty.out, "executor ")) << tty.out;
  EXPECT_TRUE(has(tty.out, "s/30s")) << "elapsed and timeout\n" << tty.out;
}

// The review gate in execute is not silence on a terminal either: a live line with its time.
TEST_F(Ux, LiveLineWhileTheReviewGateRuns) {
  if (!have_program("script")) GTEST_SKIP() << "util-linux script is not installed";
  set_config(
      {{"review_gate", "always"},
       {"executor", nullptr},
       {"reviewer",
        {{"command", {"sh", "-c", "sleep 1; echo 'VERDICT: approve'; echo 'FINDINGS:'"}}, {"timeout_ms", 10000}}}});
  std::string cmd = "'" + yolo_bin() + "' execute";
  auto tty = run_program({"env", "TERM=xterm", "NO_COLOR=1", "script", "-qec", cmd, "/dev/null"}, repo());
  EXPECT_EQ(tty.exit_code, 4) << dump(tty);
  EXPECT_TRUE(has(tty.out, "◆ Review gate: reviewing .yolo-planning/phases/01-demo")) << tty.out;
  EXPECT_TRUE(has(tty.out, "Review gate: approve")) << tty.out;
}

TEST_F(Ux, NoLiveLineOnAPipeOneLinePerEvent) {
  use_executor();
  auto piped = yolo({"execute"}, {"YOLO_EXEC_SLEEP=1"});
  EXPECT_EQ(piped.exit_code, 0) << dump(piped);
  EXPECT_FALSE(has(piped.out, "\r")) << "no animation on a pipe";
  EXPECT_TRUE(has(piped.out, "Plan 01-01 started")) << piped.out;
}

}  // namespace
}  // namespace yolo::test
