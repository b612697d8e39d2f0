// runner::GitCli (the GitPort on real git) against temporary repositories.
#include "runner/git.h"

#include <gtest/gtest.h>

#include <algorithm>

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

struct Repo {
  TempDir dir;
  Repo() {
    git(dir.path(), {"init", "-q"});
    git(dir.path(), {"config", "user.name", "T"});
    git(dir.path(), {"config", "user.email", "t@example.com"});
    git(dir.path(), {"config", "commit.gpgsign", "false"});
  }
  std::string commit(const std::vector<std::string>& files, const std::string& msg) {
    for (const auto& f : files) write_file(dir / f, msg + "\n");
    git(dir.path(), {"add", "-A"});
    git(dir.path(), {"commit", "-q", "-m", msg});
    return git(dir.path(), {"rev-parse", "HEAD"});
  }
};

TEST(GitCli, AnswersAboutCommitsAndTheirFiles) {
  Repo r;
  std::string first = r.commit({"a.txt", "sub/b.txt"}, "first");
  std::string second = r.commit({"sub/c d.txt"}, "second");
  GitCli g(r.dir.path());
  EXPECT_TRUE(g.is_repo());
  EXPECT_EQ(g.commit_exists(first.substr(0, 7)), true);
  EXPECT_EQ(g.commit_exists(second), true);
  std::string upper = second.substr(0, 10);
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  EXPECT_EQ(g.commit_exists(upper), true);
  EXPECT_EQ(g.commit_exists("deadbeef"), false);
  auto root_files = g.files_touched(first.substr(0, 7));
  ASSERT_TRUE(root_files);
  EXPECT_EQ(*root_files, (std::vector<std::string>{"a.txt", "sub/b.txt"}));
  auto files = g.files_touched(second);
  ASSERT_TRUE(files);
  EXPECT_EQ(*files, std::vector<std::string>{"sub/c d.txt"});
  EXPECT_FALSE(g.files_touched("deadbeef"));
}

TEST(GitCli, PathsAreRelativeToTheRootGiven) {
  Repo r;
  std::string h = r.commit({"proj/src/a.cc", "other/b.cc"}, "one");
  GitCli g(r.dir / "proj");
  auto files = g.files_touched(h);
  ASSERT_TRUE(files) << g.last_error();
  EXPECT_EQ(*files, std::vector<std::string>{"src/a.cc"});
}

TEST(GitCli, RefNamesSpelledInHexAreNotCommits) {
  Repo r;
  r.commit({"a.txt"}, "one");
  git(r.dir.path(), {"branch", "beef"});
  GitCli g(r.dir.path());
  EXPECT_EQ(g.commit_exists("beef"), false);
}

TEST(GitCli, HostileStringsStartNoProcess) {
  Repo r;
  GitCli g(r.dir.path());
  for (std::string h : {"--output=/tmp/x", "HEAD; rm -rf ~", "HEAD", "main~1", "-p", "abc"}) {
    EXPECT_EQ(g.commit_exists(h), false) << h;
    EXPECT_FALSE(g.files_touched(h)) << h;
  }
  EXPECT_EQ(g.processes_started(), 0);
}

TEST(GitCli, PrefetchAnswersEverythingWithTwoChildren) {
  Repo r;
  std::string a = r.commit({"a.txt", "sub/b.txt"}, "first");
  git(r.dir.path(), {"checkout", "-q", "-b", "feature"});
  std::string f = r.commit({"f.txt"}, "feature");
  git(r.dir.path(), {"checkout", "-q", "-"});
  r.commit({"main.txt"}, "main");
  git(r.dir.path(), {"merge", "-q", "--no-ff", "-m", "merge", "feature"});
  std::string m = git(r.dir.path(), {"rev-parse", "HEAD"});
  git(r.dir.path(), {"branch", "cafe"});
  std::vector<std::string> hashes = {a.substr(0, 7), f, m.substr(0, 12), "cafe", "deadbeef"};

  GitCli one_by_one(r.dir.path());
  GitCli batched(r.dir.path());
  batched.prefetch(hashes);
  EXPECT_EQ(batched.processes_started(), 2);
  for (const auto& h : hashes) {
    EXPECT_EQ(batched.commit_exists(h), one_by_one.commit_exists(h)) << h;
    auto x = batched.files_touched(h), y = one_by_one.files_touched(h);
    ASSERT_EQ(x.has_value(), y.has_value()) << h;
    if (x) {
      std::sort(x->begin(), x->end());
      std::sort(y->begin(), y->end());
      y->erase(std::unique(y->begin(), y->end()), y->end());
      EXPECT_EQ(*x, *y) << h;
    }
  }
  EXPECT_EQ(batched.processes_started(), 2);
  EXPECT_EQ(batched.commit_exists("cafe"), false);
  EXPECT_EQ(batched.commit_exists(m.substr(0, 12)), true);
}

TEST(GitCli, ARangeIsListedByThePrefetchsOwnChildren) {
  Repo r;
  std::string base = r.commit({"a.txt"}, "base");
  std::string s1 = r.commit({"b.txt"}, "s1");
  // The tip adds a file named like a commit the SUMMARY lists, sorted before the others.
  std::string tip = r.commit({s1, "sub/c.txt", "z.txt"}, "tip");
  GitCli g(r.dir.path());
  g.want_range(base, tip);
  g.prefetch({s1.substr(0, 8), tip});  // the tip among the SUMMARY's commits, too
  EXPECT_EQ(g.processes_started(), 2) << "cat-file and diff-tree, as without the range";
  auto range = g.range_files(base, tip);
  ASSERT_TRUE(range);
  std::vector<std::string> want = {s1, "b.txt", "sub/c.txt", "z.txt"};
  std::sort(want.begin(), want.end());
  std::sort(range->begin(), range->end());
  EXPECT_EQ(*range, want);
  GitCli one_by_one(r.dir.path());
  EXPECT_EQ(g.files_touched(tip), one_by_one.files_touched(tip)) << "the tip's own diff, against its parent";
  EXPECT_EQ(g.files_touched(s1.substr(0, 8)), (std::vector<std::string>{"b.txt"}));
  EXPECT_EQ(g.processes_started(), 2);
  EXPECT_FALSE(g.range_files(s1, tip)) << "only the range asked for";
  // An end that is not a commit: no range, the rest answered as before.
  GitCli h(r.dir.path());
  h.want_range(std::string(40, '0'), tip);
  h.prefetch({s1});
  EXPECT_FALSE(h.range_files(std::string(40, '0'), tip));
  EXPECT_EQ(h.files_touched(s1), (std::vector<std::string>{"b.txt"}));
  EXPECT_EQ(h.processes_started(), 2);
}

TEST(GitCli, OutsideARepository) {
  TempDir d;
  GitCli g(d.path());
  // /tmp may sit inside a repository on some machines; only check the answer is consistent.
  bool repo = g.is_repo();
  EXPECT_EQ(repo, git_toplevel(d.path()).has_value());
  if (!repo) {
    EXPECT_FALSE(g.last_error().empty());
  }
  GitCli missing(d / "does-not-exist");
  EXPECT_FALSE(missing.is_repo());
}

}  // namespace
}  // namespace yolo::runner
