// Dispatch, end to end: the real binary on a copy of fixtures/demo whose four plans
// are one wave, a bare repository as the remote, each plan a job of a real adapter
// (contrib/dispatch/local always; contrib/dispatch/slurm when scripts/slurm-up has a cluster),
// its branch pushed by the job, fetched, gated and merged by yolo. What the adapter was asked
// is recorded by a wrapper around it (one line per call), not inferred from yolo's output.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "bg_process.h"
#include "slurm_cluster.h"
#include "overlap_log.h"
#include "test_support.h"

namespace yolo::test {
namespace {

using namespace std::chrono_literals;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) v.push_back(l);
  return v;
}
void make_executable(const stdfs::path& p) {
  stdfs::permissions(p, stdfs::perms::owner_all | stdfs::perms::group_read | stdfs::perms::group_exec |
                            stdfs::perms::others_read | stdfs::perms::others_exec);
}

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture("demo", repo());
    stdfs::create_directories(repo() / "agents");
    stdfs::copy_file(source_dir() / "fixtures" / "agents" / "executor-worktree",
                     repo() / "agents" / "executor-worktree");
    // The project's executor (committed: the job runs the clone's): fails for the plans in
    // DISPATCH_FAIL_FOR, commits nothing for those in DISPATCH_NOTHING_FOR.
    write_file(repo() / "agents" / "exec-switch",
               "#!/bin/sh\n"
               "case \",${DISPATCH_FAIL_FOR:-},\" in *\",$YOLO_PLAN_ID,\"*) echo 'failing on purpose' >&2; exit 3 ;; "
               "esac\n"
               "case \",${DISPATCH_NOTHING_FOR:-},\" in *\",$YOLO_PLAN_ID,\"*) exit 0 ;; esac\n"
               "case \",${DISPATCH_SLOW_FOR:-},\" in *\",$YOLO_PLAN_ID,\"*) sleep 3 ;; esac\n"
               "exec agents/executor-worktree \"$@\"\n");
    make_executable(repo() / "agents" / "exec-switch");
    // One wave of four: every plan in wave 1, no dependencies (their files do not overlap).
    for (const auto& f : stdfs::directory_iterator(phase_dir())) {
      std::string t = read_file(f.path());
      t = std::regex_replace(t, std::regex("\nwave: [0-9]+\n"), "\nwave: 1\n");
      t = std::regex_replace(t, std::regex("\ndepends_on: \\[[^\\]]*\\]\n"), "\ndepends_on: []\n");
      write_file(f.path(), t);
    }
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "demo fixture, one wave"});
    branch_ = trim(git({"symbolic-ref", "--short", "HEAD"}));
    ASSERT_EQ(run_program({"git", "init", "-q", "--bare", bare().string()}, side_.path()).exit_code, 0);
    git({"remote", "add", "origin", bare().string()});
    stdfs::create_directories(jobs());
    use_adapter((source_dir() / "contrib" / "dispatch" / "local").string());
  }

  // The adapter behind a wrapper that logs each call ("submit --plan-id 01-01 ...").
  void use_adapter(const std::string& adapter, const std::vector<std::string>& submit_opts = {}) {
    stdfs::path w = side_.path() / "adapter";
    write_file(w, "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + calls().string() + "'\nexec '" + adapter + "' \"$@\"\n");
    make_executable(w);
    set_dispatch(w.string(), submit_opts);
  }
  void set_dispatch(const std::string& program, const std::vector<std::string>& submit_opts) {
    std::vector<std::string> submit = {
        program,     "submit",    "--plan-id",     "{plan_id}",     "--correlation-id", "{correlation_id}",
        "--attempt", "{attempt}", "--base-commit", "{base_commit}", "--branch",         "{branch}",
        "--remote",  "{remote}",  "--plan-path",   "{plan_path}",   "--summary-path",   "{summary_path}"};
    submit.insert(submit.end(), submit_opts.begin(), submit_opts.end());
    submit.push_back("--");
    set_config({{"review_gate", "never"},
                {"approvers", {{"vision", "skip"}}},
                {"architect", nullptr},
                {"max_parallel", 2},
                {"executor", {{"command", {"agents/exec-switch", "{plan_path}", "{summary_path}"}}}},
                {"dispatch",
                 {{"submit", {{"command", submit}, {"timeout_ms", 60000}}},
                  {"wait", {{"command", {program, "wait", "{handle}"}}, {"timeout_ms", 120000}}},
                  {"cancel", {program, "cancel", "{handle}"}},
                  {"remote", "origin"}}}});
  }

  stdfs::path repo() const { return dir_.path() / "repo"; }
  stdfs::path bare() const { return side_.path() / "remote.git"; }
  stdfs::path jobs() const { return side_.path() / "jobs"; }
  stdfs::path calls() const { return side_.path() / "calls"; }
  stdfs::path phase_dir() const { return repo() / ".yolo-planning" / "phases" / "01-demo"; }

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
  std::vector<std::string> env(std::vector<std::string> extra = {}) {
    std::vector<std::string> e = {"NO_COLOR=1", "YOLO_DISPATCH_LOCAL_DIR=" + jobs().string(),
                                  "XDG_RUNTIME_DIR=", "TMPDIR=" + side_.path().string()};
    e.insert(e.end(), extra.begin(), extra.end());
    return e;
  }
  RunResult execute(std::vector<std::string> extra = {}) { return run_yolo({"execute"}, repo(), env(extra)); }
  json state() { return json::parse(read_file(repo() / ".yolo-planning" / ".execution-state.json")); }
  json plan(const std::string& id) {
    json s = state();
    for (const auto& p : s["plans"])
      if (p["id"] == id) return p;
    return json();
  }
  std::vector<std::string> merges() {
    return lines_of(git({"log", "--merges", "--first-parent", "--reverse", "--format=%s", branch_}));
  }
  size_t merges_of(const std::string& id) {
    auto m = merges();
    return static_cast<size_t>(std::count_if(m.begin(), m.end(), [&](const std::string& s) {
      return s.find("merge plan " + id + " ") != std::string::npos;
    }));
  }
  // The adapter's calls of one kind ("submit", "wait", "cancel").
  std::vector<std::string> calls_of(const std::string& sub) {
    std::vector<std::string> v;
    if (!stdfs::exists(calls())) return v;
    for (const auto& l : lines_of(read_file(calls())))
      if (l.rfind(sub + " ", 0) == 0) v.push_back(l);
    return v;
  }
  size_t submits_for(const std::string& id) {
    auto s = calls_of("submit");
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [&](const std::string& l) {
      return l.find("--plan-id " + id + " ") != std::string::npos;
    }));
  }
  size_t job_folders() {
    size_t n = 0;
    for (const auto& f : stdfs::directory_iterator(jobs())) n += f.is_directory();
    return n;
  }
  void expect_wave_merged_in_plan_order() {
    auto m = merges();
    ASSERT_EQ(m.size(), 4u) << git({"log", "--oneline", "--graph"});
    for (size_t k = 0; k < 4; ++k)
      EXPECT_NE(m[k].find("merge plan 01-0" + std::to_string(k + 1) + " "), std::string::npos) << m[k];
    for (const char* f : {"greeting/text.txt", "greeting/en.txt", "greeting/fr.txt", "greeting/index.txt"})
      EXPECT_TRUE(stdfs::exists(repo() / f)) << f;
    for (const char* s : {"01-01-SUMMARY.md", "01-02-SUMMARY.md", "01-03-SUMMARY.md", "01-04-SUMMARY.md"})
      EXPECT_TRUE(stdfs::exists(phase_dir() / s)) << s;
    for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
      json p = plan(id);
      EXPECT_EQ(p["status"], "complete") << p.dump();
      EXPECT_EQ(p["worktree"]["merge"], "merged") << p.dump();
      EXPECT_EQ(p["dispatch"]["state"], "done") << p.dump();
      EXPECT_FALSE(p["dispatch"]["handle"].get<std::string>().empty()) << p.dump();
      EXPECT_TRUE(p["scope"]["findings"].empty()) << p.dump();
      EXPECT_EQ(merges_of(id), 1u) << id;
    }
  }

  // Starts yolo, kills it (-9) once the four jobs are submitted, runs it again: no plan is
  // submitted twice (the adapter's calls), each re-attached, all four merged once.
  void kill_mid_wave_and_rerun(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"env"};
    for (const auto& e : env(extra)) argv.push_back(e);
    argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
    {
      BgProcess yolo(argv, repo());
      int submitted = 0;
      auto got = yolo.wait_for(
          [&](const json& j) { return j.value("event", "") == "plan_submitted" && ++submitted == 4; }, 60s);
      ASSERT_TRUE(got) << yolo.stderr_text();
      yolo.signal(SIGKILL);
      yolo.wait_exit(10s);
    }
    // Killed after the four submits: their handles are in the state, nothing merged yet.
    for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
      json p = plan(id);
      EXPECT_EQ(p["dispatch"]["state"], "submitted") << p.dump();
      EXPECT_EQ(p["dispatch"]["attempt"], 1) << p.dump();
      EXPECT_EQ(p["dispatch"].value("base", "").size(), 40u) << p.dump();  // the job's base, for its gates
    }
    EXPECT_TRUE(merges().empty());
    auto r = execute(extra);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(calls_of("submit").size(), 4u) << read_file(calls());
    size_t reattached = 0;
    for (size_t at = 0; (at = r.out.find("re-attaching to its job", at)) != std::string::npos; ++at) ++reattached;
    EXPECT_EQ(reattached, 4u) << r.out;
    expect_wave_merged_in_plan_order();
  }
  // The test run's Slurm cluster (slurm_cluster.h), or why there is none.
  std::optional<std::string> slurm_missing() {
    if (shared_slurm().up) return std::nullopt;
    return shared_slurm().reason;
  }
  std::vector<std::string> slurm_env(std::vector<std::string> extra = {}, const SlurmCluster* c = nullptr) {
    std::vector<std::string> e = {"SLURM_CONF=" + (c ? *c : shared_slurm()).conf(),
                                  "YOLO_SLURM_LOG_DIR=" + side_.path().string(), "YOLO_SLURM_POLL=0.5"};
    e.insert(e.end(), extra.begin(), extra.end());
    return e;
  }

  // The wave-level form beside the per-plan one: submit_wave and wait_wave through the same
  // logging wrapper ("submit-wave --tasks ...", "wait-wave 12").
  void use_wave_adapter(const std::string& adapter, const std::vector<std::string>& submit_opts = {}) {
    use_adapter(adapter, submit_opts);
    std::string w = (side_.path() / "adapter").string();
    json c = config();
    c["dispatch"]["submit_wave"] = {{"command",
                                     {w, "submit-wave", "--tasks", "{tasks}", "--correlation-id", "{correlation_id}",
                                      "--wave", "{wave}", "--max-parallel", "{max_parallel}", "--wave-key", "{wave_key}"}},
                                    {"timeout_ms", 60000}};
    c["dispatch"]["wait_wave"] = {{"command", {w, "wait-wave", "{handle}"}}, {"timeout_ms", 120000}};
    write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  }
  // A wave through Slurm in the wave-level form, yolo killed (-9) once its array is
  // submitted: the array's id ("" when it was not submitted), every plan `submitted`.
  std::string kill_after_wave_submitted() {
    use_wave_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(), {"--export-env", "YOLO_EXEC_SLEEP"});
    std::vector<std::string> argv = {"env"};
    for (const auto& e : env(slurm_env({"YOLO_EXEC_SLEEP=4"}))) argv.push_back(e);
    argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
    std::string array;
    {
      BgProcess yolo(argv, repo());
      auto sub = yolo.wait_for([&](const json& j) { return j.value("event", "") == "wave_submitted"; }, 60s);
      EXPECT_TRUE(sub) << yolo.stderr_text();
      if (sub) array = (*sub)["handle"];
      yolo.signal(SIGKILL);
      yolo.wait_exit(10s);
    }
    for (const char* id : {"01-01", "01-02", "01-03", "01-04"})
      EXPECT_EQ(plan(id)["dispatch"]["state"], "submitted") << plan(id).dump();
    return array;
  }
  // scontrol, squeue and sacct behind wrappers on PATH that log each call ("scontrol show job
  // -o 12"): what the controller was asked, counted from outside the adapter.
  std::string counting_slurm_path() {
    stdfs::path bin = side_.path() / "bin";
    stdfs::create_directories(bin);
    for (const char* prog : {"scontrol", "squeue", "sacct"}) {
      std::string real = trim(run_program({"sh", "-c", std::string("command -v ") + prog}, side_.path()).out);
      write_file(bin / prog, "#!/bin/sh\nprintf '%s %s\\n' " + std::string(prog) + " \"$*\" >> '" +
                                 slurm_calls().string() + "'\nexec '" + real + "' \"$@\"\n");
      make_executable(bin / prog);
    }
    const char* path = std::getenv("PATH");
    return "PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin");
  }
  stdfs::path slurm_calls() const { return side_.path() / "slurm-calls"; }
  // A plan's frontmatter gets `resources` (committed: the job sees the base commit).
  void give_resources(const std::string& plan_file, const std::string& yaml) {
    stdfs::path f = phase_dir() / plan_file;
    std::string t = read_file(f);
    t = std::regex_replace(t, std::regex("\nwave: 1\n"), "\nwave: 1\nresources:\n" + yaml);
    write_file(f, t);
    git({"commit", "-q", "-am", "resources for " + plan_file});
  }

  TempDir dir_, side_;
  std::string branch_;
};

