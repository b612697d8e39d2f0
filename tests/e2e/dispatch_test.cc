// `dispatch` (issue 18, the yolo side), end to end: plans submitted as jobs to a stand-in
// engine (fixtures/agents/dispatch-local: background jobs in their own session that clone a
// local bare remote, run executor-worktree on the plan's branch and push it), fetched,
// gated and merged in plan order by the real binary. The Slurm adapter is tested elsewhere.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "bg_process.h"
#include "test_support.h"

namespace yolo::test {
namespace {

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    for (const char* a : {"executor-worktree", "dispatch-local"})
      stdfs::copy_file(source_dir() / "fixtures" / "agents" / a, repo() / "agents" / a);
    stdfs::create_directories(jobs());
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture"});
    branch_ = trim(git({"symbolic-ref", "--short", "HEAD"}));
    auto bare = run_program({"git", "init", "-q", "--bare", remote().string()}, side_.path());
    ASSERT_EQ(bare.exit_code, 0) << bare.err;
    git({"remote", "add", "origin", "../remote.git"});  // relative, as people write it
    git({"push", "-q", "origin", branch_});
    json local = {"agents/dispatch-local"};
    json submit = local, wait = local, cancel = local;
    for (const char* a : {"submit", "{plan_id}", "{correlation_id}", "{attempt}", "{branch}", "{remote}", "{plan_path}",
                          "{summary_path}"})
      submit.push_back(a);
    wait.push_back("wait");
    wait.push_back("{handle}");
    cancel.push_back("cancel");
    cancel.push_back("{handle}");
    json c = json::parse(read_file(repo() / ".yolo-planning" / "config.json"));
    c.merge_patch({{"review_gate", "never"},
                   {"approvers", {{"vision", "skip"}}},
                   {"architect", nullptr},
                   {"executor", nullptr},
                   {"max_parallel", 2},
                   {"dispatch", {{"submit", submit}, {"wait", wait}, {"cancel", cancel}, {"remote", "origin"}}}});
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }

  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path remote() const { return dir_.path() / "remote.git"; }  // ../remote.git from the repo
  stdfs::path jobs() const { return side_.path() / "jobs"; }
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
    env.push_back("YOLO_DISPATCH_DIR=" + jobs().string());
    return run_yolo({"execute"}, repo(), env);
  }
  json plan(const std::string& id) {
    json s = json::parse(read_file(repo() / ".yolo-planning" / ".execution-state.json"));
    for (const auto& p : s["plans"])
      if (p["id"] == id) return p;
    return json();
  }
  std::vector<std::string> lines_of(const stdfs::path& p) {
    std::vector<std::string> v;
    if (!stdfs::exists(p)) return v;
    std::istringstream in(read_file(p));
    std::string l;
    while (std::getline(in, l))
      if (!l.empty()) v.push_back(l);
    return v;
  }
  size_t submissions_of(const std::string& id) {
    auto v = lines_of(jobs() / "submissions.log");
    return static_cast<size_t>(std::count_if(
        v.begin(), v.end(), [&](const std::string& s) { return s.find("-" + id + "-") != std::string::npos; }));
  }
  std::vector<std::string> merges() {
    std::istringstream in(git({"log", "--merges", "--first-parent", "--reverse", "--format=%s", branch_}));
    std::vector<std::string> v;
    std::string l;
    while (std::getline(in, l))
      if (!l.empty()) v.push_back(l);
    return v;
  }

  TempDir dir_, side_;
  std::string branch_;
};

TEST_F(DispatchTest, AWaveOfPlansRunsAsJobsFetchedGatedAndMergedInPlanOrder) {
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(lines_of(jobs() / "submissions.log").size(), 4u);
  auto m = merges();
  ASSERT_EQ(m.size(), 4u) << git({"log", "--oneline", "--graph"});
  for (size_t k = 0; k < 4; ++k)
    EXPECT_NE(m[k].find("merge plan 01-0" + std::to_string(k + 1) + " "), std::string::npos);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "complete") << p.dump();
    EXPECT_EQ(p["dispatch"]["state"], "done") << p.dump();
    EXPECT_EQ(p["dispatch"]["attempt"], 1) << p.dump();
    EXPECT_EQ(p["worktree"]["merge"], "merged") << p.dump();
    EXPECT_TRUE(p["scope"]["findings"].empty()) << p.dump();
  }
  EXPECT_TRUE(stdfs::exists(repo() / "greeting" / "index.txt"));
  EXPECT_NE(r.out.find("submitted as job"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fetched at"), std::string::npos) << r.out;
}

TEST_F(DispatchTest, AKilledYoloReattachesToItsJobsInsteadOfSubmittingAgain) {
  using namespace std::chrono_literals;
  ::setenv("YOLO_DISPATCH_DIR", jobs().c_str(), 1);
  ::setenv("YOLO_DISPATCH_SLEEP", "2", 1);
  auto p = std::make_unique<BgProcess>(std::vector<std::string>{yolo_bin(), "execute", "--json"}, repo());
  ::unsetenv("YOLO_DISPATCH_SLEEP");
  auto ev = p->wait_for([](const json& j) { return j.value("event", "") == "plan_dispatched"; }, 20s);
  ASSERT_TRUE(ev.has_value()) << p->stderr_text();
  p->signal(SIGKILL);
  p->wait_exit(5s);
  p.reset();
  EXPECT_EQ(plan("01-01")["dispatch"]["state"], "submitted") << plan("01-01").dump();
  auto r = execute();
  ::unsetenv("YOLO_DISPATCH_DIR");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("re-attached to job"), std::string::npos) << r.out;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_EQ(submissions_of(id), 1u) << id << "\n" << read_file(jobs() / "submissions.log");
    EXPECT_EQ(plan(id)["worktree"]["merge"], "merged") << id;
  }
  EXPECT_EQ(merges().size(), 4u);
}

TEST_F(DispatchTest, AJobThatPushesNothingOrFailsFailsItsPlanWithAClearFinding) {
  auto r = execute({"YOLO_DISPATCH_NOPUSH=01-01"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_NE(p["error"].get<std::string>().find("pushed nothing"), std::string::npos) << p.dump();
  EXPECT_TRUE(merges().empty());
  // The next execute submits attempt 2 (a new job name); that job fails.
  auto again = execute({"YOLO_DISPATCH_FAIL=01-01"});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  p = plan("01-01");
  EXPECT_EQ(p["dispatch"]["attempt"], 2) << p.dump();
  EXPECT_EQ(p["dispatch"]["state"], "failed") << p.dump();
  EXPECT_NE(p["error"].get<std::string>().find("failed (wait exited with status 1)"), std::string::npos) << p.dump();
  EXPECT_EQ(submissions_of("01-01"), 2u);
}

}  // namespace
}  // namespace yolo::test
