// The alias-bomb guard of protocol/plan/frontmatter.cc: a frontmatter may expand to at most 20000
// values (objects, arrays and scalars, aliases counted as often as they expand).
#include <gtest/gtest.h>

#include <chrono>

#include "protocol/plan/frontmatter.h"

namespace yolo {
namespace {

std::string flow_list(size_t n) {
  std::string y = "---\nx: [";
  for (size_t i = 0; i < n; ++i) y += i ? ",1" : "1";
  return y + "]\n---\n";
}

TEST(FrontmatterLimits, LargeRealisticDocumentIsAccepted) {
  // root + list + 15000 scalars: under the guard.
  auto fm = parse_frontmatter(flow_list(15000));
  ASSERT_TRUE(fm.ok()) << fm.error->message;
  EXPECT_EQ(fm.data["x"].size(), 15000u);
}

TEST(FrontmatterLimits, OverTwentyThousandValuesIsRefused) {
  auto fm = parse_frontmatter(flow_list(20000));
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("more than 20000 values"), std::string::npos) << fm.error->message;
  EXPECT_GT(fm.error->line, 0);
}

TEST(FrontmatterLimits, AliasBombIsRefusedQuickly) {
  // 3 levels of 30 aliases: 27000 values once expanded, from a few lines of YAML.
  std::string y = "---\na: &a [";
  for (int i = 0; i < 30; ++i) y += i ? ",x" : "x";
  y += "]\nb: &b [";
  for (int i = 0; i < 30; ++i) y += i ? ",*a" : "*a";
  y += "]\nc: [";
  for (int i = 0; i < 30; ++i) y += i ? ",*b" : "*b";
  y += "]\n---\n";
  auto start = std::chrono::steady_clock::now();
  auto fm = parse_frontmatter(y);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("alias bomb"), std::string::npos) << fm.error->message;
}

}  // namespace
}  // namespace yolo
