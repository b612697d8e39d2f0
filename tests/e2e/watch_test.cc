// End-to-end tests of `yolo watch`: the real binary in the background on a temp repo,
// real file operations as editors and git do them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "bg_process.h"
#include "protocol/base/sha256.h"
#include "test_support.h"

namespace yolo::test {
namespace {

using namespace std::chrono_literals;
namespace stdfs = std::filesystem;

std::string plan_text(const std::string& phase, const std::string& plan, const std::string& title, int wave = 1,
                      const std::string& depends = "[]") {
  return "---\nphase: \"" + phase + "\"\nplan: \"" + plan + "\"\ntitle: \"" + title +
         "\"\nwave: " + std::to_string(wave) + "\ndepends_on: " + depends + "\nmust_haves:\n  - \"" + title +
         " works\"\n---\n\n## Task 1: Do it\n\n**Files:** `src/a.txt` (new)\n";
}

class Watch : public ::testing::Test {
 protected:
  TempDir dir;
  stdfs::path planning() const { return dir / ".yolo-planning"; }
  stdfs::path phase1() const { return planning() / "phases" / "01-alpha"; }
  stdfs::path plan1() const { return phase1() / "01-01-PLAN.md"; }
  std::unique_ptr<BgProcess> w;

  void SetUp() override {
    write_file(planning() / "config.json", R"({"v3_event_log": true})");
    write_file(plan1(), plan_text("01", "01", "First"));
    write_file(phase1() / "01-02-PLAN.md", plan_text("01", "02", "Second", 2, "[\"01\"]"));
  }

  void start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{yolo_bin(), "watch", dir.path().string(), "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    w = std::make_unique<BgProcess>(argv, dir.path());
    auto ready = w->wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 20s);
    ASSERT_TRUE(ready) << w->stderr_text();
    // The first reconcile reviews everything not reviewed yet: let it settle.
    settle();
  }

  // Reads events until nothing arrives for `quiet`; returns them.
  std::vector<json> settle(std::chrono::milliseconds quiet = 800ms) {
    std::vector<json> all;
    while (true) {
      auto batch = w->collect(quiet);
      if (batch.empty()) return all;
      all.insert(all.end(), batch.begin(), batch.end());
    }
  }

  static int count(const std::vector<json>& evs, const std::string& event, const std::string& plan_id = "") {
    int n = 0;
    for (const auto& e : evs)
      if (e.value("event", "") == event && (plan_id.empty() || e.value("plan_id", "") == plan_id)) ++n;
    return n;
  }

  // Waits for the review of plan_id after a change, then for quiet; returns the events
  // read since the call (the change's events: nothing reads stdout between a change and this).
  std::vector<json> reviews_after_change(const std::string& plan_id) {
    size_t from = w->seen.size();
    auto first = w->wait_for(
        [&](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == plan_id; }, 20s);
    EXPECT_TRUE(first) << "no review of " << plan_id << "; stderr: " << w->stderr_text();
    settle();
    return std::vector<json>(w->seen.begin() + static_cast<std::ptrdiff_t>(from), w->seen.end());
  }

