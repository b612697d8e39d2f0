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

TEST(AgentProgress, CallJsonCarriesTheEvent) {
  SpawnResult r;
  r.outcome = SpawnResult::Outcome::Exited;
  r.exit_code = 0;
  AgentCall c{AgentCall::Event::Ended, "reviewer", "01-02", 2, 600000, 1234.5, &r};
  json j = agent_call_json(c);
  EXPECT_EQ(j["type"], "agent_progress");
  EXPECT_EQ(j["event"], "ended");
  EXPECT_EQ(j["plan_id"], "01-02");
  EXPECT_EQ(j["agent"], "reviewer");
  EXPECT_EQ(j["cycle"], 2);
  EXPECT_EQ(j["timeout_ms"], 600000);
  EXPECT_EQ(j["elapsed_ms"], 1234);
  EXPECT_EQ(j["outcome"], "exited with status 0");
}

TEST(AgentProgress, NoProgressWhenNobodyLooks) {
  EXPECT_FALSE(static_cast<bool>(agent_progress(false, false)));
  EXPECT_TRUE(static_cast<bool>(agent_progress(false, true)));
}

// The parent side: a child that reports two calls on stderr between its real output.
TEST(AgentProgress, ReviewChildEventsBecomeOneLinePerEventAndLeaveErr) {
  std::string started =
      R"({"type":"agent_progress","event":"started","plan_id":"01-02","agent":"reviewer","cycle":1,"timeout_ms":600000,"elapsed_ms":0})";
  std::string ended =
      R"({"type":"agent_progress","event":"ended","plan_id":"01-02","agent":"reviewer","cycle":1,"timeout_ms":600000,"elapsed_ms":3200,"outcome":"exited with status 0"})";
  SpawnSpec s;
  s.argv = {"sh", "-c",
            "test \"$YOLO_AGENT_PROGRESS\" = 1 || exit 9; echo '" + started +
                "' >&2; echo 'a real warning' >&2; echo '" + ended + "' >&2; echo '{\"type\":\"plan\"}'"};
  SpawnResult r;
  std::string printed = stdout_of([&] { r = run_review_child(s, "Review gate: reviewing phase", false); });
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.err, "a real warning\n") << "the events were for the display";
  EXPECT_EQ(r.out, "{\"type\":\"plan\"}\n");
  EXPECT_NE(printed.find("01-02: reviewer running (timeout 600s)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("01-02: reviewer done in 3s (exited with status 0)"), std::string::npos) << printed;
  EXPECT_EQ(printed.find('\r'), std::string::npos) << "nothing animated off a terminal";
}

}  // namespace
}  // namespace yolo::runner
