// What the run says (runner/run_report.h), the class alone, writing to files of the test's
// own: each event's line for people and its JSON line, colour only on a terminal and without
// NO_COLOR, the event log's lines in a real file, the `Next:` line of each exit code, a wave's
// names cut after eight, a rejected gate's halt with its next step, step 2's words, the live
// line of a given set of running plans, and what a run's records show on it.
#include "runner/run_report.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "protocol/base/text.h"
#include "protocol/state/events.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

using test::TempDir;
namespace stdfs = std::filesystem;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// A line for people without its elapsed time ("  [0.0s]"), which the clock decides.
std::string without_time(const std::string& l) {
  size_t at = l.rfind("  [");
  EXPECT_NE(at, std::string::npos) << l;
  EXPECT_EQ(l.back(), ']') << l;
  return at == std::string::npos ? l : l.substr(0, at);
}

// One run's report, writing to two files of the test's own.
struct Said {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  Config cfg;
  PhaseDir phase;
  std::string cid = "cid-1";
  std::vector<PlanEntry> entries{{"01-01", "01", "one", 1, {}, ""}, {"01-02", "02", "two", 1, {}, ""}};
  LiveView live;
  FILE* out = nullptr;
  FILE* err = nullptr;
  std::unique_ptr<RunReport> report;

  explicit Said(bool json_mode, bool event_log = true) {
    stdfs::create_directories(root / ".yolo-planning");
    cfg = config_from_json(json{{"v3_event_log", event_log}}, "config.json").config;
    phase.number = 1;
    phase.folder = "01-demo";
    phase.slug = "demo";
    phase.rel = ".yolo-planning/phases/01-demo";
    phase.abs = root / phase.rel;
    out = std::fopen((tmp / "out.txt").c_str(), "w+");
    err = std::fopen((tmp / "err.txt").c_str(), "w+");
    report = std::make_unique<RunReport>(
        test::real_world(), root, cfg, phase, cid, entries, json_mode, [this] { return live; },
        RunReport::Streams{out, err});
  }
  ~Said() {
    report.reset();
    std::fclose(out);
    std::fclose(err);
  }
  std::vector<std::string> out_lines() { return lines_of(test::read_file(tmp / "out.txt")); }
  std::vector<std::string> err_lines() { return lines_of(test::read_file(tmp / "err.txt")); }
  std::vector<json> json_lines() {
    std::vector<json> js;
    for (const auto& l : out_lines()) js.push_back(json::parse(l));
    return js;
  }
  std::vector<json> event_log() {
    std::vector<json> js;
    stdfs::path f = events::log_path(root);
    if (!stdfs::exists(f)) return js;
    for (const auto& l : lines_of(test::read_file(f))) js.push_back(json::parse(l));
    return js;
  }
};

// NO_COLOR set for one test, put back after it.
struct NoColor {
  std::optional<std::string> was;
  explicit NoColor(const char* value) {
    if (const char* v = std::getenv("NO_COLOR")) was = v;
    if (value)
      ::setenv("NO_COLOR", value, 1);
    else
      ::unsetenv("NO_COLOR");
  }
  ~NoColor() {
    if (was)
      ::setenv("NO_COLOR", was->c_str(), 1);
    else
      ::unsetenv("NO_COLOR");
  }
};

TEST(RunReport, AnEventIsALineForPeopleWithItsSymbolAndElapsedTime) {
  Said s(false);
  s.report->emit("plan_end", {{"plan", "01-01"}}, Sym::Ok, "Plan 01-01 complete (1.0s)");
  s.report->emit("summary_not_counted", {}, Sym::Warn, "Plan 01-02: \x1b[31mred\x1b[0m");
  s.report->note("a detail");
  s.report->note("a dim detail", true);
  auto l = s.out_lines();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(without_time(l[0]), "✓ Plan 01-01 complete (1.0s)");
  EXPECT_NE(l[0].find("  [0."), std::string::npos) << l[0];
  EXPECT_EQ(l[1].find('\x1b'), std::string::npos) << "no control character reaches the terminal: " << l[1];
  EXPECT_EQ(l[1].substr(0, 4), "⚠ ") << l[1];
  EXPECT_EQ(l[2], "    a detail");
  EXPECT_EQ(l[3], "    a dim detail") << "dim without colour is plain";
  EXPECT_TRUE(s.err_lines().empty());
}