  void TearDown() override {
    if (w) {
      w->signal(SIGTERM);
      w->wait_exit(5s);
    }
  }
};

void rename_save(const stdfs::path& p, const std::string& content) {  // VS Code / atomic writers
  stdfs::path tmp = p.parent_path() / ("." + p.filename().string() + ".tmp.4242");
  write_file(tmp, content);
  stdfs::rename(tmp, p);
}

void vim_save(const stdfs::path& p, const std::string& content) {
  stdfs::path dirp = p.parent_path();
  write_file(dirp / "4913", "");  // vim's probe of the folder
  stdfs::remove(dirp / "4913");
  write_file(dirp / ("." + p.filename().string() + ".swp"), "swap");
  stdfs::rename(p, dirp / (p.filename().string() + "~"));  // backup by rename
  write_file(p, content);
  stdfs::remove(dirp / (p.filename().string() + "~"));
  stdfs::remove(dirp / ("." + p.filename().string() + ".swp"));
}

void emacs_save(const stdfs::path& p, const std::string& content) {
  stdfs::path dirp = p.parent_path();
  stdfs::path lock = dirp / (".#" + p.filename().string());
  stdfs::create_symlink("user@host.1234:1700000000", lock);
  stdfs::copy_file(p, dirp / (p.filename().string() + "~"), stdfs::copy_options::overwrite_existing);
  write_file(p, content);  // in place
  stdfs::remove(lock);
}

void jetbrains_save(const stdfs::path& p, const std::string& content) {
  stdfs::path dirp = p.parent_path();
  stdfs::path tmp = dirp / (p.filename().string() + "___jb_tmp___");
  stdfs::path old = dirp / (p.filename().string() + "___jb_old___");
  write_file(tmp, content);
  stdfs::rename(p, old);
  stdfs::rename(tmp, p);
  stdfs::remove(old);
}

void chunked_save(const stdfs::path& p, const std::string& content) {  // several writes in a burst
  std::ofstream f(p, std::ios::trunc);
  for (size_t i = 0; i < content.size(); i += 40) {
    f << content.substr(i, 40);
    f.flush();
  }
}

struct SavePattern {
  const char* name;
  void (*save)(const stdfs::path&, const std::string&);
};

class WatchEditors : public Watch, public ::testing::WithParamInterface<SavePattern> {};

TEST_P(WatchEditors, SaveGivesExactlyOneReviewOfTheFinalContent) {
  start();
  std::string content = plan_text("01", "01", std::string("Edited by ") + GetParam().name);
  GetParam().save(plan1(), content);
  auto evs = reviews_after_change("01-01");
  EXPECT_EQ(count(evs, "reviewed", "01-01"), 1) << GetParam().name;
  EXPECT_EQ(count(evs, "plan_changed", "01-01"), 1) << GetParam().name;
  // No temp or swap file was ever taken for a plan.
  for (const auto& e : evs) {
    if (e.value("event", "") == "plan_changed") {
      EXPECT_EQ(e.value("path", ""), plan1().string());
    }
  }
  // The review recorded is the review of the final content.
  EXPECT_EQ(test::review_records(dir.path())["01-01"]["hash"], json(yolo::sha256_hex(content)));
}

INSTANTIATE_TEST_SUITE_P(Editors, WatchEditors,
                         ::testing::Values(SavePattern{"rename", rename_save}, SavePattern{"vim", vim_save},
                                           SavePattern{"emacs", emacs_save}, SavePattern{"jetbrains", jetbrains_save},
                                           SavePattern{"chunked", chunked_save}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(Watch, SedInPlaceGivesOneReview) {
  start();
  auto r = run_program({"sed", "-i", "s/First/Sed edited/", plan1().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto evs = reviews_after_change("01-01");
  EXPECT_EQ(count(evs, "reviewed", "01-01"), 1);
}

TEST_F(Watch, InitialReconcileReviewsUnreviewedPlansOnceThenTouchReviewsNothing) {
  start();
  EXPECT_EQ(count(w->seen, "reviewed", "01-01"), 1);
  EXPECT_EQ(count(w->seen, "reviewed", "01-02"), 1);
  size_t before = w->seen.size();
  auto r = run_program({"touch", plan1().string(), (phase1() / "01-02-PLAN.md").string()});
  ASSERT_EQ(r.exit_code, 0);
  auto evs = settle();
  EXPECT_EQ(count(evs, "reviewed"), 0);
  EXPECT_EQ(count(evs, "plan_changed"), 0);
  (void)before;
}

TEST_F(Watch, RestartDoesNotReReviewUnchangedPlans) {
  start();
  w->signal(SIGTERM);
  ASSERT_EQ(w->wait_exit(5s), 0);
  w.reset();
  start();
  EXPECT_EQ(count(w->seen, "reviewed"), 0) << "unchanged plans were reviewed again after a restart";
}

TEST_F(Watch, RunnersOwnWritesNeverTriggerAReview) {
  start();
  // log-event appends to .events/, updates nothing else; a state write replaces the state file.
  auto r = run_yolo({"log-event", "plan_start", "1", "1", "who=test"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  write_file(planning() / ".lock", "");
  // Another yolo reviews the phase: its ledger and state writes are records, not plans.
  auto rv = run_yolo({"review", phase1().string(), "--json"}, dir.path());
  ASSERT_EQ(rv.exit_code, 0) << rv.out << rv.err;
  auto evs = settle();
  EXPECT_EQ(count(evs, "reviewed"), 0);
  EXPECT_EQ(count(evs, "plan_changed"), 0);
  EXPECT_EQ(count(evs, "ledger_error"), 0);
}

// Reviews run in the watcher itself here (no agents configured) and it keeps its siblings
// parsed between reviews: the cross-plan checks must still see each sibling as it is now.
TEST_F(Watch, CrossPlanChecksSeeSiblingsAsTheyAreNow) {
  start();
  auto verdict_after = [&](const std::function<void()>& change, const std::string& id) {
    size_t from = w->seen.size();
    change();
    reviews_after_change(id);
    std::string v;
    for (size_t i = from; i < w->seen.size(); ++i)
      if (w->seen[i].value("event", "") == "reviewed" && w->seen[i].value("plan_id", "") == id)
        v = w->seen[i].value("verdict", "");
    return v == "reject" ? "reject" : v.empty() ? "none" : "pass";  // conditional: plans share src/a.txt
  };
  // 01-02 (wave 2) depends on 01 (wave 1): fine.
  EXPECT_EQ(
      verdict_after([&] { rename_save(phase1() / "01-02-PLAN.md", plan_text("01", "02", "Second v2", 2, "[\"01\"]")); },
                    "01-02"),
      "pass");
  // 01-01 moves to wave 2 (reviewed on its own: fine); 01-02 saved again now depends on a
  // plan of its own wave: the cached 01-01 must not be used.
  EXPECT_EQ(verdict_after([&] { rename_save(plan1(), plan_text("01", "01", "First", 2)); }, "01-01"), "pass");
  EXPECT_EQ(
      verdict_after([&] { rename_save(phase1() / "01-02-PLAN.md", plan_text("01", "02", "Second v3", 2, "[\"01\"]")); },
                    "01-02"),
      "reject");
  // A dependency on a plan that does not exist yet, then the plan appears.
  EXPECT_EQ(verdict_after([&] { rename_save(plan1(), plan_text("01", "01", "First", 1, "[\"03\"]")); }, "01-01"),
            "reject");
  EXPECT_EQ(verdict_after([&] { write_file(phase1() / "01-03-PLAN.md", plan_text("01", "03", "Third")); }, "01-03"),
            "pass");
  EXPECT_EQ(verdict_after([&] { rename_save(plan1(), plan_text("01", "01", "First again", 2, "[\"03\"]")); }, "01-01"),
            "pass");
  EXPECT_NE(test::review_records(dir.path())["01-01"]["verdict"], "reject");
}

// A review ledger someone broke: named once, kept, never overwritten; watching goes on and
// later saves are still reviewed (their record cannot be written: said so each time).
TEST_F(Watch, ABrokenLedgerIsNamedAndWatchingGoesOn) {
  start();
  stdfs::path ledger = planning() / ".reviews" / "01-alpha.json";
  ASSERT_TRUE(stdfs::exists(ledger));
  write_file(ledger, "{\"reviews\": 7}");
  auto evs = settle();
  ASSERT_EQ(count(evs, "ledger_error"), 1) << w->stderr_text();
  rename_save(plan1(), plan_text("01", "01", "First, edited"));
  auto after = reviews_after_change("01-01");
  EXPECT_EQ(count(after, "reviewed", "01-01"), 1);
  EXPECT_GE(count(after, "record_error"), 1);
  EXPECT_EQ(read_file(ledger), "{\"reviews\": 7}");
  for (const auto& e : evs) {
    if (e.value("event", "") == "ledger_error") {
      EXPECT_NE(e.value("error", "").find("01-alpha.json"), std::string::npos) << e.dump();
    }
  }
}

TEST_F(Watch, NewPhaseFolderIsWatched) {
  start();
  stdfs::path phase2 = planning() / "phases" / "02-beta";
  stdfs::create_directories(phase2);
  std::this_thread::sleep_for(100ms);  // the folder's watch is added
  write_file(phase2 / "02-01-PLAN.md", plan_text("02", "01", "Beta one"));
  reviews_after_change("02-01");
  // and a later edit inside the new folder is seen too
  rename_save(phase2 / "02-01-PLAN.md", plan_text("02", "01", "Beta one, edited"));
  auto before = count(w->seen, "reviewed", "02-01");
  w->wait_for([&](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == "02-01"; },
              20s);
  settle();
  EXPECT_EQ(count(w->seen, "reviewed", "02-01"), before + 1);
}

TEST_F(Watch, DeletedAndRecreatedPhasesTreeKeepsWorking) {
  start();
  std::string plan2 = read_file(phase1() / "01-02-PLAN.md");
  stdfs::remove_all(planning() / "phases");  // git checkout of a branch without it...
  settle();
  write_file(plan1(), plan_text("01", "01", "Recreated and changed"));  // ...and back, one plan changed
  write_file(phase1() / "01-02-PLAN.md", plan2);                        // one identical
  auto evs = reviews_after_change("01-01");
  EXPECT_EQ(count(evs, "reviewed", "01-01"), 1);
  EXPECT_EQ(count(evs, "reviewed", "01-02"), 0) << "identical content must not be reviewed again";
  // the recreated folders are watched
  rename_save(phase1() / "01-02-PLAN.md", plan_text("01", "02", "Second, edited", 2, "[\"01\"]"));
  reviews_after_change("01-02");
}

TEST_F(Watch, SecondWatcherIsRefusedNamingTheHolder) {
  start();
  auto r = run_yolo({"watch", dir.path().string()}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("pid " + std::to_string(w->pid())), std::string::npos) << r.err;
}

TEST_F(Watch, SigtermStopsChildrenAndExitsWithinASecond) {
  stdfs::path pidfile = dir / "reviewer.pid";
  // A reviewer that records its pid and hangs.
  write_file(
      planning() / "config.json",
      json{{"reviewer",
            {{"command", {"sh", "-c", "echo $$ > " + pidfile.string() + "; exec sleep 60"}}, {"timeout_ms", 60000}}},
           {"sandbox", {{"write", {{"reviewer", {dir.path().string()}}}}}}}  // its pid file
          .dump());
  std::vector<std::string> argv{yolo_bin(), "watch", dir.path().string(), "--json"};
  w = std::make_unique<BgProcess>(argv, dir.path());
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 20s)) << w->stderr_text();
  // wait until the hanging reviewer runs
  for (int i = 0; i < 400 && !stdfs::exists(pidfile); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(stdfs::exists(pidfile)) << "reviewer never started; stderr: " << w->stderr_text();
  std::this_thread::sleep_for(50ms);
  int reviewer = std::stoi(read_file(pidfile));
  auto t0 = std::chrono::steady_clock::now();
  w->signal(SIGTERM);
  int code = w->wait_exit(3s);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(code, 0);
  EXPECT_LT(ms, 1500);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::string stat = read_file("/proc/" + std::to_string(reviewer) + "/stat");
    size_t paren = stat.rfind(')');
    gone = stat.empty() || (paren != std::string::npos && stat[paren + 2] == 'Z');
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "reviewer " << reviewer << " outlived the watcher";
  w.reset();
}

TEST_F(Watch, RoadmapWrittenOpensTheVisionGateAndAnApprovalIsSeen) {
  write_file(planning() / "config.json", R"({"approvers": {"vision": "manual"}})");
  start();
  write_file(planning() / "ROADMAP.md", "# Roadmap\n\nShip the thing.\n");
  auto waiting = w->wait_for([](const json& j) { return j.value("event", "") == "awaiting_approval"; }, 20s);
  ASSERT_TRUE(waiting) << w->stderr_text();
  EXPECT_EQ((*waiting)["plan_path"], ".yolo-planning/ROADMAP.md");
  auto state = json::parse(read_file(planning() / ".execution-state.json"));
  EXPECT_EQ(state["status"], "awaiting_approval");
  EXPECT_EQ(state["approval"]["approved"], false);
  // A person approves in another terminal: the watcher says so.
  auto r = run_yolo_tty({"approve", "--by", "reader"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto approved = w->wait_for([](const json& j) { return j.value("event", "") == "approved"; }, 20s);
  ASSERT_TRUE(approved) << w->stderr_text();
  EXPECT_EQ((*approved)["approved_by"], "reader");
}

TEST_F(Watch, AChangeDuringAReviewQueuesBehindItNeverTwoReviewersAtOnce) {
  // A slow reviewer that logs when it starts and ends (the script is fixed text; the plan
  // path reaches it as $1, an argv element).
  stdfs::path log = dir / "reviewer.log";
  std::string script =
      "echo start >> " + log.string() + "; sleep 0.6; echo end >> " + log.string() + "; echo 'VERDICT: approve'";
  write_file(
      planning() / "config.json",
      json{{"reviewer", {{"command", {"sh", "-c", script, "reviewer", "{plan_path}"}}, {"timeout_ms", 20000}}},
           {"sandbox", {{"write", {{"reviewer", {dir.path().string()}}}}}}}  // its log
          .dump());
  start();
  // The first reconcile reviews both plans (slowly): wait for it before editing.
  while (count(w->seen, "reviewed") < 2)
    ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "reviewed"; }, 20s)) << w->stderr_text();
  stdfs::remove(log);
  rename_save(plan1(), plan_text("01", "01", "First edit"));
  // The review of the first edit is running: edit again.
  for (int i = 0; i < 200 && !stdfs::exists(log); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(stdfs::exists(log)) << "the reviewer never started; stderr: " << w->stderr_text();
  std::string last = plan_text("01", "01", "Second edit");
  rename_save(plan1(), last);
  // Two reviews of 01-01, one after the other.
  for (int n = 0; n < 2; ++n)
    ASSERT_TRUE(w->wait_for(
        [](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == "01-01"; }, 20s))
        << "review " << n + 1 << " missing; stderr: " << w->stderr_text();
  settle();
  EXPECT_EQ(read_file(log), "start\nend\nstart\nend\n") << "reviewers overlapped";
  EXPECT_EQ(test::review_records(dir.path())["01-01"]["hash"], json(yolo::sha256_hex(last)))
      << "the last review is not of the final content";
}

TEST_F(Watch, HumanLinesNeverCarryControlCharactersFromAPlan) {
  // An OSC sequence (set the window title) and a bell in the plan's id: a person watching
  // sees them made visible, the terminal never acts on them.
  write_file(plan1(), plan_text("01\x1b]0;pwned\x07", "01", "First"));
  w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "watch", dir.path().string()}, dir.path());
  for (int i = 0; i < 200; ++i) {
    w->collect(50ms);
    bool reviewed = false;
    for (const auto& l : w->other_lines) reviewed = reviewed || l.find("01^[]0;pwned^G-01") != std::string::npos;
    if (reviewed) break;
  }
  std::string all;
  for (const auto& l : w->other_lines) all += l + "\n";
  EXPECT_NE(all.find("01^[]0;pwned^G-01"), std::string::npos) << all << w->stderr_text();
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << "an escape byte reached the terminal";
  EXPECT_EQ(all.find('\x07'), std::string::npos) << "a bell reached the terminal";
}

TEST_F(Watch, AHandWrittenApprovalIsNotAnnouncedAsOne) {
  write_file(planning() / "config.json", R"({"approvers": {"vision": "manual"}})");
  write_file(planning() / "ROADMAP.md", "# Roadmap\n");
  ASSERT_EQ(run_yolo({"request-approval", "--plan-path", ".yolo-planning/ROADMAP.md"}, dir.path()).exit_code, 0);
  start();
  // An agent edits the state: approved, with everything but a valid seal.
  json s = json::parse(read_file(planning() / ".execution-state.json"));
  s["status"] = "running";
  s["approval"]["approved"] = true;
  s["gates"][0]["status"] = "APPROVED";
  s["gates"][0]["approved_by"] = "agent";
  s["gates"][0]["resolved_at"] = s["gates"][0]["created_at"];
  s["gates"][0]["digest"] = "sha256:" + yolo::sha256_hex(read_file(planning() / "ROADMAP.md"));
  write_file(planning() / ".execution-state.json.tmp", s.dump());
  stdfs::rename(planning() / ".execution-state.json.tmp", planning() / ".execution-state.json");
  auto warned = w->wait_for([](const json& j) { return j.value("event", "") == "approval_not_counted"; }, 20s);
  ASSERT_TRUE(warned) << w->stderr_text();
  EXPECT_NE((*warned)["reason"].get<std::string>().find("carries no valid seal"), std::string::npos) << warned->dump();
  EXPECT_EQ(count(w->seen, "approved"), 0) << "a forged approval was announced";
}

}  // namespace
}  // namespace yolo::test

namespace yolo::test {
namespace {

// A flood that overflows the kernel's event queue again and again makes the
// watcher rescan with a growing wait (0, then doubling from 100 ms while overflows come less
// than 2 s apart), not back to back. The watcher is stopped (SIGSTOP) while each flood is
// written, so the queue (fs.inotify.max_queued_events) overflows for certain.
TEST_F(Watch, AQueueOverflowFloodIsRescannedWithABackoffNotInALoop) {
  start();
  long max_events = 16384;
  {
    std::ifstream f("/proc/sys/fs/inotify/max_queued_events");
    f >> max_events;
  }
  if (max_events > 200000) GTEST_SKIP() << "max_queued_events is " << max_events << ": too many events to flood";
  std::vector<std::chrono::steady_clock::time_point> resumed;  // when each flood reached the watcher
  auto flood = [&] {
    ASSERT_EQ(::kill(w->pid(), SIGSTOP), 0);
    // Each file: IN_CREATE, IN_CLOSE_WRITE, IN_DELETE (distinct names: never merged).
    for (long i = 0; i < max_events / 3 + 100; ++i) {
      stdfs::path f = phase1() / ("flood-" + std::to_string(i) + ".tmp");
      std::ofstream(f).close();
      stdfs::remove(f);
    }
    ASSERT_EQ(::kill(w->pid(), SIGCONT), 0);
    resumed.push_back(std::chrono::steady_clock::now());
  };
  // Floods about a second apart: every overflow is less than 2 s after the one before, unless
  // the machine is so loaded that writing one flood takes longer (then that pair proves
  // nothing about the backoff and is not compared). A flood that lands while a rescan already
  // waits is folded into it (no second rescan).
  std::vector<long long> backoffs;
  std::vector<size_t> of_flood;  // the flood each rescan answered
  int floods = 4;
  for (int n = 0; n < floods; ++n) {
    flood();
    auto ev = w->wait_for([](const json& j) { return j.value("event", "") == "rescan"; }, 3s);
    if (ev) {
      backoffs.push_back((*ev).value("backoff_ms", -1LL));
      of_flood.push_back(static_cast<size_t>(n));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(backoffs.empty() ? 300 : backoffs.back() + 300));
  }
  ASSERT_GE(backoffs.size(), 3u) << "stderr: " << w->stderr_text();
  EXPECT_LE(backoffs.size(), static_cast<size_t>(floods));
  // The first overflow rescans at once; the next ones, while they come less than 2 s apart,
  // wait longer each time.
  EXPECT_EQ(backoffs[0], 0);
  size_t compared = 0, passed_over = 0;
  for (size_t i = 1; i < backoffs.size(); ++i) {
    auto gap = resumed[of_flood[i]] - resumed[of_flood[i - 1]];
    if (gap >= std::chrono::milliseconds(1900)) {
      ++passed_over;
      continue;
    }
    ++compared;
    EXPECT_GT(backoffs[i], backoffs[i - 1]) << "rescan " << i + 1;
  }
  if (compared == 0)
    GTEST_SKIP() << "skipped: each flood took over 2 s to write on this machine; no backoff to compare";
  if (passed_over == 0) {
    EXPECT_GE(backoffs.back(), 200);
  }
  // Still watching: a save after the flood is reviewed, once.
  settle(1500ms);
  rename_save(plan1(), plan_text("01", "01", "After the flood"));
  auto evs = reviews_after_change("01-01");
  EXPECT_EQ(count(evs, "reviewed", "01-01"), 1);
}

// --- at scale: phases learnt after `ready`, records appended to a large ledger's journal ---

// Phases of plans reviewed beforehand (`yolo review`, no agents): the records are real.
void reviewed_phases(const stdfs::path& root, int phases, int plans) {
  for (int ph = 2; ph < 2 + phases; ++ph) {
    std::string phs = (ph < 10 ? "0" : "") + std::to_string(ph);
    stdfs::path dir = root / ".yolo-planning/phases" / (phs + "-bulk");
    for (int pl = 1; pl <= plans; ++pl) {
      std::string pls = (pl < 10 ? "00" : pl < 100 ? "0" : "") + std::to_string(pl);
      write_file(dir / (phs + "-" + pls + "-PLAN.md"), plan_text(phs, pls, "Bulk " + phs + "-" + pls));
    }
    auto r = run_yolo({"review", dir.string(), "--json"}, root);
    // 2: conditional (the plans share a file in one wave); recorded all the same.
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code << " " << r.err;
    ASSERT_TRUE(stdfs::exists(root / ".yolo-planning/.reviews" / (phs + "-bulk.json")));
  }
}

// A save's phase is prepared for the review during the debounce (watch_reconcile.cc,
// prefetch_snapshot); a sibling saved right after, while it is prepared or before its review,
// is still seen as it is now: 01-02 depends on 01-01, which moves into 01-02's wave in the
// same debounce (a long one here, so both saves fall in it even on a loaded machine, where a
// test beside it can hold this one back for a few hundred milliseconds between the two saves),
// and 01-02's review says so.
TEST_F(Watch, ASiblingSavedDuringThePreparedPhasesDebounceIsSeenAsItIsNow) {
  start({"--debounce-ms", "2000"});
  for (int round = 0; round < 3; ++round) {
    size_t from = w->seen.size();
    rename_save(phase1() / "01-02-PLAN.md", plan_text("01", "02", "Second r" + std::to_string(round), 2, "[\"01\"]"));
    rename_save(plan1(), plan_text("01", "01", "First r" + std::to_string(round), round % 2 ? 1 : 2));
    reviews_after_change("01-02");
    std::string v;
    for (size_t i = from; i < w->seen.size(); ++i)
      if (w->seen[i].value("event", "") == "reviewed" && w->seen[i].value("plan_id", "") == "01-02")
        v = w->seen[i].value("verdict", "");
    // Round 0 and 2: 01-01 is in wave 2 too, so 01-02 waits for a plan of its own wave.
    EXPECT_EQ(v == "reject", round % 2 == 0) << "round " << round << ": " << v;
  }
}

TEST_F(Watch, AnEditInAPhaseNotLearntYetIsReviewedAndNothingElseIs) {
  auto r1 = run_yolo({"review", phase1().string(), "--json"}, dir.path());
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  reviewed_phases(dir.path(), 12, 60);
  // The last phase is learnt last: edited right after `ready`, its plan is judged against
  // its ledger before the learning reaches it (or after: the same answer either way).
  stdfs::path plan = planning() / "phases/13-bulk/13-007-PLAN.md";
  w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "watch", dir.path().string(), "--json"},
                                  dir.path());
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 20s)) << w->stderr_text();
  std::string content = plan_text("13", "007", "Bulk 13-007, edited");
  rename_save(plan, content);
  auto rv = w->wait_for(
      [](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == "13-007"; }, 20s);
  ASSERT_TRUE(rv) << w->stderr_text();
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "phases_learnt"; }, 30s))
      << w->stderr_text();
  settle();
  // Every other plan was reviewed as it is: not one review more.
  EXPECT_EQ(count(w->seen, "reviewed"), 1);
  EXPECT_EQ(count(w->seen, "plan_changed"), 1);
  EXPECT_EQ(count(w->seen, "backlog"), 0);
  auto ledger = json::parse(read_file(planning() / ".reviews/13-bulk.json"));
  EXPECT_EQ(ledger["reviews"]["13-007"]["hash"], sha256_hex(content));
}

