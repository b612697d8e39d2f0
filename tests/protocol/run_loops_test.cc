#include "protocol/run_loops.h"

#include <gtest/gtest.h>

namespace yolo::review {
namespace {

const json kLoop = {{"cycle", 1}, {"max", 3}, {"status", "passed"}};

TEST(RunLoops, BeforeARunHasAPhaseTheStateKeepsThePhaseReviewedLast) {
  json st = {{"status", "running"}, {"review_loops", {{"01-01", kLoop}, {"01-02", kLoop}, {"notes", kLoop}}}};
  EXPECT_TRUE(put_run_loop(st, 1, "01-03", kLoop));
  EXPECT_EQ(st["review_loops"].size(), 4u);
  EXPECT_TRUE(put_run_loop(st, 2, "02-01", kLoop));
  // Phase 1's loops leave the state (their ledger keeps them); an id without a number stays.
  EXPECT_EQ(st["review_loops"], json({{"02-01", kLoop}, {"notes", kLoop}}));
}

TEST(RunLoops, WithARunOnlyItsPhasesLoopsAreKept) {
  json st = {{"status", "running"}, {"phase", 1}, {"review_loops", {{"01-01", kLoop}}}};
  json before = st;
  EXPECT_FALSE(put_run_loop(st, 2, "02-01", kLoop));
  EXPECT_EQ(st, before);
  EXPECT_TRUE(put_run_loop(st, 1, "01-02", kLoop));
  EXPECT_EQ(st["review_loops"].size(), 2u);
}

TEST(RunLoops, AnUnknownPhaseOrAMissingMapStillRecords) {
  json st = {{"status", "running"}, {"phase", 4}, {"review_loops", "garbage"}};
  EXPECT_TRUE(put_run_loop(st, 0, "x", kLoop));
  EXPECT_EQ(st["review_loops"], json({{"x", kLoop}}));
}

}  // namespace
}  // namespace yolo::review