TEST(RunReport, AnEventIsOneJsonLineWithItsDataAndElapsedMsAndNotesAreLeftOut) {
  Said s(true);
  s.report->emit("plan_end", {{"plan", "01-01"}, {"status", "complete"}}, Sym::Ok, "Plan 01-01 complete");
  s.report->note("for people only");
  auto js = s.json_lines();
  ASSERT_EQ(js.size(), 1u);
  EXPECT_EQ(js[0]["event"], "plan_end");
  EXPECT_EQ(js[0]["plan"], "01-01");
  EXPECT_EQ(js[0]["status"], "complete");
  ASSERT_TRUE(js[0].contains("elapsed_ms"));
  EXPECT_TRUE(js[0]["elapsed_ms"].is_number_integer());
  EXPECT_EQ(js[0].size(), 4u) << js[0].dump();
}

// A pseudo-terminal's two ends: the report writes to the terminal, the test reads the other.
struct Terminal {
  int master = -1;
  FILE* tty = nullptr;
  Terminal() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT_GE(master, 0);
    EXPECT_EQ(::grantpt(master), 0);
    EXPECT_EQ(::unlockpt(master), 0);
    tty = ::fdopen(::open(::ptsname(master), O_WRONLY | O_NOCTTY), "w");
    EXPECT_NE(tty, nullptr);
  }
  ~Terminal() {
    if (tty) std::fclose(tty);
    ::close(master);
  }
  std::string read_all() {
    std::string got;
    char buf[4096];
    pollfd p{master, POLLIN, 0};
    while (::poll(&p, 1, 200) > 0) {
      ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
};

std::string said_on(Terminal& t) {
  TempDir tmp;
  Config cfg = config_from_json(json::object(), "config.json").config;
  PhaseDir phase;
  std::string cid;
  std::vector<PlanEntry> entries;
  RunReport r(test::real_world(), tmp.path(), cfg, phase, cid, entries, false, {}, RunReport::Streams{t.tty, t.tty});
  r.emit("wave_start", {}, Sym::Diamond, "Wave 1/1: 01-01");
  r.finish(kExecComplete, execution::Result::Complete, "");
  return t.read_all();
}

TEST(RunReport, ColourOnlyOnATerminalAndWithoutNoColor) {
  {
    NoColor nc(nullptr);
    Terminal t;
    std::string got = said_on(t);
    EXPECT_NE(got.find("\033[36m◆\033[0m Wave 1/1: 01-01  \033[2m["), std::string::npos) << got;
    EXPECT_NE(got.find("Next: "), std::string::npos) << got;
  }
  {
    NoColor nc("");  // empty counts as unset (no-color.org)
    Terminal t;
    EXPECT_NE(said_on(t).find("\033[36m◆"), std::string::npos);
  }
  {
    NoColor nc("1");
    Terminal t;
    std::string got = said_on(t);
    EXPECT_NE(got.find("◆ Wave 1/1: 01-01  ["), std::string::npos) << got;
    EXPECT_EQ(got.find('\033'), std::string::npos) << "NO_COLOR: " << got;
  }
  {
    NoColor nc(nullptr);  // a file is no terminal
    Said s(false);
    EXPECT_FALSE(s.report->color());
    s.report->emit("wave_start", {}, Sym::Diamond, "Wave 1/1: 01-01");
    EXPECT_EQ(s.out_lines().at(0).find('\033'), std::string::npos) << s.out_lines().at(0);
  }
}

TEST(RunReport, TheEventLogGetsItsLinesInARealFileOnlyWhenTheConfigEnablesIt) {
  Said s(false);
  s.report->wave_start(1, 2, {"01-01", "01-02"});
  s.report->log("plan_end", "3", {{"plan_id", "01-03"}});
  s.report->wave_end(1, false);
  auto log = s.event_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0]["event"], "wave_start");
  EXPECT_EQ(log[0]["phase"], 1);
  EXPECT_EQ(log[0]["correlation_id"], "cid-1");
  EXPECT_FALSE(log[0].contains("plan"));
  EXPECT_EQ(log[0]["data"], (json{{"wave", 1}, {"plans", {"01-01", "01-02"}}, {"phase_dir", s.phase.rel}}));
  EXPECT_EQ(log[1]["event"], "plan_end");
  EXPECT_EQ(log[1]["plan"], 3);
  EXPECT_EQ(log[1]["data"]["plan_id"], "01-03");
  EXPECT_EQ(log[2]["event"], "wave_end");
  EXPECT_EQ(log[2]["data"]["status"], "complete");

  Said off(false, /*event_log=*/false);
  off.report->wave_start(1, 1, {"01-01"});
  EXPECT_TRUE(off.event_log().empty());
  EXPECT_FALSE(stdfs::exists(events::log_path(off.root)));
}