TEST_F(DispatchTest, AWaveOfFourIsSubmittedPushedFetchedGatedAndMergedInPlanOrder) {
  auto r = execute();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_wave_merged_in_plan_order();
  // Each plan submitted once, one job each, all four at once (dispatch runs more than
  // max_parallel: 2 jobs, which run elsewhere).
  EXPECT_EQ(calls_of("submit").size(), 4u);
  EXPECT_EQ(job_folders(), 4u);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(submits_for(id), 1u) << id;
  // The jobs pushed their branches to the remote, from the wave's base (pushed by yolo): yolo
  // fetched them, and deleted them from the remote once merged.
  std::string fetched = git({"for-each-ref", "--format=%(refname)", "refs/yolo-dispatch/"});
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"})
    EXPECT_NE(fetched.find(std::string("/") + id + "/work\n"), std::string::npos) << fetched;
  std::string heads = run_program({"git", "--git-dir", bare().string(), "branch", "--list"}, side_.path()).out;
  EXPECT_EQ(heads.find("/01-0"), std::string::npos) << heads;
  EXPECT_NE(heads.find("/base"), std::string::npos) << heads;
  EXPECT_NE(r.out.find("submitted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fetched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("merged from"), std::string::npos) << r.out;
  // yolo status shows each plan's job.
  auto st = run_yolo({"status"}, repo(), {"NO_COLOR=1"});
  std::string h2 = plan("01-02")["dispatch"]["handle"].get<std::string>();
  EXPECT_NE(st.out.find(h2 + " (attempt 1) · done"), std::string::npos) << st.out;
  // Each job once (it was listed twice, in two formats).
  size_t jobs_listed = 0;
  for (size_t at = 0; (at = st.out.find("job " + h2, at)) != std::string::npos; ++at) ++jobs_listed;
  EXPECT_EQ(jobs_listed, 1u) << st.out;
}

TEST_F(DispatchTest, ThePlansGatedWhileAJobStillRunsAreMergedAheadTheLastOneAtTheEnd) {
  // Plans 01-01..01-03 come back at once, 01-04's job takes 3 s more: their merge steps are
  // computed while it runs (the merge itself still waits for the whole wave, in plan order).
  auto r = run_yolo({"execute", "--json"}, repo(), env({"DISPATCH_SLOW_FOR=01-04"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_wave_merged_in_plan_order();
  std::map<std::string, json> merged;
  for (const auto& l : lines_of(r.out)) {
    json j = json::parse(l, nullptr, false);
    if (j.is_object() && j.value("event", "") == "plan_merged") merged[j.value("plan", "")] = j;
  }
  ASSERT_EQ(merged.size(), 4u) << r.out;
  for (const char* id : {"01-01", "01-02", "01-03"}) EXPECT_EQ(merged[id].value("computed_ahead", false), true) << merged[id];
  EXPECT_FALSE(merged["01-04"].contains("computed_ahead")) << merged["01-04"];
  // The merge commits are the chain the checkout has: each on the one before, in plan order.
  std::string log = git({"log", "--first-parent", "--format=%H %s", "-4", branch_});
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"})
    EXPECT_NE(log.find(merged[id].value("merge_commit", "?") + " yolo: merge plan " + id), std::string::npos) << log;
}

TEST_F(DispatchTest, TheFetchedBranchesAreCheckedOutByChildrenOffTheEventLoopSeveralAtOnce) {
  // git behind a wrapper on PATH: each checkout of a fetched branch into a worktree slot
  // (`worktree add` or `checkout --force ... -B yolo/...`) takes 1.5 s and logs when it starts
  // and ends. Checked out on the event loop, one at a time, they never overlap; as children
  // of the loop, the plans that came back together are checked out together.
  stdfs::path log = side_.path() / "checkouts";
  const std::string path = slow_git_path(side_.path() / "gitbin", log,
                                         "*' worktree add '*' -B yolo/'*|*' checkout --quiet --force --ignore-other-worktrees -B yolo/'*");
  ASSERT_FALSE(path.empty());
  auto r = execute({"PATH=" + path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_wave_merged_in_plan_order();
  Overlap o = overlap_of(read_file(log));
  EXPECT_EQ(o.starts, 4) << read_file(log);
  EXPECT_GE(o.most, 2) << read_file(log);
}

TEST_F(DispatchTest, TheMergedBranchesAreDeletedByOneChildOffTheEventLoop) {
  // git behind a wrapper on PATH: a deletion of local branches (`branch -D`, or the
  // `update-ref --stdin` of merged branches) takes 2 s and is logged. On the loop, the wave
  // would end 2 s after its last merge; as one child of the loop, the wave ends at once and
  // the run ends after the child, the four branches gone.
  stdfs::path bin = side_.path() / "gitbin";
  stdfs::create_directories(bin);
  std::string real_git = trim(run_program({"sh", "-c", "command -v git"}, side_.path()).out);
  ASSERT_FALSE(real_git.empty());
  stdfs::path log = side_.path() / "deletes";
  write_file(bin / "git",
             "#!/bin/sh\n"
             "slow=\n"
             "case \" $* \" in *' branch -D '*|*'yolo: merged --stdin'*) slow=1 ;; esac\n"
             "if [ -n \"$slow\" ]; then echo \"delete $*\" >> '" + log.string() + "'; sleep 2; fi\n"
             "exec '" + real_git + "' \"$@\"\n");
  make_executable(bin / "git");
  const char* path = std::getenv("PATH");
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env({"PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin")})) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  int merged = 0;
  ASSERT_TRUE(yolo.wait_for([&](const json& j) { return j.value("event", "") == "plan_merged" && ++merged == 4; }, 120s))
      << yolo.stderr_text();
  auto last_merge = std::chrono::steady_clock::now();
  ASSERT_TRUE(yolo.wait_for([&](const json& j) { return j.value("event", "") == "wave_end"; }, 60s))
      << yolo.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - last_merge, 1500ms) << "the wave waited for the deletion";
  EXPECT_EQ(yolo.wait_exit(60s), 0) << yolo.stderr_text();
  expect_wave_merged_in_plan_order();
  EXPECT_EQ(lines_of(read_file(log)).size(), 1u) << "one deletion for the wave: " << read_file(log);
  EXPECT_TRUE(trim(git({"for-each-ref", "refs/heads/yolo/"})).empty()) << git({"for-each-ref", "refs/heads/yolo/"});
}

TEST_F(DispatchTest, KillDashNineMidWaveThenAgainReattachesSubmitsNothingTwiceMergesEachOnce) {
  kill_mid_wave_and_rerun({"YOLO_EXEC_SLEEP=4"});
  // One job per plan, each ran its executor once (one exit status, 0).
  EXPECT_EQ(job_folders(), 4u);
  for (const auto& f : stdfs::directory_iterator(jobs())) EXPECT_EQ(trim(read_file(f.path() / "exit")), "0");
}

TEST_F(DispatchTest, AFailingJobAndAJobThatCommitsNothingFailTheirPlansWithAClearFinding) {
  auto r = execute({"DISPATCH_FAIL_FOR=01-02", "DISPATCH_NOTHING_FOR=01-03"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* id : {"01-02", "01-03"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "failed") << p.dump();
    ASSERT_EQ(p["findings"].size(), 1u) << p.dump();
    const json& f = p["findings"][0];
    EXPECT_EQ(f["check"], "dispatch") << p.dump();
    EXPECT_EQ(f["severity"], "high") << p.dump();
    std::string issue = f["issue"];
    EXPECT_NE(issue.find(p["dispatch"]["handle"].get<std::string>()), std::string::npos) << issue;
    EXPECT_NE(issue.find("yolo/"), std::string::npos) << issue;  // the branch
    EXPECT_NE(issue.find(std::string("/") + id), std::string::npos) << issue;
    EXPECT_NE(issue.find("failed"), std::string::npos) << issue;
    EXPECT_EQ(p["dispatch"]["state"], "failed") << p.dump();
    EXPECT_EQ(merges_of(id), 0u);
  }
  EXPECT_NE(plan("01-02")["findings"][0]["issue"].get<std::string>().find("exited 3"), std::string::npos)
      << plan("01-02").dump();
  EXPECT_NE(plan("01-03")["findings"][0]["issue"].get<std::string>().find("no commit"), std::string::npos)
      << plan("01-03").dump();
  EXPECT_FALSE(stdfs::exists(repo() / "greeting" / "en.txt"));
  EXPECT_FALSE(stdfs::exists(repo() / "greeting" / "fr.txt"));
  EXPECT_NE(r.out.find("Plan 01-02 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Next:"), std::string::npos) << r.err;
  // Run again with the executor fixed: a new attempt (a new job, a new branch) for the failed
  // plans only.
  auto again = execute();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(submits_for("01-02"), 2u);
  EXPECT_EQ(submits_for("01-01"), 1u);
  EXPECT_EQ(plan("01-02")["dispatch"]["attempt"], 2);
  EXPECT_EQ(plan("01-02")["worktree"]["merge"], "merged");
  // Attempt 2's merge names attempt 2's branch, the one its job pushed to the remote (fetched
  // from there; deleted from the remote once merged).
  std::string b2 = plan("01-02")["worktree"]["branch"];
  EXPECT_EQ(b2.substr(b2.size() - 3), "-a2") << b2;
  EXPECT_EQ(run_program({"git", "rev-parse", "--verify", "--quiet", "refs/yolo-dispatch/" + b2}, repo()).exit_code, 0)
      << b2 << " was fetched from the remote";
  bool named = false;
  for (const auto& m : merges()) named = named || (m.find("merge plan 01-02 ") != std::string::npos && m.find(b2) != std::string::npos);
  EXPECT_TRUE(named) << b2;
  // Each run merged its plans in plan order, each plan once.
  auto m = merges();
  ASSERT_EQ(m.size(), 4u);
  const char* order[] = {"01-01", "01-04", "01-02", "01-03"};
  for (size_t k = 0; k < 4; ++k)
    EXPECT_NE(m[k].find(std::string("merge plan ") + order[k] + " "), std::string::npos) << m[k];
}

TEST_F(DispatchTest, ABadDispatchBlockStopsBeforeAnythingIsSubmitted) {
  // wait without {handle}: refused, naming the key.
  json c = config();
  c["dispatch"]["wait"] = {(side_.path() / "adapter").string(), "wait"};
  write_file(repo() / ".yolo-planning" / "config.json", c.dump(2));
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("dispatch.wait: the template has no {handle}"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("Next:"), std::string::npos) << r.err;
  EXPECT_TRUE(calls_of("submit").empty());
  // An adapter that does not exist: named, nothing submitted.
  set_dispatch((side_.path() / "no-such-adapter").string(), {});
  r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("dispatch.submit program"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("no-such-adapter"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(job_folders(), 0u);
}

TEST_F(DispatchTest, ARemoteThatRefusesTheBaseFailsThePlansBeforeAnySubmit) {
  set_config({{"dispatch", {{"remote", (side_.path() / "no-such-remote.git").string()}}}});
  auto r = execute();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "failed") << p.dump();
    EXPECT_NE(p["error"].get<std::string>().find("could not push the wave's base"), std::string::npos) << p.dump();
    EXPECT_NE(p["error"].get<std::string>().find("no-such-remote.git"), std::string::npos) << p.dump();
  }
  EXPECT_TRUE(calls_of("submit").empty());
  EXPECT_NE(r.err.find("Next:"), std::string::npos) << r.err;
}

// What comes back is data: a job whose branch edits a file outside its plan's files fails the
// scope fence here, whatever the engine said, and nothing of it is merged.
TEST_F(DispatchTest, AJobEditingOutsideItsFilesFailsTheScopeFenceHereAndIsNotMerged) {
  auto r = execute({"YOLO_EXEC_OUTSIDE_FOR=01-03"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-03");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["dispatch"]["state"], "done") << p.dump();  // the job itself succeeded
  EXPECT_EQ(p["scope"]["outside"], json::array({"stray.txt"})) << p.dump();
  // Headed by what failed: the scope fence, not the SUMMARY gate (the SUMMARY was fine).
  std::string error = p["error"];
  EXPECT_EQ(error.rfind("the scope fence", 0), 0u) << error;
  EXPECT_EQ(error.find("SUMMARY"), std::string::npos) << error;
  EXPECT_NE(r.out.find("Plan 01-03 failed: the scope fence"), std::string::npos) << r.out;
  bool named = false;
  for (const auto& f : p["findings"])
    named = named || (f["check"] == "scope_fence" && f["severity"] == "high" &&
                      f["issue"].get<std::string>().find("stray.txt") != std::string::npos);
  EXPECT_TRUE(named) << p.dump();
  EXPECT_FALSE(stdfs::exists(repo() / "stray.txt"));
  EXPECT_EQ(merges_of("01-03"), 0u);
  for (const char* id : {"01-01", "01-02", "01-04"}) EXPECT_EQ(plan(id)["status"], "complete") << plan(id).dump();
}

// An adapter whose wait says "done" for a job that pushed nothing: the plan fails, naming the
// branch and the handle. The adapter also records its environment: no approval key, no
// signing key reach it.
TEST_F(DispatchTest, ABranchMissingOnTheRemoteFailsThePlanAndTheAdapterGetsNoKeys) {
  stdfs::path fake = side_.path() / "fake-adapter";
  write_file(fake,
             "#!/bin/sh\n"
             "env > '" +
                 (side_.path() / "adapter-env").string() +
                 "'\n"
                 "case $1 in\n"
                 "  submit) printf '{\"handle\": \"fake-%s\", \"url\": \"\"}\\n' \"$3\" ;;\n"
                 "esac\n"
                 "exit 0\n");
  make_executable(fake);
  use_adapter(fake.string());
  write_file(side_.path() / "key", std::string(32, 'k'));  // a key of the right size, its own
  auto r = execute({"YOLO_APPROVAL_KEY_FILE=" + (side_.path() / "key").string(), "YOLO_SIGNING_KEY=k"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  std::string issue = p["findings"][0]["issue"];
  EXPECT_NE(issue.find("pushed nothing"), std::string::npos) << issue;
  EXPECT_NE(issue.find("fake-01-01"), std::string::npos) << issue;
  EXPECT_NE(issue.find("/01-01"), std::string::npos) << issue;
  EXPECT_EQ(p["findings"][0]["handle"], "fake-01-01") << p.dump();
  std::string e = read_file(side_.path() / "adapter-env");
  EXPECT_NE(e.find("PATH="), std::string::npos);
  EXPECT_EQ(e.find("YOLO_APPROVAL_KEY_FILE"), std::string::npos) << e;
  EXPECT_EQ(e.find("YOLO_SIGNING_KEY"), std::string::npos) << e;
  EXPECT_TRUE(merges().empty());
}

TEST_F(DispatchTest, CtrlCCancelsTheJobsItSubmittedAndLeavesThePlansPending) {
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env({"YOLO_EXEC_SLEEP=30"})) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  int submitted = 0;
  auto got =
      yolo.wait_for([&](const json& j) { return j.value("event", "") == "plan_submitted" && ++submitted == 4; }, 30s);
  ASSERT_TRUE(got) << yolo.stderr_text();
  yolo.signal(SIGINT);
  EXPECT_NE(yolo.wait_exit(30s), -1);
  EXPECT_EQ(calls_of("cancel").size(), 4u) << read_file(calls());
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "pending") << p.dump();
    EXPECT_EQ(p["dispatch"]["state"], "cancelled") << p.dump();
  }
  // The jobs ended (cancelled: no exit 0, no branch).
  for (const auto& f : stdfs::directory_iterator(jobs())) {
    EXPECT_FALSE(stdfs::exists(f.path() / "exit") && trim(read_file(f.path() / "exit")) == "0") << f.path();
  }
  EXPECT_TRUE(merges().empty());
}

// The same wave through the real Slurm adapter on the one-node cluster of scripts/slurm-up.
TEST_F(DispatchTest, AWaveOfFourThroughSlurm) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string());
  auto r = execute(slurm_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_wave_merged_in_plan_order();
  EXPECT_EQ(calls_of("submit").size(), 4u);
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    std::string h = plan(id)["dispatch"]["handle"];
    EXPECT_FALSE(h.empty());
    EXPECT_EQ(h.find_first_not_of("0123456789"), std::string::npos) << h;  // a Slurm job id
  }
}

TEST_F(DispatchTest, KillDashNineMidWaveThroughSlurmThenAgainSubmitsNothingTwice) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(), {"--export-env", "YOLO_EXEC_SLEEP"});
  kill_mid_wave_and_rerun(slurm_env({"YOLO_EXEC_SLEEP=4"}));
  // The controller knows one job per plan (the adapter names them from plan, run, attempt).
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    std::string name = plan(id)["dispatch"]["job_name"];
    auto q = run_program({"squeue", "-h", "--states=all", "--name=" + name, "-o", "%i"}, side_.path(), slurm_env());
    EXPECT_EQ(lines_of(q.out).size(), 1u) << name << " " << q.out << q.err;
  }
}

TEST_F(DispatchTest, AFailingJobAndAJobThatCommitsNothingThroughSlurmFailTheirPlans) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(),
              {"--export-env", "DISPATCH_FAIL_FOR", "--export-env", "DISPATCH_NOTHING_FOR"});
  auto r = execute(slurm_env({"DISPATCH_FAIL_FOR=01-02", "DISPATCH_NOTHING_FOR=01-03"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* id : {"01-02", "01-03"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "failed") << p.dump();
    ASSERT_EQ(p["findings"].size(), 1u) << p.dump();
    std::string issue = p["findings"][0]["issue"];
    EXPECT_EQ(p["findings"][0]["check"], "dispatch");
    EXPECT_NE(issue.find(p["dispatch"]["handle"].get<std::string>()), std::string::npos) << issue;
    EXPECT_NE(issue.find(std::string("/") + id), std::string::npos) << issue;
    EXPECT_EQ(merges_of(id), 0u);
  }
  EXPECT_NE(plan("01-02")["findings"][0]["issue"].get<std::string>().find("exited 3"), std::string::npos)
      << plan("01-02").dump();
  EXPECT_NE(plan("01-03")["findings"][0]["issue"].get<std::string>().find("no commit"), std::string::npos)
      << plan("01-03").dump();
  EXPECT_EQ(merges_of("01-01"), 1u);
  EXPECT_EQ(merges_of("01-04"), 1u);
}


// --dry-run says that the plans would be jobs, and which submit would run.
TEST_F(DispatchTest, DryRunSaysThePlansWouldBeSubmittedAsJobs) {
  auto r = run_yolo({"execute", "--dry-run"}, repo(), env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("dispatch:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("would submit a job (dispatch): " + (side_.path() / "adapter").string() + " submit --plan-id 01-01"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("would run: agents/exec-switch"), std::string::npos) << "not run here: " << r.out;
  auto j = run_yolo({"execute", "--dry-run", "--json"}, repo(), env());
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  json d = j.json_out();
  EXPECT_EQ(d["isolation"], "dispatch") << d.dump();
  EXPECT_EQ(d["dispatch"]["remote"], "origin") << d.dump();
  EXPECT_EQ(d["waves"][0]["plans"][0]["would_submit"][1], "submit") << d.dump();
  EXPECT_TRUE(calls_of("submit").empty()) << "a dry run submits nothing";
}

// yolo gives up on a job (the engine did not answer until the deadline): the job is
// cancelled first. Here the engine acknowledges the cancel but the job goes on and pushes
// its branch after yolo stopped (the race a real engine has; the test plays the job's part
// with run-job and the very arguments each submit got): the next execute finds attempt 1's
// branch on the remote and gates it; the plan is never run a second time.
TEST_F(DispatchTest, AJobYoloGaveUpOnThatPushedLaterIsGatedNotRunAgain) {
  stdfs::path w = side_.path() / "giveup-adapter";
  std::string local = (source_dir() / "contrib" / "dispatch" / "local").string();
  write_file(w, "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + calls().string() +
                    "'\n"
                    "if [ -n \"${GIVE_UP_ON:-}\" ]; then\n"
                    "  case $1 in\n"
                    "    wait) echo 'status: engine not answering' >&2; echo 'fake: no answer from the engine' >&2; exit 3 ;;\n"
                    "    cancel) exit 0 ;;\n"  // acknowledged, but the job goes on
                    "  esac\n"
                    "fi\n"
                    "exec '" + local + "' \"$@\"\n");
  make_executable(w);
  set_dispatch(w.string(), {});
  auto r = execute({"GIVE_UP_ON=1", "YOLO_EXEC_SLEEP=5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(calls_of("cancel").size(), 4u) << "each job given up on is cancelled first: " << read_file(calls());
  json p = plan("01-01");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["dispatch"]["state"], "cancelled") << p.dump();
  EXPECT_NE(p["error"].get<std::string>().find("gave up"), std::string::npos) << p.dump();
  // The jobs go on after all and push their branches (run-job with each submit's arguments).
  auto submits = calls_of("submit");
  ASSERT_EQ(submits.size(), 4u);
  for (const auto& line : submits) {
    std::vector<std::string> argv = {(source_dir() / "contrib" / "dispatch" / "run-job").string()};
    std::istringstream in(line.substr(7));  // after "submit "
    for (std::string word; in >> word;) argv.push_back(word);
    auto job = run_program(argv, side_.path(), env());
    ASSERT_EQ(job.exit_code, 0) << line << "\n" << job.out << job.err;
  }
  auto again = execute();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(calls_of("submit").size(), 4u) << "no second job: " << read_file(calls());
  EXPECT_NE(again.out.find("is on the remote (its job pushed it after all)"), std::string::npos) << again.out;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    EXPECT_EQ(plan(id)["dispatch"]["attempt"], 1) << plan(id).dump();
    EXPECT_EQ(merges_of(id), 1u) << id;
  }
  expect_wave_merged_in_plan_order();
}

// An engine yolo can neither reach nor cancel through: the job may be alive, so its record
// stays `submitted`; the next execute waits on the same job (no second submit). (The jobs of
// the local adapter do not outlive the yolo that started them: the fake wait lets them end.)
TEST_F(DispatchTest, AJobThatCannotBeCancelledIsWaitedOnAgainNeverSubmittedTwice) {
  stdfs::path w = side_.path() / "down-adapter";
  std::string local = (source_dir() / "contrib" / "dispatch" / "local").string();
  write_file(w, "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + calls().string() +
                    "'\n"
                    "if [ -n \"${ENGINE_DOWN:-}\" ]; then\n"
                    "  case $1 in\n"
                    // The job ends (a local job would not outlive this yolo); the engine says nothing.
                    "    wait) '" + local + "' wait \"$2\" >/dev/null 2>&1; echo 'fake: the engine does not answer' >&2; exit 3 ;;\n"
                    "    cancel) echo 'fake: cannot reach the engine' >&2; exit 1 ;;\n"
                    "  esac\n"
                    "fi\n"
                    "exec '" + local + "' \"$@\"\n");
  make_executable(w);
  set_dispatch(w.string(), {});
  auto r = execute({"ENGINE_DOWN=1", "YOLO_EXEC_SLEEP=1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "failed") << p.dump();
    EXPECT_EQ(p["dispatch"]["state"], "submitted") << "the job may be alive: " << p.dump();
    EXPECT_NE(p["error"].get<std::string>().find("could not cancel it"), std::string::npos) << p.dump();
  }
  auto again = execute();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(calls_of("submit").size(), 4u) << read_file(calls());
  EXPECT_EQ(job_folders(), 4u);
  size_t reattached = 0;
  for (size_t at = 0; (at = again.out.find("re-attaching to its job", at)) != std::string::npos; ++at) ++reattached;
  EXPECT_EQ(reattached, 4u) << again.out;
  expect_wave_merged_in_plan_order();
}

// The Slurm controller stops while the wave's jobs run and comes back 30 s later: yolo waits
// it out (the engine did not answer: the jobs may be alive), and every plan runs once.
TEST_F(DispatchTest, TheSlurmControllerStoppedAndRestartedMidRunEveryPlanRunsOnce) {
  PrivateSlurm slurm(side_.path() / "slurm");
  if (!slurm.cluster().up) GTEST_SKIP() << "skipped: " << slurm.cluster().reason;
  const SlurmCluster& c = slurm.cluster();
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(), {"--export-env", "YOLO_EXEC_SLEEP"});
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env(slurm_env({"YOLO_EXEC_SLEEP=6"}, &c))) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  int submitted = 0;
  ASSERT_TRUE(yolo.wait_for([&](const json& j) { return j.value("event", "") == "plan_submitted" && ++submitted == 4; },
                            60s))
      << yolo.stderr_text();
  int pid = std::stoi(trim(read_file(c.dir / "run" / "slurmctld.pid")));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  for (int k = 0; k < 100 && ::kill(pid, 0) == 0; ++k) std::this_thread::sleep_for(100ms);
  auto down_at = std::chrono::steady_clock::now();
  // While it is down, the jobs end on the node and push their branches; yolo waits.
  std::this_thread::sleep_for(30s);
  auto up = run_program({"sh", "-c", "setsid slurmctld -f \"$0\" </dev/null >/dev/null 2>&1", c.conf()}, side_.path());
  ASSERT_EQ(up.exit_code, 0) << up.err;
  // The outage was seen (and said) while yolo waited it out.
  auto said = yolo.wait_for(
      [](const json& j) {
        return j.value("event", "") == "plan_job_status" &&
               j.value("status", "").find("controller not answering") != std::string::npos;
      },
      90s);
  EXPECT_TRUE(said) << yolo.stderr_text();
  int rc = yolo.wait_exit(180s);
  EXPECT_EQ(rc, 0) << yolo.stderr_text();
  EXPECT_GT(std::chrono::steady_clock::now() - down_at, 29s);
  EXPECT_EQ(calls_of("submit").size(), 4u) << read_file(calls());
  EXPECT_TRUE(calls_of("cancel").empty()) << read_file(calls());
  expect_wave_merged_in_plan_order();
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    std::string name = plan(id)["dispatch"]["job_name"];
    auto q = run_program({"squeue", "-h", "--states=all", "--name=" + name, "-o", "%i"}, side_.path(), c.env());
    EXPECT_EQ(lines_of(q.out).size(), 1u) << name << " " << q.out << q.err;
  }
}

// Ctrl-C while a wave's submits are in flight (the node drained: the jobs would stay
// queued): every job that was submitted is cancelled; nothing is left in the queue.
TEST_F(DispatchTest, CtrlCDuringTheSubmitsLeavesNothingQueued) {
  PrivateSlurm slurm(side_.path() / "slurm");
  if (!slurm.cluster().up) GTEST_SKIP() << "skipped: " << slurm.cluster().reason;
  const SlurmCluster& c = slurm.cluster();
  ASSERT_EQ(run_program({"scontrol", "update", "nodename=localhost", "state=drain", "reason=ctrl-c test"}, side_.path(),
                        c.env())
                .exit_code,
            0);
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string());
  // An sbatch whose answer takes a second to come back (a busy controller): the job is queued
  // while its submit still runs, the window in which a killed submit loses its job's handle.
  stdfs::path slow = side_.path() / "slow-bin";
  stdfs::create_directories(slow);
  write_file(slow / "sbatch",
             "#!/bin/sh\nout=$(/usr/bin/sbatch \"$@\") || exit $?\nsleep 1\nprintf '%s\\n' \"$out\"\n");
  make_executable(slow / "sbatch");
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env(slurm_env({"PATH=" + slow.string() + ":" + std::getenv("PATH")}, &c))) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  int started = 0;
  ASSERT_TRUE(
      yolo.wait_for([&](const json& j) { return j.value("event", "") == "plan_start" && ++started == 4; }, 60s))
      << yolo.stderr_text();
  std::this_thread::sleep_for(500ms);  // the submits are running, their jobs queued
  yolo.signal(SIGINT);
  EXPECT_NE(yolo.wait_exit(60s), -1);
  auto q = run_program({"squeue", "-h", "--states=PENDING,RUNNING,CONFIGURING", "-o", "%i %j %T"}, side_.path(), c.env());
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(trim(q.out).empty()) << "left in the queue:\n" << q.out << "\nadapter calls:\n" << read_file(calls());
  auto all = run_program({"squeue", "-h", "--states=all", "-o", "%i"}, side_.path(), c.env());
  EXPECT_EQ(lines_of(all.out).size(), calls_of("cancel").size()) << all.out << read_file(calls());
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) EXPECT_EQ(plan(id)["status"], "pending") << plan(id).dump();
}

