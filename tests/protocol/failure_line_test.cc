#include "protocol/findings/failure_line.h"

#include <gtest/gtest.h>

using yolo::failure::explaining_line;
using yolo::failure::is_usage_tail;

TEST(FailureLine, ClapErrorIsPickedOverTheUsageTail) {
  const char* err =
      "error: unexpected argument '--full-auto' found\n\n"
      "  tip: to pass '--full-auto' as a value, use '-- --full-auto'\n\n"
      "Usage: codex exec [OPTIONS] [PROMPT]\n\n"
      "For more information, try '--help'.\n";
  EXPECT_EQ(explaining_line(err), "error: unexpected argument '--full-auto' found");
}

TEST(FailureLine, LastErrorLineWinsAndColourIsDropped) {
  EXPECT_EQ(explaining_line("\x1b[31mError: first\x1b[0m\nsome detail\nfatal: second\n"), "fatal: second");
  EXPECT_EQ(explaining_line("\x1b[31mError: only\x1b[0m\n    at foo (x.js:1:2)\n"), "Error: only");
}

TEST(FailureLine, WithoutAnErrorLineTheLineBeforeTheUsageTail) {
  EXPECT_EQ(explaining_line("the model refused\nUsage: prog [OPTIONS]\n  -h, --help  Print help\n"),
            "the model refused");
  EXPECT_EQ(explaining_line("no such plan\nFor more information, try '--help'.\n"), "no such plan");
}

TEST(FailureLine, StdoutWhenStderrIsBlankAndEmptyWhenBothAre) {
  EXPECT_EQ(explaining_line("  \n\n", "Error: quota exceeded\n"), "Error: quota exceeded");
  EXPECT_EQ(explaining_line("", ""), "");
  EXPECT_EQ(explaining_line("For more information, try '--help'.\n"), "For more information, try '--help'.");
}

TEST(FailureLine, LongLinesAreCutOnACharacter) {
  std::string l = "error: " + std::string(400, 'x');
  std::string e = explaining_line(l);
  EXPECT_LE(e.size(), 300u + 3u);
  EXPECT_EQ(e.substr(e.size() - 3), "…");
}

TEST(FailureLine, UsageTailLines) {
  EXPECT_TRUE(is_usage_tail("For more information, try '--help'."));
  EXPECT_TRUE(is_usage_tail("Usage: codex exec [OPTIONS]"));
  EXPECT_TRUE(is_usage_tail("Try 'gemini --help' for more"));
  EXPECT_FALSE(is_usage_tail("error: unexpected argument '--help2' found"));
  EXPECT_FALSE(is_usage_tail("permission denied"));
}
