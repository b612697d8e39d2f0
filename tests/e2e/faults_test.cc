// Faults a team meets in a week, end to end: the real binary and real git, the fault really
// injected (a process scheduled late by strace's syscall delay, a slot folder removed, a lock
// file a killed git left, a plan added to a finished phase, a plan that does not parse).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "bg_process.h"
#include "protocol/base/sha256.h"
#include "test_support.h"

namespace yolo::test {
namespace {

using namespace std::chrono_literals;

std::string plan_text(const std::string& phase, const std::string& plan, const std::string& extra = "") {
  return "---\nphase: \"" + phase + "\"\nplan: \"" + plan + "\"\ntitle: \"Build it\"\nwave: 1\ndepends_on: []\n" +
         extra + "must_haves:\n  - \"it works\"\n---\n\n## Tasks\n\n### Task 1: Write it\n\nWrite the code.\n";
}

std::string dump(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out.substr(0, 3000) +
         "\nstderr: " + r.err.substr(0, 3000);
}

// Runs argv with stdout and stderr to files and waits for that process only (not for
// whatever it leaves holding a copy of a pipe, as `strace -D`'s tracer does).
RunResult run_direct(const std::vector<std::string>& args, const stdfs::path& cwd, const stdfs::path& scratch) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string out = (scratch / "out.txt").string(), err = (scratch / "err.txt").string();
  const std::string dir = cwd.string();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) _exit(126);
    int in = ::open("/dev/null", O_RDONLY);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || o < 0 || e < 0) _exit(125);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("NO_COLOR", "1", 1);
    ::execvp(argv[0], argv.data());
    _exit(127);
  }
  RunResult r;
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// This process's children (any thread's) whose command name is comm; zombies included.
std::vector<int> own_children_named(const std::string& comm) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& t : stdfs::directory_iterator("/proc/self/task", ec)) {
    std::istringstream in(read_file(t.path() / "children"));
    int c;
    while (in >> c)
      if (read_file("/proc/" + std::to_string(c) + "/comm") == comm + "\n") out.push_back(c);
  }
  return out;
}

bool strace_can_delay() {
  static const bool ok = [] {
    auto r = run_program({"strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=setsid", "-e",
                          "inject=setsid:delay_exit=1000", "true"});
    return r.exit_code == 0;
  }();
  return ok;
}

// ---- runs and git ---------------------------------------------------------------------------

// `yolo execute --dry-run; yolo execute`, 50 times, each yolo's forked copies scheduled late:
// strace delays their first system call (setsid) by 100 ms, as a loaded machine does, so a
// copy forked after the lock was taken would still hold it when its parent had exited. The
// executor fails, so every execute is a failed one (the next dry run follows a failed execute).
// This process is a child subreaper for the loop, as `yolo watch --execute` or a CI runner
// is: a keeper that its yolo did not reap would be re-parented here.
TEST(Faults, DryRunThenExecuteFiftyTimesIsNeverRefusedForAProcessThatExited) {
  TempDir dir, scratch;
  const stdfs::path root = dir.path();
  write_file(root / ".yolo-planning/phases/01-core/01-01-PLAN.md", plan_text("01", "01"));
  write_file(root / ".yolo-planning/ROADMAP.md", "# Roadmap\n\nBuild it.\n");
  write_file(root / ".yolo-planning/config.json",
             json({{"review_gate", "never"},
                   {"approvers", {{"vision", "skip"}}},
                   {"executor", {{"command", {"sh", "-c", "echo ran >> ran.log; exit 1"}}, {"timeout_ms", 20000}}}})
                 .dump());
  const bool delay = strace_can_delay();
  RecordProperty("forked_copies_delayed", delay ? "yes (strace)" : "no (strace cannot inject here)");
  std::vector<std::string> prefix;
  if (delay) {
    // A traced process cannot run LeakSanitizer's final check (it stops the process's threads
    // with ptrace); in the sanitizer build the copies under strace leave it out.
    const char* asan = std::getenv("ASAN_OPTIONS");
    ::setenv("ASAN_OPTIONS", ((asan ? std::string(asan) + ":" : std::string()) + "detect_leaks=0").c_str(), 1);
    prefix = {"strace",    "-D", "-f",           "-qq", "-o",
              "/dev/null", "-e", "trace=setsid", "-e",  "inject=setsid:delay_exit=100000"};
  }
  auto cmd = [&](std::vector<std::string> args) {
    std::vector<std::string> v = prefix;
    v.push_back(yolo_bin());
    v.insert(v.end(), args.begin(), args.end());
    return v;
  };
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  int refused = 0, keepers_left = 0;
  std::string first_refusal;
  for (int i = 0; i < 50; ++i) {
    auto dry = run_direct(cmd({"execute", "--dry-run"}), root, scratch.path());
    auto real = run_direct(cmd({"execute"}), root, scratch.path());
    for (const auto* r : {&dry, &real})
      if ((r->out + r->err).find("already running") != std::string::npos && refused++ == 0)
        first_refusal = "round " + std::to_string(i) + ": " + dump(*r);
    EXPECT_EQ(dry.exit_code, 0) << "round " << i << ": " << dump(dry);
    EXPECT_NE(real.exit_code, 0) << "round " << i << ": " << dump(real);
    // A keeper its yolo left behind is ours now: counted, then reaped.
    for (int k : own_children_named("yolo-keeper")) {
      ++keepers_left;
      ::kill(k, SIGKILL);
      ::waitpid(k, nullptr, 0);
    }
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  EXPECT_EQ(refused, 0) << first_refusal;
  EXPECT_EQ(keepers_left, 0) << "yolo-keeper processes were left to their grandparent";
  // Every execute ran the plan (its executor failed each time, as asked).
  std::string ran = read_file(root / "ran.log");
  EXPECT_EQ(static_cast<size_t>(std::count(ran.begin(), ran.end(), '\n')), 50u);
}

// A copy of fixtures/demo as a real git repository, its plans run in worktrees by the
// fixture executor executor-worktree.
class WorktreeProject : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "executor-worktree",
                     repo() / "agents" / "executor-worktree");
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture"});
    json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
    c.merge_patch(
        {{"review_gate", "never"},
         {"approvers", {{"vision", "skip"}}},
         {"isolation", "worktree"},
         {"max_parallel", 2},
         {"architect", nullptr},
         {"executor",
          {{"command", {"agents/executor-worktree", "{plan_path}", "{summary_path}"}}, {"timeout_ms", 30000}}},
         // The fault is a kill -9 of yolo that its executor sends (YOLO_EXEC_KILL_YOLO_FOR): the
         // sandbox forbids exactly that (no signal leaves it), so these runs are unconfined.
         {"sandbox", "off"}});
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  stdfs::path repo() const { return dir_.path() / "repo"; }
  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  std::string git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv, repo());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  RunResult execute(std::vector<std::string> env = {}) {
    env.push_back("NO_COLOR=1");
    return run_yolo({"execute"}, repo(), env);
  }
  // After a kill -9 of yolo: its children live on a moment (an executor committing, the child
  // deleting merged branches, each with its git), and a git among them may hold or take a
  // lock the test is about to plant. Waits until no process works inside the repository.
  void wait_for_the_killed_runs_children() {
    std::error_code ec;
    const std::string top = stdfs::canonical(repo(), ec).string();
    const auto until = std::chrono::steady_clock::now() + 20s;
    for (;;) {
      bool any = false;
      for (const auto& e : stdfs::directory_iterator("/proc", ec)) {
        const std::string pid = e.path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (pid == std::to_string(::getpid())) continue;
        std::error_code le;
        const std::string cwd = stdfs::read_symlink(e.path() / "cwd", le).string();
        if (!le && (cwd == top || cwd.rfind(top + "/", 0) == 0)) any = true;
      }
      if (!any || std::chrono::steady_clock::now() > until) return;
      std::this_thread::sleep_for(50ms);
    }
  }
  // Merge commits naming the plan on the checked-out branch.
  size_t merges_of(const std::string& id) {
    std::istringstream in(git({"log", "--merges", "--first-parent", "--format=%s"}));
    size_t n = 0;
    for (std::string l; std::getline(in, l);) n += l.find("merge plan " + id + " ") != std::string::npos;
    return n;
  }
  // Worktrees of the slot pool that have a branch checked out (`git worktree list`).
  std::vector<std::string> slots_on_a_branch() {
    std::istringstream in(git({"worktree", "list", "--porcelain"}));
    std::vector<std::string> out;
    std::string path;
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("worktree ", 0) == 0) path = l.substr(9);
      if (l.rfind("branch ", 0) == 0 && path.find("yolo-worktrees") != std::string::npos) out.push_back(path + " " + l);
    }
    return out;
  }
  TempDir dir_;
};

