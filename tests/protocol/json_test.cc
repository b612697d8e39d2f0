// protocol/base/json.h: bounded-depth parsing of JSON from disk, children and clients.
#include <gtest/gtest.h>

#include <random>

#include "protocol/base/json.h"

namespace yolo {
namespace {

TEST(JsonBounded, ParsesOrdinaryDocuments) {
  auto p = parse_json_bounded(R"({"a": [1, {"b": "c"}], "d": null})");
  ASSERT_TRUE(p.ok()) << p.message;
  EXPECT_EQ(p.doc["a"][1]["b"], "c");
  EXPECT_EQ(p.problem, JsonParse::Problem::None);
  EXPECT_TRUE(p.message.empty());
}

TEST(JsonBounded, DepthLimitIsInclusive) {
  std::string at = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(parse_json_bounded(at).ok());
  std::string over = std::string(65, '[') + std::string(65, ']');
  auto p = parse_json_bounded(over);
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.problem, JsonParse::Problem::TooDeep);
  EXPECT_TRUE(p.doc.is_discarded());
  EXPECT_NE(p.message.find("nested deeper than 64 levels"), std::string::npos) << p.message;
  EXPECT_TRUE(parse_json_bounded(over, 65).ok());
}

TEST(JsonBounded, HugeNestingIsRefusedWithoutParsing) {
  std::string deep = "{\"x\":" + std::string(300000, '[') + std::string(300000, ']') + "}";
  auto p = parse_json_bounded(deep);
  EXPECT_EQ(p.problem, JsonParse::Problem::TooDeep);
  EXPECT_EQ(p.line, 1u);
  // Unbalanced garbage nests too: still refused, never handed to the parser.
  auto g = parse_json_bounded(std::string(1000000, '{'));
  EXPECT_EQ(g.problem, JsonParse::Problem::TooDeep);
}

TEST(JsonBounded, BracketsInStringsDoNotCount) {
  std::string s = "{\"k\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  auto p = parse_json_bounded(s);
  ASSERT_TRUE(p.ok()) << p.message;
  EXPECT_EQ(p.doc["k"].get<std::string>().size(), 2001u);
  // An escaped backslash ends the escape: the quote after it closes the string.
  auto q = parse_json_bounded(R"(["a\\", [[1]]])", 3);
  EXPECT_TRUE(q.ok()) << q.message;
  EXPECT_EQ(parse_json_bounded(R"(["a\\", [[[1]]]])", 3).problem, JsonParse::Problem::TooDeep);
}

TEST(JsonBounded, TooDeepAtNamesTheLine) {
  EXPECT_EQ(json_too_deep_at("[\n[\n[\n]]]", 2), 3);
  EXPECT_EQ(json_too_deep_at("[[]]", 2), 0);
  EXPECT_EQ(json_too_deep_at("]]]][[", 2), 0) << "stray closers do not go negative";
  auto p = parse_json_bounded("{\n\"a\":\n[[[\n1]]]}", 3);
  EXPECT_EQ(p.line, 3u);
  EXPECT_NE(p.message.find("(line 3)"), std::string::npos) << p.message;
}

TEST(JsonBounded, InvalidJsonIsReportedNotThrown) {
  for (const char* bad : {"", "{", "{\"a\": }", "[1, 2,]", "nul", "{\"a\": 1} trailing"}) {
    JsonParse p;
    EXPECT_NO_THROW(p = parse_json_bounded(bad)) << bad;
    EXPECT_EQ(p.problem, JsonParse::Problem::Invalid) << bad;
    EXPECT_TRUE(p.doc.is_discarded()) << bad;
    EXPECT_EQ(p.message.rfind("not valid JSON: ", 0), 0u) << p.message;
    EXPECT_EQ(p.message.find("[json.exception"), std::string::npos) << p.message;
  }
  auto p = parse_json_bounded("{\n\"a\": 1,\n}");
  EXPECT_EQ(p.line, 3u);
  EXPECT_GT(p.byte, 0u);
}

}  // namespace
}  // namespace yolo

namespace yolo {
namespace {
// The depth scan skips strings in strides; it must answer exactly as a scan of one character
// at a time does, on any text (valid JSON or not): random texts of the characters that
// matter, with escapes, quotes, brackets and newlines in every order.
int too_deep_one_char_at_a_time(std::string_view text, int max_depth) {
  int depth = 0, line = 1;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) return line;
    } else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return 0;
}

TEST(JsonBounded, TooDeepAtAnswersAsAScanOfEveryCharacterDoes) {
  std::mt19937 rng(64);
  const char alphabet[] = {'"', '\\', '[', ']', '{', '}', '\n', 'a', ',', ':'};
  for (int round = 0; round < 20000; ++round) {
    std::string t(rng() % 40, ' ');
    for (auto& c : t) c = alphabet[rng() % sizeof alphabet];
    for (int limit : {0, 1, 2, 3}) ASSERT_EQ(json_too_deep_at(t, limit), too_deep_one_char_at_a_time(t, limit)) << t;
  }
}
}  // namespace
}  // namespace yolo
