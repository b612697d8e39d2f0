// kill -9 the writer of .execution-state.json at random moments: the file is always the old
// or the new version (never partial), always valid JSON and schema-valid, and the lock never
// stays stuck.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "bg_process.h"
#include "protocol/gates/gates.h"
#include "protocol/review/review_ledger.h"
#include "protocol/base/sha256.h"
#include "protocol/state/state.h"
#include "runner/world.h"
#include "test_support.h"

namespace yolo::test {
namespace {

std::string slurp(const stdfs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Checks one read of the state file; returns "" when fine. `wave` gets the counter.
std::string check(const std::string& s, long long& wave) {
  json doc = json::parse(s, nullptr, false);
  if (doc.is_discarded()) return "does not parse (" + std::to_string(s.size()) + " bytes)";
  if (Status v = state::validate(doc); !v.ok()) return "schema: " + v.error;
  wave = doc.value("wave", 0LL);
  // phase_name was written together with wave: a mix of two versions would not match.
  std::string name = doc.value("phase_name", std::string());
  std::string tail = "-" + std::to_string(wave);
  if (name.size() < tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return "phase_name does not belong to wave " + std::to_string(wave);
  return {};
}

// The writer: read-modify-write in a loop (a gate opened and approved, a counter bumped, a
// payload of varying size so writes take varying time); reports each committed counter on fd.
[[noreturn]] void writer(const stdfs::path& root, int fd) {
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  const std::string digest = sha256_digest("c");
  while (true) {
    long long committed = -1;
    auto u = state::update(runner::world(), root, [&](json& doc) {
      if (doc.empty()) doc = {{"status", "running"}};
      long long w = doc.value("wave", 0LL) + 1;
      doc["wave"] = w;
      doc["phase_name"] = std::string(rng() % (64 * 1024), 'x') + "-" + std::to_string(w);
      gates::RequestInput in;
      in.type = gates::GateType::Security;
      in.plan_path = "c.md";
      if (!gates::request(doc, in).ok()) return false;
      gates::ResolveInput ok{{}, "writer", digest, {}, {}};
      ok.key = &runner::world().sealing_key();
      if (!gates::approve(doc, ok).ok()) return false;
      auto& gs = doc["gates"];
      if (gs.size() > 8) gs.erase(gs.begin(), gs.begin() + static_cast<long>(gs.size() - 8));
      committed = w;
      return true;
    });
    if (!u.ok()) {
      std::string m = "writer: " + u.error + "\n";
      ssize_t n = write(2, m.data(), m.size());
      (void)n;
      _exit(3);
    }
    if (u.written) {
      ssize_t n = write(fd, &committed, sizeof committed);
      (void)n;
    }
  }
}

TEST(Crash, KillNineTheWriterAtRandomMoments) {
  TempDir dir;
  const stdfs::path root = dir.path();
  stdfs::create_directories(root / ".yolo-planning");
  const auto path = root / ".yolo-planning/.execution-state.json";
  std::mt19937 rng(7);
  long long last = 0;  // the counter known to be committed
  int reads = 0, kills_mid_run = 0;
  for (int round = 0; round < 30; ++round) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      writer(root, p[1]);
    }
    close(p[1]);
    // Read the file the whole time the writer runs, then kill it.
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(10000 + rng() % 110000);
    while (std::chrono::steady_clock::now() < until) {
      std::string s = slurp(path);
      if (s.empty()) continue;  // not created yet
      long long w = 0;
      std::string why = check(s, w);
      ASSERT_EQ(why, "") << "round " << round;
      ++reads;
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st));
    ++kills_mid_run;
    long long v;
    long long reported = last;
    while (read(p[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) reported = v;
    close(p[0]);
    std::string s = slurp(path);
    if (s.empty()) {
      ASSERT_EQ(reported, 0);  // killed before its first write
      continue;
    }
    long long w = 0;
    std::string why = check(s, w);
    ASSERT_EQ(why, "") << "after kill in round " << round;
    // The old or the new version: the last reported commit, or the one it was about to report.
    EXPECT_TRUE(w == reported || w == reported + 1) << "file has " << w << ", writer reported " << reported;
    EXPECT_TRUE(state::load(runner::world(), root).ok()) << state::load(runner::world(), root).error;
    last = w;
  }
  // The lock is free again and the state still takes updates.
  auto u = state::update(runner::world(), root, [](json& doc) {
    if (doc.empty()) doc = {{"status", "running"}};  // on a loaded machine no writer may have committed
    doc["wave"] = doc.value("wave", 0LL) + 1;
    doc["phase_name"] = "final-" + std::to_string(doc["wave"].get<long long>());
    return true;
  });
  EXPECT_TRUE(u.ok()) << u.error;
  size_t leftovers = 0;
  for (const auto& e : stdfs::directory_iterator(root / ".yolo-planning"))
    if (e.path().filename().string().find(".execution-state.json") != std::string::npos && e.path() != path)
      ++leftovers;
  std::cout << "[ crash ] " << kills_mid_run << " kills, " << last << " commits, " << reads << " reads checked, "
            << leftovers << " leftover temp file(s)\n";
}

TEST(Crash, KillNineTheYoloCommandsAtRandomMoments) {
  TempDir dir;
  const stdfs::path root = dir.path();
  write_file(root / "plan.md", "# plan\n");
  stdfs::create_directories(root / ".yolo-planning");
  const auto path = root / ".yolo-planning/.execution-state.json";
  std::mt19937 rng(11);
  std::vector<std::vector<std::string>> cmds = {
      {yolo_bin(), "request-approval", "--plan-path", "plan.md", "--gate-type", "security", "--repo", root.string()},
      {yolo_bin(), "approve", "--yes", "--by", "k", "--repo", root.string()},
      {yolo_bin(), "request-approval", "--plan-path", "plan.md", "--gate-type", "scope_change", "--repo",
       root.string()},
      {yolo_bin(), "reject", "--yes", "--feedback", "killed", "--repo", root.string(), "--by", "k"}};
  for (int i = 0; i < 30; ++i) {
    auto& args = cmds[static_cast<size_t>(i) % cmds.size()];
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    bool person = args[1] == "approve" || args[1] == "reject";
    pid_t pid = fork();
    if (pid == 0) {
      if (person && !become_terminal_session()) _exit(125);
      int fd = open("/dev/null", O_WRONLY);
      dup2(fd, 1);
      dup2(fd, 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 30000));
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    std::string s = slurp(path);
    if (s.empty()) continue;
    json doc = json::parse(s, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << "round " << i << ": " << s.substr(0, 200);
    ASSERT_EQ(state::validate(doc).error, "") << "round " << i;
  }
  // Nothing is stuck: the commands still work.
  auto g = run_yolo({"gates", "--json", "--repo", root.string()});
  EXPECT_EQ(g.exit_code, 0) << g.err;
  run_yolo_tty({"approve", "--by", "z", "--repo", root.string()});
  auto r = run_yolo({"request-approval", "--plan-path", "plan.md", "--gate-type", "wave", "--repo", root.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// `yolo review PHASE` writes its records in batches (one ledger and one state write per
// batch, not per plan) and prints a plan's JSON line only once its record is written. kill -9
// in the middle of a pass, at different points: every plan reported so far has its record,
// with the content it reviewed (the plans change every round), the ledger and the state are
// whole and schema-valid, and the next pass completes.
TEST(Crash, KillNineABatchedReviewMidPassKeepsEveryReportedRecord) {
  TempDir dir;
  const stdfs::path root = dir.path();
  const stdfs::path phase = root / ".yolo-planning/phases/01-core";
  const int kPlans = 200;
  // A reviewer that takes 10 ms a plan makes a pass (2 s or more, batches written every second)
  // long enough to be killed midway.
  write_file(root / ".yolo-planning/config.json",
             json({{"reviewer", {"/bin/sh", "-c", "sleep 0.01; echo 'VERDICT: approve'"}}}).dump());
  auto write_plans = [&](int round) {
    for (int i = 1; i <= kPlans; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "01-%03d-PLAN.md", i);
      write_file(phase / name,
                 "---\nphase: \"01\"\nplan: \"" + std::to_string(i) + "\"\ntitle: \"Plan " + std::to_string(i) +
                     "\"\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"it works\"\n---\n\n### Task 1: Do it\n\nRound " +
                     std::to_string(round) + ".\n");
    }
  };
  size_t killed_mid_pass = 0;
  for (int round = 0; round < 5; ++round) {
    write_plans(round);
    BgProcess p({yolo_bin(), "review", phase.string(), "--json"}, root);
    // Round r waits for 1 + r * 30 lines before the kill.
    std::vector<json> lines;
    size_t want = 1 + static_cast<size_t>(round) * 30;
    while (lines.size() < want) {
      auto j = p.next_json(std::chrono::seconds(30));
      ASSERT_TRUE(j) << "round " << round << ": no line after " << lines.size() << "; stderr: " << p.stderr_text();
      if (j->value("type", "") == "plan") lines.push_back(*j);
    }
    p.signal(SIGKILL);
    int st = p.wait_exit(std::chrono::seconds(10));
    if (st == 128 + SIGKILL) ++killed_mid_pass;
    // Every reported plan has its record, of this round's content.
    auto ledger = review_ledger::load(runner::world(), root, phase);
    ASSERT_TRUE(ledger.ok()) << ledger.error;
    for (const auto& l : p.seen) {
      if (l.value("type", "") != "plan") continue;
      const json* rec = review_ledger::find(ledger.doc, l["plan_id"].get<std::string>());
      ASSERT_NE(rec, nullptr) << "round " << round << ": reported " << l["plan_id"] << " has no record";
      EXPECT_EQ(rec->value("hash", ""), l["hash"].get<std::string>()) << "round " << round << ": " << l["plan_id"];
    }
    auto st_doc = state::load(runner::world(), root);
    ASSERT_TRUE(st_doc.ok()) << st_doc.error;
  }
  EXPECT_GE(killed_mid_pass, 4u) << "the pass ended before the kill too often: nothing was tested";
  // The next pass runs to the end and records every plan.
  write_plans(99);
  auto r = run_yolo({"review", phase.string(), "--json"}, root);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto ledger = review_ledger::load(runner::world(), root, phase);
  ASSERT_TRUE(ledger.ok()) << ledger.error;
  EXPECT_EQ(ledger.doc["reviews"].size(), static_cast<size_t>(kPlans));
  // With 200 records the ledger takes later batches in its journal (appended, fsynced under
  // the lock; the first batch of each pass folds the journal a killed pass left): the kills
  // above landed in both kinds of write.
  std::error_code jec;
  EXPECT_GT(stdfs::file_size(review_ledger::journal_for(review_ledger::path_for(root, phase)), jec), 0u)
      << "no batch went to the journal: its crash safety was not tested";
  size_t fresh = 0;
  for (const auto& l : r.json_lines())
    if (l.value("type", "") == "plan") {
      const json* rec = review_ledger::find(ledger.doc, l["plan_id"].get<std::string>());
      fresh += rec && rec->value("hash", "") == l["hash"].get<std::string>();
    }
  EXPECT_EQ(fresh, static_cast<size_t>(kPlans));
  // A review is no run: each plan's loop is kept in its ledger record.
  for (const auto& [id, rec] : ledger.doc["reviews"].items()) EXPECT_TRUE(rec.contains("loop")) << id;
}

// `yolo execute` writes its plans' records in batches, each re-serialising only the records
// that changed (state::update_plan_records). kill -9 at random moments of a run, then resume:
// after every kill the state is whole, schema-valid and exactly the whole document's dump (no
// record written from a stale text), every plan it calls complete has its SUMMARY, and the
// last run completes the phase.
TEST(Crash, KillNineExecuteDuringItsBatchedWritesLeavesAStateThatResumes) {
  TempDir dir;
  const stdfs::path root = dir.path();
  const stdfs::path phase = root / ".yolo-planning/phases/01-core";
  const int kPlans = 150;
  for (int i = 1; i <= kPlans; ++i) {
    char num[8];
    std::snprintf(num, sizeof num, "%03d", i);
    write_file(phase / ("01-" + std::string(num) + "-PLAN.md"),
               "---\nphase: \"01\"\nplan: \"" + std::string(num) + "\"\ntitle: \"Plan " + num +
                   "\"\nwave: " + std::to_string(1 + (i - 1) * 3 / kPlans) +
                   "\ndepends_on: []\nmust_haves:\n  - \"it works\"\n---\n\n### Task 1: Do it\n\nPlan " + num + ".\n");
  }
  write_file(root / ".yolo-planning/ROADMAP.md", "# Roadmap\n");
  // Each executor takes about 30 ms and writes a SUMMARY that passes the structural gate: a
  // run of 150 plans on two slots lasts two seconds or more, several batched writes.
  const std::string exec_sh =
      "sleep 0.03; b=${1##*/}; id=${b%-PLAN.md}; cat > \"$2\" <<EOS\n---\nphase: ${id%%-*}\nplan: ${id#*-}\n"
      "title: \"Plan $id\"\nstatus: complete\ntasks_completed: 1\ntasks_total: 1\ncommit_hashes: [0000000]\n"
      "completed: 2026-01-01\ndeviations: []\n---\n## What Was Built\nPlan $id.\n## Files Modified\nNone.\n"
      "## Deviations\nNone.\nEOS\n";
  write_file(root / ".yolo-planning/config.json",
             json({{"executor", {"/bin/sh", "-c", exec_sh, "sh", "{plan_path}", "{summary_path}"}},
                   {"max_parallel", 2},
                   {"summary_checks", "structural"},
                   {"review_gate", "never"},
                   {"approvers", {{"vision", "skip"}}}})
                 .dump());
  const stdfs::path state_file = root / ".yolo-planning/.execution-state.json";
  std::mt19937 rng(23);
  size_t killed_mid_run = 0, complete_seen = 0;
  for (int round = 0; round < 6; ++round) {
    BgProcess p({yolo_bin(), "execute", "--json"}, root);
    // The first plan ends, then a random moment of the run.
    auto first = p.wait_for([](const json& j) { return j.value("event", "") == "plan_end"; }, std::chrono::seconds(30));
    if (!first) {
      std::string seen;
      for (const auto& j : p.seen) seen += j.dump() + "\n";
      FAIL() << "round " << round << ": no plan ended; seen:\n" << seen << p.stderr_text();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 300));
    p.signal(SIGKILL);
    int st = p.wait_exit(std::chrono::seconds(10));
    if (st == 128 + SIGKILL) ++killed_mid_run;
    const std::string text = slurp(state_file);
    json doc = json::parse(text, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << "round " << round << ": " << text.substr(0, 200);
    ASSERT_EQ(state::validate(doc).error, "") << "round " << round;
    ASSERT_EQ(text, doc.dump(2) + "\n") << "round " << round << ": the file is not the document's whole dump";
    ASSERT_EQ(doc["plans"].size(), static_cast<size_t>(kPlans)) << "round " << round;
    size_t complete = 0;
    for (const auto& rec : doc["plans"]) {
      if (rec.value("status", "") != "complete") continue;
      ++complete;
      const std::string plan_path = rec.value("path", "");
      const std::string summary = plan_path.substr(0, plan_path.size() - std::string("PLAN.md").size()) + "SUMMARY.md";
      EXPECT_TRUE(stdfs::exists(root / summary)) << "round " << round << ": " << rec.dump();
    }
    EXPECT_GE(complete, complete_seen) << "round " << round << ": a plan complete before is not now";
    complete_seen = complete;
  }
  EXPECT_GE(killed_mid_run, 5u) << "the run ended before the kill too often: nothing was tested";
  EXPECT_GT(complete_seen, 0u) << "no batched write landed before a kill";
  // The next run resumes and completes the phase.
  auto r = run_yolo({"execute", "--json"}, root);
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0) << r.err;
  const std::string text = slurp(state_file);
  json doc = json::parse(text);
  EXPECT_EQ(doc["status"], "complete");
  EXPECT_EQ(text, doc.dump(2) + "\n");
  for (const auto& rec : doc["plans"]) EXPECT_EQ(rec["status"], "complete") << rec.dump();
}

}  // namespace
}  // namespace yolo::test
