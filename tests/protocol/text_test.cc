// protocol/base/text.h: sanitize_for_terminal keeps plan-derived text from driving the terminal.
#include <gtest/gtest.h>

#include "protocol/base/text.h"

namespace yolo {
namespace {

using text::sanitize_for_terminal;

TEST(Cut, KeepsShortTextAndNeverCutsInsideACharacter) {
  EXPECT_EQ(text::cut("abc", 3), "abc");
  EXPECT_EQ(text::cut("abcd", 3), "abc…");
  // "é" is two bytes: a cut at byte 2 would split it, so it is left out whole.
  EXPECT_EQ(text::cut("aé", 2), "a…");
  EXPECT_EQ(text::cut("aéb", 3), "aé…");
  EXPECT_EQ(text::cut("", 0), "");
}

TEST(SanitizeForTerminal, PlainTextNewlinesAndTabsAreKept) {
  EXPECT_EQ(sanitize_for_terminal(""), "");
  EXPECT_EQ(sanitize_for_terminal("Plan 01-02: add the parser"), "Plan 01-02: add the parser");
  EXPECT_EQ(sanitize_for_terminal("a\nb\tc"), "a\nb\tc");
}

TEST(SanitizeForTerminal, C0ControlsBecomeCaretNotation) {
  EXPECT_EQ(sanitize_for_terminal("\x1b[31mred\x1b[0m"), "^[[31mred^[[0m");
  EXPECT_EQ(sanitize_for_terminal("\x1b]0;title\a"), "^[]0;title^G");
  EXPECT_EQ(sanitize_for_terminal("over\rwrite"), "over^Mwrite");
  EXPECT_EQ(sanitize_for_terminal("back\bspace"), "back^Hspace");
  EXPECT_EQ(sanitize_for_terminal(std::string("nul\0x", 5)), "nul^@x");
  EXPECT_EQ(sanitize_for_terminal("\x1f"), "^_");
  EXPECT_EQ(sanitize_for_terminal("del\x7f"), "del^?");
}

TEST(SanitizeForTerminal, C1ControlsBecomePlaceholders) {
  EXPECT_EQ(sanitize_for_terminal("\xc2\x9b"
                                  "31m"),
            "?31m");                                           // U+009B CSI
  EXPECT_EQ(sanitize_for_terminal("\xc2\x80\xc2\x9f"), "??");  // U+0080, U+009F
  EXPECT_EQ(sanitize_for_terminal("\xc2\xa0"), "\xc2\xa0");    // U+00A0 is not a control
}

TEST(SanitizeForTerminal, MultiByteCharactersAreKept) {
  // Continuation bytes 0x80..0x9F inside characters are not C1 controls.
  const std::string s = "✓ ⚠ ✗ ◆ ⏸ ○ — → é 日本 😀 \xe2\x80\x9c";  // U+201C has byte 0x80 and 0x9C
  EXPECT_EQ(sanitize_for_terminal(s), s);
}

TEST(SanitizeForTerminal, InvalidUtf8BytesBecomePlaceholders) {
  EXPECT_EQ(sanitize_for_terminal("a\x9b"
                                  "b"),
            "a?b");  // a raw 8-bit CSI
  EXPECT_EQ(sanitize_for_terminal("\xff\xfe"), "??");
  EXPECT_EQ(sanitize_for_terminal("\xe2\x9c"), "??");  // truncated sequence
  EXPECT_EQ(sanitize_for_terminal("\xc0\x9b"), "??");  // overlong encoding
  EXPECT_TRUE(text::valid_utf8(sanitize_for_terminal("\x1b\xc2\x9b\xff ok ✓")));
}

TEST(SanitizeForTerminal, NoControlCharacterSurvives) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  for (int c = 0x80; c < 0xA0; ++c) {
    all += "\xc2";
    all.push_back(static_cast<char>(c));
  }
  std::string out = sanitize_for_terminal(all);
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c == '\n' || c == '\t') continue;
    EXPECT_FALSE(c < 0x20 || c == 0x7f) << "byte " << int(c) << " at " << i;
    if (c == 0xc2 && i + 1 < out.size()) {
      EXPECT_GE(static_cast<unsigned char>(out[i + 1]), 0xa0);
    }
  }
  EXPECT_TRUE(text::valid_utf8(out));
}

TEST(Utf8, ValidUtf8StillChecksAsBefore) {
  EXPECT_TRUE(text::valid_utf8("plain ✓ 😀"));
  EXPECT_FALSE(text::valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(text::valid_utf8("\xf4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(text::valid_utf8("\x80"));
}

// The ASCII runs are checked eight bytes at a time: a bad byte or a sequence is found at any
// offset, in a window, across two windows or in the tail after the last one.
TEST(Utf8, ABadByteIsFoundAtEveryOffset) {
  for (size_t len = 1; len <= 40; ++len)
    for (size_t at = 0; at < len; ++at) {
      std::string s(len, 'a');
      s[at] = '\xff';
      EXPECT_FALSE(text::valid_utf8(s)) << len << " " << at;
      s[at] = '\x80';  // a continuation byte alone
      EXPECT_FALSE(text::valid_utf8(s)) << len << " " << at;
      if (at + 2 <= len) {
        s.replace(at, 2, "\xc3\xa9");  // é: valid wherever it falls
        EXPECT_TRUE(text::valid_utf8(s)) << len << " " << at;
        s.replace(at, 2, "\xc3" "a");  // a lead byte without its continuation
        EXPECT_FALSE(text::valid_utf8(s)) << len << " " << at;
      }
    }
  std::string long_one(1000, 'x');
  long_one += "✓";
  long_one.append(13, 'y');
  EXPECT_TRUE(text::valid_utf8(long_one));
}

TEST(Text, JoinSomeNamesTheFirstItemsAndCountsTheRest) {
  EXPECT_EQ(text::join_some({}), "");
  EXPECT_EQ(text::join_some({"a", "b"}), "a, b");
  EXPECT_EQ(text::join_some({"a", "b", "c", "d"}, 2), "a, b, ... (2 more)");
  EXPECT_EQ(text::join_some({"a", "b"}, 2), "a, b");
}

}  // namespace
}  // namespace yolo
