// `yolo hooks install|uninstall|run` end to end: real temporary git repositories, the built
// binary, and git itself running the installed hooks (commit, checkout, merge, amend).
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>

#include "protocol/review/review_loop.h"
#include "runner/world.h"
#include "test_support.h"

namespace yolo {
namespace {

using test::read_file;
using test::run_program;
using test::run_yolo;
using test::TempDir;
using test::write_file;
namespace stdfs = std::filesystem;

const char* const kHookNames[] = {"post-checkout", "post-merge", "post-rewrite", "pre-commit"};

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::string plan_text(const std::string& title, bool must_haves = true) {
  std::string s = "---\nphase: \"01\"\nplan: \"01\"\ntitle: " + json(title).dump() + "\nwave: 1\ndepends_on: []\n";
  if (must_haves) s += "must_haves:\n  - \"the core works\"\n";
  s += "---\n\n## Tasks\n\n### Task 1: Write it\n\nWrite the code.\n";
  return s;
}

unsigned mode_of(const stdfs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

// A git repository in a temp folder, isolated from the machine's global and system git
// config (a global core.hooksPath would send the hooks elsewhere), with a yolo project.
struct Repo {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  stdfs::path plan = root / ".yolo-planning" / "phases" / "01-core" / "01-01-PLAN.md";
  std::vector<std::string> env;

  Repo() {
    stdfs::create_directories(root);
    write_file(tmp / "gitconfig", "");
    env = {"GIT_CONFIG_GLOBAL=" + (tmp / "gitconfig").string(), "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1"};
    git({"init", "-q", "-b", "main"});
    git({"config", "user.name", "Hook Tester"});
    git({"config", "user.email", "hooks@example.com"});
    git({"config", "commit.gpgsign", "false"});
    // The runner's own files are not part of the history.
    write_file(root / ".gitignore",
               ".yolo-planning/.execution-state.json\n.yolo-planning/.events/\n"
               ".yolo-planning/.lock\n.yolo-planning/*.lock\n");
    write_file(root / ".yolo-planning" / "config.json", "{}\n");
  }

  test::RunResult git_run(const std::vector<std::string>& args, const stdfs::path& cwd = {}) const {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, cwd.empty() ? root : cwd, env);
  }
  std::string git(const std::vector<std::string>& args) const {
    auto r = git_run(args);
    std::string cmd = "git";
    for (const auto& a : args) cmd += " " + a;
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  test::RunResult yolo(const std::vector<std::string>& args) const {
    // approve and reject are a person's: at a terminal (a pty), answering y.
    if (!args.empty() && (args[0] == "approve" || args[0] == "reject")) return test::run_yolo_tty(args, root, env);
    return run_yolo(args, root, env);
  }
  std::string head() const { return git({"rev-parse", "HEAD"}); }
  int commit_count() const {
    auto r = git_run({"rev-list", "--count", "HEAD"});
    return r.exit_code == 0 ? std::stoi(r.out) : 0;
  }
  json state() const {
    auto p = root / ".yolo-planning" / ".execution-state.json";
    if (!stdfs::exists(p)) return json::object();
    return json::parse(read_file(p));
  }
  json review_of(const std::string& id) const {
    json r = test::review_records(root);
    return r.contains(id) ? r[id] : json(nullptr);
  }
  stdfs::path hooks() const { return root / ".git" / "hooks"; }
};

// ---- install / uninstall -----------------------------------------------------------------

TEST(Hooks, InstallWritesExecutableHooksCallingThisBinary) {
  Repo r;
  auto res = r.yolo({"hooks", "install", "--json"});
  ASSERT_EQ(res.exit_code, 0) << res.out << res.err;
  json j = res.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(stdfs::path(j["hooks_dir"].get<std::string>()), r.hooks());
  ASSERT_EQ(j["hooks"].size(), 4u) << j.dump();
  for (const char* name : kHookNames) {
    stdfs::path h = r.hooks() / name;
    ASSERT_TRUE(stdfs::is_regular_file(h)) << h;
    EXPECT_EQ(mode_of(h) & 0111, 0111u) << name << " is not executable: " << std::oct << mode_of(h);
    std::string text = read_file(h);
    EXPECT_EQ(text.rfind("#!/bin/sh\n", 0), 0u) << text;
    EXPECT_TRUE(contains(text, "# installed by yolo-runner")) << text;
    // The hook runs the binary that installed it (an absolute path), not whatever is on PATH.
    EXPECT_TRUE(contains(text, "'" + stdfs::canonical(test::yolo_bin()).string() + "'")) << text;
    EXPECT_TRUE(contains(text, std::string("hooks run ") + name)) << text;
    EXPECT_FALSE(stdfs::exists(r.hooks() / (std::string(name) + ".pre-yolo"))) << name;
  }
  // The scripts are valid sh.
  for (const char* name : kHookNames)
    EXPECT_EQ(run_program({"sh", "-n", (r.hooks() / name).string()}).exit_code, 0) << name;
}

TEST(Hooks, NotAGitRepositoryIsAClearError) {
  TempDir d;
  write_file(d / "gitconfig", "");
  auto res = run_yolo({"hooks", "install"}, d.path(),
                      {"GIT_CONFIG_GLOBAL=" + (d / "gitconfig").string(), "GIT_CONFIG_NOSYSTEM=1",
                       "GIT_CEILING_DIRECTORIES=" + d.path().parent_path().string()});
  EXPECT_NE(res.exit_code, 0);
  EXPECT_TRUE(contains(res.err, "not a git repository")) << res.err;
}

TEST(Hooks, InstallTwiceIsIdempotentAndForceRewrites) {
  Repo r;
  // A hook of the user's, chained by the first install.
  const std::string original = "#!/bin/sh\necho user hook\n";
  write_file(r.hooks() / "post-merge", original);
  ::chmod((r.hooks() / "post-merge").c_str(), 0755);
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  std::map<std::string, std::string> before;
  for (const char* name : kHookNames) before[name] = read_file(r.hooks() / name);

  auto again = r.yolo({"hooks", "install", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  json again_j = again.json_out();  // kept alive: the loop refers into it
  ASSERT_EQ(again_j["hooks"].size(), 4u) << again.out;
  for (const auto& h : again_j["hooks"]) EXPECT_EQ(h["action"], "already installed") << h.dump();
  auto human = r.yolo({"hooks", "install"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(contains(human.out, "already installed")) << human.out;
  for (const char* name : kHookNames) {
    EXPECT_EQ(read_file(r.hooks() / name), before[name]) << name;
    // Our own hook is never chained to itself.
    if (std::string(name) != "post-merge") {
      EXPECT_FALSE(stdfs::exists(r.hooks() / (std::string(name) + ".pre-yolo"))) << name;
    }
  }
  EXPECT_EQ(read_file(r.hooks() / "post-merge.pre-yolo"), original);

  // --force rewrites ours (e.g. after the binary moved) and keeps the chained original.
  write_file(r.hooks() / "pre-commit", read_file(r.hooks() / "pre-commit") + "# stale\n");
  auto forced = r.yolo({"hooks", "install", "--force", "--json"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  json forced_j = forced.json_out();
  ASSERT_EQ(forced_j["hooks"].size(), 4u) << forced.out;
  for (const auto& h : forced_j["hooks"]) EXPECT_EQ(h["action"], "reinstalled") << h.dump();
  EXPECT_EQ(read_file(r.hooks() / "pre-commit"), before["pre-commit"]);
  EXPECT_EQ(read_file(r.hooks() / "post-merge.pre-yolo"), original);
  EXPECT_FALSE(stdfs::exists(r.hooks() / "pre-commit.pre-yolo"));

  // Uninstall once restores the user's hook; a second uninstall has nothing to do.
  ASSERT_EQ(r.yolo({"hooks", "uninstall"}).exit_code, 0);
  EXPECT_EQ(read_file(r.hooks() / "post-merge"), original);
  auto un2 = r.yolo({"hooks", "uninstall", "--json"});
  ASSERT_EQ(un2.exit_code, 0);
  EXPECT_TRUE(un2.json_out()["hooks"].empty()) << un2.out;
  EXPECT_EQ(read_file(r.hooks() / "post-merge"), original);
}

TEST(Hooks, ExistingHooksAreChainedAndUninstallRestoresThemByteForByte) {
  Repo r;
  stdfs::path log = r.tmp / "user-hooks.log";
  // Hooks of the user's: odd bytes (no trailing newline, a tab, UTF-8), their own modes.
  const std::string checkout_hook =
      "#!/bin/sh\n# my checkout hook \xe2\x9c\x93\tkeep me\necho \"checkout $1 $2 $3\" >> '" + log.string() + "'";
  const std::string commit_hook = "#!/bin/sh\necho commit >> '" + log.string() + "'\nexit 0\n";
  write_file(r.hooks() / "post-checkout", checkout_hook);
  write_file(r.hooks() / "pre-commit", commit_hook);
  ::chmod((r.hooks() / "post-checkout").c_str(), 0750);
  ::chmod((r.hooks() / "pre-commit").c_str(), 0755);

  auto res = r.yolo({"hooks", "install", "--json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::map<std::string, std::string> actions;
  json res_j = res.json_out();
  for (const auto& h : res_j["hooks"]) actions[h["hook"].get<std::string>()] = h["action"].get<std::string>();
  EXPECT_TRUE(contains(actions["post-checkout"], "chained")) << actions["post-checkout"];
  EXPECT_TRUE(contains(actions["pre-commit"], "chained")) << actions["pre-commit"];
  EXPECT_EQ(actions["post-merge"], "installed");
  EXPECT_EQ(read_file(r.hooks() / "post-checkout.pre-yolo"), checkout_hook);
  EXPECT_EQ(read_file(r.hooks() / "pre-commit.pre-yolo"), commit_hook);

  // git runs ours, ours runs theirs with git's arguments.
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  auto c = r.git_run({"commit", "-q", "-m", "first"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::string first = r.head();
  auto co = r.git_run({"checkout", "-q", "-b", "feature"});
  ASSERT_EQ(co.exit_code, 0) << co.err;
  EXPECT_EQ(read_file(log), "commit\ncheckout " + first + " " + first + " 1\n");

  // A chained pre-commit that fails still blocks the commit.
  write_file(r.hooks() / "pre-commit.pre-yolo", "#!/bin/sh\necho 'user hook says no' >&2\nexit 3\n");
  write_file(r.root / "notes.txt", "x\n");
  r.git({"add", "notes.txt"});
  auto blocked = r.git_run({"commit", "-q", "-m", "second"});
  EXPECT_NE(blocked.exit_code, 0);
  EXPECT_TRUE(contains(blocked.err, "user hook says no")) << blocked.err;
  EXPECT_EQ(r.head(), first);
  write_file(r.hooks() / "pre-commit.pre-yolo", commit_hook);

  auto un = r.yolo({"hooks", "uninstall", "--json"});
  ASSERT_EQ(un.exit_code, 0) << un.err;
  EXPECT_EQ(un.json_out()["hooks"].size(), 4u) << un.out;
  EXPECT_EQ(read_file(r.hooks() / "post-checkout"), checkout_hook);
  EXPECT_EQ(read_file(r.hooks() / "pre-commit"), commit_hook);
  EXPECT_EQ(mode_of(r.hooks() / "post-checkout"), 0750u);
  EXPECT_EQ(mode_of(r.hooks() / "pre-commit"), 0755u);
  for (const char* name : kHookNames)
    EXPECT_FALSE(stdfs::exists(r.hooks() / (std::string(name) + ".pre-yolo"))) << name;
  EXPECT_FALSE(stdfs::exists(r.hooks() / "post-merge"));
  EXPECT_FALSE(stdfs::exists(r.hooks() / "post-rewrite"));
}

TEST(Hooks, CoreHooksPathIsHonoured) {
  Repo r;
  r.git({"config", "core.hooksPath", ".githooks"});
  auto res = r.yolo({"hooks", "install", "--json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(stdfs::path(res.json_out()["hooks_dir"].get<std::string>()), r.root / ".githooks");
  for (const char* name : kHookNames) {
    EXPECT_TRUE(stdfs::is_regular_file(r.root / ".githooks" / name)) << name;
    EXPECT_FALSE(stdfs::exists(r.hooks() / name)) << name;
  }
  // git runs them from there: a rejected plan cannot be committed.
  write_file(r.plan, plan_text("No must_haves", false));
  r.git({"add", "-A"});
  auto c = r.git_run({"commit", "-q", "-m", "bad plan"});
  EXPECT_NE(c.exit_code, 0);
  EXPECT_TRUE(contains(c.err, "rejected by the review gate")) << c.err;

  ASSERT_EQ(r.yolo({"hooks", "uninstall"}).exit_code, 0);
  for (const char* name : kHookNames) EXPECT_FALSE(stdfs::exists(r.root / ".githooks" / name)) << name;

  // An absolute hooksPath outside the repository.
  stdfs::path shared = r.tmp / "shared-hooks";
  r.git({"config", "core.hooksPath", shared.string()});
  auto abs = r.yolo({"hooks", "install", "--json"});
  ASSERT_EQ(abs.exit_code, 0) << abs.err;
  EXPECT_EQ(stdfs::path(abs.json_out()["hooks_dir"].get<std::string>()), shared);
  for (const char* name : kHookNames) EXPECT_TRUE(stdfs::is_regular_file(shared / name)) << name;
}

// ---- pre-commit ------------------------------------------------------------------------

TEST(Hooks, PreCommitBlocksARejectedPlanAndSaysHowToSeeWhy) {
  Repo r;
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  r.git({"add", ".gitignore", ".yolo-planning/config.json"});
  ASSERT_EQ(r.git_run({"commit", "-q", "-m", "init"}).exit_code, 0);
  std::string init = r.head();

  write_file(r.plan, plan_text("No must_haves", false));  // Stage 1: must_haves missing -> high -> reject
  r.git({"add", "-A"});
  auto c = r.git_run({"commit", "-q", "-m", "bad plan"});
  EXPECT_NE(c.exit_code, 0);
  EXPECT_EQ(r.head(), init) << "the rejected plan was committed";
  EXPECT_TRUE(contains(c.err, "01-01-PLAN.md was rejected by the review gate")) << c.err;
  EXPECT_TRUE(contains(c.err, "[high]")) << c.err;
  EXPECT_TRUE(contains(c.err, "see why with:")) << c.err;
  EXPECT_TRUE(contains(c.err, "yolo review --max-cycles 1 '" + r.plan.string() + "'")) << c.err;
  EXPECT_TRUE(contains(c.err, "--no-verify")) << c.err;
  // The command it names does show why.
  auto why = r.yolo({"review", r.plan.string()});
  EXPECT_EQ(why.exit_code, 1);
  EXPECT_TRUE(contains(why.out, "must_haves")) << why.out;

  // Fixed and staged: the commit goes through, and the review is recorded.
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  auto ok = r.git_run({"commit", "-q", "-m", "good plan"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(r.commit_count(), 2);
  json rv = r.review_of("01-01");
  ASSERT_TRUE(rv.is_object()) << r.state().dump();
  EXPECT_EQ(rv["hash"], review::file_hash(runner::world(), r.plan));
  EXPECT_NE(rv["verdict"], "reject");

  // A commit touching no plan reviews nothing and is not slowed by the gate.
  write_file(r.root / "README.md", "hello\n");
  r.git({"add", "README.md"});
  auto plain = r.git_run({"commit", "-q", "-m", "readme"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
}

TEST(Hooks, PreCommitSeesWhatIsCommittedWithCommitAll) {
  // `git commit -a` stages into a temporary index (GIT_INDEX_FILE): the hook must read it.
  Repo r;
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  ASSERT_EQ(r.git_run({"commit", "-q", "-m", "good plan"}).exit_code, 0);
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  std::string good = r.head();

  write_file(r.plan, plan_text("Lost its must_haves", false));
  auto c = r.git_run({"commit", "-q", "-a", "-m", "break the plan"});
  EXPECT_NE(c.exit_code, 0) << c.out;
  EXPECT_TRUE(contains(c.err, "rejected by the review gate")) << c.err;
  EXPECT_EQ(r.head(), good);

  // The same with the paths named on the command line (`git commit FILE`, another temporary index).
  auto c2 = r.git_run({"commit", "-q", "-m", "break the plan", "--", r.plan.string()});
  EXPECT_NE(c2.exit_code, 0);
  EXPECT_EQ(r.head(), good);
}

TEST(Hooks, PreCommitWorksWithGitDirFromOutsideTheWorkTree) {
  // `git --git-dir=... --work-tree=...` exports GIT_DIR and GIT_WORK_TREE to the hooks.
  Repo r;
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  write_file(r.plan, plan_text("No must_haves", false));
  std::vector<std::string> where = {"--git-dir=" + (r.root / ".git").string(), "--work-tree=" + r.root.string()};
  auto add = r.git_run({where[0], where[1], "add", "-A"}, r.tmp.path());
  ASSERT_EQ(add.exit_code, 0) << add.err;
  auto c = r.git_run({where[0], where[1], "commit", "-q", "-m", "bad"}, r.tmp.path());
  EXPECT_NE(c.exit_code, 0);
  EXPECT_TRUE(contains(c.err, "rejected by the review gate")) << c.err;
  EXPECT_EQ(r.commit_count(), 0);
}

TEST(Hooks, ChildrenOfAHookDoNotInheritGitsRepositoryVariables) {
  // The reviewer agent started from the pre-commit hook must not see GIT_INDEX_FILE & co.:
  // they would tie its own git commands to this repository's index.
  Repo r;
  stdfs::path dump = r.tmp / "reviewer-env.txt";
  stdfs::path reviewer = r.tmp / "reviewer.sh";
  write_file(reviewer, "#!/bin/sh\nenv > '" + dump.string() + "'\necho 'VERDICT: approve'\necho 'FINDINGS:'\n");
  ::chmod(reviewer.c_str(), 0755);
  write_file(r.root / ".yolo-planning" / "config.json",
             json{{"reviewer", {reviewer.string(), "{plan_path}"}},
                  {"sandbox", {{"write", {{"reviewer", {r.tmp.path().string()}}}}}}}
                 .dump());
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  auto c = r.git_run({"commit", "-q", "-a", "-m", "plan"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::string env = read_file(dump);
  ASSERT_FALSE(env.empty()) << "the reviewer did not run";
  for (const char* v : {"GIT_INDEX_FILE=", "GIT_DIR=", "GIT_WORK_TREE=", "GIT_PREFIX="})
    EXPECT_FALSE(contains("\n" + env, std::string("\n") + v)) << v << " leaked into the reviewer:\n" << env;
}

TEST(Hooks, PreCommitNeverLetsTheArchitectRewriteThePlanBeingCommitted) {
  // Stage 2 rejects; with a feedback loop the architect would rewrite the plan in the work
  // tree, the rewrite would pass, and the commit would take the staged, rejected text.
  Repo r;
  stdfs::path agents = test::source_dir() / "fixtures" / "agents";
  write_file(r.root / ".yolo-planning" / "config.json",
             json{{"reviewer", {(agents / "reviewer-reject-until-marker").string(), "{plan_path}", "{cycle}"}},
                  {"architect", {(agents / "architect-fix").string(), "{plan_path}"}}}
                 .dump());
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  const std::string staged = plan_text("Build the core");
  write_file(r.plan, staged);
  r.git({"add", "-A"});
  auto c = r.git_run({"commit", "-q", "-m", "plan"});
  EXPECT_NE(c.exit_code, 0) << c.err;
  EXPECT_EQ(r.commit_count(), 0);
  EXPECT_TRUE(contains(c.err, "rejected by the review gate")) << c.err;
  EXPECT_TRUE(contains(c.err, "No error handling for a missing input file")) << c.err;
  EXPECT_EQ(read_file(r.plan), staged) << "the hook changed the plan being committed";
}

TEST(Hooks, RunRefusesAnUnknownHookName) {
  Repo r;
  auto res = r.yolo({"hooks", "run", "pre-push"});
  EXPECT_NE(res.exit_code, 0);
  EXPECT_NE(res.exit_code, 1) << "a usage error, not a review verdict";
}

// ---- post-checkout / post-merge / post-rewrite ---------------------------------------------

TEST(Hooks, CheckoutOfABranchWithADifferentPlanReReviewsIt) {
  Repo r;
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  ASSERT_EQ(r.git_run({"commit", "-q", "-m", "plan v1"}).exit_code, 0);
  std::string v1 = review::file_hash(runner::world(), r.plan);
  r.git({"checkout", "-q", "-b", "other"});
  write_file(r.plan, plan_text("Build the core, differently"));
  r.git({"commit", "-q", "-a", "-m", "plan v2"});
  std::string v2 = review::file_hash(runner::world(), r.plan);
  ASSERT_NE(v1, v2);

  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  // Reviewed on this branch (v2)...
  ASSERT_NE(r.yolo({"review", r.plan.string()}).exit_code, 1);
  ASSERT_EQ(r.review_of("01-01")["hash"], v2);

  // ...then the other branch is checked out: post-checkout re-reviews the changed plan.
  auto co = r.git_run({"checkout", "-q", "main"});
  ASSERT_EQ(co.exit_code, 0) << co.err;
  json rv = r.review_of("01-01");
  ASSERT_TRUE(rv.is_object()) << r.state().dump();
  EXPECT_EQ(rv["hash"], v1) << co.err;
  EXPECT_NE(rv["verdict"], "reject");
  EXPECT_TRUE(contains(co.err, "01-01")) << co.err;

  // Checking out a branch where the plan is the same reviews nothing.
  std::string reviewed_at = rv["reviewed_at"];
  r.git({"checkout", "-q", "-b", "same"});
  EXPECT_EQ(r.review_of("01-01")["reviewed_at"], reviewed_at);
  EXPECT_EQ(r.review_of("01-01")["hash"], v1);
}

TEST(Hooks, MergeAndAmendReReviewChangedPlans) {
  Repo r;
  write_file(r.plan, plan_text("Build the core"));
  r.git({"add", "-A"});
  ASSERT_EQ(r.git_run({"commit", "-q", "-m", "plan v1"}).exit_code, 0);
  r.git({"checkout", "-q", "-b", "topic"});
  write_file(r.plan, plan_text("Build the core, merged"));
  r.git({"commit", "-q", "-a", "-m", "plan v2"});
  r.git({"checkout", "-q", "main"});
  ASSERT_EQ(r.yolo({"hooks", "install"}).exit_code, 0);
  ASSERT_NE(r.yolo({"review", r.plan.string()}).exit_code, 1);
  std::string v1 = review::file_hash(runner::world(), r.plan);
  ASSERT_EQ(r.review_of("01-01")["hash"], v1);

  // post-merge (a fast-forward merge).
  auto m = r.git_run({"merge", "-q", "--ff-only", "topic"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  std::string v2 = review::file_hash(runner::world(), r.plan);
  ASSERT_NE(v1, v2);
  EXPECT_EQ(r.review_of("01-01")["hash"], v2) << m.err;

  // post-rewrite (commit --amend): the amended plan was reviewed by pre-commit already, and
  // the review recorded what was committed.
  write_file(r.plan, plan_text("Build the core, amended"));
  auto a = r.git_run({"commit", "-q", "-a", "--amend", "-m", "plan v3"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(r.review_of("01-01")["hash"], review::file_hash(runner::world(), r.plan));
}

// ---- the pre-commit framework's manifest ---------------------------------------------------

TEST(Hooks, PreCommitFrameworkManifestIsValid) {
  stdfs::path manifest = test::source_dir() / ".pre-commit-hooks.yaml";
  ASSERT_TRUE(stdfs::exists(manifest));
  YAML::Node doc = YAML::LoadFile(manifest.string());
  ASSERT_TRUE(doc.IsSequence());
  ASSERT_EQ(doc.size(), 1u);
  YAML::Node h = doc[0];
  for (const char* key : {"id", "name", "entry", "language", "files"}) {
    ASSERT_TRUE(h[key] && h[key].IsScalar()) << key;
    EXPECT_FALSE(h[key].as<std::string>().empty()) << key;
  }
  EXPECT_EQ(h["id"].as<std::string>(), "yolo-review");
  EXPECT_EQ(h["language"].as<std::string>(), "system");
  EXPECT_EQ(h["entry"].as<std::string>(), "yolo hooks run pre-commit");
  ASSERT_TRUE(h["pass_filenames"]);
  EXPECT_TRUE(h["pass_filenames"].as<bool>());
  // Known keys only (the framework refuses a manifest with a misspelt key? it warns; keep it clean).
  const std::set<std::string> known = {"id",
                                       "name",
                                       "entry",
                                       "language",
                                       "files",
                                       "exclude",
                                       "types",
                                       "types_or",
                                       "exclude_types",
                                       "always_run",
                                       "fail_fast",
                                       "verbose",
                                       "pass_filenames",
                                       "require_serial",
                                       "description",
                                       "language_version",
                                       "minimum_pre_commit_version",
                                       "args",
                                       "stages",
                                       "log_file",
                                       "alias",
                                       "additional_dependencies"};
  for (const auto& kv : h) EXPECT_TRUE(known.count(kv.first.as<std::string>())) << kv.first.as<std::string>();

  // `files` is a Python regex searched in the path from the repository root; this one uses
  // nothing Python and ECMAScript read differently.
  std::regex files(h["files"].as<std::string>());
  for (const char* yes : {".yolo-planning/phases/01-core/01-02-PLAN.md", ".yolo-planning/phases/01-core/02-PLAN.md",
                          ".yolo-planning/phases/01-core/PLAN.md", "app/.yolo-planning/phases/02-api/02-01-PLAN.md",
                          ".yolo-planning/phases/03-x/03-01a-PLAN.md"})
    EXPECT_TRUE(std::regex_search(std::string(yes), files)) << yes;
  for (const char* no : {".yolo-planning/phases/01-core/01-02-SUMMARY.md", "docs/PLAN.md", "PLAN.md",
                         ".yolo-planning/phases/01-core/01-02-PLAN.md.bak", "x.yolo-planning/phases/01/PLAN.md",
                         ".yolo-planning/phases/01-core/01-02-plan.md", ".yolo-planning/ROADMAP.md"})
    EXPECT_FALSE(std::regex_search(std::string(no), files)) << no;
}

TEST(Hooks, PreCommitFrameworkEntryReviewsThePassedFiles) {
  // What the framework runs: the entry with the matching staged files, from the repository root.
  Repo r;
  stdfs::path bad = r.plan.parent_path() / "01-02-PLAN.md";
  write_file(r.plan, plan_text("Build the core"));
  write_file(bad, "---\nphase: \"01\"\nplan: \"02\"\ntitle: Broken\nwave: 1\ndepends_on: []\n---\n\n### Task 1: x\n");
  auto good = r.yolo({"hooks", "run", "pre-commit", ".yolo-planning/phases/01-core/01-01-PLAN.md"});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  auto both = r.yolo({"hooks", "run", "pre-commit", ".yolo-planning/phases/01-core/01-01-PLAN.md",
                      ".yolo-planning/phases/01-core/01-02-PLAN.md"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_TRUE(contains(both.err, "01-02-PLAN.md was rejected by the review gate")) << both.err;
  EXPECT_FALSE(contains(both.err, "01-01-PLAN.md was rejected")) << both.err;
}

}  // namespace
}  // namespace yolo