TEST(RunReport, ALogThatCannotBeWrittenIsSaidOnceOnStderr) {
  Said s(false);
  stdfs::create_directories(s.root / ".yolo-planning" / ".events" / "event-log.jsonl");  // a folder: no file
  s.report->log("wave_start", "");
  s.report->log("wave_end", "");
  auto e = s.err_lines();
  ASSERT_EQ(e.size(), 1u) << test::read_file(s.tmp / "err.txt");
  EXPECT_EQ(e[0].rfind("⚠ event not logged: ", 0), 0u) << e[0];
}

TEST(RunReport, TheNextLineOfEachExitCode) {
  struct Case {
    int code;
    std::string sym, next;
    bool on_stderr;
  };
  const std::vector<Case> cases = {
      {kExecComplete, "✓", "`yolo execute` runs the next phase that is not complete; `yolo status` shows the project",
       false},
      {kExecPaused, "⏸",
       "`yolo gates` shows the open gate; `yolo approve` (or `yolo reject --feedback TEXT`), then `yolo execute`",
       false},
      {kExecWaitingSummary, "◆",
       "write the SUMMARY files named above (or configure an `executor`), then `yolo execute`", false},
      {kExecUsage, "✗", "`yolo status` lists the phases and plans; `yolo execute --help` shows the options", true},
      {kExecHalted, "✗", "fix what is reported above, then `yolo execute` (`yolo status` shows the run)", true},
  };
  for (const Case& c : cases) {
    Said s(false);
    EXPECT_EQ(s.report->finish(c.code, execution::Result::Halted, "the last word"), c.code);
    auto said = c.on_stderr ? s.err_lines() : s.out_lines();
    auto other = c.on_stderr ? s.out_lines() : s.err_lines();
    ASSERT_EQ(said.size(), 2u) << c.code;
    EXPECT_EQ(said[0], c.sym + " the last word") << c.code;
    EXPECT_EQ(said[1], "Next: " + c.next) << c.code;
    EXPECT_TRUE(other.empty()) << c.code;
  }
  {  // a step that knows better sets the next step; an empty message leaves its line out
    Said s(false);
    s.report->next() = "do this";
    s.report->finish(kExecComplete, execution::Result::Complete, "");
    EXPECT_EQ(s.out_lines(), std::vector<std::string>{"Next: do this"});
  }
  {  // --json: one line with the plans' statuses as the state file says
    Said s(true);
    ASSERT_TRUE(state::update(test::real_world(), s.root, [](json& d) {
                  d = {{"status", "running"}, {"plans", {{{"id", "01-01"}, {"status", "complete"}}}}};
                  return true;
                }).written);
    EXPECT_EQ(s.report->finish(kExecPaused, execution::Result::Paused, "Paused"), kExecPaused);
    auto js = s.json_lines();
    ASSERT_EQ(js.size(), 1u);
    EXPECT_EQ(js[0]["ok"], false);
    EXPECT_EQ(js[0]["cmd"], "execute");
    EXPECT_EQ(js[0]["result"], std::string(execution::to_string(execution::Result::Paused)));
    EXPECT_EQ(js[0]["exit_code"], kExecPaused);
    EXPECT_EQ(js[0]["message"], "Paused");
    EXPECT_EQ(js[0]["phase"], 1);
    EXPECT_EQ(js[0]["phase_dir"], s.phase.rel);
    EXPECT_EQ(js[0]["plans"],
              (json{{{"id", "01-01"}, {"status", "complete"}}, {{"id", "01-02"}, {"status", "pending"}}}));
    EXPECT_EQ(js[0]["next"], cases[1].next);
    EXPECT_TRUE(js[0]["elapsed_ms"].is_number_integer());
  }
}

