#include "protocol/frontmatter.h"

#include <gtest/gtest.h>

namespace yolo {
namespace {

TEST(Frontmatter, ScalarsKeepTheirText) {
  auto fm = parse_frontmatter(
      "---\nphase: 01\nplan: 1\nwave: 2\nversion: 1.10\nratio: 1.5\nq: \"7\"\nok: true\nnone:\n---\nbody\n");
  ASSERT_TRUE(fm.ok()) << fm.error->message;
  EXPECT_TRUE(fm.has_frontmatter);
  EXPECT_EQ(fm.data["phase"], "01");
  EXPECT_EQ(fm.data["plan"], 1);
  EXPECT_EQ(fm.data["wave"], 2);
  EXPECT_EQ(fm.data["version"], "1.10");
  EXPECT_EQ(fm.data["ratio"], 1.5);
  EXPECT_EQ(fm.data["q"], "7");
  EXPECT_EQ(fm.data["ok"], true);
  EXPECT_TRUE(fm.data["none"].is_null());
  EXPECT_EQ(fm.body, "body\n");
}

// The decimal shape -?(0|[1-9][0-9]*)\.[0-9]*[1-9] is checked by hand (no std::regex): a float
// converts only when its shortest printing is the same text.
TEST(Frontmatter, FloatsConvertOnlyInTheirShortestSpelling) {
  for (const char* v : {"1.5", "-0.25", "0.5", "10.75", "-3.125", "120.01"}) {
    auto fm = parse_frontmatter(std::string("---\nx: ") + v + "\n---\n");
    ASSERT_TRUE(fm.ok()) << v;
    EXPECT_TRUE(fm.data["x"].is_number_float()) << v;
    EXPECT_EQ(fm.data["x"].dump(), v);
  }
  for (const char* v : {"1.10", "01.5", "-01.5", "1.", ".5", "-.5", "1.0", "0.0", "1.5e3", "1.5.2", "+1.5", "1,5",
                        "0x1.8", "--1.5", "1.2a"}) {
    auto fm = parse_frontmatter(std::string("---\nx: '") + v + "'\ny: " + v + "\n---\n");
    ASSERT_TRUE(fm.ok()) << v;
    EXPECT_FALSE(fm.data["y"].is_number_float()) << v;
  }
}

TEST(Frontmatter, InlineListsOfZeroPaddedNumbersStayText) {
  auto fm = parse_frontmatter("---\ndepends_on: [01, 02]\n---\n");
  ASSERT_TRUE(fm.ok());
  EXPECT_EQ(fm.data["depends_on"], json::parse(R"(["01","02"])"));
}

TEST(Frontmatter, NoFrontmatter) {
  auto fm = parse_frontmatter("# Title\n---\n");
  EXPECT_TRUE(fm.ok());
  EXPECT_FALSE(fm.has_frontmatter);
  EXPECT_EQ(fm.data, json::object());
}

TEST(Frontmatter, EmptyBlock) {
  auto fm = parse_frontmatter("---\n---\nbody");
  EXPECT_TRUE(fm.ok());
  EXPECT_TRUE(fm.has_frontmatter);
  EXPECT_EQ(fm.data, json::object());
}

TEST(Frontmatter, CrlfAndBom) {
  auto fm = parse_frontmatter("\xEF\xBB\xBF---\r\ntitle: x\r\n---\r\nbody\r\n");
  ASSERT_TRUE(fm.ok());
  EXPECT_EQ(fm.data["title"], "x");
}

TEST(Frontmatter, UnterminatedIsAnError) {
  auto fm = parse_frontmatter("---\ntitle: x\nmore: y\n");
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("unterminated"), std::string::npos);
}

TEST(Frontmatter, YamlErrorReportsFileLineAndColumn) {
  auto fm = parse_frontmatter("---\ntitle: x\nlist: [a, b\nwave: 1\n---\n");
  ASSERT_FALSE(fm.ok());
  EXPECT_GE(fm.error->line, 3);
  EXPECT_GT(fm.error->column, 0);
  EXPECT_NE(fm.error->message.find("YAML"), std::string::npos);
}

TEST(Frontmatter, DeepNestingIsRefusedNotACrash) {
  std::string deep = "---\nx: " + std::string(100000, '[') + "\n---\n";
  auto fm = parse_frontmatter(deep);
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("nesting"), std::string::npos);
}

TEST(Frontmatter, ListDocumentIsNotAMapping) {
  auto fm = parse_frontmatter("---\n- a\n- b\n---\n");
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("mapping"), std::string::npos);
}

TEST(Frontmatter, BothMustHavesShapes) {
  auto a = parse_frontmatter("---\nmust_haves:\n  - one\n  - two\n---\n");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.data["must_haves"].size(), 2u);
  auto b = parse_frontmatter(
      "---\nmust_haves:\n  truths: [\"t\"]\n  artifacts:\n    - path: a.cc\n      provides: x\n      contains: y\n  "
      "key_links:\n    - {from: a, to: b, via: c}\n---\n");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.data["must_haves"]["artifacts"][0]["path"], "a.cc");
  EXPECT_EQ(b.data["must_haves"]["key_links"][0]["via"], "c");
}

}  // namespace
}  // namespace yolo

namespace yolo {
namespace {
TEST(Frontmatter, AliasBombIsRefused) {
  std::string y = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) y += std::string(i ? ", " : "") + "*" + prev;
    y += "]\n";
    prev = c;
  }
  y += "---\n";
  auto fm = parse_frontmatter(y);
  ASSERT_FALSE(fm.ok());
  EXPECT_NE(fm.error->message.find("alias"), std::string::npos) << fm.error->message;
}
}  // namespace
}  // namespace yolo
