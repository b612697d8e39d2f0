// unified_diff: what `yolo watch --fix` shows of the architect's rewrite.
#include "protocol/base/text_diff.h"

#include <gtest/gtest.h>

namespace yolo::text {
namespace {

TEST(TextDiff, EqualTextsHaveNoDiff) { EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y"), ""); }

TEST(TextDiff, AnAppendedSectionIsOneHunkWithItsContext) {
  std::string before = "l1\nl2\nl3\nl4\nl5\n", after = before + "## Revision\nfixed\n";
  EXPECT_EQ(unified_diff(before, after, "a/PLAN.md", "b/PLAN.md"),
            "--- a/PLAN.md\n+++ b/PLAN.md\n@@ -3,3 +3,5 @@\n l3\n l4\n l5\n+## Revision\n+fixed\n");
}

TEST(TextDiff, AChangedLineShowsRemovedThenAddedAndFarChangesAreSeparateHunks) {
  std::string before, after;
  for (int i = 1; i <= 20; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i == 2 ? "LINE 2" : i == 18 ? "LINE 18" : "line " + std::to_string(i)) + "\n";
  }
  std::string d = unified_diff(before, after, "a", "b", 1);
  EXPECT_EQ(d,
            "--- a\n+++ b\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n+LINE 2\n line 3\n"
            "@@ -17,3 +17,3 @@\n line 17\n-line 18\n+LINE 18\n line 19\n");
}

TEST(TextDiff, HugeTextsAreOneWholeHunk) {
  std::string d = unified_diff("a\nb\n", "a\nc\n", "x", "y", 3, /*max_lines=*/1);
  EXPECT_EQ(d, "--- x\n+++ y\n@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+c\n");
}

}  // namespace
}  // namespace yolo::text
