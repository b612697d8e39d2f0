#include "protocol/plan/plan_cache.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

std::string plan(const std::string& n, int wave, const std::string& deps = "[]") {
  return "---\nphase: \"01\"\nplan: \"" + n + "\"\ntitle: \"P" + n + "\"\nwave: " + std::to_string(wave) +
         "\ndepends_on: " + deps +
         "\nmust_haves:\n  - \"it works\"\n---\n\n## Task 1: Do it\n\n**Files:** `src/a.txt` (new)\n";
}

TEST(PlanCache, AnUnchangedFileIsServedFromTheCacheWithoutItsDocument) {
  test::TempDir d;
  stdfs::path p = d / "01-01-PLAN.md";
  test::write_file(p, plan("01", 1));
  PlanCache c;
  auto a = c.load_sibling(test::real_world(), p, 1 << 20);
  ASSERT_TRUE(a.plan);
  EXPECT_EQ(c.hits(), 0u);
  auto b = c.load_sibling(test::real_world(), p, 1 << 20);
  ASSERT_TRUE(b.plan);
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(b.plan->id(), "01-01");
  EXPECT_EQ(b.plan->wave, 1);
  EXPECT_EQ(b.plan->content_hash, a.plan->content_hash);
  EXPECT_TRUE(b.plan->frontmatter.empty());  // slim: the fields stay, the document goes
  EXPECT_EQ(b.plan->must_have_count, 1u);
}

TEST(PlanCache, AnyWriteOrRenameIsReadAgainEvenWithTheSameSize) {
  test::TempDir d;
  stdfs::path p = d / "01-01-PLAN.md";
  test::write_file(p, plan("01", 1));
  PlanCache c;
  ASSERT_EQ(c.load_sibling(test::real_world(), p, 1 << 20).plan->wave, 1);
  // Same size, same mtime second: the write changes ctime (ns) and the content.
  test::write_file(p, plan("01", 2));
  EXPECT_EQ(c.load_sibling(test::real_world(), p, 1 << 20).plan->wave, 2);
  // Replaced by rename (a new inode).
  test::write_file(d / "tmp", plan("01", 3));
  stdfs::rename(d / "tmp", p);
  EXPECT_EQ(c.load_sibling(test::real_world(), p, 1 << 20).plan->wave, 3);
  EXPECT_EQ(c.hits(), 0u);
}

TEST(PlanCache, AGoneFileSaysSoAndIsForgotten) {
  test::TempDir d;
  stdfs::path p = d / "01-01-PLAN.md";
  test::write_file(p, plan("01", 1));
  PlanCache c;
  ASSERT_TRUE(c.load_sibling(test::real_world(), p, 1 << 20).plan);
  EXPECT_EQ(c.size(), 1u);
  stdfs::remove(p);
  auto l = c.load_sibling(test::real_world(), p, 1 << 20);
  EXPECT_FALSE(l.plan);
  EXPECT_TRUE(l.not_found);
  EXPECT_EQ(c.size(), 0u);
}

TEST(PlanCache, BeyondItsSizeItReadsButDoesNotKeep) {
  test::TempDir d;
  PlanCache c(2);
  for (int i = 1; i <= 3; ++i)
    test::write_file(d / ("01-0" + std::to_string(i) + "-PLAN.md"), plan("0" + std::to_string(i), 1));
  for (int i = 1; i <= 3; ++i)
    EXPECT_TRUE(c.load_sibling(test::real_world(), d / ("01-0" + std::to_string(i) + "-PLAN.md"), 1 << 20).plan);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_TRUE(c.load_sibling(test::real_world(), d / "01-03-PLAN.md", 1 << 20).plan);
  EXPECT_EQ(c.hits(), 0u);
}

}  // namespace
}  // namespace yolo
