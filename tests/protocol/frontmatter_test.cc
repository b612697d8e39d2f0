#include "protocol/plan/frontmatter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

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

// The simple frontmatter (flat `key: value` lines) is read without yaml-cpp: where
// that reader answers, its answer must be yaml-cpp's, and yaml-cpp must see no error.
namespace yolo {
namespace {

void expect_same_as_yaml_cpp(const std::string& doc, bool* simple = nullptr) {
  auto fast = simple_yaml_to_json(doc);
  if (simple) *simple = fast.has_value();
  if (!fast) return;
  std::optional<FrontmatterError> err;
  json full = yaml_cpp_to_json(doc, err);
  ASSERT_FALSE(err) << "the simple reader accepted what yaml-cpp refuses: " << err->message << "\n" << doc;
  EXPECT_EQ(*fast, full) << doc;
}

TEST(Frontmatter, SimpleReaderTakesTheUsualPlanAndSummary) {
  const std::vector<std::string> usual = {
      "phase: 1\nplan: 0001\ntitle: \"Bench plan 1 of phase 1\"\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"part 1 "
      "works\"\n",
      "phase: 1\nplan: 0001\ntitle: \"Bench plan 1-0001\"\nstatus: complete\ntasks_completed: 1\ntasks_total: 1\n"
      "commit_hashes: [0000000]\ncompleted: 2026-01-01\ndeviations: []\n",
      "phase: 03\nplan: 02\nwave: 2\ndepends_on: [\"03-01\", 03-00]\nfiles_modified:\n  - src/a.cc\n  - src/b.cc\n",
  };
  for (const auto& d : usual) {
    bool simple = false;
    expect_same_as_yaml_cpp(d, &simple);
    EXPECT_TRUE(simple) << d;
  }
}

TEST(Frontmatter, SimpleReaderAgreesWithYamlCppOrStepsAside) {
  const std::vector<std::string> docs = {"a: 1\n",
                                         "a: 01\n",
                                         "a: -1\n",
                                         "a: 1.5\n",
                                         "a: 1.10\n",
                                         "a: .5\n",
                                         "a: true\nb: False\nc: NULL\nd: null\n",
                                         "a: ~\n",
                                         "a:\n",
                                         "a:   \n",
                                         "a:\nb: 2\n",
                                         "a: x y  z  \n",
                                         "a: 'q'\n",
                                         "a: 'it''s'\n",
                                         "a: \"x\\ty\"\n",
                                         "a: \"x\" y\n",
                                         "a: [a, b ,c]\n",
                                         "a: [ ]\n",
                                         "a: []x\n",
                                         "a: [a,,b]\n",
                                         "a: [a,]\n",
                                         "a: [[a]]\n",
                                         "a: [\"a b\", 'c']\n",
                                         "a: [a b]\n",
                                         "a: b: c\n",
                                         "a: b #c\n",
                                         "a: #c\n",
                                         "# c\na: 1\n",
                                         "a: 1\na: 2\n",
                                         "a:\n  - x\n  - y\nb: 1\n",
                                         "a:\n  - x\n   - y\n",
                                         "a:\n- x\n",
                                         "a:\n  -x\n",
                                         "a:\n  - [x]\n",
                                         "a:\n  - b: 1\n",
                                         "a:\n  b: 1\n",
                                         "  a: 1\n",
                                         "a:b\n",
                                         "-a: 1\n",
                                         "- a\n",
                                         "a: -\n",
                                         "a: - x\n",
                                         "a: &x 1\n",
                                         "a: *x\n",
                                         "a: !t 1\n",
                                         "a: |\n  x\n",
                                         "a: >\n  x\n",
                                         "a: {b: 1}\n",
                                         "a: x\n\nb: y\n",
                                         "a: x\r\n",
                                         "a:\tx\n",
                                         "a: é\n",
                                         "\"a\": 1\n",
                                         "1: a\n",
                                         "true: 1\n",
                                         "a-b_c: d/e.f+g\n",
                                         "a: c++\n",
                                         "a: /abs/path\n",
                                         "a: ./rel\n",
                                         "a: x.\n",
                                         "a: ...\n",
                                         "a: 12345678901234567890\n",
                                         "a: 1e5\n",
                                         "a: 0x1F\n",
                                         "a: 1_000\n",
                                         "a: 2026-01-01\n",
                                         "a: 12:30\n",
                                         "---\n",
                                         "...\n",
                                         "%YAML 1.2\n",
                                         "a: 'x\n",
                                         "a: \"x\n",
                                         "a: [x\n",
                                         "a: x]\n",
                                         "? a\n: b\n",
                                         "a: @x\n",
                                         "a: `x`\n",
                                         "a: %x\n",
                                         "a: y\nb:\n  - 1\n  - 1.0\n  - '1'\n",
                                         "a: [1, 1.50, -0, 00]\n",
                                         "a:  \"  spaced  \"  \n",
                                         ""};
  for (const auto& d : docs) expect_same_as_yaml_cpp(d);
}

TEST(Frontmatter, SimpleReaderAgreesWithYamlCppOnRandomDocuments) {
  const std::vector<std::string> keys = {"a", "b", "phase", "depends_on", "x-y", "1", "a b", "-", "a:b", "\"k\"", "#"};
  const std::vector<std::string> values = {
      "1",  "01",   "-1", "1.5",  "1.50",   "x",         "x y",          "x  ", "\"q\"", "'q'",
      "''", "\"\"", "[]", "[a]",  "[a, 1]", "[a,",       "a]",           ":",   "a:b",   "a: b",
      "#",  "x #c", "~",  "null", "true",   "-",         "- x",          "&a",  "*a",    "!t",
      "|",  ">",    "{}", "[[]]", "'a''b'", "\"a\\\"\"", "[\"a\", 'b']", "/p",  "c++",   "2026-01-01",
      "."};
  const std::vector<std::string> seps = {": ", ":", ":  ", " : ", ":\t"};
  std::mt19937 rng(19);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  int simple_count = 0;
  for (int n = 0; n < 4000; ++n) {
    std::string doc;
    int lines = 1 + static_cast<int>(rng() % 5);
    for (int l = 0; l < lines; ++l) {
      switch (rng() % 6) {
        case 0:  // a block list
          doc += pick(keys) + ":\n";
          for (int k = static_cast<int>(rng() % 3); k >= 0; --k)
            doc += std::string(1 + rng() % 3, ' ') + (rng() % 4 ? "- " : "-") + pick(values) + "\n";
          break;
        case 1:
          doc += (rng() % 2 ? "" : " ") + pick(keys) + pick(seps) + pick(values) + "\n";
          break;
        default:
          doc += pick(keys) + ": " + pick(values) + "\n";
      }
    }
    bool simple = false;
    expect_same_as_yaml_cpp(doc, &simple);
    if (HasFatalFailure()) return;
    simple_count += simple;
  }
  EXPECT_GT(simple_count, 200);  // the reader is exercised, not only stepping aside
}

// Real frontmatter with bytes changed at random (YAML's significant characters most often).
TEST(Frontmatter, SimpleReaderAgreesWithYamlCppOnMutatedFrontmatter) {
  const std::vector<std::string> seeds = {
      "phase: 1\nplan: 0001\ntitle: \"Bench plan 1 of phase 1\"\nwave: 1\ndepends_on: []\nmust_haves:\n  - \"part 1 "
      "works\"\n",
      "phase: 1\nplan: 0001\ntitle: \"Bench plan 1-0001\"\nstatus: complete\ntasks_completed: 1\ntasks_total: 1\n"
      "commit_hashes: [0000000, 'abc']\ncompleted: 2026-01-01\ndeviations: []\n"};
  const std::string alphabet = " :-#[]{},'\"\\\n\t&*!|>%@`?.~0a_/+";
  std::mt19937 rng(20261126);
  int simple_count = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string doc = seeds[rng() % seeds.size()];
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0; --m) {
      size_t at = rng() % (doc.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          doc.insert(doc.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 1:
          if (at < doc.size()) doc.erase(at, 1);
          break;
        default:
          if (at < doc.size()) doc[at] = c;
      }
    }
    bool simple = false;
    expect_same_as_yaml_cpp(doc, &simple);
    if (HasFatalFailure()) return;
    simple_count += simple;
  }
  EXPECT_GT(simple_count, 1000);
}

}  // namespace
}  // namespace yolo
