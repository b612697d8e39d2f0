#include "protocol/run/run_loops.h"

#include <gtest/gtest.h>

namespace yolo::review {
namespace {

const json kLoop = {{"cycle", 1}, {"max", 3}, {"status", "passed"}};

// A review never creates or marks a run: without one (no state, or a state written by an
// older review or a gate request, with no phase), nothing goes into the state.
TEST(RunLoops, WithoutARunTheStateIsLeftAlone) {
  for (json st : {json::object(), json{{"status", "running"}, {"review_loops", {{"01-01", kLoop}}}},
                  json{{"status", "awaiting_approval"}, {"gates", json::array()}}}) {
    json before = st;
    EXPECT_FALSE(put_run_loop(st, 1, "01-03", kLoop)) << before.dump();
    EXPECT_FALSE(put_run_loop(st, 0, "notes", kLoop)) << before.dump();
    EXPECT_EQ(st, before);
  }
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
