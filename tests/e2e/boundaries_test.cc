// The boundaries between commands, end to end with the real binary: a review is no run (a plain
// `yolo watch` never starts `yolo execute`), one containment check for every path from
// outside (symbolic links resolved), read-only commands never make the approval key, and
// gate transitions are logged as an audit trail whatever v3_event_log says (as the docs
// say).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "bg_process.h"
#include "test_support.h"

namespace yolo::test {
namespace {

using namespace std::chrono_literals;

const std::string kRoadmap = ".yolo-planning/ROADMAP.md";

bool has_event(const std::vector<json>& evs, const std::string& event) {
  for (const auto& e : evs)
    if (e.value("event", "") == event) return true;
  return false;
}

// Runs `yolo watch --json` until it is ready and quiet, stops it, returns its events.
std::vector<json> watch_once(const stdfs::path& root) {
  BgProcess w({yolo_bin(), "watch", root.string(), "--json"}, root);
  auto ready = w.wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 20s);
  EXPECT_TRUE(ready) << w.stderr_text();
  // Whatever the watcher decides (reviews, an execute child) happens within this window.
  while (!w.collect(1500ms).empty()) {
  }
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait_exit(10s), 0) << w.stderr_text();
  return w.seen;
}

// A review is no run: `yolo watch` twice on the demo with an empty config. The first
// reviews the plans; that review used to write a state with status "running", which the
// second read as a run to drive, so it started `yolo execute` (which opened the vision gate).
TEST(RunBoundary, APlainWatchNeverStartsExecuteAfterAReview) {
  TempDir dir;
  copy_fixture("demo", dir.path());
  write_file(dir / ".yolo-planning/config.json", "{}");
  auto first = watch_once(dir.path());
  EXPECT_TRUE(has_event(first, "reviewed")) << "the first watch reviews the plans";
  EXPECT_FALSE(has_event(first, "execute_done"));
  // A review is no run: it wrote its ledger, not a state.
  EXPECT_FALSE(stdfs::exists(dir / ".yolo-planning/.execution-state.json"));
  EXPECT_FALSE(test::review_records(dir.path()).empty());
  auto second = watch_once(dir.path());
  EXPECT_FALSE(has_event(second, "execute_done"));
  EXPECT_FALSE(has_event(second, "awaiting_approval"));
  EXPECT_FALSE(stdfs::exists(dir / ".yolo-planning/.execution-state.json"));
}

// A state an older yolo review wrote (status running, review loops, no phase) is no run
// either: watch does not drive execution from it.
TEST(RunBoundary, AStateWithoutARunIsNotDriven) {
  TempDir dir;
  copy_fixture("demo", dir.path());
  write_file(dir / ".yolo-planning/config.json", "{}");
  write_file(dir / ".yolo-planning/.execution-state.json",
             R"({"status": "running", "correlation_id": "c-1",
                 "review_loops": {"01-01": {"cycle": 1, "max": 3, "status": "passed"}}})");
  auto evs = watch_once(dir.path());
  EXPECT_FALSE(has_event(evs, "execute_done"));
  EXPECT_EQ(json::parse(read_file(dir / ".yolo-planning/.execution-state.json")).count("gates"), 0u);
}

TEST(RunBoundary, APlainReviewWritesNoState) {
  TempDir dir;
  copy_fixture("demo", dir.path());
  write_file(dir / ".yolo-planning/config.json", "{}");
  auto r = run_yolo({"review", ".yolo-planning/phases/01-demo", "--json"}, dir.path());
  EXPECT_LE(r.exit_code, 2) << r.err;
  EXPECT_FALSE(stdfs::exists(dir / ".yolo-planning/.execution-state.json"));
  EXPECT_TRUE(test::review_records(dir.path())["01-01"]["loop"].is_object());
}

// ---- containment ----------------------------------------------------------------------

struct Project {
  TempDir dir, outside;
  Project() {
    write_file(dir / kRoadmap, "# Roadmap\n");
    write_file(dir / ".yolo-planning/config.json", "{}");
    write_file(outside / "notes.md", "# not the project's\n");
    stdfs::create_directory_symlink(outside.path(), dir / "link");
  }
  RunResult yolo(const std::vector<std::string>& args) const { return run_yolo(args, dir.path()); }
  // approve/reject are a person's: at a terminal (a real pty), answering yes.
  RunResult person(const std::vector<std::string>& args) const { return run_yolo_tty(args, dir.path()); }
};