// kill -9 of yolo while 01-01's executor runs in its slot (the slot stays on the plan's
// branch), then the slot folders removed by hand: the next execute prunes what git still
// registers there and runs every plan.
TEST_F(WorktreeProject, ASlotRemovedByHandDoesNotBlockTheNextExecute) {
  auto killed = execute({"YOLO_EXEC_KILL_YOLO_FOR=01-01", "YOLO_EXEC_LITTER_FOR=01-01"});
  ASSERT_NE(killed.exit_code, 0) << dump(killed);
  std::string listed = git({"worktree", "list", "--porcelain"});
  ASSERT_NE(listed.find("yolo-worktrees/slot-"), std::string::npos) << listed;
  stdfs::remove_all(repo() / ".git" / "yolo-worktrees");
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
  auto again = execute();  // and the one after it
  EXPECT_EQ(again.exit_code, 0) << dump(again);
  EXPECT_EQ(trim(git({"branch", "--list", "yolo/*"})), "");
}

// kill -9 of yolo mid-wave, and a .git/packed-refs.lock left as a git killed in the middle of
// `git branch -D` leaves it: the re-run merges every plan once and ends with no yolo/ branch,
// no slot on a plan's branch and no lock file, and says what it removed.
TEST_F(WorktreeProject, ARerunAfterAKillNineLeavesNoBranchNoSlotOnABranchAndNoLockFile) {
  auto killed = execute({"YOLO_EXEC_KILL_YOLO_FOR=01-02"});
  ASSERT_NE(killed.exit_code, 0) << dump(killed);
  ASSERT_FALSE(slots_on_a_branch().empty()) << "the killed run should have left a slot on a plan's branch";
  wait_for_the_killed_runs_children();  // one of their gits could take the planted lock as its own
  const stdfs::path lock = repo() / ".git" / "packed-refs.lock";
  write_file(lock, "");
  const auto old = stdfs::file_time_type::clock::now() - std::chrono::minutes(5);
  stdfs::last_write_time(lock, old);
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
  EXPECT_EQ(trim(git({"branch", "--list", "yolo/*"})), "") << dump(r);
  EXPECT_EQ(slots_on_a_branch(), std::vector<std::string>{}) << dump(r);
  EXPECT_FALSE(stdfs::exists(lock)) << dump(r);
  EXPECT_NE((r.out + r.err).find("packed-refs.lock"), std::string::npos) << "the run did not say what it removed\n"
                                                                         << dump(r);
}

// kill -9 of yolo once plan 01-01's executor has done its work (its commit on the plan's
// branch, its SUMMARY in its slot) but before yolo saw it end: the re-run finds that work,
// gates and merges it, and does not run the executor again.
TEST_F(WorktreeProject, AnExecutorThatFinishedBeforeAKillNineIsGatedOnTheRerunNotRunAgain) {
  const std::string log = (dir_.path() / "executors.log").string();
  auto killed = execute({"YOLO_EXEC_KILL_YOLO_AFTER=01-01", "YOLO_EXEC_LOG=" + log});
  ASSERT_NE(killed.exit_code, 0) << dump(killed);
  auto starts = [&](const std::string& id) {
    std::istringstream in(read_file(log));
    size_t n = 0;
    for (std::string l; std::getline(in, l);) n += l.rfind("start " + id + " ", 0) == 0;
    return n;
  };
  ASSERT_EQ(starts("01-01"), 1u);
  auto r = execute({"YOLO_EXEC_LOG=" + log});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(starts("01-01"), 1u) << "the executor that had finished ran again\n" << read_file(log) << dump(r);
  EXPECT_NE(r.out.find("not run again"), std::string::npos) << dump(r);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
  EXPECT_EQ(trim(git({"branch", "--list", "yolo/*"})), "") << dump(r);
  EXPECT_EQ(slots_on_a_branch(), std::vector<std::string>{}) << dump(r);
}