std::vector<std::string> ids(int n) {
  std::vector<std::string> v;
  for (int i = 1; i <= n; ++i) v.push_back((i < 10 ? "01-0" : "01-") + std::to_string(i));
  return v;
}

TEST(RunReport, AWavesNamesAreCutAfterEightForPeopleAndAllGoToMachines) {
  {
    Said s(false);
    s.report->wave_start(2, 3, ids(10));
    s.report->wave_start(3, 3, ids(8));
    auto l = s.out_lines();
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(without_time(l[0]), "◆ Wave 2/3: 01-01, 01-02, 01-03, 01-04, 01-05, 01-06, 01-07, 01-08 and 2 more");
    EXPECT_EQ(without_time(l[1]), "◆ Wave 3/3: 01-01, 01-02, 01-03, 01-04, 01-05, 01-06, 01-07, 01-08");
    ASSERT_EQ(s.event_log().size(), 2u);
    EXPECT_EQ(s.event_log()[0]["data"]["plans"].size(), 10u);
  }
  {
    Said s(true);
    s.report->wave_start(2, 3, ids(10));
    auto js = s.json_lines();
    ASSERT_EQ(js.size(), 1u);
    EXPECT_EQ(js[0]["event"], "wave_start");
    EXPECT_EQ(js[0]["wave"], 2);
    EXPECT_EQ(js[0]["total_waves"], 3);
    EXPECT_EQ(js[0]["plans"], json(ids(10)));
  }
}

json state_with_gate(const std::string& status) {
  return {{"gates", json::array({{{"id", "g-0"}, {"gate_type", "vision"}, {"status", "APPROVED"}},
                                 {{"id", "g-1"},
                                  {"gate_type", "wave"},
                                  {"plan_path", ".yolo-planning/phases/01-demo/01-02-PLAN.md"},
                                  {"status", status},
                                  {"feedback", "split it"}}})}};
}

TEST(RunReport, ARejectedGateHaltsWithItsTextAndTheStepToRequestApprovalAgain) {
  const std::string msg =
      "Halted: wave gate g-1 for .yolo-planning/phases/01-demo/01-02-PLAN.md was rejected: split it";
  {
    Said s(false);
    EXPECT_EQ(s.report->halted(state_with_gate("REJECTED")), msg);
    auto l = s.out_lines();
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(without_time(l[0]), "✗ " + msg);
    EXPECT_EQ(l[1],
              "    revise and request approval again: yolo request-approval --plan-path "
              ".yolo-planning/phases/01-demo/01-02-PLAN.md --gate-type wave");
  }
  {
    Said s(true);
    s.report->halted(state_with_gate("REJECTED"));
    auto js = s.json_lines();
    ASSERT_EQ(js.size(), 1u);
    EXPECT_EQ(js[0]["event"], "gate_rejected");
    EXPECT_EQ(js[0]["gate_id"], "g-1");
    EXPECT_EQ(js[0]["gate_type"], "wave");
    EXPECT_EQ(js[0]["feedback"], "split it");
  }
  {  // halted for another reason (the last gate approved): said by the last word alone
    Said s(false);
    EXPECT_EQ(s.report->halted(state_with_gate("APPROVED")), "Halted: the run is halted");
    EXPECT_EQ(s.report->halted(json::object()), "Halted: the run is halted");
    EXPECT_TRUE(s.out_lines().empty());
  }
}

