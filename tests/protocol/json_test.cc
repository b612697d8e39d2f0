// protocol/json.h: bounded-depth parsing of JSON from disk, children and clients.
#include <gtest/gtest.h>

#include "protocol/json.h"

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
