// How many executors run at once within this process's limit of open files
// (runner/phase_parts.h: parallel_within_fd_limit): what is wanted when the limit allows it,
// else the cap, said once with the limit; a worktree plan costs more files than a plan in the
// checkout. The test lowers its own soft limit (and puts it back).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "runner/phase_parts.h"

namespace yolo::runner::phase {
namespace {

struct SoftLimit {  // this process's soft RLIMIT_NOFILE at n while it lives
  rlimit before{};
  explicit SoftLimit(rlim_t n) {
    EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
    rlimit now = before;
    now.rlim_cur = std::min<rlim_t>(n, before.rlim_max);
    EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &now), 0);
  }
  ~SoftLimit() { ::setrlimit(RLIMIT_NOFILE, &before); }
};

TEST(FdLimit, WhatIsWantedWhenTheLimitAllowsItElseTheCapSaidWithTheLimit) {
  SoftLimit limit(400);
  ASSERT_EQ(open_files_limit(), 400);
  std::vector<std::pair<int, long>> said;
  auto lowered = [&](int cap, long files) { said.push_back({cap, files}); };

  EXPECT_EQ(parallel_within_fd_limit(2, false, lowered), 2);
  EXPECT_TRUE(said.empty()) << "within the limit: nothing said";

  const int cap = parallel_within_fd_limit(1000, false, lowered);
  EXPECT_GE(cap, 1);
  EXPECT_LT(cap, 1000);
  EXPECT_LE(cap, (400 - 24) / 6) << "6 files a plan, 24 kept for the run";
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], (std::pair<int, long>{cap, 400}));

  const int isolated = parallel_within_fd_limit(1000, true, lowered);
  EXPECT_LT(isolated, cap) << "a worktree plan opens more files";
  EXPECT_GE(isolated, 1);
}

TEST(FdLimit, AtLeastOnePlanRunsHoweverLowTheLimit) {
  SoftLimit limit(32);
  int said = 0;
  EXPECT_EQ(parallel_within_fd_limit(8, true, [&](int, long) { ++said; }), 1);
  EXPECT_EQ(said, 1);
}

}  // namespace
}  // namespace yolo::runner::phase