TEST(RunReport, TheRunCoresOtherActionsInWords) {
  Said s(false);
  s.report->wave_end(1, true);
  s.report->frozen(2);
  EXPECT_EQ(s.report->halt("a plan failed"), "Phase 01-demo halted: a plan failed");
  EXPECT_EQ(s.report->plan_complete("01-02"), "Plan 01-02 complete (--plan); the rest of the phase is not");
  EXPECT_EQ(s.report->next_step(kExecComplete), "`yolo execute` runs the rest of the phase");
  s.report->phase_complete(3);
  s.report->max_parallel_lowered(8, 2, 64);
  EXPECT_EQ(s.report->merge_refused("01-03"), "Halted: plan 01-03 passed its gates but could not be merged");
  EXPECT_EQ(s.report->plans_ready({{"01-01", 1, "p/01-01-PLAN.md", "p/01-01-SUMMARY.md"}}),
            "Waiting for SUMMARY: no executor is configured; 1 plan(s) are ready for an agent or a person. Run "
            "`yolo execute` again once their SUMMARY files exist.");
  std::vector<std::string> l;
  for (const auto& x : s.out_lines()) l.push_back(without_time(x));
  EXPECT_EQ(l, (std::vector<std::string>{
                   "✗ Wave 1 failed",
                   "⏸ A gate is open: no new plan starts; waiting for the 2 running plan(s)",
                   "✓ Plan 01-02 is complete",
                   "✓ Phase 01-demo complete: 3/3 plans",
                   "⚠ max_parallel 8 lowered to 2: this process may open only 64 files (`ulimit -n`); the other "
                   "plans wait for a slot (raise it: `ulimit -n 4096`)",
                   "◆ Plan 01-01 ready: waiting for p/01-01-SUMMARY.md",
               }))
      << "the halt is said by the last word alone, for people";
  auto log = s.event_log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["data"]["status"], "failed");
  EXPECT_EQ(log[1]["event"], "phase_end");
  EXPECT_EQ(log[1]["data"]["plans"], 3);
  EXPECT_TRUE(log[1]["data"]["elapsed_ms"].is_number_integer());

  Said j(true);
  j.report->halt("a plan failed");
  j.report->plans_ready({{"01-01", 1, "p/01-01-PLAN.md", "p/01-01-SUMMARY.md"}});
  j.report->frozen(2);
  auto js = j.json_lines();
  ASSERT_EQ(js.size(), 3u);
  EXPECT_EQ(js[0]["event"], "phase_end");
  EXPECT_EQ(js[0]["status"], "halted");
  EXPECT_EQ(js[0]["reason"], "a plan failed");
  EXPECT_EQ(js[1]["event"], "plan_ready");
  EXPECT_EQ(js[1]["plan"], "01-01");
  EXPECT_EQ(js[1]["wave"], 1);
  EXPECT_EQ(js[1]["plan_path"], "p/01-01-PLAN.md");
  EXPECT_EQ(js[1]["summary_path"], "p/01-01-SUMMARY.md");
  EXPECT_EQ(js[2]["event"], "frozen");
  EXPECT_EQ(js[2]["running"], 2);
}