// A git killed while it held a plan branch's lock (kill -9 of yolo; git dying of SIGPIPE on
// the dead run's pipe) leaves refs/heads/yolo/<run>/<plan>/work.lock: the re-run takes it away once
// no live git could hold it, says so, and runs every plan.
TEST_F(WorktreeProject, ALockAKilledGitLeftOnAPlansBranchIsRemovedAndTheRunGoesOn) {
  auto killed = execute({"YOLO_EXEC_KILL_YOLO_FOR=01-02"});
  ASSERT_NE(killed.exit_code, 0) << dump(killed);
  const std::string some = trim(git({"for-each-ref", "--count=1", "--format=%(refname)", "refs/heads/yolo/"}));
  ASSERT_FALSE(some.empty()) << "the killed run left no yolo/ branch";
  // refs/heads/yolo/<run>/<plan>/work: the run's folder is the fourth component.
  const stdfs::path ref(some);
  auto it = ref.begin();
  stdfs::path run_dir = repo() / ".git";
  for (int k = 0; k < 4 && it != ref.end(); ++k, ++it) run_dir /= *it;
  wait_for_the_killed_runs_children();
  for (const char* id : {"01-03", "01-04"}) write_file(run_dir / id / "work.lock", "");
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
  for (const char* id : {"01-03", "01-04"}) EXPECT_FALSE(stdfs::exists(run_dir / id / "work.lock")) << id << dump(r);
  // Said of 01-04's: no process of the killed run touched that plan (wave 3). 01-03's executor
  // (wave 2, beside 01-02) may still be committing on its branch when the lock is planted,
  // and its git then takes the planted file as its own lock and renames it into the ref.
  EXPECT_NE((r.out + r.err).find("01-04/work.lock"), std::string::npos) << "the run did not say what it removed\n" << dump(r);
}

// A lock file that cannot be removed (its folder read-only is not possible for root; a
// directory in its place is): the run says what it could not clean and how.
TEST_F(WorktreeProject, ABranchThatCannotBeDeletedIsNamedWithWhatToDo) {
  auto killed = execute({"YOLO_EXEC_KILL_YOLO_FOR=01-02"});
  ASSERT_NE(killed.exit_code, 0) << dump(killed);
  const stdfs::path lock = repo() / ".git" / "packed-refs.lock";
  // The killed run's branch deletion (a child of its loop, ended with it) may have left the
  // lock as a file: git refuses to delete then too, but a folder makes it certain.
  std::error_code ec;
  stdfs::remove(lock, ec);
  stdfs::create_directories(lock / "x");  // unlink fails (EISDIR), git cannot take its lock
  const auto old = stdfs::file_time_type::clock::now() - std::chrono::minutes(5);
  stdfs::last_write_time(lock, old);
  auto r = execute();
  stdfs::remove_all(lock);
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  std::string all = r.out + r.err;
  EXPECT_NE(all.find("could not"), std::string::npos) << dump(r);
  EXPECT_NE(all.find("git branch -D"), std::string::npos) << dump(r);
}

// ---- watcher --------------------------------------------------------------------------------

// .yolo-planning a symlink to a folder inside the project: the watcher watches through it.
TEST(Faults, WatchSeesChangesThroughASymlinkedPlanningFolder) {
  TempDir d;
  const stdfs::path root = d.path();
  write_file(root / "planning-real" / "phases" / "01-core" / "01-01-PLAN.md", plan_text("01", "01"));
  write_file(root / "planning-real" / "ROADMAP.md", "# Roadmap\n");
  write_file(root / "planning-real" / "config.json", R"({"review_gate": "never"})");
  stdfs::create_directory_symlink("planning-real", root / ".yolo-planning");
  BgProcess w({yolo_bin(), "watch", root.string(), "--json", "--no-review"}, root);
  auto ready = w.wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 15s);
  ASSERT_TRUE(ready.has_value()) << w.stderr_text();
  EXPECT_GE((*ready).value("folders", 0), 3) << ready->dump();
  write_file(root / "planning-real" / "phases" / "01-core" / "01-02-PLAN.md", plan_text("01", "02"));
  auto changed = w.wait_for(
      [](const json& j) { return j.value("event", "") == "plan_changed" && j.value("plan_id", "") == "01-02"; }, 10s);
  EXPECT_TRUE(changed.has_value()) << "no plan_changed through the symlink\n" << w.stderr_text();
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait_exit(5s), 0) << w.stderr_text();
}

