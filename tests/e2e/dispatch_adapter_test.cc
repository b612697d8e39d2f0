// The dispatch adapters (contrib/dispatch/, docs/dispatch.md) run as real processes: their
// syntax and --dry-run output always; the job script (run-job), the Kubernetes Job manifest
// and the GitHub workflow's script run against a real bare repository on this machine; and
// with the one-node cluster of scripts/slurm-up, real Slurm jobs push real branches. When
// the cluster cannot start, those tests are skipped with the reason slurm-up gave.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <future>
#include <iostream>
#include <regex>
#include <set>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bg_process.h"
#include "slurm_cluster.h"
#include "protocol/run/dispatch.h"
#include "test_support.h"

namespace yolo::e2e {
namespace {

namespace stdfs = std::filesystem;
using test::run_program;
using test::RunResult;
using test::TempDir;

std::string dump(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out.substr(0, 3000) +
         "\nstderr: " + r.err.substr(0, 3000);
}
std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}
std::string adapter(const std::string& name) { return (test::source_dir() / "contrib" / "dispatch" / name).string(); }
std::string script(const std::string& name) { return (test::source_dir() / "scripts" / name).string(); }
std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
RunResult git(const std::vector<std::string>& args, const stdfs::path& cwd) {
  std::vector<std::string> argv{"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, cwd);
}
bool has_branch(const stdfs::path& bare, const std::string& branch) {
  return git({"rev-parse", "--verify", "--quiet", "refs/heads/" + branch}, bare).exit_code == 0;
}
std::string show(const stdfs::path& bare, const std::string& spec) { return git({"show", spec}, bare).out; }

// A project's remote: a bare repository whose main holds agents/exec, the executor the jobs
// run. `agents/exec MODE ARG...`: "fail" exits 1, "nothing" commits nothing, "sleep N" sleeps
// first; otherwise it writes out-<plan>.txt (the plan id, then each argument on its own line)
// and commits it.
struct Remote {
  explicit Remote(const stdfs::path& root) : bare(root / "remote.git") {
    EXPECT_EQ(git({"init", "-q", "--bare", "-b", "main", bare.string()}, root).exit_code, 0);
    stdfs::path src = root / "src";
    EXPECT_EQ(git({"init", "-q", "-b", "main", src.string()}, root).exit_code, 0);
    test::write_file(src / "agents" / "exec",
                     "#!/bin/sh\n"
                     "set -e\n"
                     "case \"$1\" in\n"
                     "  fail) echo 'failing on purpose' >&2; exit 1 ;;\n"
                     "  nothing) exit 0 ;;\n"
                     "  sleep) sleep \"$2\" ;;\n"
                     "esac\n"
                     "printf '%s\\n' \"$YOLO_PLAN_ID\" \"$@\" > \"out-$YOLO_PLAN_ID.txt\"\n"
                     "git add \"out-$YOLO_PLAN_ID.txt\"\n"
                     "git commit -q -m \"plan $YOLO_PLAN_ID\"\n");
    stdfs::permissions(src / "agents" / "exec", stdfs::perms::owner_all | stdfs::perms::group_read |
                                                    stdfs::perms::group_exec | stdfs::perms::others_read |
                                                    stdfs::perms::others_exec);
    test::write_file(src / "README", "base\n");
    EXPECT_EQ(git({"add", "-A"}, src).exit_code, 0);
    EXPECT_EQ(git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"}, src).exit_code, 0);
    EXPECT_EQ(git({"push", "-q", bare.string(), "main"}, src).exit_code, 0);
    base = trim(git({"rev-parse", "HEAD"}, src).out);
  }
  stdfs::path bare;
  std::string base;
};

// The demo project (fixtures/demo) as a remote: its plans, run by the fixture executor
// (fixtures/agents/executor-ok, which commits the work and leaves the SUMMARY uncommitted).
struct DemoRemote {
  explicit DemoRemote(const stdfs::path& root) : bare(root / "demo.git") {
    stdfs::path src = root / "demo-src";
    test::copy_fixture("demo", src);
    EXPECT_EQ(git({"init", "-q", "--bare", "-b", "main", bare.string()}, root).exit_code, 0);
    EXPECT_EQ(git({"init", "-q", "-b", "main", src.string()}, root).exit_code, 0);
    EXPECT_EQ(git({"add", "-A"}, src).exit_code, 0);
    EXPECT_EQ(git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "demo"}, src).exit_code, 0);
    EXPECT_EQ(git({"push", "-q", bare.string(), "main"}, src).exit_code, 0);
    base = trim(git({"rev-parse", "HEAD"}, src).out);
  }
  std::vector<std::string> submit(const std::string& name, const std::string& plan, const std::string& corr,
                                  const std::string& branch) const {
    std::string dir = ".yolo-planning/phases/01-demo/";
    std::string plan_path = dir + plan + "-PLAN.md", summary = dir + plan + "-SUMMARY.md";
    return {adapter(name),
            "submit",
            "--plan-id",
            plan,
            "--correlation-id",
            corr,
            "--attempt",
            "1",
            "--base-commit",
            base,
            "--branch",
            branch,
            "--remote",
            bare.string(),
            "--plan-path",
            plan_path,
            "--summary-path",
            summary,
            "--",
            (test::source_dir() / "fixtures" / "agents" / "executor-ok").string(),
            plan_path,
            summary};
  }
  // The pushed branch, checked out, passes yolo's own strict SUMMARY gate.
  void expect_summary_gate_passes(const stdfs::path& root, const std::string& plan, const std::string& branch) const {
    stdfs::path co = root / ("check-" + plan);
    ASSERT_EQ(git({"clone", "-q", "-b", branch, bare.string(), co.string()}, root).exit_code, 0) << branch;
    std::string summary = ".yolo-planning/phases/01-demo/" + plan + "-SUMMARY.md";
    ASSERT_TRUE(stdfs::exists(co / summary)) << "the SUMMARY came back through git";
    EXPECT_TRUE(git({"status", "--porcelain"}, co).out.empty());
    auto r = test::run_yolo({"verify-summary", summary, "--mode", "strict", "--json"}, co);
    EXPECT_EQ(r.exit_code, 0) << dump(r);
  }
  stdfs::path bare;
  std::string base;
};

std::vector<std::string> submit_argv(const std::string& name, const std::string& plan, const std::string& corr,
                                     const std::string& attempt, const Remote& remote, const std::string& branch,
                                     const std::vector<std::string>& exec, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{adapter(name), "submit"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const auto& a : {"--plan-id", plan.c_str(), "--correlation-id", corr.c_str(), "--attempt", attempt.c_str(),
                        "--base-commit", remote.base.c_str(), "--branch", branch.c_str(), "--remote",
                        remote.bare.c_str(), "--plan-path", ".yolo-planning/phases/01-x/01-01-PLAN.md", "--"})
    argv.emplace_back(a);
  argv.insert(argv.end(), exec.begin(), exec.end());
  return argv;
}

// A folder of fake cluster clients that only leave a mark: --dry-run must run none of them.
struct FakeClients {
  explicit FakeClients(const stdfs::path& dir) : bin(dir / "bin"), marks(dir / "marks") {
    stdfs::create_directories(bin);
    for (const char* p : {"sbatch", "squeue", "sacct", "scontrol", "scancel", "kubectl", "gh"}) {
      test::write_file(bin / p, std::string("#!/bin/sh\necho ") + p + " >> '" + marks.string() + "'\nexit 0\n");
      stdfs::permissions(bin / p, stdfs::perms::owner_all);
    }
  }
  std::string path_env() const { return "PATH=" + bin.string() + ":" + std::getenv("PATH"); }
  bool ran_any() const { return stdfs::exists(marks); }
  stdfs::path bin, marks;
};

TEST(DispatchAdapterTest, EveryScriptParsesWithBashN) {
  for (const auto& f :
       {adapter("slurm"), adapter("kubernetes"), adapter("github-actions"), adapter("local"), adapter("run-job"),
        adapter("lib.sh"), script("slurm-up"), script("slurm-down"), script("bench-dispatch"), script("bench-one-plan")}) {
    auto r = run_program({"bash", "-n", f});
    EXPECT_EQ(r.exit_code, 0) << f << "\n" << dump(r);
  }
}

TEST(DispatchAdapterTest, TheJobNameIsDeterministicAndAValidName) {
  auto name = [](const std::string& corr, const std::string& plan, const std::string& attempt) {
    auto r = run_program({adapter("slurm"), "name", "--plan-id", plan, "--correlation-id", corr, "--attempt", attempt});
    EXPECT_EQ(r.exit_code, 0) << dump(r);
    return trim(r.out);
  };
  std::string a = name("run-1", "01-02", "1");
  EXPECT_EQ(a, name("run-1", "01-02", "1"));
  EXPECT_EQ(
      a, trim(run_program({adapter("kubernetes"), "name", "--plan-id=01-02", "--correlation-id=run-1", "--attempt=1"})
                  .out));
  EXPECT_EQ(a, trim(run_program({adapter("github-actions"), "name", "--plan-id", "01-02", "--correlation-id", "run-1",
                                 "--attempt", "1"})
                        .out));
  std::set<std::string> all{a, name("run-1", "01-02", "2"), name("run-2", "01-02", "1"), name("run-1", "01-03", "1")};
  EXPECT_EQ(all.size(), 4u) << "attempt, run and plan each change the name";
  // Odd plan ids still give a valid Kubernetes name (lower case, [a-z0-9-], <= 63).
  const std::regex dns("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$");
  for (const auto& n : {a, name("run-1", "Auth Flow/../$(x) ÄÖ with a very long title that goes on and on", "12"),
                        name("r", "---", "1")}) {
    EXPECT_TRUE(std::regex_match(n, dns)) << n;
  }
  EXPECT_EQ(a.rfind("yolo-01-02-a1-", 0), 0u) << a;
}

TEST(DispatchAdapterTest, SlurmDryRunPrintsTheLookupAndTheSbatchArgvAndRunsNothing) {
  TempDir tmp;
  Remote remote(tmp.path());
  FakeClients fake(tmp.path());
  std::string job = trim(
      run_program({adapter("slurm"), "name", "--plan-id", "01-02", "--correlation-id", "c1", "--attempt", "3"}).out);
  auto r = run_program(
      submit_argv("slurm", "01-02", "c1", "3", remote, "yolo/c1/01-02", {"agents/exec", "it's $(touch pwned)"},
                  {"--dry-run", "--sbatch-arg", "--partition=batch", "--export-env", "API_TOKEN"}),
      tmp.path(), {fake.path_env(), "API_TOKEN=s3cret-value"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 4u) << r.out;
  EXPECT_NE(ls[0].find("squeue -h --states=all"), std::string::npos) << ls[0];
  EXPECT_NE(ls[0].find("--name=" + job), std::string::npos) << ls[0];
  EXPECT_NE(ls[1].find("sacct"), std::string::npos) << ls[1];
  EXPECT_NE(ls[2].find("sacct -c"), std::string::npos) << "the job completion records: " << ls[2];
  ls.erase(ls.begin() + 2);
  EXPECT_NE(ls[2].find("sbatch --parsable --job-name=" + job + " --no-requeue"), std::string::npos) << ls[2];
  EXPECT_NE(ls[2].find("--partition=batch " + adapter("run-job") + " --remote " + remote.bare.string() +
                       " --base-commit " + remote.base + " --branch yolo/c1/01-02 --plan-id 01-02"),
            std::string::npos)
      << ls[2];
  EXPECT_NE(ls[2].find("-- agents/exec 'it'\\''s $(touch pwned)'"), std::string::npos) << ls[2];
  EXPECT_EQ(ls[2].find("s3cret-value"), std::string::npos) << "a value passed by name is not printed: " << ls[2];
  EXPECT_NE(ls[2].find("API_TOKEN="), std::string::npos) << ls[2];
  EXPECT_FALSE(fake.ran_any()) << test::read_file(fake.marks);

  r = run_program({adapter("slurm"), "wait", "--dry-run", "42"}, tmp.path(), {fake.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find("scontrol show job -o 42"), std::string::npos) << r.out;
  r = run_program({adapter("slurm"), "cancel", "--dry-run", "42"}, tmp.path(), {fake.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(trim(r.out), "scancel 42");
  EXPECT_FALSE(fake.ran_any());
  EXPECT_FALSE(stdfs::exists(tmp.path() / "pwned"));
}

TEST(DispatchAdapterTest, KubernetesAndGithubDryRunsPrintTheirCommandsAndRunNothing) {
  TempDir tmp;
  Remote remote(tmp.path());
  FakeClients fake(tmp.path());
  std::string job = trim(
      run_program({adapter("kubernetes"), "name", "--plan-id", "01-02", "--correlation-id", "c1", "--attempt", "1"})
          .out);
  auto r = run_program(submit_argv("kubernetes", "01-02", "c1", "1", remote, "yolo/c1/01-02", {"agents/exec", "a b"},
                                   {"--dry-run", "--image", "debian:bookworm", "--namespace", "ci"}),
                       tmp.path(), {fake.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 2u) << r.out;
  EXPECT_EQ(ls[0], "kubectl --namespace ci get job " + job + " -o name");
  EXPECT_NE(ls[1].find("kubectl --namespace ci create job " + job + " --image=debian:bookworm"), std::string::npos);
  EXPECT_NE(ls[1].find("\"backoffLimit\":0"), std::string::npos) << ls[1];
  EXPECT_NE(ls[1].find("-- agents/exec 'a b'"), std::string::npos) << ls[1];
  r = run_program({adapter("kubernetes"), "wait", "--dry-run", "ci/" + job}, tmp.path(), {fake.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find("kubectl --namespace ci wait --for=condition=complete job/" + job), std::string::npos);
  r = run_program({adapter("kubernetes"), "cancel", "--dry-run", job}, tmp.path(), {fake.path_env()});
  EXPECT_EQ(trim(r.out), "kubectl delete job " + job + " --ignore-not-found --wait=false") << dump(r);
  r = run_program(submit_argv("kubernetes", "01-02", "c1", "1", remote, "b", {"x"}, {"--dry-run"}), tmp.path(),
                  {fake.path_env(), "YOLO_K8S_IMAGE="});
  EXPECT_EQ(r.exit_code, 64) << "no image: " << dump(r);
  EXPECT_NE(r.err.find("--image"), std::string::npos);

  r = run_program(submit_argv("github-actions", "01-02", "c1", "1", remote, "yolo/c1/01-02", {"agents/exec", "a b"},
                              {"--dry-run", "--repo", "o/p"}),
                  tmp.path(), {fake.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  ls = lines(r.out);
  ASSERT_EQ(ls.size(), 3u) << r.out;
  EXPECT_NE(ls[0].find("gh api -X GET repos/o/p/actions/workflows/yolo-dispatch.yml/runs -f event=workflow_dispatch"),
            std::string::npos)
      << ls[0];
  EXPECT_NE(ls[0].find("select(.display_title == \"" + job + "\")"), std::string::npos) << ls[0];
  EXPECT_NE(ls[2].find("-f 'created=>="), std::string::npos) << "after the start: the runs created since " << ls[2];
  EXPECT_NE(ls[1].find("gh workflow run yolo-dispatch.yml --repo o/p -f job_name=" + job + " -f plan_id=01-02"),
            std::string::npos)
      << ls[1];
  EXPECT_NE(ls[1].find("-f executor_b64=YWdlbnRzL2V4ZWMAYSBiAA=="), std::string::npos)
      << "agents/exec\\0a b\\0 " << ls[1];
  r = run_program({adapter("github-actions"), "wait", "--dry-run", "123"}, tmp.path(), {fake.path_env()});
  EXPECT_EQ(trim(r.out), "gh run view 123 --json status,conclusion --jq '.status + \" \" + .conclusion'") << dump(r);
  r = run_program({adapter("github-actions"), "cancel", "--dry-run", "--repo", "o/p", "123"}, tmp.path(),
                  {fake.path_env()});
  EXPECT_EQ(trim(r.out), "gh run cancel 123 --repo o/p") << dump(r);
  EXPECT_FALSE(fake.ran_any()) << test::read_file(fake.marks);
}

TEST(DispatchAdapterTest, BadArgumentsAreUsageErrorsNamingTheProblem) {
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  std::vector<Case> cases{
      {{adapter("slurm"), "submit", "--dry-run", "--correlation-id", "c", "--attempt", "1", "--base-commit", "ab",
        "--branch", "b", "--remote", "r", "--", "x"},
       "--plan-id"},
      {{adapter("slurm"), "submit", "--dry-run", "--plan-id", "p", "--correlation-id", "c", "--attempt", "one",
        "--base-commit", "ab", "--branch", "b", "--remote", "r", "--", "x"},
       "not a number"},
      {{adapter("slurm"), "submit", "--dry-run", "--plan-id", "p", "--correlation-id", "c", "--attempt", "1",
        "--base-commit", "ab", "--branch", "b", "--remote", "r"},
       "executor"},
      {{adapter("slurm"), "wait", "1;rm"}, "job id"},
      {{adapter("slurm"), "frobnicate"}, "unknown subcommand"},
      {{adapter("kubernetes"), "wait", "Bad_Name"}, "not a Job handle"},
      {{adapter("github-actions"), "cancel", "12x"}, "not a run id"},
      {{adapter("run-job"), "--remote", "r", "--base-commit", "ab", "--branch", "bad..name", "--", "x"},
       "not a valid branch name"},
  };
  for (const auto& c : cases) {
    auto r = run_program(c.argv);
    EXPECT_EQ(r.exit_code, 64) << c.argv[1] << "\n" << dump(r);
    EXPECT_NE(r.err.find(c.says), std::string::npos) << dump(r);
  }
}

// run-job is what every engine runs: here it runs on this machine against a real remote.
// On a node with bubblewrap the executor writes its clone and nothing else of the node's
// (here: a file beside the job's folder, outside /tmp); its work is pushed as usual. With
// YOLO_JOB_SANDBOX=off the same write lands: the test can tell the two apart.
TEST(DispatchAdapterTest, RunJobConfinesItsExecutorWhereTheNodeHasBubblewrap) {
  if (run_program({"sh", "-c",
                   "command -v bwrap && bwrap --unshare-all --share-net --unshare-user --disable-userns --ro-bind / / true"})
          .exit_code != 0)
    GTEST_SKIP() << "skipped: no working bubblewrap here (scripts/setup installs it; user namespaces needed)";
  TempDir tmp;
  Remote remote(tmp.path());
  const stdfs::path outside = stdfs::path("/var/tmp") / ("yolo-runjob-" + std::to_string(::getpid()));
  stdfs::remove(outside);
  for (bool confined : {true, false}) {
    const std::string branch = confined ? "yolo/c1/confined" : "yolo/c1/open";
    auto r = run_program({adapter("run-job"), "--remote", remote.bare.string(), "--base-commit", remote.base,
                          "--branch", branch, "--plan-id", "01-01", "--correlation-id", "c1", "--attempt", "1", "--",
                          "sh", "-c",
                          "if echo x > '" + outside.string() + "' 2>/dev/null; then echo WROTE-OUTSIDE; else echo "
                          "'attempt refused'; fi; exec agents/exec \"$@\"",
                          "sh", "arg"},
                         tmp.path(), {"TMPDIR=" + tmp.path().string(), confined ? "YOLO_JOB_SANDBOX=bwrap" : "YOLO_JOB_SANDBOX=off"});
    ASSERT_EQ(r.exit_code, 0) << dump(r);
    EXPECT_TRUE(has_branch(remote.bare, branch)) << dump(r);
    if (confined) {
      EXPECT_NE(r.out.find("in the clone, confined by bubblewrap"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("attempt refused"), std::string::npos) << r.out;
      EXPECT_FALSE(stdfs::exists(outside));
    } else {
      EXPECT_NE(r.out.find("WROTE-OUTSIDE"), std::string::npos) << r.out;
      EXPECT_TRUE(stdfs::exists(outside));
    }
  }
  stdfs::remove(outside);
}

// A cancelled job: the engine sends SIGTERM to every process of it (here: run-job's process
// group, as Slurm's scancel does). The executor ends, the clone is removed, nothing is pushed,
// and the last line says why.
TEST(DispatchAdapterTest, RunJobStoppedRemovesItsCloneSaysWhyAndAKilledJobsCloneGoesNext) {
  TempDir tmp;
  Remote remote(tmp.path());
  const stdfs::path jobs = tmp.path() / "jobs";
  stdfs::create_directories(jobs);
  const stdfs::path mark = tmp.path() / "executor-started";
  test::BgProcess job({"setsid", "env", "TMPDIR=" + jobs.string(), "YOLO_JOB_SANDBOX=off", adapter("run-job"), "--remote",
                 remote.bare.string(), "--base-commit", remote.base, "--branch", "yolo/c1/cancelled", "--plan-id",
                 "01-01", "--correlation-id", "c1", "--attempt", "1", "--", "sh", "-c",
                 "echo up > '" + mark.string() + "'; exec sleep 30"},
                tmp.path());
  for (int i = 0; i < 1000 && !stdfs::exists(mark); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(stdfs::exists(mark)) << job.stderr_text();
  bool clone_there = false;
  for (const auto& e : stdfs::directory_iterator(jobs)) clone_there |= e.path().filename().string().rfind("yolo-job.", 0) == 0;
  ASSERT_TRUE(clone_there) << "the job's clone exists while its executor runs";
  ASSERT_EQ(::kill(-job.pid(), SIGTERM), 0);  // setsid: its pid is its group's
  EXPECT_EQ(job.wait_exit(std::chrono::seconds(20)), 128 + SIGTERM);
  const std::string err = job.stderr_text();
  EXPECT_NE(err.find("run-job: ✗ stopped by SIGTERM"), std::string::npos) << err;
  EXPECT_FALSE(has_branch(remote.bare, "yolo/c1/cancelled"));
  for (const auto& e : stdfs::directory_iterator(jobs)) ADD_FAILURE() << "left behind: " << e.path();

  // A job killed with SIGKILL cannot remove its clone: the next job on the node removes the
  // folders whose job is gone, and only those (a live job's, one without its pid yet, one of
  // another pid namespace).
  auto dead = run_program({"sh", "-c", "echo $$"});
  ASSERT_EQ(dead.exit_code, 0);
  const std::string ns = stdfs::read_symlink("/proc/self/ns/pid").string();
  test::write_file(jobs / "yolo-job.killed/pid", trim(dead.out) + " " + ns + "\n");
  test::write_file(jobs / "yolo-job.killed/repo/file", "x");
  test::write_file(jobs / "yolo-job.alive/pid", std::to_string(::getpid()) + " " + ns + "\n");
  test::write_file(jobs / "yolo-job.elsewhere/pid", trim(dead.out) + " pid:[1]\n");  // another pid namespace
  test::write_file(jobs / "yolo-job.starting/repo/file", "x");
  auto r = run_program({adapter("run-job"), "--remote", remote.bare.string(), "--base-commit", remote.base, "--branch",
                        "yolo/c1/next", "--plan-id", "01-01", "--correlation-id", "c1", "--attempt", "1", "--",
                        "agents/exec"},
                       tmp.path(), {"TMPDIR=" + jobs.string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_FALSE(stdfs::exists(jobs / "yolo-job.killed"));
  EXPECT_TRUE(stdfs::exists(jobs / "yolo-job.alive/pid"));
  EXPECT_TRUE(stdfs::exists(jobs / "yolo-job.elsewhere/pid"));
  EXPECT_TRUE(stdfs::exists(jobs / "yolo-job.starting/repo/file"));
}

TEST(DispatchAdapterTest, RunJobPushesTheBranchOnlyWhenTheExecutorCommitted) {
  TempDir tmp;
  Remote remote(tmp.path());
  auto run = [&](const std::string& branch, const std::vector<std::string>& exec) {
    std::vector<std::string> argv{adapter("run-job"),
                                  "--remote",
                                  remote.bare.string(),
                                  "--base-commit",
                                  remote.base,
                                  "--branch",
                                  branch,
                                  "--plan-id",
                                  "01-01",
                                  "--correlation-id",
                                  "c1",
                                  "--attempt",
                                  "1",
                                  "--"};
    argv.insert(argv.end(), exec.begin(), exec.end());
    return run_program(argv, tmp.path(), {"TMPDIR=" + tmp.path().string()});
  };
  auto r = run("yolo/c1/ok", {"agents/exec", "$(touch pwned)", "a b"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  ASSERT_TRUE(has_branch(remote.bare, "yolo/c1/ok"));
  EXPECT_EQ(trim(git({"rev-parse", "yolo/c1/ok^"}, remote.bare).out), remote.base) << "one commit on the base";
  EXPECT_EQ(show(remote.bare, "yolo/c1/ok:out-01-01.txt"), "01-01\n$(touch pwned)\na b\n")
      << "the argv reaches the executor as it is";
  EXPECT_FALSE(stdfs::exists(tmp.path() / "pwned"));
  EXPECT_NE(r.out.find("pushed yolo/c1/ok (1 commit(s)"), std::string::npos) << r.out;

  // Again: the branch is there, nothing is run or pushed again.
  std::string before = trim(git({"rev-parse", "yolo/c1/ok"}, remote.bare).out);
  r = run("yolo/c1/ok", {"agents/exec"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find("already on the remote"), std::string::npos) << r.out;
  EXPECT_EQ(trim(git({"rev-parse", "yolo/c1/ok"}, remote.bare).out), before);

  r = run("yolo/c1/fail", {"agents/exec", "fail"});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find("the executor exited 1; nothing pushed"), std::string::npos) << r.err;
  EXPECT_FALSE(has_branch(remote.bare, "yolo/c1/fail"));

  r = run("yolo/c1/nothing", {"agents/exec", "nothing"});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find("made no commit"), std::string::npos) << r.err;
  EXPECT_FALSE(has_branch(remote.bare, "yolo/c1/nothing"));

  std::vector<std::string> bad{adapter("run-job"),   "--remote", remote.bare.string(), "--base-commit",
                               std::string(40, 'a'), "--branch", "yolo/c1/nobase",     "--",
                               "agents/exec"};
  r = run_program(bad, tmp.path(), {"TMPDIR=" + tmp.path().string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find("is not on the remote"), std::string::npos) << r.err;
  EXPECT_EQ(git({"for-each-ref", "--format=%(refname)", "refs/heads/"}, remote.bare).out,
            "refs/heads/main\nrefs/heads/yolo/c1/ok\n")
      << "only the one branch was pushed, main untouched";
  // Clones are cleaned up.
  for (const auto& e : stdfs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().rfind("yolo-job.", 0), std::string::npos) << e.path();
}

// The Job submit would create (kubectl on the client side, no cluster): its container command
// run here does the plan's work.
TEST(DispatchAdapterTest, TheKubernetesJobsCommandRunsThePlan) {
  if (run_program({"sh", "-c", "command -v kubectl"}).exit_code != 0) GTEST_SKIP() << "skipped: no kubectl";
  TempDir tmp;
  Remote remote(tmp.path());
  auto r = run_program({adapter("kubernetes"), "manifest", "--image", "debian:bookworm", "--plan-id", "01-05",
                        "--correlation-id", "c9", "--attempt", "2", "--base-commit", remote.base, "--branch",
                        "yolo/c9/01-05", "--remote", remote.bare.string(), "--", "agents/exec", "k 8"},
                       tmp.path(), {"KUBECONFIG=/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json job = json::parse(r.out);
  std::string name = trim(
      run_program({adapter("kubernetes"), "name", "--plan-id", "01-05", "--correlation-id", "c9", "--attempt", "2"})
          .out);
  EXPECT_EQ(job["metadata"]["name"], name);
  EXPECT_EQ(job["spec"]["backoffLimit"], 0) << "Kubernetes does not run a failed plan again";
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  ASSERT_EQ(pod["containers"].size(), 1u);
  EXPECT_EQ(pod["containers"][0]["image"], "debian:bookworm");
  EXPECT_FALSE(pod["containers"][0].contains("env")) << "nothing of yolo's environment travels";
  std::vector<std::string> cmd = pod["containers"][0]["command"].get<std::vector<std::string>>();
  ASSERT_GE(cmd.size(), 3u);
  EXPECT_EQ(cmd[0], "bash");
  EXPECT_EQ(cmd[1], "-c");
  EXPECT_EQ(cmd[2], test::read_file(adapter("run-job")).substr(0, cmd[2].size()));
  r = run_program(cmd, tmp.path(), {"TMPDIR=" + tmp.path().string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(show(remote.bare, "yolo/c9/01-05:out-01-05.txt"), "01-05\nk 8\n");
}

// The GitHub workflow's script (after actions/checkout of the base commit), run here.
TEST(DispatchAdapterTest, TheGithubWorkflowsScriptRunsThePlan) {
  TempDir tmp;
  Remote remote(tmp.path());
  YAML::Node wf = YAML::LoadFile(adapter("github-actions.yml"));
  EXPECT_EQ(wf["run-name"].as<std::string>(), "${{ inputs.job_name }}");
  YAML::Node inputs = wf["on"]["workflow_dispatch"]["inputs"];
  for (const char* in :
       {"job_name", "plan_id", "correlation_id", "attempt", "base_commit", "branch", "plan_path", "executor_b64"})
    EXPECT_TRUE(inputs[in]) << in;
  YAML::Node steps = wf["jobs"]["plan"]["steps"];
  ASSERT_EQ(steps.size(), 2u);
  std::string run = steps[1]["run"].as<std::string>();
  EXPECT_EQ(run.find("${{"), std::string::npos) << "inputs reach the script through env only";

  auto dry = run_program(submit_argv("github-actions", "01-07", "c2", "1", remote, "yolo/c2/01-07",
                                     {"agents/exec", "g h", "it's"}, {"--dry-run"}));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dry.out, m, std::regex("executor_b64=([A-Za-z0-9+/=]+)"))) << dry.out;
  // actions/checkout: a clone of the remote at the base commit.
  stdfs::path ws = tmp.path() / "ws";
  ASSERT_EQ(git({"clone", "-q", remote.bare.string(), ws.string()}, tmp.path()).exit_code, 0);
  ASSERT_EQ(git({"checkout", "-q", "--detach", remote.base}, ws).exit_code, 0);
  auto r =
      run_program({"bash", "-c", run}, ws,
                  {"YOLO_PLAN_ID=01-07", "YOLO_CORRELATION_ID=c2", "YOLO_ATTEMPT=1", "YOLO_BASE_COMMIT=" + remote.base,
                   "YOLO_BRANCH=yolo/c2/01-07", "YOLO_PLAN_PATH=", "EXECUTOR_B64=" + m[1].str()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(show(remote.bare, "yolo/c2/01-07:out-01-07.txt"), "01-07\ng h\nit's\n");
}

// The engine-less adapter: jobs are background processes here, same contract.
TEST(DispatchAdapterTest, TheLocalAdapterRunsAWaveAndNeverStartsAJobTwice) {
  TempDir tmp;
  Remote remote(tmp.path());
  std::vector<std::string> env{"YOLO_DISPATCH_LOCAL_DIR=" + (tmp.path() / "jobs").string(),
                               "TMPDIR=" + tmp.path().string()};
  auto submit = [&](const std::string& plan, const std::vector<std::string>& exec) {
    return run_program(submit_argv("local", plan, "c5", "1", remote, "yolo/c5/" + plan, exec), tmp.path(), env);
  };
  std::vector<std::string> handles;
  for (const char* p : {"05-01", "05-02", "05-03", "05-04"}) {
    auto r = submit(p, {"agents/exec", "local"});
    ASSERT_EQ(r.exit_code, 0) << dump(r);
    EXPECT_EQ(r.json_out()["reused"], false);
    handles.push_back(r.json_out()["handle"]);
  }
  auto again = submit("05-02", {"agents/exec", "local"});
  ASSERT_EQ(again.exit_code, 0) << dump(again);
  EXPECT_EQ(again.json_out()["handle"], handles[1]);
  EXPECT_EQ(again.json_out()["reused"], true);
  for (const auto& h : handles) {
    auto w = run_program({adapter("local"), "wait", h}, tmp.path(), env);
    EXPECT_EQ(w.exit_code, 0) << h << " " << dump(w);
  }
  for (const char* p : {"05-01", "05-02", "05-03", "05-04"})
    EXPECT_EQ(show(remote.bare, std::string("yolo/c5/") + p + ":out-" + p + ".txt"), std::string(p) + "\nlocal\n");
  EXPECT_EQ(trim(git({"rev-list", "--count", "main..yolo/c5/05-02"}, remote.bare).out), "1") << "run once";

  auto f = submit("05-05", {"agents/exec", "fail"});
  auto w = run_program({adapter("local"), "wait", f.json_out()["handle"]}, tmp.path(), env);
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("exited 1"), std::string::npos) << w.err;
  EXPECT_FALSE(has_branch(remote.bare, "yolo/c5/05-05"));

  auto s = submit("05-06", {"agents/exec", "sleep", "60"});
  std::string h = s.json_out()["handle"];
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_program({adapter("local"), "cancel", h}, tmp.path(), env).exit_code, 0);
  w = run_program({adapter("local"), "wait", h}, tmp.path(), env);
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_FALSE(has_branch(remote.bare, "yolo/c5/05-06"));
  EXPECT_EQ(run_program({adapter("local"), "wait", "yolo-none"}, tmp.path(), env).exit_code, 2);
}

TEST(DispatchAdapterTest, ADemoPlanRunByTheLocalAdapterComesBackAndPassesTheSummaryGate) {
  TempDir tmp;
  DemoRemote demo(tmp.path());
  std::vector<std::string> env{"YOLO_DISPATCH_LOCAL_DIR=" + (tmp.path() / "jobs").string(),
                               "TMPDIR=" + tmp.path().string()};
  auto r = run_program(demo.submit("local", "01-01", "d1", "yolo/d1/01-01"), tmp.path(), env);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto w = run_program({adapter("local"), "wait", r.json_out()["handle"]}, tmp.path(), env);
  ASSERT_EQ(w.exit_code, 0) << dump(w)
                            << test::read_file(tmp.path() / "jobs" / r.json_out()["handle"].get<std::string>() / "log");
  demo.expect_summary_gate_passes(tmp.path(), "01-01", "yolo/d1/01-01");
}

// --- With the one-node cluster of scripts/slurm-up --------------------------------------------

class SlurmClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const test::SlurmCluster& c = test::shared_slurm();
    up_ = c.up;
    reason_ = c.reason;
    conf_ = c.conf();
    if (!up_) std::cout << "skipped: " << reason_ << std::endl;
  }
  void SetUp() override {
    if (!up_) GTEST_SKIP() << "skipped: " << reason_;
    env_ = {"SLURM_CONF=" + conf_, "YOLO_SLURM_LOG_DIR=" + tmp_.path().string(), "YOLO_SLURM_POLL=0.5",
            "XDG_RUNTIME_DIR=", "TMPDIR=" + tmp_.path().string()};
    // A run id of its own per test: names never meet those of another test or an earlier run.
    corr_ = "t" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  RunResult slurm(const std::vector<std::string>& args) {
    std::vector<std::string> argv{adapter("slurm")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, tmp_.path(), env_);
  }
  RunResult submit(const Remote& remote, const std::string& plan, const std::string& attempt,
                   const std::vector<std::string>& exec) {
    return run_program(submit_argv("slurm", plan, corr_, attempt, remote, branch(plan, attempt), exec), tmp_.path(),
                       env_);
  }
  std::string branch(const std::string& plan, const std::string& attempt) const {
    return "yolo/" + corr_ + "/" + plan + "-a" + attempt;
  }
  // Jobs the controller knows by this name (any state).
  std::vector<std::string> jobs_named(const std::string& name) {
    auto r = run_program({"squeue", "-h", "--states=all", "--name=" + name, "-o", "%i"}, tmp_.path(), env_);
    EXPECT_EQ(r.exit_code, 0) << dump(r);
    return lines(r.out);
  }
  static inline bool up_ = false;
  static inline std::string reason_, conf_;
  TempDir tmp_;
  std::vector<std::string> env_;
  std::string corr_;
};

TEST_F(SlurmClusterTest, AWaveOfFourJobsPushesFourBranchesAndASecondSubmitStartsNoJob) {
  Remote remote(tmp_.path());
  std::vector<std::string> plans{"01-01", "01-02", "01-03", "01-04"};
  std::vector<std::string> handles;
  for (const auto& p : plans) {
    auto r = submit(remote, p, "1", {"agents/exec", "wave 1", "$(touch pwned)"});
    ASSERT_EQ(r.exit_code, 0) << dump(r);
    json h = r.json_out();
    EXPECT_EQ(h["reused"], false);
    EXPECT_EQ(h["url"], "slurm:" + h["handle"].get<std::string>());
    handles.push_back(h["handle"]);
  }
  EXPECT_EQ(std::set<std::string>(handles.begin(), handles.end()).size(), 4u);
  for (size_t i = 0; i < plans.size(); ++i) {
    auto w = slurm({"wait", handles[i]});
    EXPECT_EQ(w.exit_code, 0) << plans[i] << " " << dump(w);
    EXPECT_TRUE(w.out.empty()) << w.out;
  }
  for (const auto& p : plans) {
    std::string b = branch(p, "1");
    ASSERT_TRUE(has_branch(remote.bare, b)) << b;
    EXPECT_EQ(show(remote.bare, b + ":out-" + p + ".txt"), p + "\nwave 1\n$(touch pwned)\n");
    EXPECT_EQ(trim(git({"rev-parse", b + "^"}, remote.bare).out), remote.base);
  }
  EXPECT_FALSE(stdfs::exists(tmp_.path() / "pwned"));

  // The same plan and attempt again (a yolo restarted mid-wave): the same job, none started.
  auto again = submit(remote, "01-02", "1", {"agents/exec", "wave 1"});
  ASSERT_EQ(again.exit_code, 0) << dump(again);
  EXPECT_EQ(again.json_out()["handle"], handles[1]);
  EXPECT_EQ(again.json_out()["reused"], true);
  std::string name = again.json_out()["job_name"];
  EXPECT_EQ(jobs_named(name), std::vector<std::string>{handles[1]}) << "one job of that name";
  EXPECT_EQ(slurm({"wait", handles[1]}).exit_code, 0);

  // A new attempt of the same plan is a new job.
  auto a2 = submit(remote, "01-02", "2", {"agents/exec", "retry"});
  ASSERT_EQ(a2.exit_code, 0) << dump(a2);
  EXPECT_NE(a2.json_out()["handle"], handles[1]);
  EXPECT_EQ(a2.json_out()["reused"], false);
  EXPECT_EQ(slurm({"wait", a2.json_out()["handle"]}).exit_code, 0);
  EXPECT_TRUE(has_branch(remote.bare, branch("01-02", "2")));
}

TEST_F(SlurmClusterTest, TwoSubmitsAtOnceOfOnePlanStartOneJob) {
  Remote remote(tmp_.path());
  RunResult r1, r2;
  std::thread t1([&] { r1 = submit(remote, "02-01", "1", {"agents/exec", "sleep", "1"}); });
  std::thread t2([&] { r2 = submit(remote, "02-01", "1", {"agents/exec", "sleep", "1"}); });
  t1.join();
  t2.join();
  ASSERT_EQ(r1.exit_code, 0) << dump(r1);
  ASSERT_EQ(r2.exit_code, 0) << dump(r2);
  EXPECT_EQ(r1.json_out()["handle"], r2.json_out()["handle"]);
  EXPECT_NE(r1.json_out()["reused"], r2.json_out()["reused"]) << "one submitted, the other found it";
  EXPECT_EQ(jobs_named(r1.json_out()["job_name"]).size(), 1u);
  EXPECT_EQ(slurm({"wait", r1.json_out()["handle"]}).exit_code, 0);
}

TEST_F(SlurmClusterTest, AFailingJobAndAJobThatPushesNothingFailTheirWait) {
  Remote remote(tmp_.path());
  auto f = submit(remote, "03-01", "1", {"agents/exec", "fail"});
  auto n = submit(remote, "03-02", "1", {"agents/exec", "nothing"});
  ASSERT_EQ(f.exit_code, 0) << dump(f);
  ASSERT_EQ(n.exit_code, 0) << dump(n);
  auto wf = slurm({"wait", f.json_out()["handle"]});
  EXPECT_EQ(wf.exit_code, 1) << dump(wf);
  EXPECT_NE(wf.err.find("FAILED"), std::string::npos) << wf.err;
  auto wn = slurm({"wait", n.json_out()["handle"]});
  EXPECT_EQ(wn.exit_code, 1) << dump(wn);
  EXPECT_FALSE(has_branch(remote.bare, branch("03-01", "1")));
  EXPECT_FALSE(has_branch(remote.bare, branch("03-02", "1")));
  // The job's log (named in wait's message) says why.
  std::string log = (tmp_.path() / (f.json_out()["job_name"].get<std::string>() + "-" +
                                    f.json_out()["handle"].get<std::string>() + ".log"))
                        .string();
  EXPECT_NE(wf.err.find(log), std::string::npos) << wf.err;
  EXPECT_NE(test::read_file(log).find("the executor exited 1; nothing pushed"), std::string::npos);
  std::string nlog = (tmp_.path() / (n.json_out()["job_name"].get<std::string>() + "-" +
                                     n.json_out()["handle"].get<std::string>() + ".log"))
                         .string();
  EXPECT_NE(test::read_file(nlog).find("made no commit"), std::string::npos);
}

TEST_F(SlurmClusterTest, CancelEndsARunningJobAndItsWaitFails) {
  Remote remote(tmp_.path());
  auto s = submit(remote, "04-01", "1", {"agents/exec", "sleep", "60"});
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  std::string id = s.json_out()["handle"];
  auto c = slurm({"cancel", id});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  auto start = std::chrono::steady_clock::now();
  auto w = slurm({"wait", id});
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("CANCELLED"), std::string::npos) << w.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_FALSE(has_branch(remote.bare, branch("04-01", "1")));
  EXPECT_EQ(slurm({"cancel", id}).exit_code, 0) << "cancelling an ended job is not an error";
  auto u = slurm({"wait", "999999"});
  EXPECT_EQ(u.exit_code, 2) << dump(u);
  EXPECT_NE(u.err.find("unknown"), std::string::npos) << u.err;
}

TEST_F(SlurmClusterTest, DemoPlansRunAsJobsComeBackAndPassTheSummaryGate) {
  DemoRemote demo(tmp_.path());
  std::vector<std::string> handles;
  for (const char* p : {"01-01", "01-02"}) {
    auto r = run_program(demo.submit("slurm", p, corr_, "yolo/" + corr_ + "/" + p), tmp_.path(), env_);
    ASSERT_EQ(r.exit_code, 0) << dump(r);
    handles.push_back(r.json_out()["handle"]);
  }
  for (const auto& h : handles) EXPECT_EQ(slurm({"wait", h}).exit_code, 0) << h;
  for (const char* p : {"01-01", "01-02"}) demo.expect_summary_gate_passes(tmp_.path(), p, "yolo/" + corr_ + "/" + p);
}

// The submitter dies mid-job (yolo killed with its wait processes) and comes back: its submit
// gets the same job, its wait sees it end; the plan ran once.
TEST_F(SlurmClusterTest, AKilledWaiterReattachesAndThePlanRunsOnce) {
  Remote remote(tmp_.path());
  auto s = submit(remote, "06-01", "1", {"agents/exec", "sleep", "3"});
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  std::string id = s.json_out()["handle"];
  {
    std::vector<std::string> argv{"env"};
    argv.insert(argv.end(), env_.begin(), env_.end());
    argv.insert(argv.end(), {adapter("slurm"), "wait", id});
    test::BgProcess waiter(argv, tmp_.path());
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    waiter.signal(SIGKILL);
    EXPECT_NE(waiter.wait_exit(std::chrono::seconds(10)), 0);
  }
  auto again = submit(remote, "06-01", "1", {"agents/exec", "sleep", "3"});
  ASSERT_EQ(again.exit_code, 0) << dump(again);
  EXPECT_EQ(again.json_out()["handle"], id);
  EXPECT_EQ(again.json_out()["reused"], true);
  auto w = slurm({"wait", id});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_EQ(jobs_named(again.json_out()["job_name"]), std::vector<std::string>{id});
  EXPECT_EQ(trim(git({"rev-list", "--count", "main.." + branch("06-01", "1")}, remote.bare).out), "1");
}


// --- Stand-in kubectl and gh on PATH: what the adapters make of an engine that errs -----------

// A stand-in client: each call is logged; its answers come from files the test writes
// (ANSWER_DIR/<n>: the n-th call of that kind answers with that file's text and exit status,
// the last one repeating).
struct StandIn {
  StandIn(const stdfs::path& dir, const std::string& program) : bin(dir / "bin"), answers(dir / "answers"), log(dir / "calls") {
    stdfs::create_directories(bin);
    stdfs::create_directories(answers);
    // kind: the first word of the call that matters ("get", "wait", "logs", "view"...).
    test::write_file(bin / program,
                     "#!/bin/bash\n"
                     "printf '%s\\n' \"$*\" >> '" + log.string() + "'\n"
                     "kind=\n"
                     "for a in \"$@\"; do case $a in get|wait|logs|view|delete|cancel|list) kind=$a; break ;; esac; done\n"
                     "[ \"$kind\" = get ] && case \" $* \" in *' pods '*) kind=pods ;; esac\n"
                     "[ \"$kind\" = view ] && case \" $* \" in *' --log-failed '*) kind=logfailed ;; esac\n"
                     "d='" + answers.string() + "'/$kind\n"
                     "[ -d \"$d\" ] || exit 0\n"
                     "n=$(cat \"$d/.n\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \"$d/.n\"\n"
                     "f=; for ((k = n; k >= 1; k--)); do [ -e \"$d/$k\" ] && { f=$d/$k; break; }; done\n"
                     "[ -n \"$f\" ] || exit 0\n"
                     "code=$(head -n 1 \"$f\"); tail -n +2 \"$f\" | { if [ \"$code\" = 0 ]; then cat; else cat >&2; fi; }\n"
                     "exit \"$code\"\n");
    stdfs::permissions(bin / program, stdfs::perms::owner_all);
  }
  // The n-th call of kind answers `text` (stdout when code is 0, stderr otherwise).
  void answer(const std::string& kind, int n, int code, const std::string& text) {
    stdfs::create_directories(answers / kind);
    test::write_file(answers / kind / std::to_string(n), std::to_string(code) + "\n" + text);
  }
  std::string path_env() const { return "PATH=" + bin.string() + ":" + std::getenv("PATH"); }
  size_t calls(const std::string& word) const {
    size_t n = 0;
    if (!stdfs::exists(log)) return 0;
    for (const auto& l : lines(test::read_file(log))) n += l.find(word) != std::string::npos;
    return n;
  }
  stdfs::path bin, answers, log;
};

TEST(DispatchAdapterTest, KubernetesWaitWaitsOutAnUnreachableClusterAndNeverCallsItGone) {
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  // Three failed gets (an API server restarting), then Complete.
  k.answer("get", 1, 1, "Unable to connect to the server: dial tcp 10.0.0.1:6443: connect: connection refused\n");
  k.answer("get", 3, 1, "Unable to connect to the server: net/http: TLS handshake timeout\n");
  k.answer("get", 4, 0, "Complete ");
  k.answer("wait", 1, 1, "timed out\n");
  k.answer("logs", 1, 0, "run-job: the job's own output\n");
  std::vector<std::string> env{k.path_env(), "YOLO_K8S_POLL=1", "YOLO_DISPATCH_UNREACHABLE_SECONDS=60"};
  auto w = run_program({adapter("kubernetes"), "wait", "ci/yolo-01-01-a1-abc"}, tmp.path(), env);
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_NE(w.err.find("status: cluster not answering"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("run-job: the job's own output"), std::string::npos) << "the Job's log: " << w.err;

  // Never answering: given up on after the deadline with 3 (the Job may still run), not 2.
  TempDir t2;
  StandIn k2(t2.path(), "kubectl");
  k2.answer("get", 1, 1, "error: You must be logged in to the server (Unauthorized)\n");
  auto start = std::chrono::steady_clock::now();
  w = run_program({adapter("kubernetes"), "wait", "yolo-01-01-a1-abc"}, t2.path(),
                  {k2.path_env(), "YOLO_K8S_POLL=1", "YOLO_DISPATCH_UNREACHABLE_SECONDS=2"});
  EXPECT_EQ(w.exit_code, 3) << dump(w);
  EXPECT_NE(w.err.find("may still run"), std::string::npos) << w.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));

  // NotFound for the grace period: gone, 2.
  TempDir t3;
  StandIn k3(t3.path(), "kubectl");
  k3.answer("get", 1, 1, "Error from server (NotFound): jobs.batch \"yolo-01-01-a1-abc\" not found\n");
  w = run_program({adapter("kubernetes"), "wait", "yolo-01-01-a1-abc"}, t3.path(),
                  {k3.path_env(), "YOLO_K8S_POLL=1", "YOLO_K8S_NOTFOUND_SECONDS=1"});
  EXPECT_EQ(w.exit_code, 2) << dump(w);
}

TEST(DispatchAdapterTest, KubernetesSaysWhyAPodWaitsAndItsJobsHaveADeadline) {
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  k.answer("get", 1, 0, "");
  k.answer("get", 2, 0, "");
  k.answer("get", 3, 0, "Failed ");
  k.answer("pods", 1, 0, "Pending ImagePullBackOff ");
  k.answer("wait", 1, 1, "timed out\n");
  auto w = run_program({adapter("kubernetes"), "wait", "yolo-01-01-a1-abc"}, tmp.path(),
                       {k.path_env(), "YOLO_K8S_POLL=1"});
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("status: Pending ImagePullBackOff"), std::string::npos) << w.err;
  // The Job is made with a deadline (activeDeadlineSeconds): a pod that never starts fails it.
  Remote remote(tmp.path());
  auto r = run_program(submit_argv("kubernetes", "01-02", "c1", "1", remote, "b", {"x"},
                                   {"--dry-run", "--image", "debian:bookworm", "--deadline", "3600"}),
                       tmp.path(), {k.path_env()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find("\"activeDeadlineSeconds\":3600"), std::string::npos) << r.out;
  r = run_program(submit_argv("kubernetes", "01-02", "c1", "1", remote, "b", {"x"}, {"--dry-run", "--image", "i"}),
                  tmp.path(), {k.path_env()});
  EXPECT_NE(r.out.find("\"activeDeadlineSeconds\":21600"), std::string::npos) << "a default deadline: " << r.out;
}

TEST(DispatchAdapterTest, GithubWaitRidesOutARateLimitAndGivesUpOnlyAfterTheDeadline) {
  TempDir tmp;
  StandIn g(tmp.path(), "gh");
  g.answer("view", 1, 1, "HTTP 403: API rate limit exceeded for user ID 1.\n");
  g.answer("view", 3, 0, "in_progress ");
  g.answer("view", 4, 0, "completed success");
  auto w = run_program({adapter("github-actions"), "wait", "--poll", "1", "123"}, tmp.path(),
                       {g.path_env(), "YOLO_DISPATCH_UNREACHABLE_SECONDS=60"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_NE(w.err.find("status: GitHub not answering (HTTP 403: API rate limit exceeded"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("status: in_progress"), std::string::npos) << w.err;
  EXPECT_EQ(g.calls("run view 123"), 4u) << test::read_file(g.log);

  TempDir t2;
  StandIn g2(t2.path(), "gh");
  g2.answer("view", 1, 1, "HTTP 403: API rate limit exceeded\n");
  w = run_program({adapter("github-actions"), "wait", "--poll", "1", "123"}, t2.path(),
                  {g2.path_env(), "YOLO_DISPATCH_UNREACHABLE_SECONDS=2"});
  EXPECT_EQ(w.exit_code, 3) << dump(w);

  TempDir t3;
  StandIn g3(t3.path(), "gh");
  g3.answer("view", 1, 0, "completed failure");
  g3.answer("logfailed", 1, 0, "plan\tstep\trun-job: ✗ the executor exited 1\n");
  w = run_program({adapter("github-actions"), "wait", "--poll", "1", "123"}, t3.path(), {g3.path_env()});
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("the executor exited 1"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("ended: failure"), std::string::npos) << w.err;
}

// --- scripts/slurm-up: a cluster per folder and port ---------------------------------------

TEST(SlurmUpTest, EachFolderGetsItsOwnClusterAndADrainedNodeIsResumedWithoutARestart) {
  TempDir tmp;
  test::PrivateSlurm a(tmp.path() / "a");
  if (!a.cluster().up) GTEST_SKIP() << "skipped: " << a.cluster().reason;
  test::PrivateSlurm b(tmp.path() / "b");
  ASSERT_TRUE(b.cluster().up) << b.cluster().reason;
  auto port = [](const test::SlurmCluster& c) {
    std::smatch m;
    std::string conf = test::read_file(c.conf());
    EXPECT_TRUE(std::regex_search(conf, m, std::regex("SlurmctldPort=([0-9]+)"))) << conf;
    return m[1].str();
  };
  EXPECT_NE(port(a.cluster()), port(b.cluster()));
  EXPECT_NE(port(a.cluster()), "6817") << "never the default port of a person's cluster";
  // Each answers for itself: a job in one is not in the other.
  auto sb = run_program({"sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true"}, tmp.path(), a.cluster().env());
  ASSERT_EQ(sb.exit_code, 0) << dump(sb);
  auto q = run_program({"squeue", "-h", "--states=all", "-o", "%i"}, tmp.path(), b.cluster().env());
  EXPECT_EQ(q.exit_code, 0) << dump(q);
  EXPECT_TRUE(trim(q.out).empty()) << q.out;
  // The /etc/slurm/slurm.conf link is only ever the default folder's.
  std::error_code ec;
  if (stdfs::is_symlink("/etc/slurm/slurm.conf", ec)) {
    EXPECT_EQ(stdfs::read_symlink("/etc/slurm/slurm.conf", ec).string().find(tmp.path().string()), std::string::npos);
  }
  // A drained node: slurm-up resumes it, its daemons keep running (same pids).
  std::string pid = trim(test::read_file(a.cluster().dir / "run" / "slurmctld.pid"));
  ASSERT_EQ(run_program({"scontrol", "update", "nodename=localhost", "state=drain", "reason=test"}, tmp.path(),
                        a.cluster().env())
                .exit_code,
            0);
  auto again = test::start_slurm(a.cluster().dir);
  EXPECT_TRUE(again.up) << again.reason;
  EXPECT_EQ(trim(test::read_file(a.cluster().dir / "run" / "slurmctld.pid")), pid) << "no restart";
  auto st = run_program({"sinfo", "-h", "-N", "-o", "%T"}, tmp.path(), a.cluster().env());
  EXPECT_EQ(trim(st.out).rfind("idle", 0), 0u) << st.out;
}

// --- cmake --install: the adapters go with yolo, and the templates find them --------------

TEST(DispatchAdapterTest, CmakeInstallInstallsTheAdaptersWhereTheTemplatesFindThem) {
  TempDir tmp;
  stdfs::path build = stdfs::path(test::yolo_bin()).parent_path();
  stdfs::path prefix = tmp.path() / "prefix";
  auto in = run_program({"cmake", "--install", build.string(), "--component", "dispatch", "--prefix", prefix.string()},
                        tmp.path());
  ASSERT_EQ(in.exit_code, 0) << dump(in);
  stdfs::path dir = prefix / "libexec" / "yolo" / "dispatch";
  for (const char* f : {"slurm", "kubernetes", "github-actions", "local", "run-job"}) {
    EXPECT_EQ(::access((dir / f).c_str(), X_OK), 0) << f;
  }
  for (const char* f : {"lib.sh", "github-actions.yml"}) EXPECT_TRUE(stdfs::exists(dir / f)) << f;
  // An installed adapter runs (it finds lib.sh beside itself).
  auto name = run_program({(dir / "slurm").string(), "name", "--plan-id", "01-01", "--correlation-id", "c", "--attempt", "1"});
  EXPECT_EQ(name.exit_code, 0) << dump(name);
  EXPECT_EQ(trim(name.out).rfind("yolo-01-01-a1-", 0), 0u) << name.out;
  // yolo installed beside them: `{dispatch_dir}` in a template is that folder.
  stdfs::create_directories(prefix / "bin");
  stdfs::copy_file(test::yolo_bin(), prefix / "bin" / "yolo");
  stdfs::path proj = tmp.path() / "proj";
  test::copy_fixture("demo", proj);
  json cfg = json::parse(test::read_file(proj / ".yolo-planning" / "config.json"));
  cfg["dispatch"] = {{"submit",
                      {"{dispatch_dir}/local", "submit", "--plan-id", "{plan_id}", "--correlation-id",
                       "{correlation_id}", "--attempt", "{attempt}", "--branch", "{branch}", "--", "x"}},
                     {"wait", {"{dispatch_dir}/local", "wait", "{handle}"}},
                     {"cancel", {"{dispatch_dir}/local", "cancel", "{handle}"}},
                     {"remote", "origin"}};
  test::write_file(proj / ".yolo-planning" / "config.json", cfg.dump(2));
  auto dry = run_program({(prefix / "bin" / "yolo").string(), "execute", "--dry-run", "--json"}, proj,
                         {"YOLO_DISPATCH_DIR="});
  ASSERT_EQ(dry.exit_code, 0) << dump(dry);
  json d = dry.json_out();
  EXPECT_EQ(d["dispatch"]["submit"][0], (dir / "local").string()) << d.dump();
}


// --- The wave-level form: one submission and one poller for a wave ---------------------------

// A wave's task file (docs/dispatch.md): per task its argument count, then the arguments, all
// NUL-terminated, as yolo writes it.
std::vector<std::string> wave_task(const std::string& plan, const Remote& remote, const std::vector<std::string>& exec) {
  std::vector<std::string> t{"--plan-id", plan,          "--correlation-id", "cw",        "--attempt",
                             "1",         "--base-commit", remote.base,      "--branch",  "yolo/cw/" + plan,
                             "--remote",  remote.bare.string(), "--plan-path", "p/" + plan + " it's.md", "--"};
  t.insert(t.end(), exec.begin(), exec.end());
  return t;
}
stdfs::path write_tasks(const stdfs::path& f, const std::vector<std::vector<std::string>>& tasks) {
  test::write_file(f, dispatch::tasks_file(tasks));  // the file yolo writes for submit-wave
  return f;
}

TEST(DispatchAdapterTest, WaveFormsDryRunsPrintOneSubmissionForTheWholeWaveAndRunNothing) {
  TempDir tmp;
  Remote remote(tmp.path());
  FakeClients fake(tmp.path());
  auto tasks = write_tasks(tmp.path() / "tasks", {wave_task("01-01", remote, {"agents/exec", "a b"}),
                                                  wave_task("01-02", remote, {"agents/exec", "$(x)"}),
                                                  wave_task("01-03", remote, {"agents/exec"})});
  std::vector<std::string> common{"--dry-run", "--tasks", tasks.string(), "--correlation-id", "cw",
                                  "--max-parallel", "2", "--wave", "1"};
  auto run = [&](const std::string& a, std::vector<std::string> extra) {
    std::vector<std::string> argv{adapter(a), "submit-wave"};
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_program(argv, tmp.path(), {fake.path_env()});
  };
  auto s = run("slurm", {});
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  EXPECT_NE(s.out.find("sbatch --parsable --job-name=yolo-w1-"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("--array=0-2%2 --no-requeue"), std::string::npos) << s.out;
  EXPECT_EQ(lines(s.out).size(), 4u + 3u)
      << "lookup, accounting lookup, job completion lookup, one sbatch, one line per task: " << s.out;
  // Each task's arguments, quoted for bash (the plan text never reaches a shell unquoted).
  EXPECT_NE(s.out.find("1) set -- --remote"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("-- agents/exec \\$\\(x\\)"), std::string::npos) << s.out;
  auto k = run("kubernetes", {"--image", "debian:bookworm"});
  ASSERT_EQ(k.exit_code, 0) << dump(k);
  EXPECT_NE(k.out.find("\"completionMode\":\"Indexed\",\"completions\":3,\"parallelism\":2,\"backoffLimitPerIndex\":0"),
            std::string::npos)
      << k.out;
  auto g = run("github-actions", {});
  ASSERT_EQ(g.exit_code, 0) << dump(g);
  EXPECT_NE(g.out.find("gh workflow run yolo-dispatch-wave.yml -f job_name=yolo-w1-"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("-f indexes=[0,1,2] -f max_parallel=2"), std::string::npos) << g.out;
  // One poll command for the whole wave.
  for (const char* a : {"slurm", "kubernetes", "github-actions"}) {
    auto w = run_program({adapter(a), "wait-wave", "--dry-run", "42"}, tmp.path(), {fake.path_env()});
    EXPECT_EQ(w.exit_code, 0) << a << dump(w);
    EXPECT_FALSE(w.out.empty()) << a;
  }
  EXPECT_FALSE(fake.ran_any()) << test::read_file(fake.marks);
  // An array's tasks share one request: tasks asking for different resources are refused.
  std::vector<std::string> t2 = wave_task("01-02", remote, {"agents/exec"});
  t2.insert(t2.begin(), {"--cpus", "4"});
  write_tasks(tasks, {wave_task("01-01", remote, {"agents/exec"}), t2});
  s = run("slurm", {});
  EXPECT_EQ(s.exit_code, 64) << dump(s);
  EXPECT_NE(s.err.find("task 1: its resources"), std::string::npos) << s.err;
}

TEST(DispatchAdapterTest, GithubRefusesAWaveLargerThanOneRunsMatrixOrInputsNamingTheWayOut) {
  // One workflow run's matrix makes at most 256 jobs and its inputs hold 65,535 characters:
  // a larger wave is refused before gh runs, saying how to split it.
  TempDir tmp;
  Remote remote(tmp.path());
  FakeClients fake(tmp.path());
  auto submit = [&](const std::vector<std::vector<std::string>>& ts) {
    auto tasks = write_tasks(tmp.path() / "tasks", ts);
    return run_program({adapter("github-actions"), "submit-wave", "--dry-run", "--tasks", tasks.string(),
                        "--correlation-id", "cw", "--wave", "1"},
                       tmp.path(), {fake.path_env()});
  };
  std::vector<std::vector<std::string>> ts;
  for (int k = 0; k < 257; ++k) ts.push_back(wave_task("01-" + std::to_string(100 + k), remote, {"agents/exec"}));
  auto big = submit(ts);
  EXPECT_EQ(big.exit_code, 1) << dump(big);
  EXPECT_NE(big.err.find("the wave has 257 tasks, more than one workflow run's matrix holds (256 jobs)"), std::string::npos)
      << big.err;
  EXPECT_NE(big.err.find("waves of at most 256 plans"), std::string::npos) << big.err;
  EXPECT_EQ(big.out.find("gh workflow run"), std::string::npos) << big.out;
  ts.resize(50);
  auto ok = submit(ts);
  EXPECT_EQ(ok.exit_code, 0) << dump(ok);
  // Few tasks, but long ones: past the inputs' size.
  auto wide = submit({wave_task("01-01", remote, {"agents/exec", std::string(70000, 'x')})});
  EXPECT_EQ(wide.exit_code, 1) << dump(wide);
  EXPECT_NE(wide.err.find("more than a run's inputs hold (65,535): split the phase into smaller waves"), std::string::npos)
      << wide.err;
  EXPECT_FALSE(fake.ran_any()) << test::read_file(fake.marks);
}

TEST(DispatchAdapterTest, SubmitWaveStartsNoProgramPerTask) {
  // A wave of a thousand tasks on a loaded login node: a program started per task (a hash, a
  // base64, tr and cut for a job name) is seconds before the array reaches the engine. The
  // helpers a task needed are stand-ins on PATH that count their calls: with --wave-key (as
  // yolo gives it) their number does not grow with the wave.
  TempDir tmp;
  Remote remote(tmp.path());
  FakeClients fake(tmp.path());
  stdfs::path calls = tmp.path() / "helper-calls";
  for (const char* p : {"sha256sum", "base64", "tr", "cut", "sed", "awk"}) {
    std::string real = trim(run_program({"sh", "-c", std::string("command -v ") + p}).out);
    ASSERT_FALSE(real.empty()) << p;
    test::write_file(fake.bin / p,
                     std::string("#!/bin/sh\necho ") + p + " >> '" + calls.string() + "'\nexec '" + real + "' \"$@\"\n");
    stdfs::permissions(fake.bin / p, stdfs::perms::owner_all);
  }
  auto helper_calls = [&](size_t n, const std::string& a, std::vector<std::string> extra) {
    std::vector<std::vector<std::string>> tasks;
    for (size_t k = 0; k < n; ++k) tasks.push_back(wave_task("01-" + std::to_string(10 + k), remote, {"agents/exec"}));
    auto f = write_tasks(tmp.path() / "tasks", tasks);
    std::error_code ec;
    stdfs::remove(calls, ec);
    std::vector<std::string> argv{adapter(a),         "submit-wave", "--dry-run", "--tasks", f.string(),
                                  "--correlation-id", "cw",          "--wave",    "1",       "--wave-key",
                                  "abc123"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = run_program(argv, tmp.path(), {fake.path_env()});
    EXPECT_EQ(r.exit_code, 0) << dump(r);
    EXPECT_NE(r.out.find(std::to_string(n - 1) + ") set -- --remote"), std::string::npos) << r.out;
    return stdfs::exists(calls) ? lines(test::read_file(calls)).size() : 0u;
  };
  for (const auto& [a, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"slurm", {}}, {"kubernetes", {"--image", "debian:bookworm"}}}) {
    size_t few = helper_calls(2, a, extra), many = helper_calls(30, a, extra);
    EXPECT_EQ(few, many) << a << ": programs started for 2 tasks: " << few << ", for 30: " << many;
  }
  EXPECT_FALSE(fake.ran_any());
}

TEST(DispatchAdapterTest, KubernetesWaitWaveReadsEveryIndexFromOneJobAndOnePodListPerPoll) {
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  k.answer("get", 1, 0, "3|||");
  k.answer("pods", 1, 0, "1 Pending ImagePullBackOff\n2 Running \n");
  k.answer("get", 2, 0, "3|0,2|1|");
  // Each ended task's log, from its pod, in the order the tasks are reported (0, 2, then 1).
  k.answer("logs", 1, 0, "zero did its work\n");
  k.answer("logs", 2, 0, "two did its work\n");
  k.answer("logs", 3, 0, "one broke\n");
  auto w = run_program({adapter("kubernetes"), "wait-wave", "ns/yolo-w1-abc"}, tmp.path(),
                       {k.path_env(), "YOLO_K8S_POLL=0.2"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_NE(w.out.find("task 0 log zero did its work\ntask 0 done\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 2 log two did its work\ntask 2 done\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 1 log one broke\ntask 1 failed "), std::string::npos) << w.out;
  EXPECT_EQ(k.calls("logs -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=1"), 1u)
      << test::read_file(k.log);
  EXPECT_NE(w.out.find("task 1 status Pending ImagePullBackOff\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 0 done\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 2 done\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 1 failed "), std::string::npos) << w.out;
  EXPECT_EQ(k.calls("get job yolo-w1-abc"), 2u) << test::read_file(k.log);
  EXPECT_EQ(k.calls("get pods -l job-name=yolo-w1-abc"), 1u) << test::read_file(k.log);
  // A task's handle is NAME#K: cancelling it deletes that index's pod, not the whole Job.
  auto c = run_program({adapter("kubernetes"), "cancel", "ns/yolo-w1-abc#1"}, tmp.path(), {k.path_env()});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  EXPECT_EQ(k.calls("delete pods -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=1"), 1u)
      << test::read_file(k.log);
  EXPECT_EQ(k.calls("delete job"), 0u) << test::read_file(k.log);
}

TEST(DispatchAdapterTest, KubernetesCancelOfAnIndexWithNoPodYetMarksItAndWaitWaveDeletesItsPodAsItAppears) {
  // Kubernetes cannot drop one index of an Indexed Job before its pod exists: `cancel NAME#K`
  // marks it on the Job and says so; wait-wave reports it failed at once and deletes its pod
  // when it appears, and ends only after that.
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  k.answer("get", 1, 0, "0||");  // index 0 done, index 2 neither done nor failed, none marked
  auto c = run_program({adapter("kubernetes"), "cancel", "ns/yolo-w1-abc#2"}, tmp.path(), {k.path_env()});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  EXPECT_NE(c.err.find("has not started: marked cancelled on the Job"), std::string::npos) << c.err;
  EXPECT_EQ(k.calls("annotate job yolo-w1-abc --overwrite yolo.dev/cancelled-indexes=2"), 1u)
      << test::read_file(k.log);
  EXPECT_EQ(k.calls("delete job"), 0u) << test::read_file(k.log);
  // The poller: index 2 marked, no pod yet; then its pod appears (deleted), then it failed.
  k.answer("get", 2, 0, "3|0|||2");
  k.answer("pods", 1, 0, "1 Running \n");
  k.answer("get", 3, 0, "3|0,1|||2");
  k.answer("pods", 2, 0, "2 Pending \n");
  k.answer("get", 4, 0, "3|0,1|2||2");
  auto w = run_program({adapter("kubernetes"), "wait-wave", "ns/yolo-w1-abc"}, tmp.path(),
                       {k.path_env(), "YOLO_K8S_POLL=0.2"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  auto two = w.out.find("task 2 failed job yolo-w1-abc index 2 cancelled before its pod started");
  EXPECT_NE(two, std::string::npos) << w.out;
  EXPECT_LT(two, w.out.find("task 1 done")) << "reported at once: " << w.out;
  EXPECT_EQ(k.calls("delete pods -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=2"), 2u)
      << "the cancel's, then wait-wave's as the pod appeared: " << test::read_file(k.log);
  EXPECT_EQ(k.calls("get job yolo-w1-abc"), 4u) << "wait-wave ran on until the pod was deleted: "
                                                << test::read_file(k.log);
  // An index that already ended: nothing to mark.
  TempDir t2;
  StandIn k2(t2.path(), "kubectl");
  k2.answer("get", 1, 0, "0|2|");
  c = run_program({adapter("kubernetes"), "cancel", "yolo-w1-abc#2"}, t2.path(), {k2.path_env()});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  EXPECT_EQ(k2.calls("annotate"), 0u) << test::read_file(k2.log);
}

TEST(DispatchAdapterTest, KubernetesWaitOfOneTaskReadsItsIndexAndItsCancelMark) {
  // `wait NAME#K` (a wave's plan re-attached after a restart) is about index K, not the whole
  // Job. Index 2 marked cancelled before its pod existed: no pod yet (status says so), then its
  // pod appears: deleted, and wait fails.
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  k.answer("get", 1, 0, "|0||2");  // conditions | completed | failed | marked
  k.answer("pods", 1, 0, "");
  k.answer("get", 3, 0, "Complete |0,1,2||2");  // what a wait blind to the index would take
  k.answer("pods", 2, 0, "Pending ContainerCreating ");
  std::vector<std::string> env{k.path_env(), "YOLO_K8S_POLL=1"};
  auto w = run_program({adapter("kubernetes"), "wait", "ns/yolo-w1-abc#2"}, tmp.path(), env);
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("status: cancelled before its pod started"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("index 2 was cancelled before its pod started"), std::string::npos) << w.err;
  EXPECT_EQ(k.calls("delete pods -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=2"), 1u)
      << test::read_file(k.log);
  EXPECT_EQ(k.calls("delete job"), 0u) << test::read_file(k.log);
  // Index 2 failed while the others run: 1 at once, its own log.
  TempDir t2;
  StandIn k2(t2.path(), "kubectl");
  k2.answer("get", 1, 0, "|0|2|");
  k2.answer("get", 2, 0, "Complete |0,1|2|");
  k2.answer("logs", 1, 0, "run-job: ✗ index two's own failure\n");
  w = run_program({adapter("kubernetes"), "wait", "yolo-w1-abc#2"}, t2.path(), {k2.path_env(), "YOLO_K8S_POLL=1"});
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("index 2 failed"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("index two's own failure"), std::string::npos) << w.err;
  EXPECT_EQ(k2.calls("logs -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=2"), 1u)
      << test::read_file(k2.log);
  // Index 2 completed while another index failed the Job: 0.
  TempDir t3;
  StandIn k3(t3.path(), "kubectl");
  k3.answer("get", 1, 0, "|2||");
  k3.answer("get", 2, 0, "Failed |2|0|");
  w = run_program({adapter("kubernetes"), "wait", "yolo-w1-abc#2"}, t3.path(), {k3.path_env(), "YOLO_K8S_POLL=1"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
}

TEST(DispatchAdapterTest, KubernetesGivesUpOnAPodThatCannotStartAfterItsStartDeadlineAndDeletesIt) {
  // One plan's Job: its pod never pulls its image. Past --start-deadline the Job is deleted
  // and wait fails (not after the Job's deadline of hours).
  TempDir tmp;
  StandIn k(tmp.path(), "kubectl");
  k.answer("get", 1, 0, "");  // no condition, ever
  k.answer("pods", 1, 0, "Pending ImagePullBackOff ");
  k.answer("wait", 1, 1, "timed out\n");
  auto start = std::chrono::steady_clock::now();
  auto w = run_program({adapter("kubernetes"), "wait", "ns/yolo-01-01-a1-abc"}, tmp.path(),
                       {k.path_env(), "YOLO_K8S_POLL=1", "YOLO_K8S_START_DEADLINE=2"});
  EXPECT_EQ(w.exit_code, 1) << dump(w);
  EXPECT_NE(w.err.find("never started (Pending ImagePullBackOff)"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("the job was deleted"), std::string::npos) << w.err;
  EXPECT_EQ(k.calls("delete job yolo-01-01-a1-abc --ignore-not-found"), 1u) << test::read_file(k.log);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // A pod that is only being created (ContainerCreating) is no such pod: the Job completes.
  TempDir t2;
  StandIn k2(t2.path(), "kubectl");
  k2.answer("get", 1, 0, "");
  k2.answer("get", 5, 0, "Complete ");
  k2.answer("pods", 1, 0, "Pending ContainerCreating ");
  k2.answer("wait", 1, 1, "timed out\n");
  w = run_program({adapter("kubernetes"), "wait", "yolo-01-01-a1-abc"}, t2.path(),
                  {k2.path_env(), "YOLO_K8S_POLL=1", "YOLO_K8S_START_DEADLINE=1"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_EQ(k2.calls("delete"), 0u) << test::read_file(k2.log);
  // A wave: task 1's pod cannot pull its image; past the deadline that pod alone is deleted
  // (its index fails), task 1 is reported failed, task 0 goes on and is done.
  TempDir t3;
  StandIn k3(t3.path(), "kubectl");
  k3.answer("get", 1, 0, "2|||");
  k3.answer("get", 40, 0, "2|0|1|");
  k3.answer("pods", 1, 0, "1 Pending ErrImagePull\n0 Running \n");
  w = run_program({adapter("kubernetes"), "wait-wave", "ns/yolo-w1-abc"}, t3.path(),
                  {k3.path_env(), "YOLO_K8S_POLL=0.2", "YOLO_K8S_START_DEADLINE=2"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_NE(w.out.find("task 1 failed its pod never started (Pending ErrImagePull)"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 0 done\n"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("task 0 failed"), std::string::npos) << w.out;
  EXPECT_EQ(k3.calls("delete pods -l job-name=yolo-w1-abc,batch.kubernetes.io/job-completion-index=1"), 1u)
      << test::read_file(k3.log);
  EXPECT_EQ(k3.calls("delete job"), 0u) << test::read_file(k3.log);
  EXPECT_EQ(k3.calls("index=0"), 1u) << "task 0's pod: only its log read, never deleted: " << test::read_file(k3.log);
  // A bad value is refused, naming the option.
  auto bad = run_program({adapter("kubernetes"), "wait", "--start-deadline", "soon", "x"}, t3.path(), {k3.path_env()});
  EXPECT_EQ(bad.exit_code, 64) << dump(bad);
  EXPECT_NE(bad.err.find("--start-deadline 'soon'"), std::string::npos) << bad.err;
}

// An array the controller has forgotten (MinJobAge passed) is read from accounting, task by
// task; without accounting its tasks are never taken as done.
TEST(DispatchAdapterTest, SlurmWaitWaveReadsAForgottenArrayFromAccountingAndNeverCallsItDone) {
  for (bool accounting : {true, false}) {
    TempDir tmp;
    StandIn sc(tmp.path() / "c", "scontrol");
    StandIn sa(tmp.path() / "a", "sacct");
    sc.answer("", 1, 0,
              "JobId=43 ArrayJobId=42 ArrayTaskId=0 JobState=RUNNING Reason=None ExitCode=0:0 StdOut=/nonexistent/0\n"
              "JobId=44 ArrayJobId=42 ArrayTaskId=1 JobState=RUNNING Reason=None ExitCode=0:0 StdOut=/nonexistent/1\n"
              "JobId=42 ArrayJobId=42 ArrayTaskId=2-3 JobState=PENDING Reason=Resources ExitCode=0:0 StdOut=/n/x\n");
    sc.answer("", 2, 1, "slurm_load_jobs error: Invalid job id specified\n");
    if (accounting)
      sa.answer("", 1, 0, "42_0|COMPLETED|0:0\n42_1|FAILED|1:0\n42_2|COMPLETED|0:0\n42_3|CANCELLED by 0|0:15\n");
    else
      sa.answer("", 1, 1, "sacct: error: Slurm accounting storage is disabled\n");
    const std::string path = "PATH=" + sc.bin.string() + ":" + sa.bin.string() + ":" + std::getenv("PATH");
    auto w = run_program({adapter("slurm"), "wait-wave", "--poll", "0.2", "42"}, tmp.path(),
                         {path, "YOLO_SLURM_UNKNOWN_SECONDS=1"});
    EXPECT_NE(w.out.find("task 2 status PENDING (Resources)\n"), std::string::npos) << dump(w);
    if (accounting) {
      EXPECT_EQ(w.exit_code, 0) << dump(w);
      EXPECT_NE(w.out.find("task 0 done\n"), std::string::npos) << w.out;
      EXPECT_NE(w.out.find("task 1 failed job 42_1 FAILED (exit code 1:0); log: /nonexistent/1"), std::string::npos)
          << w.out;
      EXPECT_NE(w.out.find("task 2 done\n"), std::string::npos) << w.out;
      EXPECT_NE(w.out.find("task 3 failed job 42_3 CANCELLED (exit code 0:15)"), std::string::npos) << w.out;
    } else {
      EXPECT_EQ(w.exit_code, 2) << dump(w);
      EXPECT_EQ(w.out.find(" done"), std::string::npos) << w.out;
      EXPECT_NE(w.err.find("array 42 is unknown to the controller"), std::string::npos) << w.err;
    }
    EXPECT_GE(sa.calls("-j 42"), 1u);
  }
}

// Canned `scontrol show job -o` answers of an array 42 of n tasks (wait-wave's stand-in).
std::string slurm_task_record(int k, const std::string& state, int n, int poll = 0) {
  return "JobId=" + std::to_string(1000 + k) + " ArrayJobId=42 ArrayTaskId=" + std::to_string(k) +
         " JobName=yolo-w1-x JobState=" + state + " Reason=None ExitCode=0:0 RunTime=00:00:" +
         std::to_string(10 + poll % 50) + " Comment=yolo-tasks=" + std::to_string(n) +
         " StdOut=/nonexistent/x-42_" + std::to_string(k) + ".log\n";
}
// The pending rest as scontrol prints it: "3-9,11,13-20%8".
std::string slurm_pending_record(const std::vector<int>& tasks, int n) {
  std::string list;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    list += (list.empty() ? "" : ",") + std::to_string(tasks[i]) +
            (j > i ? "-" + std::to_string(tasks[j]) : std::string());
    i = j + 1;
  }
  return "JobId=42 ArrayJobId=42 ArrayTaskId=" + list + "%8 JobName=yolo-w1-x JobState=PENDING " +
         "Reason=JobArrayTaskLimit ExitCode=0:0 RunTime=00:00:00 Comment=yolo-tasks=" + std::to_string(n) +
         " StdOut=/nonexistent/x-42_4294967294.log\n";
}

// A 1,000-task array whose pending range shrinks by 50 tasks a poll, the tasks that left it
// running (8) then COMPLETED (their records kept); task 500 is cancelled while pending at the
// third poll (the range splits in two: 150-499,501-999), task 777 at the tenth. Each task is
// said PENDING once and reported once; the two cancelled ones failed, CANCELLED, as they go.
TEST(DispatchAdapterTest, SlurmWaitWaveReportsEachTaskOfAShrinkingThousandTaskRangeOnce) {
  TempDir tmp;
  StandIn sc(tmp.path() / "c", "scontrol");
  StandIn sa(tmp.path() / "a", "sacct");
  sa.answer("", 1, 1, "sacct: error: Slurm accounting storage is disabled\n");
  const int n = 1000, polls = 20;
  for (int p = 1; p <= polls + 1; ++p) {
    std::string text;
    std::vector<int> pending;
    const int started = std::min(n, 50 * p);
    for (int k = 0; k < n; ++k) {
      if ((k == 500 && p >= 3) || (k == 777 && p >= 10)) continue;
      if (p > polls || k < started - 8) text += slurm_task_record(k, "COMPLETED", n, p);
      else if (k < started) text += slurm_task_record(k, "RUNNING", n, p);
      else pending.push_back(k);
    }
    if (!pending.empty()) text += slurm_pending_record(pending, n);
    sc.answer("", p, 0, text);
  }
  const std::string path = "PATH=" + sc.bin.string() + ":" + sa.bin.string() + ":" + std::getenv("PATH");
  auto w = run_program({adapter("slurm"), "wait-wave", "--poll", "0.01", "42"}, tmp.path(),
                       {path, "YOLO_SLURM_UNKNOWN_SECONDS=30"});  // a task left out ends `unknown`
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  std::map<int, std::vector<std::string>> ended, pending_said;
  for (const auto& l : lines(w.out)) {
    std::istringstream in(l);
    std::string word, what;
    int k = -1;
    in >> word >> k >> what;
    ASSERT_EQ(word, "task") << l;
    if (what == "done" || what == "failed" || what == "unknown") ended[k].push_back(l);
    if (l.find(" status PENDING") != std::string::npos) pending_said[k].push_back(l);
  }
  EXPECT_EQ(ended.size(), size_t(n)) << w.out.substr(0, 3000);
  for (int k = 0; k < n; ++k) {
    ASSERT_EQ(ended[k].size(), 1u) << "task " << k << ": " << ::testing::PrintToString(ended[k]);
    const std::string cancelled = "task " + std::to_string(k) + " failed job 42_" + std::to_string(k) +
                                  " CANCELLED while it was pending (Slurm keeps no record of it)";
    EXPECT_EQ(ended[k][0], k == 500 || k == 777 ? cancelled : "task " + std::to_string(k) + " done");
    const std::vector<std::string> said_once{"task " + std::to_string(k) + " status PENDING (JobArrayTaskLimit)"};
    if (k >= 50) {
      ASSERT_EQ(pending_said[k], said_once) << k;
    }
  }
  // Each cancelled task is reported at the poll that no longer lists it, long before the end.
  EXPECT_LT(w.out.find("task 500 failed"), w.out.find("task 400 done")) << w.out.substr(0, 3000);
  EXPECT_LT(w.out.find("task 777 failed"), w.out.find("task 700 done"));
}

// A poll of wait-wave costs the same whatever the array's size: 40 polls of a 1,000-task
// array (2 running records, the pending range 2-999%8) take about the CPU of 40 polls of a
// 10-task one (they walked each pending task on each poll: about nine times as much).
TEST(DispatchAdapterTest, SlurmWaitWavePollsAThousandTaskArrayForWhatATenTaskOneCosts) {
  auto cpu_of_polls = [](int n) {
    TempDir tmp;
    StandIn sc(tmp.path() / "c", "scontrol");
    std::vector<int> pending;
    for (int k = 2; k < n; ++k) pending.push_back(k);
    sc.answer("", 1, 0,
              slurm_task_record(0, "RUNNING", n) + slurm_task_record(1, "RUNNING", n) +
                  slurm_pending_record(pending, n));
    // Then the controller stops answering: with no time allowed for that, exit 3 at once.
    sc.answer("", 41, 1, "slurm_load_jobs error: Socket timed out on send/recv operation\n");
    auto r = run_program({"bash", "-c", "\"$@\" >/dev/null 2>&1; echo \"exit $?\"; times", "_", adapter("slurm"),
                          "wait-wave", "--poll", "0.01", "42"},
                         tmp.path(), {sc.path_env(), "YOLO_DISPATCH_UNREACHABLE_SECONDS=0"});
    EXPECT_EQ(sc.calls("show job -o 42"), 41u);
    // `times`: the shell's user and system time, then its children's ("0m0.412s 0m0.101s").
    auto ls = lines(r.out);
    EXPECT_EQ(ls.size(), 3u) << dump(r);
    if (ls.size() != 3u) return 0.0;
    EXPECT_EQ(ls[0], "exit 3") << dump(r);
    std::regex t("(\\d+)m([0-9.]+)s (\\d+)m([0-9.]+)s");
    std::smatch m;
    EXPECT_TRUE(std::regex_match(ls[2], m, t)) << ls[2];
    if (m.empty()) return 0.0;
    return std::stod(m[1]) * 60 + std::stod(m[2]) + std::stod(m[3]) * 60 + std::stod(m[4]);
  };
  const double small = cpu_of_polls(10), large = cpu_of_polls(1000);
  EXPECT_LT(large, 2 * small + 0.3) << "CPU of 40 polls: 10 tasks " << small << " s, 1,000 tasks " << large << " s";
}

TEST(DispatchAdapterTest, GithubWaitWaveReadsEveryMatrixJobFromOneRequestPerPoll) {
  TempDir tmp;
  StandIn g(tmp.path(), "gh");
  g.answer("view", 1, 1, "HTTP 403: API rate limit exceeded\n");
  g.answer("view", 2, 0, "run in_progress -\njob in_progress - task 0\njob queued - task 1\n");
  g.answer("view", 3, 0, "run completed failure\njob completed success task 0\njob completed failure task 1\n");
  auto w = run_program({adapter("github-actions"), "wait-wave", "--poll", "0.2", "77"}, tmp.path(),
                       {g.path_env(), "YOLO_DISPATCH_UNREACHABLE_SECONDS=60"});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_NE(w.out.find("task 0 status in_progress\ntask 1 status queued\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 0 done\n"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("task 1 failed matrix job 'task 1' of run 77: failure"), std::string::npos) << w.out;
  EXPECT_EQ(g.calls("run view 77"), 3u) << test::read_file(g.log);
}

// The wave workflow's script for matrix job "task 1", run here on a checkout of the base.
TEST(DispatchAdapterTest, TheGithubWaveWorkflowsScriptRunsItsTask) {
  TempDir tmp;
  Remote remote(tmp.path());
  YAML::Node wf = YAML::LoadFile(adapter("github-actions-wave.yml"));
  YAML::Node job = wf["jobs"]["plan"];
  EXPECT_EQ(job["name"].as<std::string>(), "task ${{ matrix.index }}");
  EXPECT_EQ(job["strategy"]["matrix"]["index"].as<std::string>(), "${{ fromJSON(inputs.indexes) }}");
  EXPECT_FALSE(job["strategy"]["fail-fast"].as<bool>());
  std::string run = job["steps"][1]["run"].as<std::string>();
  EXPECT_EQ(run.find("${{"), std::string::npos) << "inputs reach the script through env only";
  auto tasks = write_tasks(tmp.path() / "tasks", {wave_task("01-01", remote, {"agents/exec", "x"}),
                                                  wave_task("01-02", remote, {"agents/exec", "g h", "it's"})});
  std::string b64 = trim(run_program({"base64", "-w0", tasks.string()}, tmp.path()).out);
  stdfs::path ws = tmp.path() / "ws";
  ASSERT_EQ(git({"clone", "-q", remote.bare.string(), ws.string()}, tmp.path()).exit_code, 0);
  ASSERT_EQ(git({"checkout", "-q", "--detach", remote.base}, ws).exit_code, 0);
  auto r = run_program({"bash", "-c", run}, ws,
                       {"TASK_INDEX=1", "TASKS_B64=" + b64, "RUNNER_TEMP=" + tmp.path().string(),
                        "YOLO_CORRELATION_ID=cw", "YOLO_DISPATCH_JOB=1"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_TRUE(has_branch(remote.bare, "yolo/cw/01-02"));
  EXPECT_FALSE(has_branch(remote.bare, "yolo/cw/01-01")) << "only its own task";
  EXPECT_EQ(show(remote.bare, "yolo/cw/01-02:out-01-02.txt"), "01-02\ng h\nit's\n");
}

// A stand-in `gh` for a busy repository: its workflow's runs (newest first, the k-th newest
// created `spacing` seconds before the (k-1)-th, the newest now) in runs.json, served as
// GitHub serves them: `gh run list` its --limit newest, `gh api` page by page with the total,
// the `created` filter applied and at most the first 1,000 runs of the list served. `gh api`
// refuses a `created` GitHub's search syntax for dates does not take (">=T" or "T..T", T as
// 2026-01-02T03:04:05Z) and a page that is not of 100. `gh workflow run` adds a run named by
// its job_name input, created now. The calls are logged.
struct BusyGithub {
  explicit BusyGithub(const stdfs::path& dir, int runs, int at, const std::string& name, int spacing = 5)
      : bin(dir / "bin"), state(dir / "state") {
    stdfs::create_directories(bin);
    stdfs::create_directories(state);
    auto iso = [](std::time_t t) {
      char buf[32];
      std::tm tm{};
      ::gmtime_r(&t, &tm);
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
      return std::string(buf);
    };
    const std::time_t now = ::time(nullptr);
    std::string json = "[";
    for (int k = 0; k < runs; ++k) {
      int id = 5000 + runs - 1 - k;
      std::string title = k == at ? name : "yolo-other-" + std::to_string(id);
      json += std::string(k ? "," : "") + "{\"id\":" + std::to_string(id) + ",\"display_title\":\"" + title +
              "\",\"html_url\":\"https://github.com/o/p/actions/runs/" + std::to_string(id) +
              "\",\"created_at\":\"" + iso(now - std::time_t(k) * spacing) + "\"}";
    }
    test::write_file(state / "runs.json", json + "]");
    test::write_file(bin / "gh", "#!/bin/bash\nd='" + state.string() + "'\n" + R"GH(printf '%s\n' "$*" >> "$d/calls"
sub=$1; shift
case $sub in
  run) limit=20 q=.
    while [ $# -gt 0 ]; do case $1 in --limit) limit=$2; shift ;; --jq) q=$2; shift ;; esac; shift; done
    jq -c ".[:$limit] | map({databaseId: .id, displayTitle: .display_title, url: .html_url})" "$d/runs.json" | jq -r "$q" ;;
  api) page=1 per=30 q=. created= lo= hi=
    while [ $# -gt 0 ]; do case $1 in
      -f) case $2 in page=*) page=${2#page=} ;; per_page=*) per=${2#per_page=} ;; created=*) created=${2#created=} ;; esac; shift ;;
      --jq) q=$2; shift ;; esac; shift; done
    [ "$per" = 100 ] || { echo "stand-in gh: per_page=$per, not 100" >&2; exit 1; }
    t='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
    if [[ $created =~ ^\>=($t)$ ]]; then lo=${BASH_REMATCH[1]}
    elif [[ $created =~ ^($t)\.\.($t)$ ]]; then lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
    elif [ -n "$created" ]; then echo "gh: HTTP 422: Validation Failed (created=$created)" >&2; exit 1; fi
    jq -c --argjson p "$page" --argjson n "$per" --arg lo "$lo" --arg hi "$hi" '
      map(select(($lo == "" or (.created_at | fromdate) >= ($lo | fromdate)) and
                 ($hi == "" or (.created_at | fromdate) <= ($hi | fromdate))))
      | {total_count: length, workflow_runs: (.[:1000] | .[($p - 1) * $n:$p * $n])}' "$d/runs.json" | jq -r "$q" ;;
  workflow) name=
    while [ $# -gt 0 ]; do case $1 in -f) case $2 in job_name=*) name=${2#job_name=} ;; esac; shift ;; esac; shift; done
    jq --arg n "$name" --arg c "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '[{id: (.[0].id + 1), display_title: $n, html_url: "https://github.com/o/p/actions/runs/\(.[0].id + 1)", created_at: $c}] + .' "$d/runs.json" > "$d/runs.tmp" && mv "$d/runs.tmp" "$d/runs.json" ;;
esac
)GH");
    stdfs::permissions(bin / "gh", stdfs::perms::owner_all);
  }
  std::string path_env() const { return "PATH=" + bin.string() + ":" + std::getenv("PATH"); }
  size_t calls(const std::string& word) const {
    size_t n = 0;
    for (const auto& l : lines(test::read_file(state / "calls"))) n += l.find(word) != std::string::npos;
    return n;
  }
  stdfs::path bin, state;
};

// A job's run with more than 200 newer runs of its workflow (a busy repository, a big phase
// of plans submitted one by one) is still found by a second submit: no second run.
TEST(DispatchAdapterTest, GithubFindsItsRunBehindMoreThanTwoHundredNewerRunsAndStartsNoSecond) {
  TempDir tmp;
  Remote remote(tmp.path());
  auto name_of = [](const std::string& plan) {
    return trim(run_program({adapter("github-actions"), "name", "--plan-id", plan, "--correlation-id", "cg",
                             "--attempt", "1"})
                    .out);
  };
  BusyGithub g(tmp.path() / "gh", 300, 250, name_of("01-01"));
  std::vector<std::string> env{g.path_env(), "YOLO_GH_FIND_SECONDS=4"};
  auto r = run_program(submit_argv("github-actions", "01-01", "cg", "1", remote, "yolo/cg/01-01", {"agents/exec"},
                                   {"--repo", "o/p"}),
                       tmp.path(), env);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["handle"], "5049") << j.dump();
  EXPECT_EQ(j["reused"], true) << j.dump();
  EXPECT_EQ(j["url"], "https://github.com/o/p/actions/runs/5049") << j.dump();
  EXPECT_EQ(g.calls("workflow run"), 0u) << test::read_file(g.state / "calls");
  EXPECT_EQ(g.calls("event=workflow_dispatch"), 3u) << "three pages of 100: " << test::read_file(g.state / "calls");

  // A job with no run yet: every page read, then one start, then its run found among the runs
  // created since just before the start.
  r = run_program(submit_argv("github-actions", "01-02", "cg", "1", remote, "yolo/cg/01-02", {"agents/exec"},
                              {"--repo", "o/p"}),
                  tmp.path(), env);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  j = r.json_out();
  EXPECT_EQ(j["handle"], "5300") << j.dump();
  EXPECT_EQ(j["reused"], false) << j.dump();
  EXPECT_EQ(g.calls("workflow run"), 1u) << test::read_file(g.state / "calls");
  EXPECT_EQ(g.calls("created=>=2018-01-01T00:00:00Z"), 6u)
      << "no base commit here: since GitHub Actions began, twice three pages: " << test::read_file(g.state / "calls");

  // The lookup has a deadline: past it with pages unread, nothing is started (the run may be
  // on them).
  r = run_program(submit_argv("github-actions", "01-03", "cg", "1", remote, "yolo/cg/01-03", {"agents/exec"},
                              {"--repo", "o/p"}),
                  tmp.path(), {g.path_env(), "YOLO_GH_LOOKUP_SECONDS=0"});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find("cannot look up run " + name_of("01-03")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing started"), std::string::npos) << r.err;
  EXPECT_EQ(g.calls("workflow run"), 1u) << test::read_file(g.state / "calls");
}

// More runs since the base commit than GitHub lists of a filtered list (1,000): the window is
// split by creation time until each part is listed whole, and the run behind the first 1,000
// is found (no second run); a job with no run has every part read, then one start.
TEST(DispatchAdapterTest, GithubFindsItsRunBehindMoreThanAThousandRunsByNarrowingTheWindow) {
  TempDir tmp;
  Remote remote(tmp.path());
  const stdfs::path here = tmp.path() / "src";  // the base commit is in this repository
  auto name_of = [](const std::string& plan) {
    return trim(run_program({adapter("github-actions"), "name", "--plan-id", plan, "--correlation-id", "ck",
                             "--attempt", "1"})
                    .out);
  };
  BusyGithub g(tmp.path() / "gh", 2500, 1800, name_of("01-01"));
  std::vector<std::string> env{g.path_env(), "YOLO_GH_FIND_SECONDS=10"};
  auto r = run_program(submit_argv("github-actions", "01-01", "ck", "1", remote, "yolo/ck/01-01", {"agents/exec"},
                                   {"--repo", "o/p"}),
                       here, env);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["handle"], "5699") << j.dump();
  EXPECT_EQ(j["reused"], true) << j.dump();
  const std::string calls = test::read_file(g.state / "calls");
  EXPECT_EQ(g.calls("workflow run"), 0u) << calls;
  EXPECT_GE(g.calls("Z..20"), 2u) << "narrowed by created ranges: " << calls;
  EXPECT_EQ(g.calls("created=>="), 1u) << "the first request: since the base commit: " << calls;
  EXPECT_EQ(g.calls("created=>=2018"), 0u) << calls;

  r = run_program(submit_argv("github-actions", "01-02", "ck", "1", remote, "yolo/ck/01-02", {"agents/exec"},
                              {"--repo", "o/p"}),
                  here, env);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  j = r.json_out();
  EXPECT_EQ(j["handle"], "7500") << j.dump();
  EXPECT_EQ(j["reused"], false) << j.dump();
  EXPECT_EQ(g.calls("workflow run"), 1u) << test::read_file(g.state / "calls");
}

// 1,000 runs or more created within one second cannot be listed whole: the lookup fails and
// nothing is started.
TEST(DispatchAdapterTest, GithubStartsNothingWhenOneSecondHoldsMoreRunsThanGithubLists) {
  TempDir tmp;
  Remote remote(tmp.path());
  BusyGithub g(tmp.path() / "gh", 1200, 0, "yolo-someone-else", 0);
  auto r = run_program(submit_argv("github-actions", "01-01", "ck", "1", remote, "yolo/ck/01-01", {"agents/exec"},
                                   {"--repo", "o/p"}),
                       tmp.path() / "src", {g.path_env()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find("more than GitHub lists (1,000)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing started"), std::string::npos) << r.err;
  EXPECT_EQ(g.calls("workflow run"), 0u) << test::read_file(g.state / "calls");
}

TEST_F(SlurmClusterTest, CancellingOneTaskOfAWaveArrayCancelsThatTaskOnly) {
  // A plan yolo gives up on in a wave is cancelled by its task's handle (ID_K): the array's
  // other tasks, the plans yolo still waits on, run on and push their branches.
  Remote remote(tmp_.path());
  int round = 0;
  auto submit_wave = [&](const std::vector<std::vector<std::string>>& ts, const std::string& max_par) {
    auto tasks = write_tasks(tmp_.path() / ("tasks" + std::to_string(++round)), ts);
    // A key of its own (the array's name): an array of an earlier run of this test is not found.
    const std::string key = "c" + std::to_string(::getpid()) + "t" + std::to_string(::time(nullptr)) + "r" +
                            std::to_string(round);
    return slurm({"submit-wave", "--tasks", tasks.string(), "--correlation-id", "cw", "--wave", "1",
                  "--max-parallel", max_par, "--wave-key", key});
  };
  auto ended_tasks = [](const std::string& out) {  // task -> its last line ("done", "failed ...", "unknown")
    std::map<std::string, std::string> ended;
    for (const auto& l : lines(out)) {
      std::istringstream in(l);
      std::string word, k, what;
      in >> word >> k >> what;
      if (word == "task" && (what == "done" || what == "failed" || what == "unknown")) ended[k] = l;
    }
    return ended;
  };
  // Task 1 running when it is cancelled: CANCELLED, the others done.
  auto s = submit_wave({wave_task("06-01", remote, {"agents/exec", "sleep", "2"}),
                        wave_task("06-02", remote, {"agents/exec", "sleep", "120"}),
                        wave_task("06-03", remote, {"agents/exec", "sleep", "2"})},
                       "3");
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  json j = s.json_out();
  const std::string id = j["handle"];
  ASSERT_EQ(j["tasks"].size(), 3u) << j.dump();
  EXPECT_EQ(j["tasks"][1], id + "_1") << j.dump();
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < 300; ++k) {  // until the controller runs it (30 s at most)
    auto q = run_program({"squeue", "-h", "-j", id + "_1", "-o", "%T"}, tmp_.path(), env_);
    if (trim(q.out) == "RUNNING") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto c = slurm({"cancel", j["tasks"][1]});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  auto w = slurm({"wait-wave", id});
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  auto ended = ended_tasks(w.out);
  EXPECT_EQ(ended["0"], "task 0 done") << w.out;
  EXPECT_EQ(ended["2"], "task 2 done") << w.out;
  EXPECT_EQ(ended["1"].rfind("task 1 failed", 0), 0u) << w.out;
  EXPECT_NE(ended["1"].find("CANCELLED"), std::string::npos) << w.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60)) << "task 1 did not sleep its 120 s";
  EXPECT_TRUE(has_branch(remote.bare, "yolo/cw/06-01"));
  EXPECT_TRUE(has_branch(remote.bare, "yolo/cw/06-03"));
  EXPECT_FALSE(has_branch(remote.bare, "yolo/cw/06-02"));
  // Cancelling the ended task again is not an error (yolo may cancel a task that just ended).
  EXPECT_EQ(slurm({"cancel", j["tasks"][1]}).exit_code, 0);

  // Task 1 still pending (one task at a time) when it is cancelled: Slurm keeps no record of
  // it; wait-wave still ends, task 1 never reported done, task 2 done.
  s = submit_wave({wave_task("07-01", remote, {"agents/exec", "sleep", "3"}),
                   wave_task("07-02", remote, {"agents/exec", "sleep", "120"}),
                   wave_task("07-03", remote, {"agents/exec"})},
                  "1");
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  j = s.json_out();
  start = std::chrono::steady_clock::now();
  c = slurm({"cancel", j["tasks"][1]});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  std::vector<std::string> argv{adapter("slurm"), "wait-wave", j["handle"]};
  std::vector<std::string> env = env_;
  env.push_back("YOLO_SLURM_UNKNOWN_SECONDS=4");
  w = run_program(argv, tmp_.path(), env);
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  ended = ended_tasks(w.out);
  EXPECT_EQ(ended["0"], "task 0 done") << w.out;
  EXPECT_EQ(ended["2"], "task 2 done") << w.out;
  EXPECT_FALSE(ended["1"].empty()) << w.out;
  EXPECT_NE(ended["1"], "task 1 done") << w.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_FALSE(has_branch(remote.bare, "yolo/cw/07-02"));
}

}  // namespace
}  // namespace yolo::e2e

namespace yolo::e2e {
namespace {

TEST_F(SlurmClusterTest, APendingTaskCancelledAtTheTopOfTheArrayIsReportedNotLeftOut) {
  // Slurm drops a task cancelled while pending from the array's pending range and keeps no
  // record of it. wait-wave knows the array's size from submit-wave (its comment) and says so.
  Remote remote(tmp_.path());
  int round = 0;
  auto submit_three = [&] {
    std::vector<std::vector<std::string>> ts;
    for (int k = 1; k <= 3; ++k)
      ts.push_back(wave_task("08-0" + std::to_string(k) + "-r" + std::to_string(round + 1), remote,
                             {"agents/exec", "sleep", "4"}));
    auto tasks = write_tasks(tmp_.path() / ("tasks" + std::to_string(++round)), ts);
    const std::string key = "p" + std::to_string(::getpid()) + "t" + std::to_string(::time(nullptr)) + "r" +
                            std::to_string(round);
    auto s = slurm({"submit-wave", "--tasks", tasks.string(), "--correlation-id", "cw", "--wave", "1",
                    "--max-parallel", "1", "--wave-key", key});
    EXPECT_EQ(s.exit_code, 0) << dump(s);
    return s.json_out();
  };
  auto line_of = [](const std::string& out, const std::string& k) {
    for (const auto& l : lines(out))
      for (const char* w : {" done", " failed", " unknown"})
        if (l.rfind("task " + k + w, 0) == 0) return l;
    return std::string();
  };
  // Cancelled while wait-wave runs and has seen it pending: failed, CANCELLED, at once (not
  // after YOLO_SLURM_UNKNOWN_SECONDS, which would call it unknown).
  json j = submit_three();
  ASSERT_EQ(j["tasks"].size(), 3u) << j.dump();
  std::vector<std::string> env = env_;
  env.push_back("YOLO_SLURM_UNKNOWN_SECONDS=120");
  auto start = std::chrono::steady_clock::now();
  auto waiting = std::async(std::launch::async, [&] {
    return run_program({adapter("slurm"), "wait-wave", j["handle"]}, tmp_.path(), env);
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));  // its first polls list task 2 pending
  auto c = slurm({"cancel", j["tasks"][2]});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  auto w = waiting.get();
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_EQ(line_of(w.out, "0"), "task 0 done") << w.out;
  EXPECT_EQ(line_of(w.out, "1"), "task 1 done") << w.out;
  EXPECT_EQ(line_of(w.out, "2").rfind("task 2 failed", 0), 0u) << w.out;
  EXPECT_NE(line_of(w.out, "2").find("CANCELLED"), std::string::npos) << w.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  // Cancelled before wait-wave starts (no poll ever lists it, the array is younger than
  // MinJobAge, so it cannot have been forgotten): failed, CANCELLED, at once, before task 0
  // is done, never `unknown`; the others run on.
  j = submit_three();
  c = slurm({"cancel", j["tasks"][2]});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  env = env_;
  env.push_back("YOLO_SLURM_UNKNOWN_SECONDS=120");
  start = std::chrono::steady_clock::now();
  w = run_program({adapter("slurm"), "wait-wave", j["handle"]}, tmp_.path(), env);
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  EXPECT_EQ(line_of(w.out, "0"), "task 0 done") << w.out;
  EXPECT_EQ(line_of(w.out, "1"), "task 1 done") << w.out;
  EXPECT_EQ(line_of(w.out, "2").rfind("task 2 failed", 0), 0u) << "task 2: " << w.out;
  EXPECT_NE(line_of(w.out, "2").find("CANCELLED while it was pending"), std::string::npos) << w.out;
  EXPECT_LT(w.out.find("task 2 failed"), w.out.find("task 0 done")) << "at the first poll: " << w.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST_F(SlurmClusterTest, ATaskCancelledWhilePendingBeforeAnyPollIsCancelledForWaitWaveAndForWait) {
  // The middle task of three (one at a time), cancelled before anyone polls: wait-wave says
  // failed, CANCELLED, at its first poll; `wait ID_1` (a task's handle) says so at once too
  // (Slurm answers "Job ID_1 not found", which is neither a job gone nor a controller down);
  // tasks 0 and 2 run and push.
  Remote remote(tmp_.path());
  std::vector<std::vector<std::string>> ts;
  for (int k = 1; k <= 3; ++k) ts.push_back(wave_task("09-0" + std::to_string(k), remote, {"agents/exec", "sleep", "3"}));
  auto tasks = write_tasks(tmp_.path() / "tasks", ts);
  const std::string key = "m" + std::to_string(::getpid()) + "t" + std::to_string(::time(nullptr));
  auto s = slurm({"submit-wave", "--tasks", tasks.string(), "--correlation-id", "cw", "--wave", "1", "--max-parallel",
                  "1", "--wave-key", key});
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  json j = s.json_out();
  ASSERT_EQ(j["tasks"].size(), 3u) << j.dump();
  auto c = slurm({"cancel", j["tasks"][1]});
  EXPECT_EQ(c.exit_code, 0) << dump(c);
  std::vector<std::string> env = env_;
  env.push_back("YOLO_SLURM_UNKNOWN_SECONDS=120");
  env.push_back("YOLO_DISPATCH_UNREACHABLE_SECONDS=10");
  auto start = std::chrono::steady_clock::now();
  auto w = run_program({adapter("slurm"), "wait-wave", j["handle"]}, tmp_.path(), env);
  EXPECT_EQ(w.exit_code, 0) << dump(w);
  std::map<std::string, std::string> ended;
  for (const auto& l : lines(w.out)) {
    std::istringstream in(l);
    std::string word, k, what;
    in >> word >> k >> what;
    if (word == "task" && (what == "done" || what == "failed" || what == "unknown")) ended[k] = l;
  }
  EXPECT_EQ(ended["0"], "task 0 done") << w.out;
  EXPECT_EQ(ended["2"], "task 2 done") << w.out;
  EXPECT_EQ(ended["1"], "task 1 failed job " + j["handle"].get<std::string>() +
                            "_1 CANCELLED while it was pending (Slurm keeps no record of it)")
      << w.out;
  EXPECT_LT(w.out.find("task 1 failed"), w.out.find("task 0 done")) << "at the first poll: " << w.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_TRUE(has_branch(remote.bare, "yolo/cw/09-01"));
  EXPECT_TRUE(has_branch(remote.bare, "yolo/cw/09-03"));
  EXPECT_FALSE(has_branch(remote.bare, "yolo/cw/09-02"));
  start = std::chrono::steady_clock::now();
  auto one = run_program({adapter("slurm"), "wait", j["tasks"][1]}, tmp_.path(), env);
  EXPECT_EQ(one.exit_code, 1) << dump(one);
  EXPECT_NE(one.err.find("CANCELLED while it was pending"), std::string::npos) << one.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// A job that ended longer ago than MinJobAge while nobody polled it (yolo stopped, its wait
// killed): the controller has forgotten it, so the adapter reads it from the cluster's job
// completion records (`sacct -c`; this cluster has no accounting database). Its wait says how
// it ended, never "unknown"; a second submit of the plan finds it, and starts no job.
TEST(SlurmForgottenJobTest, AJobTheControllerForgotIsReadFromTheJobCompletionRecordsAndNotSubmittedAgain) {
  TempDir tmp;
  test::PrivateSlurm cluster(tmp.path() / "slurm", {"YOLO_SLURM_MIN_JOB_AGE=2"});
  if (!cluster.cluster().up) GTEST_SKIP() << "skipped: " << cluster.cluster().reason;
  const std::vector<std::string> env = {"SLURM_CONF=" + cluster.cluster().conf(),
                                        "YOLO_SLURM_LOG_DIR=" + tmp.path().string(), "YOLO_SLURM_POLL=0.5",
                                        "XDG_RUNTIME_DIR=", "TMPDIR=" + tmp.path().string(),
                                        "YOLO_SLURM_UNKNOWN_SECONDS=3"};
  Remote remote(tmp.path());
  const std::string corr = "forgot" + std::to_string(::getpid());
  auto sub = [&](const std::string& plan, const std::vector<std::string>& exec) {
    return run_program(submit_argv("slurm", plan, corr, "1", remote, "yolo/" + corr + "/" + plan + "-a1", exec),
                       tmp.path(), env);
  };
  auto ok = sub("01-01", {"agents/exec", "fine"});
  auto bad = sub("01-02", {"agents/exec", "fail"});
  ASSERT_EQ(ok.exit_code, 0) << dump(ok);
  ASSERT_EQ(bad.exit_code, 0) << dump(bad);
  const std::string ok_id = ok.json_out()["handle"], bad_id = bad.json_out()["handle"];
  // Until the controller has forgotten both (it purges finished jobs about once a minute).
  auto forgotten = [&](const std::string& id) {
    auto r = run_program({"scontrol", "show", "job", "-o", id}, tmp.path(), env);
    return r.exit_code != 0 && r.err.find("Invalid job id") != std::string::npos;
  };
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (!(forgotten(ok_id) && forgotten(bad_id)) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(forgotten(ok_id) && forgotten(bad_id)) << "the controller still shows the jobs after 3 minutes";

  auto w_ok = run_program({adapter("slurm"), "wait", ok_id}, tmp.path(), env);
  EXPECT_EQ(w_ok.exit_code, 0) << dump(w_ok);
  auto w_bad = run_program({adapter("slurm"), "wait", bad_id}, tmp.path(), env);
  EXPECT_EQ(w_bad.exit_code, 1) << dump(w_bad);
  EXPECT_NE(w_bad.err.find("job " + bad_id + " FAILED (exit code 1:0)"), std::string::npos) << w_bad.err;

  auto again = sub("01-01", {"agents/exec", "fine"});
  ASSERT_EQ(again.exit_code, 0) << dump(again);
  EXPECT_EQ(again.json_out()["handle"], ok_id);
  EXPECT_EQ(again.json_out()["reused"], true);
  // Another plan, whose name the records do not hold, is submitted.
  auto other = sub("01-03", {"agents/exec", "fine"});
  ASSERT_EQ(other.exit_code, 0) << dump(other);
  EXPECT_EQ(other.json_out()["reused"], false);
  EXPECT_EQ(run_program({adapter("slurm"), "wait", other.json_out()["handle"]}, tmp.path(), env).exit_code, 0);
}

}  // namespace
}  // namespace yolo::e2e