// A save that leaves a plan as it was reviewed, in a phase not learnt yet, is judged against
// that phase's ledger (loaded from the save's first event on, while the debounce runs): no
// review; a real edit of the same plan then is reviewed once.
TEST_F(Watch, ASaveOfTheReviewedContentInAPhaseNotLearntYetIsNotReviewedAgain) {
  auto r1 = run_yolo({"review", phase1().string(), "--json"}, dir.path());
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  reviewed_phases(dir.path(), 12, 60);
  stdfs::path plan = planning() / "phases/13-bulk/13-011-PLAN.md";
  const std::string same = read_file(plan);
  w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "watch", dir.path().string(), "--json"},
                                  dir.path());
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 20s)) << w->stderr_text();
  rename_save(plan, same);  // a new file (inode, ctime) with the reviewed bytes
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "phases_learnt"; }, 30s))
      << w->stderr_text();
  settle();
  EXPECT_EQ(count(w->seen, "reviewed"), 0) << "the reviewed content was reviewed again";
  EXPECT_EQ(count(w->seen, "plan_changed"), 0);
  std::string content = plan_text("13", "011", "Bulk 13-011, edited");
  rename_save(plan, content);
  auto evs = reviews_after_change("13-011");
  EXPECT_EQ(count(evs, "reviewed", "13-011"), 1);
}

