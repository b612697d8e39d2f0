// `isolation: "worktree"`, end to end: the real binary on a copy of fixtures/demo
// (a real git repository), the fixture executor executor-worktree as a real child in each
// plan's own git worktree, real merges. What each executor saw is recorded by the executor
// itself (YOLO_TEST_SEEN), not inferred from yolo's output.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bg_process.h"
#include "overlap_log.h"
#include "test_support.h"

namespace yolo::test {
namespace {

class WorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "executor-worktree",
                     repo() / "agents" / "executor-worktree");
    stdfs::create_directories(seen());
    stdfs::create_directories(barrier());
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture"});
    branch_ = trim(git({"symbolic-ref", "--short", "HEAD"}));
    set_config({{"review_gate", "never"},
                {"approvers", {{"vision", "skip"}}},
                {"isolation", "worktree"},
                {"max_parallel", 2},
                {"architect", nullptr},
                {"executor",
                 {{"command", {"agents/executor-worktree", "{plan_path}", "{summary_path}"}}, {"timeout_ms", 30000}}},
                // What the executors report (seen/) and wait at (barrier/) lies outside the
                // project: granted to them as a user grants an agent a folder of its own.
                {"sandbox", {{"write", {{"executor", {side_.path().string()}}, {"check", {side_.path().string()}}}}}}});
  }

  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path seen() const { return side_.path() / "seen"; }
  stdfs::path barrier() const { return side_.path() / "barrier"; }
  stdfs::path phase_dir() const { return repo() / ".yolo-planning" / "phases" / "01-demo"; }

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
  json config() { return json::parse(read_file(repo() / ".yolo-planning" / "config.json")); }
  void set_config(const json& patch) {
    json c = config();
    c.merge_patch(patch);
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  RunResult execute(std::vector<std::string> env = {}, std::vector<std::string> extra = {}) {
    env.push_back("NO_COLOR=1");
    env.push_back("YOLO_TEST_SEEN=" + seen().string());
    std::vector<std::string> args = {"execute"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_yolo(args, repo(), env);
  }
  json state() { return json::parse(read_file(repo() / ".yolo-planning" / ".execution-state.json")); }
  json plan(const std::string& id) {
    json s = state();
    for (const auto& p : s["plans"])
      if (p["id"] == id) return p;
    return json();
  }
  // The subjects of the merge commits on the run's branch, oldest first.
  std::vector<std::string> merges() {
    std::istringstream in(git({"log", "--merges", "--first-parent", "--reverse", "--format=%s", branch_}));
    std::vector<std::string> v;
    std::string l;
    while (std::getline(in, l))
      if (!l.empty()) v.push_back(l);
    return v;
  }
  size_t merges_of(const std::string& id) {
    auto m = merges();
    return static_cast<size_t>(std::count_if(m.begin(), m.end(), [&](const std::string& s) {
      return s.find("merge plan " + id + " ") != std::string::npos;
    }));
  }
  // Plan id -> the lines its executor recorded.
  std::map<std::string, std::string> seen_by() {
    std::map<std::string, std::string> m;
    for (const auto& f : stdfs::directory_iterator(seen())) m[f.path().filename().string()] = read_file(f.path());
    return m;
  }
  // Adds lines to a plan's frontmatter, after its must_haves: key (uncommitted: the run
  // hands the worktree the plan as it read it).
  void add_to_must_haves(const std::string& file, const std::string& lines) {
    stdfs::path p = phase_dir() / file;
    std::string t = read_file(p);
    auto at = t.find("must_haves:\n");
    ASSERT_NE(at, std::string::npos);
    t.insert(at + std::string("must_haves:\n").size(), lines);
    write_file(p, t);
  }

  // The files YOLO_EXEC_LITTER_FOR=01-01 leaves that the gate lists as uncommitted (the
  // ignored scratch.log is not among them).
  // Runs the phase with agents/NAME (SCRIPT, then the fixture's executor) as its executor and
  // the shell line CHECK as 01-01's check: 01-01's record, complete with its check passed.
  json run_checked_01_01(const std::string& name, const std::string& script, const std::string& check) {
    write_file(repo() / "agents" / name, "#!/bin/sh\n" + script + "exec \"$(dirname \"$0\")/executor-worktree\" \"$@\"\n");
    stdfs::permissions(repo() / "agents" / name, stdfs::perms::owner_all);
    set_config({{"executor", {{"command", {"agents/" + name, "{plan_path}", "{summary_path}"}}}}});
    add_to_must_haves("01-01-PLAN.md", "  checks:\n    - {argv: [\"sh\", \"-c\", \"" + check + "\"], name: check}\n");
    git({"add", "-A"});
    git({"commit", "-q", "-m", "executor " + name});
    auto r = execute();
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    json p = plan("01-01");
    EXPECT_EQ(p["status"], "complete") << p.dump();
    EXPECT_EQ(p["checks"].size(), 1u) << p.dump();
    if (p["checks"].size() == 1) {
      EXPECT_EQ(p["checks"][0]["passed"], true) << p.dump();
    }
    return p;
  }

  static void expect_litter_left(const json& p) {
    std::vector<std::string> left = p["scope"]["uncommitted"].get<std::vector<std::string>>();
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left,
              (std::vector<std::string>{".yolo-planning/ROADMAP.md", "litter/01-01.txt", "litter/staged-01-01.txt"}))
        << p.dump();
  }

  TempDir dir_, side_;
  std::string branch_;
};

