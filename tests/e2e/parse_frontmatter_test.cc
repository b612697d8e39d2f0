// End-to-end: the real `yolo` binary on real files. parse-frontmatter.
#include <gtest/gtest.h>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using test::run_yolo;

// --- parse-frontmatter ---------------------------------------------------------------

TEST(ParseFrontmatterCli, MissingFileExactContract) {
  test::TempDir t;
  std::string path = (t / "absent.md").string();
  auto r = run_yolo({"parse-frontmatter", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.json_out(), json({{"error", "file not found: " + path}})) << r.out;
  auto rel = run_yolo({"parse-frontmatter", "absent.md"}, t.path());
  EXPECT_EQ(rel.exit_code, 1);
  EXPECT_EQ(rel.json_out(), json({{"error", "file not found: absent.md"}})) << rel.out;
}

TEST(ParseFrontmatterCli, NoFrontmatter) {
  test::TempDir t;
  test::write_file(t / "a.md", "# Title\n\nno frontmatter here\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cmd"], "parse-frontmatter");
  EXPECT_EQ(j["has_frontmatter"], false);
  EXPECT_EQ(j["frontmatter"], json::object());
  EXPECT_TRUE(j["frontmatter"].is_object());
}

TEST(ParseFrontmatterCli, EmptyBlock) {
  test::TempDir t;
  test::write_file(t / "a.md", "---\n---\nbody\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["has_frontmatter"], true);
  EXPECT_EQ(j["frontmatter"], json::object());
  EXPECT_TRUE(j["frontmatter"].is_object()) << "an empty block is {}, not null";
}

TEST(ParseFrontmatterCli, ValuesKeepTheirText) {
  test::TempDir t;
  test::write_file(t / "a.md",
                   "---\nphase: 01\nplan: 3\ndepends_on: [01, 02]\ntitle: \"Quoted: yes\"\nwave: 1\nflag: true\n"
                   "must_haves:\n  truths: [a]\n  artifacts:\n    - {path: x.cc, provides: X, contains: y}\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json fm = r.json_out()["frontmatter"];
  EXPECT_EQ(fm["phase"], "01");
  EXPECT_EQ(fm["plan"], 3);
  EXPECT_EQ(fm["depends_on"], json::parse(R"(["01","02"])"));
  EXPECT_EQ(fm["title"], "Quoted: yes");
  EXPECT_EQ(fm["wave"], 1);
  EXPECT_EQ(fm["flag"], true);
  EXPECT_EQ(fm["must_haves"]["artifacts"][0]["path"], "x.cc");
}

TEST(ParseFrontmatterCli, YamlErrorNamesLineAndColumn) {
  test::TempDir t;
  test::write_file(t / "bad.md", "---\nphase: 1\ntitle: [unclosed\nwave: 1\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "bad.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], false);
  ASSERT_TRUE(j["line"].is_number_integer()) << j.dump();
  ASSERT_TRUE(j["column"].is_number_integer()) << j.dump();
  EXPECT_GE(j["line"].get<int>(), 3);
  std::string err = j["error"].get<std::string>();
  EXPECT_NE(err.find("bad.md:" + std::to_string(j["line"].get<int>()) + ":" + std::to_string(j["column"].get<int>())),
            std::string::npos)
      << err;
}

TEST(ParseFrontmatterCli, UnterminatedBlock) {
  test::TempDir t;
  test::write_file(t / "open.md", "---\nphase: 1\nbody without a closing line\n");
  auto r = run_yolo({"parse-frontmatter", (t / "open.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.json_out()["error"].get<std::string>().find("unterminated"), std::string::npos) << r.out;
}

TEST(ParseFrontmatterCli, BinaryAndHugeFilesAreRefused) {
  test::TempDir t;
  std::string bin = "---\nphase: 1\n---\n";
  for (int i = 0; i < 256; ++i) bin.push_back(static_cast<char>(i));
  test::write_file(t / "bin.md", bin);
  auto b = run_yolo({"parse-frontmatter", (t / "bin.md").string()});
  EXPECT_EQ(b.exit_code, 1) << dump(b);
  EXPECT_NE(b.json_out()["error"].get<std::string>().find("bin.md"), std::string::npos) << b.out;
  EXPECT_NE(b.json_out()["error"].get<std::string>().find("binary"), std::string::npos) << b.out;

  test::write_file(t / "huge.md", "---\nphase: 1\n---\n" + std::string(2u << 20, 'x'));
  auto h = run_yolo({"parse-frontmatter", (t / "huge.md").string()});
  EXPECT_EQ(h.exit_code, 1) << dump(h);
  EXPECT_NE(h.json_out()["error"].get<std::string>().find("huge.md"), std::string::npos) << h.out;

  auto dir = run_yolo({"parse-frontmatter", t.path().string()});
  EXPECT_EQ(dir.exit_code, 1) << dump(dir);
  EXPECT_FALSE(dir.json_out()["error"].get<std::string>().empty());
}

TEST(ParseFrontmatterCli, AliasBombIsRefused) {
  test::TempDir t;
  std::string y = "---\na: &a [x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'g'; ++c) {  // 9^7 values once expanded
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) y += std::string(i ? ", " : "") + "*" + prev;
    y += "]\n";
    prev = c;
  }
  y += "---\n";
  test::write_file(t / "bomb.md", y);
  auto r = run_yolo({"parse-frontmatter", (t / "bomb.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_LT(r.out.size(), 10000u) << "refused, not expanded";
}

TEST(ParseFrontmatterCli, DeepNestingIsRefusedNotACrash) {
  test::TempDir t;
  test::write_file(t / "flow.md", "---\nx: " + std::string(100000, '[') + "\n---\n");
  auto f = run_yolo({"parse-frontmatter", (t / "flow.md").string()});
  EXPECT_EQ(f.exit_code, 1) << dump(f);
  std::string block = "---\nx:\n";
  for (int i = 0; i < 3000; ++i) block += "  - ";
  block += "y\n---\n";
  test::write_file(t / "block.md", block);
  auto b = run_yolo({"parse-frontmatter", (t / "block.md").string()});
  EXPECT_TRUE(b.exit_code == 0 || b.exit_code == 1) << dump(b);
  EXPECT_NO_THROW(b.json_out());
  std::string seq = "---\nx: ";
  for (int i = 0; i < 200000; ++i) seq += "- ";
  seq += "y\n---\n";
  test::write_file(t / "seq.md", seq);
  auto s = run_yolo({"parse-frontmatter", (t / "seq.md").string()});
  EXPECT_TRUE(s.exit_code == 0 || s.exit_code == 1) << dump(s);
}

}  // namespace
}  // namespace yolo