TEST(RunReport, TheRunsStopMessagesAreItsLastWordsAlone) {
  const std::vector<std::pair<std::string, std::string>> cases = {  // built by the report, and expected
      {"interrupted", "Interrupted (signal 15): running executors were stopped; their plans are pending again"},
      {"nothing_left", "stopped with nothing left to run"},
  };
  auto text = [](RunReport& r, const std::string& name) {
    if (name == "interrupted") return r.interrupted(15);
    return r.nothing_left();
  };
  for (const auto& [name, want] : cases) {
    {  // for people: nothing said until the last word, which says the message
      Said s(false);
      EXPECT_EQ(text(*s.report, name), want) << name;
      EXPECT_TRUE(s.out_lines().empty() && s.err_lines().empty()) << name;
      s.report->finish(kExecPaused, execution::Result::Paused, text(*s.report, name));
      ASSERT_EQ(s.out_lines().size(), 2u) << name;
      EXPECT_EQ(s.out_lines()[0], "⏸ " + want) << name;
    }
    {  // --json: no event of its own; the last line's message
      Said j(true);
      EXPECT_EQ(text(*j.report, name), want) << name;
      EXPECT_TRUE(j.out_lines().empty()) << name;
      j.report->finish(kExecHalted, execution::Result::Interrupted, text(*j.report, name));
      auto js = j.json_lines();
      ASSERT_EQ(js.size(), 1u) << name;
      EXPECT_EQ(js[0]["message"], want) << name;
      EXPECT_TRUE(j.event_log().empty()) << name;
    }
  }
}

TEST(RunReport, StepTwoSaysThePhaseItsResumeAndTheSummariesItCannotCount) {
  const json findings = json::array({{{"severity", "high"}, {"issue", "no commit"}}});
  {
    Said s(false);
    s.report->phase_start(3, 2, /*resumed=*/true, 1, /*was_running=*/true);
    s.report->phase_start(3, 2, /*resumed=*/false, 0, /*was_running=*/false);
    s.report->summary_not_counted("01-02");
    s.report->summary_failed("01-03", findings);
    s.report->already_complete(3);
    auto l = s.out_lines();
    ASSERT_EQ(l.size(), 7u);
    EXPECT_EQ(without_time(l[0]), "◆ Phase 01-demo: 3 plans in 2 waves (resumed, 1 complete)");
    EXPECT_EQ(l[1], "    plans left running by an earlier run are pending again");
    EXPECT_EQ(without_time(l[2]), "◆ Phase 01-demo: 3 plans in 2 waves");
    EXPECT_EQ(without_time(l[3]),
              "⚠ Plan 01-02: its SUMMARY appeared after this run began, written by no executor of 01-02: not "
              "counted; the plan runs (its executor writes the SUMMARY again)");
    EXPECT_EQ(without_time(l[4]), "✗ Plan 01-03: its SUMMARY fails the SUMMARY gate");
    EXPECT_EQ(l[5], "    [high] no commit");
    EXPECT_EQ(without_time(l[6]), "✓ Phase 01-demo complete: every plan has a SUMMARY that passes the gate");
    auto log = s.event_log();
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0]["event"], "phase_start");
    EXPECT_EQ(log[0]["data"], (json{{"resumed", true}, {"plans", 3}, {"total_waves", 2}, {"phase_dir", s.phase.rel}}));
  }
  {
    Said s(true);
    s.report->phase_start(3, 2, /*resumed=*/false, 0, /*was_running=*/true);
    s.report->summary_not_counted("01-02");
    s.report->summary_failed("01-03", findings);
    s.report->already_complete(3);
    auto js = s.json_lines();
    ASSERT_EQ(js.size(), 4u) << "notes are for people only";
    for (auto& j : js) j.erase("elapsed_ms");
    EXPECT_EQ(js[0], (json{{"event", "phase_start"},
                           {"phase", 1},
                           {"phase_dir", s.phase.rel},
                           {"plans", 3},
                           {"total_waves", 2},
                           {"resumed", false},
                           {"correlation_id", "cid-1"}}));
    EXPECT_EQ(js[1], (json{{"event", "summary_not_counted"}, {"plan", "01-02"}}));
    EXPECT_EQ(js[2], (json{{"event", "plan_end"}, {"plan", "01-03"}, {"status", "failed"}, {"findings", findings}}));
    EXPECT_EQ(js[3], (json{{"event", "phase_end"}, {"status", "complete"}, {"plans", 3}}));
  }
}