// `yolo watch` in a user namespace of its own whose inotify limit is 7 watches (the machine's
// limit is left alone: every other process keeps its own): the project root, .yolo-planning,
// phases/ and four phase folders fit; two more phase folders, a deep notes folder, and yolo's
// own .logs and .cache do not. The phase folders are watched first, yolo's output folders take
// no watch at all, the watcher names what it left out and how to raise the limit; once it is
// raised, the next event adds the missing watches (no polling) and a save in a phase that had
// none is seen.
TEST(Faults, UnderTheInotifyLimitPhaseFoldersComeFirstAndTheRestIsWatchedOnceItIsRaised) {
  if (::geteuid() != 0 || run_program({"unshare", "-Ur", "true"}).exit_code != 0)
    GTEST_SKIP() << "needs root and user namespaces (unshare -Ur)";
  TempDir d;
  const stdfs::path root = d.path(), planning = root / ".yolo-planning";
  for (int i = 1; i <= 6; ++i) {
    std::string ph = "0" + std::to_string(i);
    write_file(planning / "phases" / (ph + "-p") / (ph + "-01-PLAN.md"), plan_text(ph, "01"));
    stdfs::create_directories(planning / ".logs" / (ph + "-p") / (ph + "-01"));
  }
  stdfs::create_directories(planning / ".cache" / "x");
  for (const char* n : {"notes/a/b/c", "notes/d/e"}) stdfs::create_directories(planning / n);
  write_file(planning / "ROADMAP.md", "# Roadmap\n");
  BgProcess w({"unshare", "-Ur", "sh", "-c",
               "echo 7 > /proc/sys/user/max_inotify_watches && exec \"$0\" watch \"$1\" --json --no-review", yolo_bin(),
               root.string()},
              root);
  auto ready = w.wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 15s);
  ASSERT_TRUE(ready.has_value()) << w.stderr_text();
  EXPECT_EQ(ready->value("folders", 0), 7) << ready->dump();
  // An event already read (before `ready`, or while waiting for another), else the next one.
  auto seen_or_next = [&](const std::string& event) -> std::optional<json> {
    for (const auto& j : w.seen)
      if (j.value("event", "") == event) return j;
    return w.wait_for([&](const json& j) { return j.value("event", "") == event; }, 5s);
  };
  auto limit = seen_or_next("watch_limit");
  ASSERT_TRUE(limit.has_value()) << "the folders left without a watch were not named\n" << w.stderr_text();
  std::vector<std::string> left;
  for (const auto& f : (*limit)["unwatched"]) left.push_back(f.get<std::string>());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{".yolo-planning/notes", ".yolo-planning/phases/05-p",
                                            ".yolo-planning/phases/06-p"}))
      << limit->dump();
  EXPECT_NE(limit->value("hint", "").find("max_inotify_watches"), std::string::npos) << limit->dump();
  EXPECT_EQ(limit->value("limit", 0), 7) << limit->dump();
  auto saved_and_seen = [&](const std::string& ph, const std::string& plan) {
    write_file(planning / "phases" / (ph + "-p") / (ph + "-" + plan + "-PLAN.md"), plan_text(ph, plan));
    return w
        .wait_for(
            [&](const json& j) {
              return j.value("event", "") == "plan_changed" && j.value("plan_id", "") == ph + "-" + plan;
            },
            5s)
        .has_value();
  };
  for (const char* ph : {"01", "02", "03", "04"})
    EXPECT_TRUE(saved_and_seen(ph, "02")) << ph << "\n" << w.stderr_text();
  auto raised = run_program(
      {"nsenter", "-t", std::to_string(w.pid()), "-U", "sh", "-c", "echo 1000 > /proc/sys/user/max_inotify_watches"});
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_TRUE(saved_and_seen("01", "03"));  // any event: the watcher tries the missing watches again
  auto recovered = seen_or_next("watches_recovered");
  ASSERT_TRUE(recovered.has_value()) << "the missing watches were not added once the limit allowed them\n"
                                     << w.stderr_text();
  EXPECT_EQ(recovered->value("unwatched", -1), 0) << recovered->dump();
  w.collect(500ms);
  EXPECT_TRUE(saved_and_seen("06", "02")) << "a save in a phase that had no watch was not seen\n" << w.stderr_text();
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait_exit(5s), 0) << w.stderr_text();
}

// Plan 01-02 lives in 02-PLAN.md on main, in 01-02-PLAN.md with other content on `other`, and in
// 01-02-PLAN.md with main's content on `same`. Across checkouts between them the watcher reviews
// 01-02 exactly when its content differs from what its review record (by plan id) holds, and
// the record `yolo status` shows is always of the content checked out.
TEST(Faults, WatchAcrossCheckoutsThatMoveAPlanIdBetweenFilesKeepsItsReviewCurrent) {
  TempDir d;
  const stdfs::path root = d.path();
  const stdfs::path phase = root / ".yolo-planning" / "phases" / "01-core";
  auto git = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv, root);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  const std::string x = plan_text("01", "02"), y = plan_text("01", "02", "type: execute\n");
  write_file(phase / "01-01-PLAN.md", plan_text("01", "01"));
  write_file(phase / "02-PLAN.md", x);
  write_file(root / ".yolo-planning" / "ROADMAP.md", "# Roadmap\n");
  git({"init", "-q", "-b", "main"});
  git({"add", ".yolo-planning/phases", ".yolo-planning/ROADMAP.md"});
  git({"commit", "-q", "-m", "main"});
  git({"checkout", "-q", "-b", "other"});
  git({"mv", ".yolo-planning/phases/01-core/02-PLAN.md", ".yolo-planning/phases/01-core/01-02-PLAN.md"});
  write_file(phase / "01-02-PLAN.md", y);
  git({"commit", "-q", "-am", "other"});
  git({"checkout", "-q", "-b", "same", "main"});
  git({"mv", ".yolo-planning/phases/01-core/02-PLAN.md", ".yolo-planning/phases/01-core/01-02-PLAN.md"});
  git({"commit", "-q", "-am", "same"});
  git({"checkout", "-q", "main"});

  BgProcess w({yolo_bin(), "watch", root.string(), "--json"}, root);
  ASSERT_TRUE(w.wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 15s).has_value())
      << w.stderr_text();
  ASSERT_TRUE(w.wait_for([](const json& j) { return j.value("event", "") == "backlog_done"; }, 20s).has_value())
      << w.stderr_text();
  w.collect(1000ms);
  // The hash `yolo status --records` shows for 01-02's review.
  auto status_hash = [&] {
    auto r = run_yolo({"status", "--json", "--records"}, root);
    json s = json::parse(r.out, nullptr, false);
    if (s.is_discarded()) return "status: " + r.out + r.err;
    for (const char* where : {"other_reviews"})
      if (s.contains(where) && s[where].contains("01-02")) return s[where]["01-02"].value("hash", std::string());
    for (const auto& p : s.value("plans", json::array()))
      if (p.value("id", "") == "01-02" && p["review"].is_object()) return p["review"].value("hash", std::string());
    return "no review of 01-02 in: " + r.out;
  };
  auto bare = [](std::string h) { return h.rfind("sha256:", 0) == 0 ? h.substr(7) : h; };
  struct Step {
    const char* branch;
    const char* file;
    int reviews;
  };
  for (const Step& step :
       {Step{"same", "01-02-PLAN.md", 0}, Step{"other", "01-02-PLAN.md", 1}, Step{"main", "02-PLAN.md", 1},
        Step{"other", "01-02-PLAN.md", 1}, Step{"same", "01-02-PLAN.md", 1}, Step{"main", "02-PLAN.md", 0}}) {
    SCOPED_TRACE(std::string("checkout ") + step.branch);
    const size_t from = w.seen.size();
    git({"checkout", "-q", step.branch});
    if (step.reviews > 0)  // the review expected first (a loaded machine is slow), then quiet
      w.wait_for([](const json& j) { return j.value("event", "") == "reviewed"; }, 30s);
    while (!w.collect(2000ms).empty()) {
    }
    int reviews = 0, others = 0;
    for (size_t k = from; k < w.seen.size(); ++k)
      if (w.seen[k].value("event", "") == "reviewed") ++(w.seen[k].value("plan_id", "") == "01-02" ? reviews : others);
    EXPECT_EQ(reviews, step.reviews);
    EXPECT_EQ(others, 0);
    EXPECT_EQ(bare(status_hash()), sha256_hex(read_file(phase / step.file)));
  }
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait_exit(5s), 0) << w.stderr_text();
}

