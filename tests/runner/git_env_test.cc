// GitCli and git_toplevel answer about the folder they are given even when the environment
// carries the variables a git hook exports for another repository (GIT_DIR, GIT_INDEX_FILE, ...).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "runner/git.h"
#include "test_support.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;
using test::run_program;
using test::TempDir;
using test::write_file;

std::string git(const stdfs::path& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"git", "-C", repo.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_program(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string make_repo(const stdfs::path& dir, const std::string& file) {
  git(dir, {"init", "-q"});
  git(dir, {"config", "user.name", "T"});
  git(dir, {"config", "user.email", "t@example.com"});
  git(dir, {"config", "commit.gpgsign", "false"});
  write_file(dir / file, file + "\n");
  git(dir, {"add", "-A"});
  git(dir, {"commit", "-q", "-m", file});
  return git(dir, {"rev-parse", "HEAD"});
}

// Sets the variables for the test's lifetime, as a hook of `other` would see them.
class HookEnv {
 public:
  explicit HookEnv(const stdfs::path& other) {
    set("GIT_DIR", (other / ".git").string());
    set("GIT_WORK_TREE", other.string());
    set("GIT_INDEX_FILE", (other / ".git" / "index").string());
    set("GIT_PREFIX", "sub/");
  }
  ~HookEnv() {
    for (const auto& [k, v] : saved_) {
      if (v) ::setenv(k.c_str(), v->c_str(), 1);
      else ::unsetenv(k.c_str());
    }
  }
  HookEnv(const HookEnv&) = delete;
  HookEnv& operator=(const HookEnv&) = delete;

 private:
  void set(const std::string& k, const std::string& v) {
    const char* old = std::getenv(k.c_str());
    saved_.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(GitCliEnv, HookVariablesOfAnotherRepositoryAreIgnored) {
  TempDir a, b;
  std::string in_a = make_repo(a.path(), "a.txt");
  std::string in_b = make_repo(b.path(), "b.txt");
  HookEnv env(b.path());  // as if yolo ran inside a hook of repository b

  GitCli g(a.path());
  EXPECT_TRUE(g.is_repo()) << g.last_error();
  EXPECT_EQ(g.commit_exists(in_a), true) << g.last_error();
  EXPECT_EQ(g.commit_exists(in_b), false);
  auto files = g.files_touched(in_a);
  ASSERT_TRUE(files) << g.last_error();
  EXPECT_EQ(*files, std::vector<std::string>{"a.txt"});
  GitCli pre(a.path());
  pre.prefetch({in_a, in_b});
  EXPECT_EQ(pre.commit_exists(in_a), true);
  EXPECT_EQ(pre.commit_exists(in_b), false);

  auto top = git_toplevel(a.path());
  ASSERT_TRUE(top);
  EXPECT_EQ(stdfs::canonical(*top), stdfs::canonical(a.path()));
}

TEST(GitCliEnv, TheListNamesTheRepositoryVariables) {
  const auto& names = git_hook_env();
  for (const char* v : {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"})
    EXPECT_NE(std::find(names.begin(), names.end(), v), names.end()) << v;
  // Not the ones that only tune behaviour.
  for (const char* v : {"GIT_TERMINAL_PROMPT", "GIT_CONFIG_GLOBAL", "GIT_SSH_COMMAND"})
    EXPECT_EQ(std::find(names.begin(), names.end(), v), names.end()) << v;
}

}  // namespace
}  // namespace yolo::runner