// A job pending on a drained node: yolo says why (squeue's reason) live and in `yolo status`;
// once the node is back, the job's own log is in `yolo logs PLAN`.
// A job whose log is on no file system shared with this machine (here: the local adapter's
// log removed before wait reads it): run-job pushed its own log as refs/yolo-logs/BRANCH, and
// yolo fetches it into the plan's log, and deletes the fetched ref once read. The merged plans'
// log refs are deleted from the remote with their branches; the failed plan's stays there
// until the plan is merged (a later attempt), then goes with it: its log stays in `yolo logs`.
TEST_F(DispatchTest, AJobsLogNotReadableHereComesBackThroughTheRemote) {
  stdfs::path w = side_.path() / "adapter-hidden";
  write_file(w, "#!/bin/sh\n"
                "[ \"$1\" = wait ] && rm -f \"$YOLO_DISPATCH_LOCAL_DIR/$2/log\"\n"
                "exec '" + (source_dir() / "contrib" / "dispatch" / "local").string() + "' \"$@\"\n");
  make_executable(w);
  use_adapter(w.string());
  auto r = execute({"DISPATCH_FAIL_FOR=01-02"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(plan("01-02")["status"], "failed") << plan("01-02").dump();
  EXPECT_EQ(plan("01-01")["worktree"]["merge"], "merged") << plan("01-01").dump();
  auto failed = run_yolo({"logs", "01-02"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(failed.out.find("--- the job's log (refs/yolo-logs/yolo/"), std::string::npos) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("  | failing on purpose"), std::string::npos) << "the executor's output: " << failed.out;
  EXPECT_NE(failed.out.find("  | run-job: ✗ the executor exited 3"), std::string::npos) << failed.out;
  auto done = run_yolo({"logs", "01-01"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(done.out.find("  | run-job: ✓ pushed yolo/"), std::string::npos) << done.out << done.err;
  // On the remote: the failed plan's log only (the merged plans' went with their branches).
  auto refs = lines_of(run_program({"git", "for-each-ref", "--format=%(refname)", "refs/yolo-logs/"}, bare()).out);
  ASSERT_EQ(refs.size(), 1u) << run_program({"git", "for-each-ref", "refs/"}, bare()).out;
  EXPECT_NE(refs[0].find("/01-02"), std::string::npos) << refs[0];
  EXPECT_EQ(trim(run_program({"git", "for-each-ref", "refs/heads/"}, bare()).out).find("/01-01"), std::string::npos);
  // Here: the fetched log refs were read into the plans' logs and are gone.
  EXPECT_EQ(trim(git({"for-each-ref", "refs/yolo-dispatch-logs/"})), "");

  // The executor fixed: attempt 2 of 01-02 is merged, and attempt 1's log ref goes from the
  // remote with attempt 2's branch and log; attempt 1's log is still the plan's.
  auto again = execute();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(plan("01-02")["dispatch"]["attempt"], 2) << plan("01-02").dump();
  EXPECT_EQ(plan("01-02")["worktree"]["merge"], "merged") << plan("01-02").dump();
  // The deletions are best-effort children the run ends after.
  EXPECT_EQ(trim(run_program({"git", "for-each-ref", "refs/yolo-logs/"}, bare()).out), "")
      << run_program({"git", "for-each-ref", "refs/"}, bare()).out;
  EXPECT_EQ(trim(git({"for-each-ref", "refs/yolo-dispatch-logs/"})), "");
  auto both = run_yolo({"logs", "01-02"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(both.out.find("  | failing on purpose"), std::string::npos) << both.out << both.err;
  EXPECT_NE(both.out.find("  | run-job: ✓ pushed yolo/"), std::string::npos) << both.out;
}

// The same in the wave-level form: the array's poller shows no task's log (wait-wave's
// `task K log` lines dropped, as when the tasks' output lies on nodes whose files are not
// readable here), so each plan's job log comes back through the remote, its fetched ref
// deleted once read.
TEST_F(DispatchTest, AWavesJobLogsNotReadableHereComeBackThroughTheRemote) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  const std::string slurm = (source_dir() / "contrib" / "dispatch" / "slurm").string();
  stdfs::path w = side_.path() / "adapter-no-task-logs";
  write_file(w, "#!/bin/bash\nset -o pipefail\n"
                "if [ \"$1\" = wait-wave ]; then\n"
                "  '" + slurm + "' \"$@\" | awk '!/^task [0-9]+ log / { print; fflush() }'\n"
                "  exit\n"
                "fi\n"
                "exec '" + slurm + "' \"$@\"\n");
  make_executable(w);
  use_wave_adapter(w.string(), {"--export-env", "DISPATCH_FAIL_FOR"});
  auto r = execute(slurm_env({"DISPATCH_FAIL_FOR=01-02"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(calls_of("wait-wave").size(), 1u) << read_file(calls());
  EXPECT_TRUE(calls_of("wait").empty()) << read_file(calls());
  EXPECT_EQ(plan("01-02")["status"], "failed") << plan("01-02").dump();
  EXPECT_EQ(plan("01-01")["worktree"]["merge"], "merged") << plan("01-01").dump();
  auto failed = run_yolo({"logs", "01-02"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(failed.out.find("--- the job's log (refs/yolo-logs/yolo/"), std::string::npos) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("  | failing on purpose"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("  | run-job: ✗ the executor exited 3"), std::string::npos) << failed.out;
  auto done = run_yolo({"logs", "01-03"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(done.out.find("--- the job's log (refs/yolo-logs/yolo/"), std::string::npos) << done.out << done.err;
  EXPECT_NE(done.out.find("  | run-job: ✓ pushed yolo/"), std::string::npos) << done.out;
  EXPECT_EQ(trim(git({"for-each-ref", "refs/yolo-dispatch-logs/"})), "");
  auto refs = lines_of(run_program({"git", "for-each-ref", "--format=%(refname)", "refs/yolo-logs/"}, bare()).out);
  ASSERT_EQ(refs.size(), 1u) << run_program({"git", "for-each-ref", "refs/"}, bare()).out;
  EXPECT_NE(refs[0].find("/01-02"), std::string::npos) << refs[0];
}

TEST_F(DispatchTest, ADrainedNodesReasonIsShownAndTheJobsLogReachesYoloLogs) {
  PrivateSlurm slurm(side_.path() / "slurm");
  if (!slurm.cluster().up) GTEST_SKIP() << "skipped: " << slurm.cluster().reason;
  const SlurmCluster& c = slurm.cluster();
  ASSERT_EQ(run_program({"scontrol", "update", "nodename=localhost", "state=drain", "reason=disk swap"}, side_.path(),
                        c.env())
                .exit_code,
            0);
  use_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string());
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env(slurm_env({}, &c))) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  auto st = yolo.wait_for(
      [&](const json& j) {
        return j.value("event", "") == "plan_job_status" &&
               j.value("status", "").find("PENDING") != std::string::npos;
      },
      60s);
  ASSERT_TRUE(st) << yolo.stderr_text();
  std::string said = (*st)["status"];
  EXPECT_NE(said.find("disk swap"), std::string::npos) << said;
  // yolo status (another process, from the state) says it too.
  std::this_thread::sleep_for(1s);  // the batched state write
  auto status = run_yolo({"status"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(status.out.find("engine: PENDING"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("disk swap"), std::string::npos) << status.out;
  ASSERT_EQ(run_program({"scontrol", "update", "nodename=localhost", "state=resume"}, side_.path(), c.env()).exit_code,
            0);
  EXPECT_EQ(yolo.wait_exit(120s), 0) << yolo.stderr_text();
  expect_wave_merged_in_plan_order();
  auto logs = run_yolo({"logs", "01-02"}, repo(), {"NO_COLOR=1"});
  EXPECT_NE(logs.out.find("--- job log"), std::string::npos) << logs.out << logs.err;
  EXPECT_NE(logs.out.find("run-job: "), std::string::npos) << "the job's own output: " << logs.out;
}

}  // namespace
}  // namespace yolo::test

namespace yolo::test {
namespace {

// The wave-level form on the one-node cluster: the four plans go in as one Slurm job array
// (one submit-wave, one sbatch --array), one wait-wave polls it (each poll one `scontrol show
// job` of the array, never of a task), every plan merged once, and the merged branches are
// deleted from the remote.
TEST_F(DispatchTest, AWaveThroughSlurmIsOneArrayJobPolledOnceForTheWholeWave) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  use_wave_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(), {"--export-env", "YOLO_EXEC_SLEEP"});
  auto r = execute(slurm_env({"YOLO_EXEC_SLEEP=2", counting_slurm_path()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_wave_merged_in_plan_order();
  EXPECT_EQ(calls_of("submit-wave").size(), 1u) << read_file(calls());
  EXPECT_EQ(calls_of("wait-wave").size(), 1u) << read_file(calls());
  EXPECT_TRUE(calls_of("submit").empty()) << read_file(calls());
  EXPECT_TRUE(calls_of("wait").empty()) << read_file(calls());
  // One array job: every plan's handle is a task of it, index = plan order.
  std::set<std::string> arrays;
  for (int k = 0; k < 4; ++k) {
    json d = plan("01-0" + std::to_string(k + 1))["dispatch"];
    std::string array = d.value("wave_handle", "");
    arrays.insert(array);
    EXPECT_EQ(d["wave_index"], k) << d.dump();
    EXPECT_EQ(d["handle"], array + "_" + std::to_string(k)) << d.dump();
  }
  ASSERT_EQ(arrays.size(), 1u);
  const std::string array = *arrays.begin();
  EXPECT_EQ(array.find_first_not_of("0123456789"), std::string::npos) << array;
  auto q = run_program({"squeue", "-h", "--states=all", "-r", "-j", array, "-o", "%F %K"}, side_.path(), slurm_env());
  auto tasks = lines_of(q.out);
  EXPECT_EQ(tasks.size(), 4u) << q.out << q.err;
  for (const auto& t : tasks) EXPECT_EQ(t.substr(0, t.find(' ')), array) << q.out;
  // What the controller was asked while the wave ran: each poll one call for the whole array.
  size_t polls = 0;
  for (const auto& l : lines_of(read_file(slurm_calls())))
    if (l.rfind("scontrol show job", 0) == 0) {
      ++polls;
      EXPECT_EQ(l, "scontrol show job -o " + array) << "a poll that is not of the whole array";
    }
  EXPECT_GE(polls, 1u);
  // The merged plans' branches are gone from the remote; the wave's base stays.
  std::string heads = run_program({"git", "--git-dir", bare().string(), "branch", "--list"}, side_.path()).out;
  EXPECT_EQ(heads.find("/01-0"), std::string::npos) << heads;
  EXPECT_NE(heads.find("/base"), std::string::npos) << heads;
}

// Ctrl-C while a wave's array runs: the whole array is cancelled by one `cancel` of its id
// (not one per task), nothing of it is left pending or running, the plans are pending again.
TEST_F(DispatchTest, CtrlCDuringAWaveCancelsItsArrayInOneCall) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  use_wave_adapter((source_dir() / "contrib" / "dispatch" / "slurm").string(), {"--export-env", "YOLO_EXEC_SLEEP"});
  std::vector<std::string> argv = {"env"};
  for (const auto& e : env(slurm_env({"YOLO_EXEC_SLEEP=60"}))) argv.push_back(e);
  argv.insert(argv.end(), {yolo_bin(), "execute", "--json"});
  BgProcess yolo(argv, repo());
  auto sub = yolo.wait_for([&](const json& j) { return j.value("event", "") == "wave_submitted"; }, 60s);
  ASSERT_TRUE(sub) << yolo.stderr_text();
  const std::string array = (*sub)["handle"];
  // Two tasks running (max_parallel 2), two pending.
  auto running = yolo.wait_for(
      [&](const json& j) {
        return j.value("event", "") == "plan_job_status" && j.value("status", "").find("RUNNING") != std::string::npos;
      },
      60s);
  ASSERT_TRUE(running) << yolo.stderr_text();
  yolo.signal(SIGINT);
  auto said = yolo.wait_for([&](const json& j) { return j.value("event", "") == "wave_cancelled"; }, 60s);
  EXPECT_NE(yolo.wait_exit(60s), -1);
  auto cancels = calls_of("cancel");
  EXPECT_EQ(cancels.size(), 1u) << read_file(calls());
  EXPECT_EQ(cancels.empty() ? "" : cancels.front(), "cancel " + array) << read_file(calls());
  ASSERT_TRUE(said) << yolo.stderr_text();
  EXPECT_EQ((*said)["handle"], array) << said->dump();
  EXPECT_EQ((*said)["tasks"], 4) << said->dump();
  EXPECT_EQ((*said)["ok"], true) << said->dump();
  auto q = run_program({"squeue", "-h", "-r", "-j", array, "--states=PENDING,RUNNING,CONFIGURING", "-o", "%i %T"},
                       side_.path(), slurm_env());
  EXPECT_TRUE(trim(q.out).empty()) << "left in the queue:\n" << q.out << q.err;
  for (const char* id : {"01-01", "01-02", "01-03", "01-04"}) {
    json p = plan(id);
    EXPECT_EQ(p["status"], "pending") << p.dump();
    EXPECT_EQ(p["dispatch"]["state"], "cancelled") << p.dump();
  }
}

// yolo killed (-9) while a wave's array runs: the next execute re-attaches to the array's
// tasks with one wait_wave for the array, as the run that submitted it did, not one `wait`
// per plan; nothing is submitted again and every plan is merged once.
TEST_F(DispatchTest, AWaveReattachedAfterAKillIsWaitedOnByOnePollerForItsArray) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  const std::string array = kill_after_wave_submitted();
  ASSERT_FALSE(array.empty());
  const size_t waits_before = calls_of("wait-wave").size();
  auto r = execute(slurm_env({"YOLO_EXEC_SLEEP=4"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(calls_of("submit-wave").size(), 1u) << "no second array: " << read_file(calls());
  auto waits = calls_of("wait-wave");
  ASSERT_EQ(waits.size(), waits_before + 1) << "one poller for the re-attached array: " << read_file(calls());
  EXPECT_EQ(waits.back(), "wait-wave " + array) << read_file(calls());
  EXPECT_TRUE(calls_of("wait").empty()) << "no per-plan wait: " << read_file(calls());
  EXPECT_TRUE(calls_of("submit").empty()) << read_file(calls());
  size_t reattached = 0;
  for (size_t at = 0; (at = r.out.find("re-attaching to its job", at)) != std::string::npos; ++at) ++reattached;
  EXPECT_EQ(reattached, 4u) << r.out;
  expect_wave_merged_in_plan_order();
}

// The state's records are a file a person may edit: a re-attached task whose index lies past
// any array, or is another plan's, is waited on by itself; the run neither crashes nor leaves
// a plan waiting for ever, and each plan still runs once.
TEST_F(DispatchTest, AnEditedTaskIndexIsWaitedOnByItselfNotLostOrCrashing) {
  if (auto why = slurm_missing()) {
    std::cout << "skipped: " << *why << std::endl;
    GTEST_SKIP() << "skipped: " << *why;
  }
  const std::string array = kill_after_wave_submitted();
  ASSERT_FALSE(array.empty());
  json st = state();
  for (auto& p : st["plans"]) {
    if (p["id"] == "01-02") p["dispatch"]["wave_index"] = 4000000000000ULL;
    if (p["id"] == "01-03") p["dispatch"]["wave_index"] = 0;  // 01-01's
  }
  write_file(repo() / ".yolo-planning" / ".execution-state.json", st.dump(2) + "\n");
  auto r = execute(slurm_env({"YOLO_EXEC_SLEEP=4"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(calls_of("submit-wave").size(), 1u) << "no second array: " << read_file(calls());
  EXPECT_EQ(calls_of("wait").size(), 2u) << "the two edited plans by themselves: " << read_file(calls());
  EXPECT_TRUE(calls_of("submit").empty()) << read_file(calls());
  expect_wave_merged_in_plan_order();
}

// Per-plan resources: in the frontmatter, shown by --dry-run as the adapter's options; a
// value that is not one fails the plan with a message naming its file, before any submit.
TEST_F(DispatchTest, APlansResourcesReachItsSubmitAndABadOneFailsItNamingTheFile) {
  give_resources("01-01-PLAN.md", "  time: 90m\n  cpus: 2\n  memory: 4G\n  gpus: 1\n");
  auto j = run_yolo({"execute", "--dry-run", "--json"}, repo(), env());
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  json d = j.json_out();
  std::vector<std::string> argv = d["waves"][0]["plans"][0]["would_submit"];
  std::string joined;
  for (const auto& a : argv) joined += a + " ";
  EXPECT_NE(joined.find("--time-minutes 90 --cpus 2 --memory-mb 4096 --gpus 1 -- agents/exec-switch"),
            std::string::npos)
      << joined;
  // The Slurm adapter turns them into sbatch's options.
  std::vector<std::string> dry(argv.begin(), argv.end());
  dry[0] = (source_dir() / "contrib" / "dispatch" / "slurm").string();
  dry.insert(dry.begin() + 2, "--dry-run");
  for (auto& a : dry)
    if (a == "<run id>") a = "run1";
    else if (a == "<the wave's base commit>") a = "abc123";
  auto sb = run_program(dry, repo());
  EXPECT_EQ(sb.exit_code, 0) << sb.err;
  EXPECT_NE(sb.out.find("--time=90 --cpus-per-task=2 --mem=4096M --gpus=1"), std::string::npos) << sb.out;

  give_resources("01-02-PLAN.md", "  memory: 4X\n");
  auto r = execute();
  EXPECT_NE(r.exit_code, 0) << r.out;
  json p = plan("01-02");
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_NE(p.value("error", "").find("01-02-PLAN.md: resources.memory: '4X'"), std::string::npos) << p.dump();
  EXPECT_EQ(submits_for("01-02"), 0u) << read_file(calls());
}

}  // namespace
}  // namespace yolo::test