// A small tmpfs of its own (root only): a disk that really fills up.
struct SmallDisk {
  TempDir dir;
  stdfs::path mnt = dir.path() / "mnt";
  bool mounted = false;
  std::string why;
  explicit SmallDisk(const std::string& size) {
    stdfs::create_directories(mnt);
    if (::geteuid() != 0) {
      why = "needs root to mount a tmpfs";
      return;
    }
    auto r = run_program({"mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", mnt.string()});
    mounted = r.exit_code == 0;
    if (!mounted) why = "mount failed: " + r.err;
  }
  ~SmallDisk() {
    if (mounted) run_program({"umount", "-l", mnt.string()});
  }
  // Writes filler files until the disk is full; returns them.
  std::vector<stdfs::path> fill() {
    std::vector<stdfs::path> out;
    std::string chunk(16 * 1024, 'x');
    for (int i = 0; i < 100000; ++i) {
      stdfs::path f = mnt / ("filler-" + std::to_string(i));
      int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) break;
      out.push_back(f);
      ssize_t n = ::write(fd, chunk.data(), chunk.size());
      ::close(fd);
      if (n != static_cast<ssize_t>(chunk.size())) break;
    }
    return out;
  }
};

// A review made while the disk is full cannot be recorded: the watcher reviews it again
// once it can be written, without the plan being edited again.
TEST(Faults, WatchRetriesAReviewThatCouldNotBeRecordedOnAFullDisk) {
  SmallDisk disk("1m");
  if (!disk.mounted) GTEST_SKIP() << disk.why;
  const stdfs::path root = disk.mnt / "p";
  const stdfs::path phase = root / ".yolo-planning" / "phases" / "01-core";
  write_file(phase / "01-01-PLAN.md", plan_text("01", "01"));
  write_file(root / ".yolo-planning" / "ROADMAP.md", "# Roadmap\n");
  write_file(root / ".yolo-planning" / "config.json", R"({"review_gate": "always"})");
  BgProcess w({yolo_bin(), "watch", root.string(), "--json"}, root);
  ASSERT_TRUE(w.wait_for([](const json& j) { return j.value("event", "") == "ready"; }, 15s).has_value())
      << w.stderr_text();
  ASSERT_TRUE(w.wait_for([](const json& j) { return j.value("event", "") == "backlog_done"; }, 20s).has_value())
      << w.stderr_text();
  std::string text = read_file(phase / "01-01-PLAN.md");
  auto fillers = disk.fill();
  ASSERT_FALSE(fillers.empty());
  // The same size, one word changed: it fits in the pages the file already has.
  std::string edited = text;
  edited.replace(edited.find("Write the code."), 14, "Write the docs");
  {
    int fd = ::open((phase / "01-01-PLAN.md").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, edited.data(), edited.size(), 0), static_cast<ssize_t>(edited.size()));
    ::close(fd);
  }
  auto failed = w.wait_for([](const json& j) { return j.value("event", "") == "record_error"; }, 20s);
  ASSERT_TRUE(failed.has_value()) << "the full disk did not show\n" << w.stderr_text();
  auto said = w.wait_for([](const json& j) { return j.value("event", "") == "record_retry"; }, 3s);
  for (const auto& f : fillers) stdfs::remove(f);
  ASSERT_TRUE(said.has_value()) << "no retry of the review that was not recorded\n" << w.stderr_text();
  // The failed batch's own line, then the retry's.
  w.wait_for([](const json& j) { return j.value("event", "") == "reviewed"; }, 5s);
  auto retried = w.wait_for(
      [](const json& j) { return j.value("event", "") == "reviewed" && j.value("plan_id", "") == "01-01"; }, 30s);
  EXPECT_TRUE(retried.has_value()) << "the review was not made again once the disk had room\n" << w.stderr_text();
  auto more = w.collect(1500ms);
  for (const auto& j : more) EXPECT_NE(j.value("event", ""), "record_error") << j.dump();
  std::string ledger;
  for (const auto& e : stdfs::directory_iterator(root / ".yolo-planning" / ".reviews"))
    if (e.path().extension() == ".json") ledger += read_file(e.path());
  EXPECT_NE(ledger.find("01-01"), std::string::npos) << ledger;
  w.signal(SIGTERM);
  w.wait_exit(5s);
}

// ---- daily loop -----------------------------------------------------------------------------

