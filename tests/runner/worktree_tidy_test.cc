// Worktrees::tidy (runner/worktree.h), the end of a run's clean-up, on a real git repository:
// the merged yolo/ branches are deleted even while another git still holds packed-refs.lock
// for a moment (a deletion of the run that has not ended yet, a detached `gc --auto`): the
// deletion waits for it instead of failing after git's default second and leaving them.
#include "runner/worktree.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "test_support.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

using test::git;

TEST(WorktreeTidyTest, MergedBranchesAreDeletedOnceAnotherGitLetsGoOfPackedRefsLock) {
  test::TempDir tmp;
  const stdfs::path root = tmp / "repo";
  stdfs::create_directories(root);
  git(root, {"init", "-q", "-b", "main"});
  test::write_file(root / "README.md", "demo\n");
  git(root, {"add", "."});
  git(root, {"commit", "-qm", "base"});
  Worktrees trees(root, "0123456789abcdef");
  std::vector<std::string> branches;
  for (const char* p : {"01-01", "01-02", "01-03", "01-04"}) {
    branches.push_back(trees.branch_for(p));
    git(root, {"branch", branches.back()});
  }
  // Packed: deleting them rewrites packed-refs, under its lock.
  git(root, {"pack-refs", "--all"});
  const stdfs::path lock = root / ".git" / "packed-refs.lock";
  test::write_file(lock, "");
  // Held for 2.5 s, as a git that is still about holds it.
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    std::error_code ec;
    stdfs::remove(lock, ec);
  });
  std::vector<std::string> notes;
  auto left = trees.tidy(notes);
  holder.join();
  EXPECT_TRUE(left.empty()) << left.size() << " left: " << (notes.empty() ? "" : notes.back());
  for (const auto& n : notes) EXPECT_EQ(n.find("could not delete"), std::string::npos) << n;
  for (const auto& b : branches)
    EXPECT_NE(test::run_program({"git", "rev-parse", "--verify", "-q", "refs/heads/" + b}, root).exit_code, 0) << b;
}

}  // namespace
}  // namespace yolo::runner