TEST(RunReport, TheLiveLineShowsProgressTheRunningExecutorsAndThePlansOwnSteps) {
  Said s(false);
  LiveView v;
  v.done = 1;
  v.total = 4;
  v.running.push_back({"01-02", 3.14, 60000, "Bash: make test"});
  v.aside.push_back({"01-03", "checks"});
  EXPECT_EQ(s.report->live_line(v),
            "[███░░░░░░░░░] 1/4 plans · ◆ 01-02 executor 3.1s/60s Bash: make test · ◆ 01-03 checks");

  const std::string tool = "Bash: a command long enough to be cut when two executors share the line";
  v.running = {{"01-02", 0.5, 30000, tool}, {"01-04", 12.0, 30000, ""}};
  v.aside.clear();
  v.done = 4;
  ASSERT_LT(text::cut(tool, 24).size(), tool.size());
  EXPECT_EQ(s.report->live_line(v), "[████████████] 4/4 plans · ◆ 01-02 executor 0.5s/30s " + text::cut(tool, 24) +
                                        " · ◆ 01-04 executor 12.0s/30s");

  LiveView none;
  EXPECT_EQ(s.report->live_line(none), "[░░░░░░░░░░░░] 0/0 plans · waiting");
}

TEST(RunReport, TheLiveViewCountsThePlansDoneAndShowsTheRunningExecutorsAndThePlansAside) {
  std::vector<PlanEntry> entries;
  std::vector<run::PlanSeed> seeds;
  for (const char* p : {"01", "02", "03", "04", "05"}) {
    entries.push_back({std::string("01-") + p, p, p, 1, {}, ""});
    run::PlanSeed seed;
    seed.node.id = entries.back().id;
    seed.node.plan = p;
    seed.node.wave = 1;
    seeds.push_back(seed);
  }
  run::Core core(seeds, run::Settings{});
  std::vector<PlanRun> runs(entries.size());
  const uint64_t now = 10'000'000'000ULL;
  core.started(0);
  core.concluded(0, {PlanStatus::Complete, "", json::array()});  // done: the run core says so
  entries[1].summary = SummaryState::Passed;                     // done: its SUMMARY passes, nothing runs it
  entries[2].summary = SummaryState::Passed;                     // its SUMMARY passes, but it runs again
  runs[2].running = true;
  runs[2].started_at = now - 1'500'000'000ULL;
  runs[2].tool = "Bash: make";
  core.started(3);
  core.concluded(3, {PlanStatus::Failed, "broke", json::array()});  // ended, not done
  runs[4].aside_step = "checks";
  LiveView v = live_view(core, entries, runs, 60000, now);
  EXPECT_EQ(v.total, 5u);
  EXPECT_EQ(v.done, 2u);
  ASSERT_EQ(v.running.size(), 1u);
  EXPECT_EQ(v.running[0].id, "01-03");
  EXPECT_DOUBLE_EQ(v.running[0].secs, 1.5);
  EXPECT_EQ(v.running[0].timeout_ms, 60000);
  EXPECT_EQ(v.running[0].tool, "Bash: make");
  ASSERT_EQ(v.aside.size(), 1u);
  EXPECT_EQ(v.aside[0].id, "01-05");
  EXPECT_EQ(v.aside[0].step, "checks");
}

}  // namespace
}  // namespace yolo::runner::phase
