#include "runner/agent_progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "test_support.h"

namespace yolo::runner {
namespace {

// What fn printed on stdout (fd 1 sent to a file meanwhile).
template <class F>
std::string stdout_of(F fn) {
  test::TempDir d;
  std::string path = (d / "stdout").string();
  std::fflush(stdout);
  int saved = ::dup(1);
  FILE* f = std::fopen(path.c_str(), "w");
  ::dup2(::fileno(f), 1);
  fn();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::fclose(f);
  return test::read_file(path);
}

TEST(AgentProgress, CallTextSaysPlanAgentElapsedAndTimeout) {
  EXPECT_EQ(agent_call_text("01-02", "reviewer", 12400, 600000), "01-02 reviewer 12s/600s");
  // To the nearest second: the once-a-second redraw can come just before the second is up.
  EXPECT_EQ(agent_call_text("01-02", "architect", 999.6, 0), "01-02 architect 1s");
  EXPECT_EQ(agent_call_text("01-02", "architect", 400, 0), "01-02 architect 0s");
  // Plan ids come from plans: no escape sequence reaches the terminal.
  EXPECT_EQ(agent_call_text("01\x1b[2J", "reviewer", 0, 1000).find('\x1b'), std::string::npos);
}

TEST(AgentProgress, NoProgressWhenNobodyLooks) {
  EXPECT_FALSE(static_cast<bool>(agent_progress(false)));
  EXPECT_TRUE(static_cast<bool>(agent_progress(true)));
}

// Execute's review gate, piped: one line per call start and end, nothing animated.
TEST(AgentProgress, ReviewGateCallsBecomeOneLinePerEventOffATerminal) {
  SpawnResult r;
  r.outcome = SpawnResult::Outcome::Exited;
  r.exit_code = 0;
  std::string printed = stdout_of([&] {
    ReviewGateProgress g("Review gate: reviewing phase", false);
    AgentProgress p = g.progress();
    p(AgentCall{AgentCall::Event::Started, "reviewer", "01-02", 1, 600000, 0, nullptr});
    p(AgentCall{AgentCall::Event::Running, "reviewer", "01-02", 1, 600000, 1000, nullptr});
    p(AgentCall{AgentCall::Event::Ended, "reviewer", "01-02", 1, 600000, 3200, &r});
  });
  EXPECT_NE(printed.find("01-02: reviewer running (timeout 600s)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("01-02: reviewer done in 3s (exited with status 0)"), std::string::npos) << printed;
  EXPECT_EQ(printed.find('\r'), std::string::npos) << "nothing animated off a terminal";
  EXPECT_EQ(printed.find("1s"), std::string::npos) << "a running call draws nothing off a terminal\n" << printed;
}

}  // namespace
}  // namespace yolo::runner