// The absolute spelling was refused, the relative one through a link was accepted.
TEST(Containment, AGateRefusesAFileOutsideTheProjectThroughASymlink) {
  Project p;
  auto abs = p.yolo({"request-approval", "--plan-path", (p.outside / "notes.md").string(), "--gate-type", "security"});
  EXPECT_EQ(abs.exit_code, 1) << abs.out;
  auto r = p.yolo({"request-approval", "--plan-path", "link/notes.md", "--gate-type", "security"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  auto gates = p.yolo({"gates", "--json"}).json_out();
  EXPECT_TRUE(gates["open_gates"].empty()) << gates.dump();
  // A link that stays inside the project is fine.
  stdfs::create_directory_symlink(p.dir / ".yolo-planning", p.dir / "planning-link");
  auto in = p.yolo({"request-approval", "--plan-path", "planning-link/ROADMAP.md"});
  EXPECT_EQ(in.exit_code, 0) << in.err;
}

// Stage 1 reads the same paths the SUMMARY gate reads later, so it refuses them the same way:
// a task's file through a link that leads out, an artifact path that escapes, a key link
// from an absolute path.
TEST(Containment, StageOneRefusesPathsThatLeadOutIncludingMustHaves) {
  Project p;
  stdfs::path phase = p.dir / ".yolo-planning/phases/01-core";
  write_file(phase / "01-01-PLAN.md", R"(---
phase: "01"
plan: "01"
title: "Core"
wave: 1
depends_on: []
must_haves:
  truths: ["it works"]
  artifacts:
    - path: "../secrets.txt"
      provides: "nothing good"
  key_links:
    - from: "/etc/passwd"
      to: "src/a.cc"
      via: "include"
---

## Task 1: Do it

**Files:** `link/notes.md`
)");
  auto r = p.yolo({"review-plan", ".yolo-planning/phases/01-core/01-01-PLAN.md", ".yolo-planning/phases/01-core", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json j = r.json_out();
  std::map<std::string, std::string> severity_by_path;
  for (const auto& f : j["findings"])
    if (f["check"] == "file_paths") severity_by_path[f.value("path", "")] = f["severity"];
  EXPECT_EQ(severity_by_path["link/notes.md"], "high") << j.dump(1);
  EXPECT_EQ(severity_by_path["../secrets.txt"], "high") << j.dump(1);
  EXPECT_EQ(severity_by_path["/etc/passwd"], "medium") << j.dump(1);
}

// ---- typed outcomes ------------------------------------------------------------------------

// The symbol of a gate message comes from its kind, not from words in it: an approver's
// feedback that says "cleared" or "rejected" does not make a pending gate look decided.
TEST(GateOutcomes, TheSymbolFollowsTheKindNotTheWords) {
  Project p;
  stdfs::path appr = p.dir / "approver.sh";
  write_file(appr, "#!/bin/sh\necho '{\"decision\":\"pending\",\"feedback\":\"not cleared yet\"}'\n");
  ::chmod(appr.c_str(), 0755);
  write_file(p.dir / ".yolo-planning/config.json", json{{"approvers", {{"security", json::array({appr.string()})}}}}.dump());
  auto r = p.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "security"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("⏸ Security gate security-1: approver says pending (not cleared yet)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("✓"), std::string::npos) << r.err;
  // The next step is the runner's, on a line of its own; the message names no command (MCP
  // clients read the same messages).
  size_t at = r.err.find("approver says pending");
  ASSERT_NE(at, std::string::npos);
  std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_EQ(line.find("yolo "), std::string::npos) << line;
  EXPECT_NE(r.err.find("yolo approve security-1"), std::string::npos) << r.err;
  auto a = p.person({"approve", "--json", "--by", "alice"});  // a person decides the pending gate
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.json_out()["outcomes"], json::array({"cleared"})) << a.out;
}

// ---- the approval key -------------------------------------------------------------------

TEST(ApprovalKey, ReadOnlyCommandsNeverCreateIt) {
  Project p;
  ASSERT_EQ(p.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  ASSERT_EQ(p.person({"approve", "--by", "alice"}).exit_code, 0);  // sealed with this process's test key
  TempDir home;
  stdfs::path key = home / "approval.key";
  auto with_key = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"env", "YOLO_APPROVAL_KEY_FILE=" + key.string(), yolo_bin()});
    return run_program(args, p.dir.path());
  };
  const std::vector<std::vector<std::string>> read_only = {{"status", "--json"}, {"gates", "--json"}, {"status"}};
  for (const auto& cmd : read_only) {
    auto r = with_key(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd[0] << ": " << r.err;
    EXPECT_FALSE(stdfs::exists(key)) << "`yolo " << cmd[0] << "` created the approval key";
  }
  // Under a key that does not exist, the approval made elsewhere does not count.
  EXPECT_EQ(with_key({"status", "--json"}).json_out()["approval_counts"], false);
  // Approving is what makes it.
  ASSERT_EQ(with_key({"request-approval", "--plan-path", kRoadmap, "--gate-type", "security"}).exit_code, 0);
  auto a = run_yolo_tty({"approve", "--by", "bob"}, p.dir.path(), {"YOLO_APPROVAL_KEY_FILE=" + key.string()});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(stdfs::exists(key));
}

// ---- the audit trail ---------------------------------------------------------------------

std::vector<std::string> logged_events(const stdfs::path& root) {
  std::vector<std::string> types;
  auto p = root / ".yolo-planning/.events/event-log.jsonl";
  if (!stdfs::exists(p)) return types;
  std::string s = read_file(p);
  for (size_t pos = 0, nl; pos < s.size(); pos = nl + 1) {
    nl = s.find('\n', pos);
    types.push_back(json::parse(s.substr(pos, nl - pos))["event"]);
  }
  return types;
}

// With v3_event_log off, gate transitions are still written (the audit trail), and nothing
// else is; the docs say so.
TEST(AuditTrail, GateTransitionsAreLoggedWithTheEventLogOffAndTheDocsSaySo) {
  Project p;
  ASSERT_EQ(p.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  ASSERT_EQ(p.person({"approve", "--by", "alice"}).exit_code, 0);
  ASSERT_EQ(p.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "security"}).exit_code, 0);
  ASSERT_EQ(p.person({"reject", "--feedback", "no", "--by", "alice"}).exit_code, 0);
  EXPECT_EQ(p.yolo({"log-event", "plan_start", "1"}).exit_code, 3);
  EXPECT_EQ(logged_events(p.dir.path()),
            (std::vector<std::string>{"gate_frozen", "gate_resumed", "gate_frozen", "gate_rejected"}));
  std::string commands = read_file(source_dir() / "docs" / "commands.md");
  EXPECT_NE(commands.find("Gate\ntransitions are the exception"), std::string::npos)
      << "docs/commands.md no longer says that gate transitions are always logged";
  std::string config = read_file(source_dir() / "docs" / "configuration.md");
  EXPECT_NE(config.find("(gate transitions are written always, as an audit trail)"), std::string::npos);
}

}  // namespace
}  // namespace yolo::test