// A one-phase project whose executor writes a SUMMARY that passes the structural gate.
struct SimpleProject {
  TempDir dir;
  stdfs::path root = dir.path();
  stdfs::path phase = root / ".yolo-planning" / "phases" / "01-core";
  SimpleProject() {
    write_file(phase / "01-01-PLAN.md", plan_text("01", "01"));
    write_file(root / ".yolo-planning" / "ROADMAP.md", "# Roadmap\n\nBuild it.\n");
    const std::string summary =
        "cat > \"$2\" <<EOS\n---\nphase: \"01\"\nplan: \"${3#*-}\"\ntitle: \"Build it\"\nstatus: complete\n"
        "tasks_completed: 1\ntasks_total: 1\ncommit_hashes: [0000000]\ncompleted: 2026-01-01\ndeviations: []\n---\n"
        "## What Was Built\nIt.\n## Files Modified\nNone.\n## Deviations\nNone.\nEOS\n";
    write_file(root / ".yolo-planning" / "config.json",
               json({{"review_gate", "never"},
                     {"approvers", {{"vision", "skip"}}},
                     {"summary_checks", "structural"},
                     {"executor",
                      {{"command", {"sh", "-c", summary, "sh", "{plan_path}", "{summary_path}", "{plan_id}"}},
                       {"timeout_ms", 20000}}}})
                   .dump());
  }
  RunResult yolo(const std::vector<std::string>& args) { return run_yolo(args, root, {"NO_COLOR=1"}); }
};

// `yolo approve` shows content, not digests: at the first approval of the vision gate the
// roadmap's text and the agents' argv; at the next (the roadmap edited, the executor's argv
// changed) the roadmap's diff against the text approved then and the executor's argv then and
// now. The digests only with --verbose.
TEST(Faults, ApproveShowsWhatChangedSinceTheLastApprovalNotDigests) {
  SimpleProject p;
  json c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["approvers"]["vision"] = "manual";
  write_file(p.root / ".yolo-planning" / "config.json", c.dump(2));
  auto first = p.yolo({"execute"});
  ASSERT_EQ(first.exit_code, 3) << "paused at the vision gate\n" << dump(first);
  auto a1 = run_yolo_tty({"approve", "--by", "tester"}, p.root, {"NO_COLOR=1"});
  ASSERT_EQ(a1.exit_code, 0) << dump(a1);
  const std::string shown1 = a1.out + a1.err;
  EXPECT_NE(shown1.find("Build it."), std::string::npos) << "the roadmap's text is not shown\n" << shown1;
  EXPECT_NE(shown1.find("executor: [\"sh\",\"-c\""), std::string::npos) << "the executor's argv is not shown\n"
                                                                        << shown1;
  EXPECT_EQ(shown1.find("sha256:"), std::string::npos) << shown1;

  write_file(p.root / ".yolo-planning" / "ROADMAP.md", "# Roadmap\n\nBuild it.\n\nThen document it.\n");
  c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["executor"]["command"][2] = "true; " + c["executor"]["command"][2].get<std::string>();
  write_file(p.root / ".yolo-planning" / "config.json", c.dump(2));
  auto second = p.yolo({"execute"});
  ASSERT_EQ(second.exit_code, 3) << "the changed roadmap and config open the gate again\n" << dump(second);
  auto a2 = run_yolo_tty({"approve", "--by", "tester"}, p.root, {"NO_COLOR=1"});
  ASSERT_EQ(a2.exit_code, 0) << dump(a2);
  const std::string shown2 = a2.out + a2.err;
  EXPECT_NE(shown2.find("+Then document it."), std::string::npos) << "no diff of the roadmap\n" << shown2;
  EXPECT_NE(shown2.find("config key executor changed"), std::string::npos) << shown2;
  EXPECT_NE(shown2.find("was: {"), std::string::npos) << shown2;
  EXPECT_NE(shown2.find("\"true; cat"), std::string::npos) << "the executor's argv now is not shown\n" << shown2;
  EXPECT_EQ(shown2.find("sha256:"), std::string::npos) << shown2;

  write_file(p.root / ".yolo-planning" / "ROADMAP.md", "# Roadmap\n\nBuild it.\n");
  ASSERT_EQ(p.yolo({"execute"}).exit_code, 3);
  auto a3 = run_yolo_tty({"approve", "--by", "tester", "--verbose"}, p.root, {"NO_COLOR=1"});
  ASSERT_EQ(a3.exit_code, 0) << dump(a3);
  EXPECT_NE((a3.out + a3.err).find("sha256:"), std::string::npos) << "--verbose shows the digests\n" << a3.err;
  EXPECT_NE((a3.out + a3.err).find("-Then document it."), std::string::npos) << a3.err;
}

// The wave gate shows the wave's plans the same way: their text at the first approval, then
// each plan's diff against the text approved.
TEST(Faults, ApproveOfAWaveGateShowsItsPlansAndThenTheirDiff) {
  SimpleProject p;
  json c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["wave_approval"] = true;
  c["approvers"] = {{"vision", "skip"}, {"wave", "manual"}};
  write_file(p.root / ".yolo-planning" / "config.json", c.dump(2));
  std::string second_wave = plan_text("01", "02");
  second_wave.replace(second_wave.find("wave: 1"), 7, "wave: 2");
  write_file(p.phase / "01-02-PLAN.md", second_wave);
  auto first = p.yolo({"execute"});
  ASSERT_EQ(first.exit_code, 3) << "paused at the gate of wave 2\n" << dump(first);
  auto a1 = run_yolo_tty({"approve", "--by", "tester"}, p.root, {"NO_COLOR=1"});
  ASSERT_EQ(a1.exit_code, 0) << dump(a1);
  EXPECT_NE(a1.err.find("01-02-PLAN.md (not approved before):"), std::string::npos) << a1.err;
  EXPECT_NE(a1.err.find("Write the code."), std::string::npos) << a1.err;
  const stdfs::path plan = p.phase / "01-02-PLAN.md";
  std::string t = read_file(plan);
  t.replace(t.find("Write the code."), 15, "Write the code and its tests.");
  write_file(plan, t);
  auto second = p.yolo({"execute"});
  ASSERT_EQ(second.exit_code, 3) << "the edited plan opens the wave gate again\n" << dump(second);
  auto a2 = run_yolo_tty({"approve", "--by", "tester"}, p.root, {"NO_COLOR=1"});
  ASSERT_EQ(a2.exit_code, 0) << dump(a2);
  EXPECT_NE(a2.err.find("-Write the code.\n"), std::string::npos) << a2.err;
  EXPECT_NE(a2.err.find("+Write the code and its tests."), std::string::npos) << a2.err;
  EXPECT_EQ(a2.err.find("sha256:"), std::string::npos) << a2.err;
}

