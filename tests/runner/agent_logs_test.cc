#include "runner/agent_logs.h"

#include <gtest/gtest.h>

#include "protocol/ports/fs.h"
#include "protocol/ports/world.h"
#include "test_support.h"

namespace yolo::runner {
namespace {

TEST(AgentLogs, TheNumberOfALogOfItsRole) {
  EXPECT_EQ(log_number_of("executor-1.log", "executor"), 1);
  EXPECT_EQ(log_number_of("executor-27.log", "executor"), 27);
  EXPECT_EQ(log_number_of("executor-05.log", "executor"), 5);
  EXPECT_EQ(log_number_of("check-10.log", "check"), 10);
  // Other roles and other shapes are not logs of the role.
  for (const char* name : {"check-9.log", "executor-x.log", "executor-.log", "executor-2.log.tmp", "executor-2",
                           "executor-1234567890.log", "xexecutor-5.log", "executor5.log", "executor-+5.log", ".", ".."})
    EXPECT_EQ(log_number_of(name, "executor"), 0) << name;
}

TEST(AgentLogs, EachExecutorAttemptGetsTheNextNumberAndOldOnesAreKept) {
  test::TempDir d;
  FixedClock clock("2030-01-02T03:04:05Z");
  World w(fs::real_disk(), clock);
  SpawnResult r;
  r.outcome = SpawnResult::Outcome::Exited;
  r.out = "first\n";
  std::string a = write_agent_log(w, d.path(), ".yolo-planning/phases/01-demo", "01-02", "executor", 0, {"run"}, r);
  EXPECT_EQ(a, ".yolo-planning/.logs/01-demo/01-02/executor-1.log");
  // A gap (a log removed by hand, or attempts 2 and 3 written elsewhere) is not filled.
  test::write_file(d.path() / ".yolo-planning/.logs/01-demo/01-02/executor-4.log", "kept\n");
  test::write_file(d.path() / ".yolo-planning/.logs/01-demo/01-02/check-9.log", "a check\n");
  r.out = "second\n";
  std::string b = write_agent_log(w, d.path(), ".yolo-planning/phases/01-demo", "01-02", "executor", 0, {"run"}, r);
  EXPECT_EQ(b, ".yolo-planning/.logs/01-demo/01-02/executor-5.log");
  EXPECT_NE(test::read_file(d.path() / a).find("first"), std::string::npos);
  // The header's time is the World's clock's, not the system's.
  EXPECT_NE(test::read_file(d.path() / a).find(" at 2030-01-02T03:04:05Z\n"), std::string::npos);
  EXPECT_EQ(test::read_file(d.path() / ".yolo-planning/.logs/01-demo/01-02/executor-4.log"), "kept\n");
  EXPECT_NE(test::read_file(d.path() / b).find("second"), std::string::npos);
}

}  // namespace
}  // namespace yolo::runner