TEST_F(WorktreeTest, TwoPlansOfAWaveRunAtOnceInTheirOwnWorktreesAndMergeInPlanOrder) {
  // Wave 2 holds 01-02 and 01-03: each writes its file, then waits until both have, then
  // records every plan-written file it can see.
  auto r = execute({"YOLO_TEST_BARRIER=" + barrier().string(), "YOLO_TEST_BARRIER_N=2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto seen = seen_by();
  ASSERT_EQ(seen.size(), 4u);
  // Both reached the barrier (they ran at the same time) ...
  EXPECT_TRUE(stdfs::exists(barrier() / "01-02"));
  EXPECT_TRUE(stdfs::exists(barrier() / "01-03"));
  // ... each in its own worktree (inside .git, on its own branch) ...
  EXPECT_NE(seen["01-02"].find("/.git/yolo-worktrees/slot-"), std::string::npos) << seen["01-02"];
  EXPECT_NE(seen["01-02"].find("cwd "), std::string::npos);
  EXPECT_NE(seen["01-02"].substr(0, seen["01-02"].find('\n')), seen["01-03"].substr(0, seen["01-03"].find('\n')));
  // ... seeing wave 1's merged work and its own edit, never the other's.
  EXPECT_NE(seen["01-02"].find("file greeting/text.txt 01-01"), std::string::npos) << seen["01-02"];
  EXPECT_NE(seen["01-02"].find("file greeting/en.txt 01-02"), std::string::npos) << seen["01-02"];
  EXPECT_EQ(seen["01-02"].find("fr.txt"), std::string::npos) << seen["01-02"];
  EXPECT_NE(seen["01-03"].find("file greeting/fr.txt 01-03"), std::string::npos) << seen["01-03"];
  EXPECT_EQ(seen["01-03"].find("en.txt"), std::string::npos) << seen["01-03"];
  // Wave 3 starts from both merges.
  EXPECT_NE(seen["01-04"].find("file greeting/en.txt 01-02"), std::string::npos) << seen["01-04"];
  EXPECT_NE(seen["01-04"].find("file greeting/fr.txt 01-03"), std::string::npos) << seen["01-04"];

  // Merged in plan order, each once; the run's branch holds every plan's work and SUMMARY.
  auto m = merges();
  ASSERT_EQ(m.size(), 4u) << git({"log", "--oneline", "--graph"});
  for (size_t k = 0; k < 4; ++k)
    EXPECT_NE(m[k].find("merge plan 01-0" + std::to_string(k + 1) + " "), std::string::npos) << m[k];
  for (const char* f : {"greeting/text.txt", "greeting/en.txt", "greeting/fr.txt", "greeting/index.txt"})
    EXPECT_TRUE(stdfs::exists(repo() / f)) << f;
  for (const char* s : {"01-01-SUMMARY.md", "01-02-SUMMARY.md", "01-03-SUMMARY.md", "01-04-SUMMARY.md"})
    EXPECT_TRUE(stdfs::exists(phase_dir() / s)) << s;
  EXPECT_EQ(trim(git({"status", "--porcelain", "--untracked-files=no", "greeting"})), "");
  // Cleaned up: no yolo/ branch; the worktrees are a pool of max_parallel slots inside .git,
  // detached, for the next plans.
  std::string wl = git({"worktree", "list"});
  EXPECT_EQ(std::count(wl.begin(), wl.end(), '\n'), 3) << wl;
  EXPECT_EQ(wl.find("[yolo/"), std::string::npos) << wl;
  EXPECT_NE(wl.find(".git/yolo-worktrees/slot-2"), std::string::npos) << wl;
  EXPECT_EQ(trim(git({"branch", "--list", "yolo/*"})), "");
  // The state records each plan's branch and merge; status shows them.
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "complete") << p.dump();
    EXPECT_EQ(p["worktree"]["merge"], "merged") << p.dump();
    EXPECT_EQ(p["worktree"]["branch"].get<std::string>().rfind("yolo/", 0), 0u) << p.dump();
    EXPECT_TRUE(p["scope"]["findings"].empty()) << p.dump();
  }
  auto st = run_yolo({"status"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(st.out.find("branch yolo/"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("merged as"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("scope: 1 file(s) changed, all planned"), std::string::npos) << st.out;
  auto sj = run_yolo({"status", "--json"}, repo()).json_out();
  EXPECT_EQ(sj["plans"][1]["worktree"]["merge"], "merged") << sj.dump();
}

TEST_F(WorktreeTest, APlanEditingAFileOutsideItsFilesFailsTheFenceAndIsNotMerged) {
  auto r = execute({"YOLO_EXEC_OUTSIDE_FOR=01-01"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["scope"]["outside"], json::array({"stray.txt"})) << p.dump();
  bool named = false;
  for (const auto& f : p["findings"])
    named = named || (f["check"] == "scope_fence" && f["severity"] == "high" &&
                      f["issue"].get<std::string>().find("stray.txt") != std::string::npos);
  EXPECT_TRUE(named) << p.dump();
  EXPECT_NE(r.out.find("stray.txt"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Next:"), std::string::npos) << r.err;
  // Nothing of it reached the run's branch; its branch is kept to look at.
  EXPECT_FALSE(stdfs::exists(repo() / "stray.txt"));
  EXPECT_FALSE(stdfs::exists(repo() / "greeting" / "text.txt"));
  EXPECT_TRUE(merges().empty());
  EXPECT_NE(git({"branch", "--list", "yolo/*"}).find("01-01"), std::string::npos);
  EXPECT_EQ(plan("01-02")["status"], "pending");
}

// With the fence off, two plans of wave 2 both create stray.txt: the first merges, the
// second conflicts. It fails with a finding naming the file, the merge is aborted (nothing
// half-merged), its branch is kept, the run halts with a next step.
TEST_F(WorktreeTest, AMergeConflictFailsThePlanNamesTheFilesAndMergesNothingOfIt) {
  set_config({{"scope_fence", "off"}});
  auto r = execute({"YOLO_EXEC_OUTSIDE_FOR=01-02,01-03"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-03");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["worktree"]["merge"], "conflict") << p.dump();
  ASSERT_FALSE(p["findings"].empty()) << p.dump();
  EXPECT_EQ(p["findings"][0]["check"], "merge");
  EXPECT_EQ(p["findings"][0]["files"], json::array({"stray.txt"})) << p.dump();
  EXPECT_NE(p["error"].get<std::string>().find("left its scope"), std::string::npos) << p.dump();
  EXPECT_EQ(merges_of("01-02"), 1u);
  EXPECT_EQ(merges_of("01-03"), 0u);
  EXPECT_EQ(read_file(repo() / "stray.txt"), "Written by plan 01-02: English greeting\n");
  EXPECT_FALSE(stdfs::exists(repo() / "greeting" / "fr.txt"));
  EXPECT_EQ(trim(git({"status", "--porcelain", "--untracked-files=no", "--", ".", ":!.yolo-planning"})), "");
  auto mh = run_program({"git", "rev-parse", "--verify", "--quiet", "MERGE_HEAD"}, repo());
  EXPECT_NE(mh.exit_code, 0);  // no merge left in progress
  EXPECT_NE(git({"branch", "--list", "yolo/*"}).find("01-03"), std::string::npos);
  EXPECT_NE(r.err.find("Next: keep plan 01-03 to its files"), std::string::npos) << r.err;
  EXPECT_EQ(plan("01-04")["status"], "pending");
}

TEST_F(WorktreeTest, APlannedFileLeftUntouchedIsAFinding) {
  // 01-04 plans greeting/index.txt and greeting/README.md; it skips the README.
  auto r = execute({"YOLO_EXEC_SKIP_FILE=01-04:greeting/README.md"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-04");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["scope"]["untouched"], json::array({"greeting/README.md"})) << p.dump();
  EXPECT_EQ(merges().size(), 3u);  // the three plans before it are merged
  // A lower severity makes it a warning: the plan passes, the finding stays on its record.
  set_config({{"scope_fence", {{"untouched", "medium"}}}});
  auto again = execute({"YOLO_EXEC_SKIP_FILE=01-04:greeting/README.md"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  p = plan("01-04");
  EXPECT_EQ(p["status"], "complete") << p.dump();
  ASSERT_EQ(p["scope"]["findings"].size(), 1u) << p.dump();
  EXPECT_EQ(p["scope"]["findings"][0]["severity"], "medium");
  EXPECT_NE(p["scope"]["findings"][0]["issue"].get<std::string>().find("greeting/README.md"), std::string::npos);
  EXPECT_EQ(merges_of("01-04"), 1u);
}

// A check program the checkout holds runs as the checkout has it: an executor that rewrites it
// in its slot (left uncommitted) to pass does not make its own check pass.
TEST_F(WorktreeTest, ACheckTheExecutorRewroteInItsSlotRunsAsTheCheckoutHasIt) {
  write_file(repo() / "checks/verify.sh", "#!/bin/sh\necho 'the real check fails'\nexit 1\n");
  stdfs::permissions(repo() / "checks/verify.sh", stdfs::perms::owner_all);
  write_file(repo() / "agents/editing-executor",
             "#!/bin/sh\nprintf '#!/bin/sh\\nexit 0\\n' > checks/verify.sh\n"
             "exec \"$(dirname \"$0\")/executor-worktree\" \"$@\"\n");
  stdfs::permissions(repo() / "agents/editing-executor", stdfs::perms::owner_all);
  add_to_must_haves("01-01-PLAN.md", "  checks:\n    - {argv: [\"checks/verify.sh\"], name: real}\n");
  set_config({{"executor", {{"command", {"agents/editing-executor", "{plan_path}", "{summary_path}"}}}}});
  git({"add", "-A"});
  git({"commit", "-q", "-m", "a check"});
  auto r = execute();
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  ASSERT_EQ(p["checks"].size(), 1u) << p.dump();
  EXPECT_EQ(p["checks"][0]["passed"], false) << p.dump();
  EXPECT_EQ(merges_of("01-01"), 0u);
}

TEST_F(WorktreeTest, ChecksRunInTheWorktreeAFailingOneFailsThePlanAPassingOneIsRecorded) {
  add_to_must_haves("01-01-PLAN.md",
                    "  checks:\n    - [\"grep\", \"-q\", \"plan 01-01\", \"greeting/text.txt\"]\n"
                    "    - {argv: [\"sh\", \"-c\", \"pwd > \\\"$0\\\"\", \"" +
                        (seen() / "check-cwd").string() + "\"], timeout_ms: 5000, name: where}\n");
  add_to_must_haves("01-02-PLAN.md",
                    "  checks:\n    - {argv: [\"grep\", \"-q\", \"Bonjour\", \"greeting/en.txt\"], name: bonjour}\n");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json ok = plan("01-01");
  EXPECT_EQ(ok["status"], "complete") << ok.dump();
  ASSERT_EQ(ok["checks"].size(), 2u) << ok.dump();
  EXPECT_EQ(ok["checks"][0]["passed"], true);
  EXPECT_EQ(ok["checks"][0]["exit"], 0);
  EXPECT_TRUE(ok["checks"][0]["duration_ms"].is_number_integer());
  EXPECT_EQ(ok["checks"][1]["name"], "where");
  // The check ran in the plan's worktree, not in the checkout.
  EXPECT_NE(read_file(seen() / "check-cwd").find("/yolo-worktrees/"), std::string::npos);
  json bad = plan("01-02");
  EXPECT_EQ(bad["status"], "failed") << bad.dump();
  ASSERT_EQ(bad["checks"].size(), 1u) << bad.dump();
  EXPECT_EQ(bad["checks"][0]["passed"], false);
  EXPECT_EQ(bad["checks"][0]["exit"], 1);
  EXPECT_NE(bad["error"].get<std::string>().find("bonjour"), std::string::npos) << bad.dump();
  bool finding = false;
  for (const auto& f : bad["findings"]) finding = finding || f["check"] == "checks";
  EXPECT_TRUE(finding) << bad.dump();
  EXPECT_NE(r.out.find("check bonjour failed"), std::string::npos) << r.out;
  EXPECT_EQ(merges_of("01-02"), 0u);  // a failed plan is never merged
  EXPECT_EQ(merges_of("01-03"), 1u);  // its wave's other plan is
}

// kill -9 of yolo while it merges wave 2: a `git` of the test's, first on PATH, kills it the
// moment one of yolo's git commands has moved the run's branch to wave 2's merges (01-02 then
// 01-03, one move), before yolo could record them. (A repository hook cannot: yolo's own git
// runs none.) The next execute finds both in HEAD (not merged again) and runs wave 3.
TEST_F(WorktreeTest, KillNineDuringTheMergeOfAWaveThenARerunMergesEveryPlanExactlyOnce) {
  std::string real_git = trim(run_program({"sh", "-c", "command -v git"}, repo()).out);
  ASSERT_FALSE(real_git.empty());
  stdfs::path bin = side_.path() / "bin", trigger = side_.path() / "kill-armed";
  write_file(trigger, "");
  write_file(bin / "git",
             "#!/usr/bin/env bash\n'" + real_git + "' \"$@\"\nrc=$?\n"
             "[ -e '" + trigger.string() + "' ] || exit $rc\n"
             "subject=$('" + real_git + "' -C '" + repo().string() + "' log -1 --format=%s refs/heads/" + branch_ +
                 " 2>/dev/null)\n"
                 "case \"$subject\" in *'merge plan 01-02 '*|*'merge plan 01-03 '*) ;; *) exit $rc ;; esac\n"
                 "rm -f '" + trigger.string() + "'\n"
                 "[ \"$(cat /proc/$PPID/comm)\" = yolo ] && kill -9 \"$PPID\"\n"
                 "exit $rc\n");
  stdfs::permissions(bin / "git", stdfs::perms::owner_all);
  const char* path = std::getenv("PATH");
  auto killed = execute({"YOLO_TEST_BARRIER=" + barrier().string(), "YOLO_TEST_BARRIER_N=2",
                         "PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin")});
  EXPECT_NE(killed.exit_code, 0) << killed.out << killed.err;
  EXPECT_FALSE(stdfs::exists(trigger)) << "the kill never fired: " << killed.out;
  EXPECT_EQ(merges_of("01-02"), 1u);
  EXPECT_EQ(merges_of("01-03"), 1u);
  EXPECT_EQ(plan("01-02")["worktree"]["merge"], "pending");  // yolo died before it could write more
  EXPECT_EQ(plan("01-03")["worktree"]["merge"], "pending");
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_EQ(merges_of(id), 1u) << id << "\n" << git({"log", "--oneline", "--graph"});
    EXPECT_EQ(plan(id)["worktree"]["merge"], "merged") << id;
    EXPECT_EQ(plan(id)["status"], "complete") << id;
  }
  auto m = merges();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_NE(m[1].find("01-02"), std::string::npos);
  EXPECT_NE(m[2].find("01-03"), std::string::npos);
  EXPECT_TRUE(stdfs::exists(repo() / "greeting" / "fr.txt"));
  EXPECT_EQ(trim(git({"branch", "--list", "yolo/*"})), "");
}

// A slot serves its next plan of the same run from what its last plan's gate found: plan
// 01-01 leaves an untracked, a staged, a modified tracked and an ignored file behind (a
// finding, not merged); 01-02 gets slot 1 by putting back only the paths that differ, and
// neither it nor any later plan sees any of that litter; none of it reaches the branch.
TEST_F(WorktreeTest, ASlotsNextPlanSeesNothingTheLastOneLeftUncommitted) {
  write_file(repo() / ".git" / "info" / "exclude", "*.log\n");
  std::string roadmap = read_file(repo() / ".yolo-planning" / "ROADMAP.md");
  auto r = execute({"YOLO_EXEC_LITTER_FOR=01-01"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto seen = seen_by();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_NE(seen["01-01"].find("litter/01-01.txt"), std::string::npos) << seen["01-01"];  // it was there
  for (const char* id : {"01-02", "01-03", "01-04"})
    EXPECT_EQ(seen[id].find("litter"), std::string::npos) << id << "\n" << seen[id];
  // 01-02 took slot 1 the cheap way (the proof that this path, not a full reset, is what
  // cleaned it); 01-01 and 01-03 were each a slot's first plan of the run.
  EXPECT_NE(seen["01-02"].find("/slot-1"), std::string::npos) << seen["01-02"];
  EXPECT_NE(r.out.find("path(s) put back"), std::string::npos) << r.out;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "complete") << p.dump();
  expect_litter_left(p);
  // Nothing of it merged: not in the run's branch, not in the checkout.
  std::string tree = git({"ls-tree", "-r", "--name-only", "HEAD"});
  EXPECT_EQ(tree.find("litter"), std::string::npos) << tree;
  EXPECT_EQ(tree.find("scratch.log"), std::string::npos) << tree;
  EXPECT_EQ(read_file(repo() / ".yolo-planning" / "ROADMAP.md"), roadmap);
  EXPECT_FALSE(stdfs::exists(repo() / "litter"));
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
}

// A check reads the slot besides its program (a Makefile, a conftest.py, a data file). What the
// executor left there uncommitted is not merged, so the checks must not see it: while they
// run, the slot is its commit (a tracked change undone, one hidden by an index mark too,
// untracked files gone, an untracked .gitignore too, which would hide what it names), ignored
// files stay; after them, all is put
// back, and the gate lists it as before.
TEST_F(WorktreeTest, ChecksSeeTheSlotAsItsCommitNotWhatTheExecutorLeftUncommitted) {
  write_file(repo() / ".git" / "info" / "exclude", "*.log\n");
  write_file(repo() / "agents/hiding-executor",
             "#!/bin/sh\nmkdir -p hidden && printf '*\\n' > hidden/.gitignore && echo x > hidden/x.txt\n"
             "echo '# changed' >> checks.txt && git update-index --skip-worktree checks.txt\n"
             "exec \"$(dirname \"$0\")/executor-worktree\" \"$@\"\n");
  stdfs::permissions(repo() / "agents/hiding-executor", stdfs::perms::owner_all);
  write_file(repo() / "checks.txt", "as committed\n");
  set_config({{"executor", {{"command", {"agents/hiding-executor", "{plan_path}", "{summary_path}"}}}}});
  add_to_must_haves("01-01-PLAN.md",
                    "  checks:\n    - {argv: [\"sh\", \"-c\", \"! grep -q changed checks.txt && "
                    "! grep -q litter .yolo-planning/ROADMAP.md && "
                    "! test -e litter/01-01.txt && ! test -e litter/staged-01-01.txt && ! test -e hidden && "
                    "test -e scratch.log && test -e greeting/text.txt\"], name: clean}\n");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "a hiding executor"});
  auto r = execute({"YOLO_EXEC_LITTER_FOR=01-01"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "complete") << p.dump();
  ASSERT_EQ(p["checks"].size(), 1u) << p.dump();
  EXPECT_EQ(p["checks"][0]["passed"], true) << p.dump();
  // Put back before the gate, which lists it (the staged file staged again, so it counts).
  expect_litter_left(p);
  std::string tree = git({"ls-tree", "-r", "--name-only", "HEAD"});
  EXPECT_EQ(tree.find("litter"), std::string::npos) << tree;
  EXPECT_EQ(tree.find("hidden"), std::string::npos) << tree;
  EXPECT_EQ(merges_of("01-01"), 1u);
}

// Putting aside what an executor left runs git over the whole slot (status hashes every
// file). git behind a wrapper on PATH makes that status take 1.5 s and logs when it starts and
// ends: on the event loop, the two plans of wave 2 (ending together at a barrier) would be put
// aside one after the other; off it, together.
TEST_F(WorktreeTest, WhatAnExecutorLeftIsPutAsideOffTheEventLoopSeveralSlotsAtOnce) {
  stdfs::path log = side_.path() / "asides";
  const std::string path = slow_git_path(side_.path() / "gitbin", log,
                                         "*' status --porcelain=v1 -z --untracked-files=all --no-renames '*");
  ASSERT_FALSE(path.empty());
  for (const char* f : {"01-02-PLAN.md", "01-03-PLAN.md"})
    add_to_must_haves(f, "  checks:\n    - {argv: [\"sh\", \"-c\", \"! test -e scratch.log\"], name: clean}\n");
  write_file(repo() / ".git" / "info" / "exclude", "");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "checks for wave 2"});
  auto r = execute({"PATH=" + path, "YOLO_TEST_BARRIER=" + barrier().string(),
                    "YOLO_TEST_BARRIER_N=2", "YOLO_EXEC_LITTER_FOR=01-02,01-03"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* id : {"01-02", "01-03"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "complete") << p.dump();
    ASSERT_EQ(p["checks"].size(), 1u) << p.dump();
    EXPECT_EQ(p["checks"][0]["passed"], true) << p.dump();  // scratch.log was aside while it ran
    // Put back before the gate, which lists it.
    std::string left = p["scope"]["uncommitted"].dump();
    for (std::string f : {"litter/" + std::string(id) + ".txt", std::string("scratch.log")})
      EXPECT_NE(left.find("\"" + f + "\""), std::string::npos) << f << " " << p.dump();
  }
  Overlap o = overlap_of(read_file(log));
  EXPECT_EQ(o.starts, 2) << read_file(log);
  EXPECT_EQ(o.most, 2) << read_file(log);
}

// Ctrl-C while an executor's leftovers are aside (git status held 1.5 s on a worker thread):
// the put-aside ends, no check runs, what was aside is back in the slot, and the plan is
// pending again, not merged.
TEST_F(WorktreeTest, AnInterruptWhileTheLeftoversAreAsidePutsThemBackAndTheCheckNeverRuns) {
  using namespace std::chrono_literals;
  stdfs::path log = side_.path() / "asides";
  const std::string path = slow_git_path(side_.path() / "gitbin", log,
                                         "*' status --porcelain=v1 -z --untracked-files=all --no-renames '*");
  ASSERT_FALSE(path.empty());
  stdfs::path ran = side_.path() / "check-ran";
  add_to_must_haves("01-01-PLAN.md", "  checks:\n    - {argv: [\"sh\", \"-c\", \"touch " + ran.string() + "\"], name: touch}\n");
  write_file(repo() / ".git" / "info" / "exclude", "");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "a check"});
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", path.c_str(), 1);
  ::setenv("YOLO_EXEC_LITTER_FOR", "01-01", 1);
  BgProcess p({yolo_bin(), "execute", "--json"}, repo());
  ::setenv("PATH", old_path.c_str(), 1);
  ::unsetenv("YOLO_EXEC_LITTER_FOR");
  bool aside = false;
  for (int k = 0; k < 400 && !aside; ++k) {
    aside = stdfs::exists(log) && read_file(log).find("start ") != std::string::npos;
    if (!aside) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(aside) << p.stderr_text();
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(20s), 1) << p.stderr_text();
  EXPECT_FALSE(stdfs::exists(ran));
  json pl = plan("01-01");
  EXPECT_EQ(pl["status"], "pending") << pl.dump();
  stdfs::path slot = repo() / ".git" / "yolo-worktrees" / "slot-1";
  EXPECT_TRUE(stdfs::exists(slot / "litter" / "01-01.txt"));
  EXPECT_TRUE(stdfs::exists(slot / "scratch.log"));
  EXPECT_EQ(merges_of("01-01"), 0u);
}

// A plan's gates in its worktree scan it (`git status` over the whole slot), diff its branch
// and commit its SUMMARY: git children, tens of milliseconds a plan. git behind a wrapper on
// PATH makes the gate's status take 1.5 s and logs when it starts and ends: on the event
// loop, the gates of wave 2's two plans (ending together at a barrier) would run one after
// the other; off it, together. Every plan still passes and is merged once.
TEST_F(WorktreeTest, TheGatesOfAWaveRunOffTheEventLoopSeveralAtOnce) {
  stdfs::path log = side_.path() / "gates";
  const std::string path = slow_git_path(side_.path() / "gitbin", log, "*' status --porcelain=v2 '*");
  ASSERT_FALSE(path.empty());
  auto r = execute({"PATH=" + path, "YOLO_TEST_BARRIER=" + barrier().string(), "YOLO_TEST_BARRIER_N=2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "complete") << p.dump();
    EXPECT_EQ(p["worktree"]["merge"], "merged") << p.dump();
    EXPECT_EQ(merges_of(id), 1u) << id;
  }
  Overlap o = overlap_of(read_file(log));
  EXPECT_EQ(o.starts, 4) << read_file(log);
  EXPECT_EQ(o.most, 2) << read_file(log);
}

// Ctrl-C while a plan's gates run on their worker thread (its git status held 1.5 s): the run
// waits for them and records their answer (the plan passed: its SUMMARY committed, its merge
// pending, nothing merged blindly); the next run merges it once and runs the rest.
TEST_F(WorktreeTest, AnInterruptWhileAPlansGatesRunKeepsTheirAnswerAndTheNextRunMergesIt) {
  using namespace std::chrono_literals;
  stdfs::path log = side_.path() / "gates";
  const std::string path = slow_git_path(side_.path() / "gitbin", log, "*' status --porcelain=v2 '*");
  ASSERT_FALSE(path.empty());
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", path.c_str(), 1);
  BgProcess p({yolo_bin(), "execute", "--json"}, repo());
  ::setenv("PATH", old_path.c_str(), 1);
  bool gating = false;
  for (int k = 0; k < 400 && !gating; ++k) {
    gating = stdfs::exists(log) && read_file(log).find("start ") != std::string::npos;
    if (!gating) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(gating) << p.stderr_text();
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(20s), 1) << p.stderr_text();
  // The gate had started before the signal and ended after it.
  EXPECT_NE(read_file(log).find("end "), std::string::npos) << read_file(log);
  json pl = plan("01-01");
  EXPECT_EQ(pl["status"], "complete") << pl.dump();
  EXPECT_EQ(pl["worktree"]["merge"], "pending") << pl.dump();
  const std::string head = pl["worktree"].value("head", "");
  ASSERT_EQ(head.size(), 40u) << pl.dump();
  EXPECT_EQ(merges_of("01-01"), 0u);
  // Its gated commit holds the SUMMARY; the next run merges exactly that commit.
  std::string files = git({"show", "--name-only", "--format=", head});
  EXPECT_NE(files.find("01-01-SUMMARY.md"), std::string::npos) << files;
  for (const char* id : {"01-02", "01-03", "01-04"}) EXPECT_EQ(plan(id)["status"], "pending") << id;
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_EQ(plan(id)["status"], "complete") << id;
    EXPECT_EQ(merges_of(id), 1u) << id;
  }
  EXPECT_EQ(git({"merge-base", "--is-ancestor", head, "HEAD"}), "");
}

// Someone checks out a plan's branch by hand in a worktree of their own while its wave runs.
// `git branch -D` refuses a branch checked out anywhere; the deletion after the merge
// (update-ref) must refuse it as well (it deleted it under that worktree, which was left on
// no commit), and the run's end says which branch it left and where.
TEST_F(WorktreeTest, AMergedBranchSomeoneCheckedOutByHandIsKeptAndTheRunSaysSo) {
  using namespace std::chrono_literals;
  stdfs::path go = side_.path() / "go", waiting = side_.path() / "waiting", hand = side_.path() / "hand";
  write_file(repo() / "agents" / "held",
             "#!/bin/sh\nif [ \"$YOLO_PLAN_ID\" = 01-02 ]; then\n  touch '" + waiting.string() +
                 "'\n  for _ in $(seq 600); do [ -e '" + go.string() +
                 "' ] && break; sleep 0.05; done\nfi\nexec \"$(dirname \"$0\")/executor-worktree\" \"$@\"\n");
  stdfs::permissions(repo() / "agents" / "held", stdfs::perms::owner_all);
  set_config({{"executor", {{"command", {"agents/held", "{plan_path}", "{summary_path}"}}}}});
  git({"add", "-A"});
  git({"commit", "-q", "-m", "a held executor"});
  BgProcess p({yolo_bin(), "execute", "--json"}, repo());
  for (int k = 0; k < 400 && !stdfs::exists(waiting); ++k) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(stdfs::exists(waiting)) << p.stderr_text();
  std::string branch;
  std::istringstream refs(git({"for-each-ref", "--format=%(refname:short)", "refs/heads/yolo/"}));
  for (std::string l; std::getline(refs, l);)
    if (l.size() > 11 && l.compare(l.size() - 11, 11, "/01-02/work") == 0) branch = l;
  ASSERT_FALSE(branch.empty()) << git({"for-each-ref", "refs/heads/"});
  git({"worktree", "add", "--force", "--quiet", hand.string(), branch});
  write_file(go, "");
  EXPECT_EQ(p.wait_exit(60s), 0) << p.stderr_text();
  auto events = p.collect(2s);
  EXPECT_EQ(merges_of("01-02"), 1u) << git({"log", "--oneline", "--graph"});
  // The hand-made worktree is still on its branch, which still names the plan's commit.
  auto head = run_program({"git", "-C", hand.string(), "rev-parse", "--verify", "--quiet", "HEAD"}, repo());
  EXPECT_EQ(head.exit_code, 0) << "its branch was deleted under it: " << head.err;
  EXPECT_EQ(trim(run_program({"git", "-C", hand.string(), "symbolic-ref", "HEAD"}, repo()).out),
            "refs/heads/" + branch);
  // Every other merged branch is gone; that one is named at the run's end, with where it is.
  EXPECT_EQ(trim(git({"for-each-ref", "--format=%(refname:short)", "refs/heads/yolo/"})), branch);
  bool named = false;
  for (const auto& e : p.seen)
    if (e.value("event", "") == "worktree_tidy" && e.dump().find(branch) != std::string::npos &&
        e.dump().find(hand.filename().string()) != std::string::npos)
      named = true;
  EXPECT_TRUE(named) << "no worktree_tidy event names " << branch << " and its worktree";
}

// A repository the executor made inside its slot (nested/.git) is listed by git as one
// untracked folder: `git clean` would leave it and `git add` would record a link. It waits
// aside while the checks run, and is back, whole, after them.
TEST_F(WorktreeTest, ARepositoryTheExecutorMadeInItsSlotIsAsideWhileTheChecksRun) {
  json p = run_checked_01_01("nesting-executor",
                             "mkdir -p nested && (cd nested && env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
                             "-u GIT_DIR -u GIT_INDEX_FILE git init -q) && echo inside > nested/file.txt\n"
                             "test -d nested/.git/objects || exit 9\n",
                             "! test -e nested");
  EXPECT_NE(p["scope"]["uncommitted"].dump().find("nested"), std::string::npos) << p.dump();
  std::string tree = git({"ls-tree", "-r", "--name-only", "HEAD"});
  EXPECT_EQ(tree.find("nested"), std::string::npos) << tree;
}

// An executor leaves behind a process that clears its environment (so no mark says whose it
// is) and keeps writing a file its plan's check reads. It is in the executor's mount namespace
// (a confined child cannot leave it), so it ends when the executor does, before the check:
// the check judges the commit ("bad"), and what the process wrote before is listed as
// uncommitted, not merged.
TEST_F(WorktreeTest, AProcessAnExecutorLeftBehindEndsWithItBeforeItsChecks) {
  write_file(repo() / "verdict.txt", "bad\n");
  json p = run_checked_01_01("lingering-executor",
                             "if [ \"$YOLO_PLAN_ID\" = 01-01 ]; then\n"
                             "  env -i /usr/bin/setsid /bin/sh -c 'i=0; while [ $i -lt 400 ]; do echo good > verdict.txt; "
                             "i=$((i+1)); sleep 0.05; done' </dev/null >/dev/null 2>&1 &\n"
                             "  sleep 0.2\n"
                             "fi\n",
                             "sleep 0.5; grep -qx bad verdict.txt");
  EXPECT_NE(p["scope"]["uncommitted"].dump().find("verdict.txt"), std::string::npos) << p.dump();
  EXPECT_EQ(read_file(repo() / "verdict.txt"), "bad\n");
}

// yolo killed (kill -9) while 01-01's executor has left its worktree dirty: the next execute
// knows nothing of that slot, so it gives it a full reset; the plan runs again from a clean
// checkout and nothing of the litter is merged.
TEST_F(WorktreeTest, ASlotLeftDirtyByAKilledRunIsResetNeverMerged) {
  write_file(repo() / ".git" / "info" / "exclude", "*.log\n");
  std::string roadmap = read_file(repo() / ".yolo-planning" / "ROADMAP.md");
  auto killed = execute({"YOLO_EXEC_LITTER_FOR=01-01", "YOLO_EXEC_KILL_YOLO_FOR=01-01"});
  EXPECT_NE(killed.exit_code, 0) << killed.out << killed.err;
  stdfs::path slot = repo() / ".git" / "yolo-worktrees" / "slot-1";
  ASSERT_TRUE(stdfs::exists(slot / "litter" / "01-01.txt")) << killed.out << killed.err;  // left dirty
  ASSERT_TRUE(stdfs::exists(slot / "scratch.log"));
  stdfs::remove_all(seen());
  stdfs::create_directories(seen());
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(full reset)"), std::string::npos) << r.out;
  auto seen = seen_by();
  ASSERT_EQ(seen.size(), 4u);
  for (const auto& [id, s] : seen) EXPECT_EQ(s.find("litter"), std::string::npos) << id << "\n" << s;
  EXPECT_FALSE(stdfs::exists(slot / "scratch.log"));
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "complete") << p.dump();
  EXPECT_FALSE(p["scope"].contains("uncommitted")) << p.dump();
  std::string tree = git({"ls-tree", "-r", "--name-only", "HEAD"});
  EXPECT_EQ(tree.find("litter"), std::string::npos) << tree;
  EXPECT_EQ(read_file(repo() / ".yolo-planning" / "ROADMAP.md"), roadmap);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(merges_of(id), 1u) << id;
}

// The committed plan file is a symlink leading out of the project; the checkout holds the
// real plan (not committed). yolo hands the worktree the plan it read, as a regular file,
// and never writes through the symlink.
TEST_F(WorktreeTest, ThePlanCopiedIntoTheWorktreeNeverFollowsASymlink) {
  stdfs::path outside = side_.path() / "outside.txt";
  write_file(outside, "untouched\n");
  stdfs::path plan_file = phase_dir() / "01-01-PLAN.md";
  std::string text = read_file(plan_file);
  stdfs::remove(plan_file);
  stdfs::create_symlink(outside, plan_file);
  git({"add", "-A"});
  git({"commit", "-q", "-m", "a symlink where the plan was"});
  stdfs::remove(plan_file);
  write_file(plan_file, text);
  auto r = execute();
  EXPECT_EQ(read_file(outside), "untouched\n") << r.out << r.err;
  EXPECT_EQ(plan("01-01")["status"], "complete") << plan("01-01").dump() << r.out << r.err;
}

TEST_F(WorktreeTest, WorktreeIsolationOutsideAGitRepositoryIsAClearError) {
  stdfs::remove_all(repo() / ".git");
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("isolation \"worktree\" needs a git repository"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Next:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace yolo::test