// 40 plans, max_parallel 30, 64 file descriptors (`ulimit -n 64`): the plans wait for a
// slot instead of failing with "too many open files".
TEST(Faults, OutOfFileDescriptorsThePlansWaitInsteadOfFailing) {
  SimpleProject p;
  for (int i = 2; i <= 40; ++i) {
    std::string n = (i < 10 ? "0" : "") + std::to_string(i);
    write_file(p.phase / ("01-" + n + "-PLAN.md"), plan_text("01", n));
  }
  json c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["max_parallel"] = 30;
  c["executor"]["command"][2] = "sleep 0.2; " + c["executor"]["command"][2].get<std::string>();
  write_file(p.root / ".yolo-planning" / "config.json", c.dump());
  auto r = run_program({"sh", "-c", "ulimit -n 64 && exec \"$0\" execute", yolo_bin()}, p.root, {"NO_COLOR=1"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ((r.out + r.err).find("open files"), std::string::npos) << dump(r);
  EXPECT_NE((r.out + r.err).find("lowered"), std::string::npos) << dump(r);
  int summaries = 0;
  for (const auto& e : stdfs::directory_iterator(p.phase))
    summaries += e.path().filename().string().find("SUMMARY") != std::string::npos;
  EXPECT_EQ(summaries, 40) << dump(r);
}

TEST(Faults, APlanAddedToACompletePhaseIsShownAndRun) {
  SimpleProject p;
  auto first = p.yolo({"execute"});
  ASSERT_EQ(first.exit_code, 0) << dump(first);
  // A second plan joins the finished phase.
  write_file(p.phase / "01-02-PLAN.md", plan_text("01", "02"));
  auto st = p.yolo({"status"});
  EXPECT_EQ(st.exit_code, 0) << dump(st);
  EXPECT_NE(st.out.find("01-02-PLAN.md"), std::string::npos) << dump(st);
  EXPECT_NE(st.out.find("not part of this run"), std::string::npos) << dump(st);
  auto sj = p.yolo({"status", "--json"});
  json s = json::parse(sj.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << sj.out;
  EXPECT_EQ(s["plans_not_in_run"], json::array({".yolo-planning/phases/01-core/01-02-PLAN.md"})) << sj.out;
  auto dry = p.yolo({"execute", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dump(dry);
  EXPECT_EQ((dry.out + dry.err).find("every phase is complete"), std::string::npos) << dump(dry);
  EXPECT_NE(dry.out.find("01-02"), std::string::npos) << dump(dry);
  auto run = p.yolo({"execute"});
  EXPECT_EQ(run.exit_code, 0) << dump(run);
  EXPECT_TRUE(stdfs::exists(p.phase / "01-02-SUMMARY.md")) << dump(run);
  auto after = p.yolo({"status", "--json"});
  EXPECT_FALSE(json::parse(after.out, nullptr, false).contains("plans_not_in_run")) << after.out;
}

TEST(Faults, TheDryRunRejectsAPlanThatDoesNotParseWithTheReasonAndDoesNotPromiseTheRun) {
  SimpleProject p;
  write_file(
      p.phase / "01-02-PLAN.md",
      "---\nphase: \"01\"\nplan: \"02\"\ntitle: [unclosed\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"x\"\n---\n"
      "\n### Task 1: Write it\n");
  auto dry = p.yolo({"execute", "--dry-run"});
  std::string all = dry.out + dry.err;
  EXPECT_NE(dry.exit_code, 0) << dump(dry);
  EXPECT_NE(all.find("rejected by the structural pre-check"), std::string::npos) << dump(dry);
  EXPECT_EQ(all.find("wave is not a positive integer"), std::string::npos) << dump(dry);
  EXPECT_EQ(all.find("`yolo execute` runs it"), std::string::npos) << dump(dry);
  auto real = p.yolo({"execute"});
  EXPECT_NE(real.exit_code, 0) << "the dry run and the run disagree: " << dump(real);
  auto dj = p.yolo({"execute", "--dry-run", "--json"});
  json j = json::parse(dj.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << dj.out;
  EXPECT_EQ(j.value("rejected", 0), 1) << dj.out;
}

TEST(Faults, AMistypedEnumValueNamesTheAllowedValuesOnce) {
  SimpleProject p;
  json c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["summary_checks"] = "strcit";
  write_file(p.root / ".yolo-planning" / "config.json", c.dump());
  auto r = p.yolo({"execute", "--dry-run"});
  std::string all = r.out + r.err;
  for (const char* v : {"\"strict\"", "\"structural\"", "\"off\"", "\"strcit\""})
    EXPECT_NE(all.find(v), std::string::npos) << v << "\n" << dump(r);
  size_t n = 0;
  for (size_t at = all.find("strcit"); at != std::string::npos; at = all.find("strcit", at + 1)) ++n;
  EXPECT_EQ(n, 1u) << "the same problem was printed more than once\n" << dump(r);
}

TEST(Faults, AnOptionTypoGetsTheNearestOption) {
  SimpleProject p;
  auto r = p.yolo({"execute", "--dryrun"});
  EXPECT_EQ(r.exit_code, 64) << dump(r);
  EXPECT_NE(r.err.find("Did you mean '--dry-run'?"), std::string::npos) << dump(r);
  auto s = p.yolo({"status", "--jsno"});
  EXPECT_NE(s.err.find("Did you mean '--json'?"), std::string::npos) << dump(s);
}

TEST(Faults, HelpOfACommandNamesItAsTypedAndTheOverviewPutsPlumbingApart) {
  TempDir d;
  for (const char* cmd : {"execute", "review", "status"}) {
    auto h = run_yolo({"help", cmd}, d.path());
    EXPECT_EQ(h.exit_code, 0) << dump(h);
    EXPECT_NE(h.out.find(std::string("yolo ") + cmd), std::string::npos) << dump(h);
    EXPECT_EQ(h.out.find(std::string("Usage: ") + cmd), std::string::npos) << dump(h);
  }
  for (const auto& args : {std::vector<std::string>{"--help"}, std::vector<std::string>{}}) {
    auto h = run_yolo(args, d.path());
    EXPECT_EQ(h.exit_code, 0) << dump(h);
    size_t plumbing = h.out.find("Plumbing");
    ASSERT_NE(plumbing, std::string::npos) << dump(h);
    for (const char* p : {"log-event", "parse-frontmatter", "resolve-turns"}) {
      size_t at = h.out.find(std::string("  ") + p);
      EXPECT_GT(at, plumbing) << p << "\n" << h.out;
    }
    for (const char* daily : {"execute", "status", "approve"}) {
      size_t at = h.out.find(std::string("  ") + daily);
      EXPECT_LT(at, plumbing) << daily << "\n" << h.out;
    }
  }
  auto vs = run_yolo({"help", "verify-summary"}, d.path());
  EXPECT_EQ(vs.out.find("PROTOCOL.md"), std::string::npos) << "the repository has no PROTOCOL.md\n" << vs.out;
}

// Outside git the commits cannot be checked: said once (✗ git), not also "✓ commits_exist".
TEST(Faults, VerifySummaryOutsideGitDoesNotAlsoPassTheCommits) {
  SimpleProject p;
  write_file(p.phase / "01-01-SUMMARY.md",
             "---\nphase: \"01\"\nplan: \"01\"\ntitle: \"Build it\"\nstatus: complete\ntasks_completed: 1\n"
             "tasks_total: 1\ncommit_hashes: [abc1234]\ncompleted: 2026-01-01\ndeviations: []\n---\n"
             "## What Was Built\nIt.\n## Files Modified\nNone.\n## Deviations\nNone.\n");
  auto r = p.yolo({"verify-summary", ".yolo-planning/phases/01-core/01-01-SUMMARY.md", "--human", "--mode", "strict"});
  EXPECT_NE(r.out.find("✗ git"), std::string::npos) << dump(r);
  EXPECT_EQ(r.out.find("✓ commits_exist"), std::string::npos) << dump(r);
}

TEST(Faults, AnEmptyFolderSuggestsInit) {
  TempDir d;
  for (const char* cmd : {"status", "execute"}) {
    auto r = run_yolo({cmd}, d.path(), {"NO_COLOR=1"});
    EXPECT_NE(r.exit_code, 0) << dump(r);
    EXPECT_NE((r.out + r.err).find("yolo init"), std::string::npos) << cmd << "\n" << dump(r);
  }
}

TEST(Faults, ReviewWithoutATargetReviewsTheCurrentPhase) {
  SimpleProject p;
  auto r = p.yolo({"review", "--json"});
  EXPECT_NE(r.exit_code, 64) << dump(r);
  EXPECT_EQ(r.err.find("required"), std::string::npos) << dump(r);
  EXPECT_NE(r.out.find("01-01"), std::string::npos) << dump(r);
}

// The reference plugin's own settings are not typos; a real typo still is.
TEST(Faults, TheSharedConfigsKeysAreKnownAndARealTypoIsNot) {
  SimpleProject p;
  json c = json::parse(read_file(p.root / ".yolo-planning" / "config.json"));
  c["task_lease_ttl_secs"] = 300;
  c["v4_session_cache_warm"] = false;
  c["v4_post_edit_test_check"] = false;
  c["compaction_trigger"] = 0.8;
  c["qa_gates"] = json::object();
  c["max_paralel"] = 2;
  write_file(p.root / ".yolo-planning" / "config.json", c.dump());
  auto r = p.yolo({"status"});
  std::string all = r.out + r.err;
  for (const char* k :
       {"task_lease_ttl_secs", "v4_session_cache_warm", "v4_post_edit_test_check", "compaction_trigger", "qa_gates"})
    EXPECT_EQ(all.find(k), std::string::npos) << k << "\n" << dump(r);
  EXPECT_NE(all.find("max_paralel"), std::string::npos) << dump(r);
  EXPECT_NE(all.find("max_parallel"), std::string::npos) << "no suggestion for the typo\n" << dump(r);
}

// `yolo init`'s .gitignore covers the audit log a gate writes: git status stays clean.
TEST(Faults, TheAuditLogOfAGateIsNotLeftInGitStatus) {
  TempDir d;
  const stdfs::path root = d.path();
  ASSERT_EQ(run_program({"git", "init", "-q"}, root).exit_code, 0);
  auto init = run_yolo({"init"}, root, {"NO_COLOR=1"});
  ASSERT_EQ(init.exit_code, 0) << dump(init);
  auto req = run_yolo(
      {"request-approval", "--plan-path", ".yolo-planning/ROADMAP.md", "--gate-type", "vision", "--json"}, root);
  ASSERT_EQ(req.exit_code, 0) << dump(req);
  ASSERT_TRUE(stdfs::exists(root / ".yolo-planning" / "audit-log.jsonl")) << dump(req);
  auto st = run_program({"git", "status", "--porcelain", "--untracked-files=all"}, root);
  EXPECT_EQ(st.out.find("audit-log.jsonl"), std::string::npos) << st.out;
}

// The architect's rewrite of a plan is shown as a diff (as `watch --fix` shows it).
TEST(Faults, AnArchitectsRevisionIsShownAsADiff) {
  TempDir d;
  const stdfs::path root = d.path() / "repo";
  copy_fixture("demo", root);
  stdfs::create_directories(root / "agents");
  for (const char* a : {"reviewer-reject-until-marker", "architect-fix"})
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / a, root / "agents" / a);
  auto r = run_yolo({"review", ".yolo-planning/phases/01-demo/01-01-PLAN.md"}, root, {"NO_COLOR=1"});
  std::string all = r.out + r.err;
  ASSERT_NE(all.find("Plan revised"), std::string::npos) << dump(r);
  EXPECT_NE(all.find("+++ b/.yolo-planning/phases/01-demo/01-01-PLAN.md"), std::string::npos) << dump(r);
  EXPECT_NE(all.find("\n+"), std::string::npos) << dump(r);
}

}  // namespace
}  // namespace yolo::test