TEST_F(Watch, AnEditInALargePhaseIsAppendedToItsJournalAndARestartSeesIt) {
  auto r1 = run_yolo({"review", phase1().string(), "--json"}, dir.path());
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  reviewed_phases(dir.path(), 1, 140);
  stdfs::path ledger = planning() / ".reviews/02-bulk.json", journal = planning() / ".reviews/02-bulk.jsonl";
  std::string before = read_file(ledger);
  w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "watch", dir.path().string(), "--json"},
                                  dir.path());
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "phases_learnt"; }, 20s))
      << w->stderr_text();
  std::string content = plan_text("02", "033", "Bulk 02-033, edited");
  rename_save(planning() / "phases/02-bulk/02-033-PLAN.md", content);
  reviews_after_change("02-033");
  EXPECT_EQ(read_file(ledger), before) << "the ledger of 140 records was rewritten for one record";
  std::string lines = read_file(journal);
  EXPECT_NE(lines.find(sha256_hex(content)), std::string::npos) << lines;
  // Read back by everyone: a restarted watcher reviews nothing, status counts the record.
  w->signal(SIGTERM);
  ASSERT_EQ(w->wait_exit(5s), 0);
  w.reset();
  w = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "watch", dir.path().string(), "--json"},
                                  dir.path());
  ASSERT_TRUE(w->wait_for([](const json& j) { return j.value("event", "") == "phases_learnt"; }, 20s))
      << w->stderr_text();
  settle();
  EXPECT_EQ(count(w->seen, "reviewed"), 0) << "the journal's record was not seen after a restart";
  // A line forged by hand (the plan's hash now, no valid seal) never counts.
  std::string forged = plan_text("02", "034", "Bulk 02-034, forged");
  write_file(planning() / "phases/02-bulk/02-034-PLAN.md", forged);
  json line = json::parse(lines.substr(0, lines.find('\n')));
  line["plan_id"] = "02-034";
  line["record"]["hash"] = sha256_hex(forged);
  line["record"]["path"] = ".yolo-planning/phases/02-bulk/02-034-PLAN.md";
  std::ofstream(journal, std::ios::app) << line.dump() << "\n";
  reviews_after_change("02-034");
}

}  // namespace
}  // namespace yolo::test
