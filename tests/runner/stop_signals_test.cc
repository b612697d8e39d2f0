// SIGINT and SIGTERM on a libuv loop (runner/stop_signals.h), alone: each signal raised while
// they are watched reaches the handler with its number, the watch does not keep the loop
// alive, and close() lets the loop end.
#include "runner/stop_signals.h"

#include <gtest/gtest.h>

#include <vector>

namespace yolo::runner {
namespace {

TEST(StopSignals, EachSignalReachesTheHandlerAndCloseEndsTheWatch) {
  uv_loop_t loop{};
  ASSERT_EQ(uv_loop_init(&loop), 0);
  std::vector<int> got;
  StopSignals s;
  s.start(&loop, [&](int signum) { got.push_back(signum); });
  EXPECT_EQ(uv_loop_alive(&loop), 0);  // unreferenced: the loop does not wait for a signal
  uv_timer_t busy{};  // keeps the loop polling while the signals arrive, as the run's children do
  uv_timer_init(&loop, &busy);
  uv_timer_start(&busy, [](uv_timer_t*) {}, 60000, 0);
  ::raise(SIGTERM);
  for (int k = 0; k < 50 && got.empty(); ++k) uv_run(&loop, UV_RUN_NOWAIT);
  ::raise(SIGINT);
  for (int k = 0; k < 50 && got.size() < 2; ++k) uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(got, (std::vector<int>{SIGTERM, SIGINT}));
  s.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&busy), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);  // the handles finish closing
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace yolo::runner
