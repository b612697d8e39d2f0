// End-to-end: the real `yolo` binary on real files. log-event.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <sstream>
#include <thread>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using test::run_yolo;

// --- log-event ------------------------------------------------------------------

class LogEvent : public ::testing::Test {
 protected:
  void SetUp() override { config(R"({"v3_event_log": true})"); }
  void config(const std::string& c) { test::write_file(tmp / ".yolo-planning/config.json", c); }
  stdfs::path log() const { return tmp / ".yolo-planning/.events/event-log.jsonl"; }
  std::vector<json> log_lines() const {
    std::vector<json> v;
    if (!stdfs::exists(log())) return v;
    std::istringstream in(test::read_file(log()));
    std::string l;
    while (std::getline(in, l)) v.push_back(json::parse(l));
    return v;
  }
  test::TempDir tmp;
};

TEST_F(LogEvent, WrittenWithTheLineShape) {
  auto r = run_yolo({"log-event", "plan_start", "2", "3", "k=v", "expr=a=b", "empty="}, tmp.path(),
                    {"YOLO_CORRELATION_ID=corr-env"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json out = r.json_out();
  EXPECT_EQ(out["ok"], true);
  EXPECT_EQ(out["cmd"], "log-event");
  EXPECT_EQ(out["delta"]["written"], true);
  EXPECT_EQ(out["delta"]["event_type"], "plan_start");
  EXPECT_EQ(out["delta"]["phase"], 2);
  ASSERT_TRUE(out["delta"]["event_id"].is_string());
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  const json& e = lines[0];
  EXPECT_EQ(e["event"], "plan_start");
  EXPECT_EQ(e["phase"], 2);
  EXPECT_EQ(e["plan"], 3);
  EXPECT_TRUE(e["plan"].is_number_integer());
  EXPECT_EQ(e["data"], json({{"k", "v"}, {"expr", "a=b"}, {"empty", ""}}));
  EXPECT_EQ(e["correlation_id"], "corr-env");
  EXPECT_EQ(e["event_id"], out["delta"]["event_id"]);
  EXPECT_TRUE(e["ts"].is_string());
}

TEST_F(LogEvent, PlanIsOptional) {
  auto r = run_yolo({"log-event", "phase_start", "1", "k=v"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto r2 = run_yolo({"log-event", "phase_end", "1"}, tmp.path());
  ASSERT_EQ(r2.exit_code, 0) << dump(r2);
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_FALSE(lines[0].contains("plan"));
  EXPECT_EQ(lines[0]["data"], json({{"k", "v"}}));
  EXPECT_EQ(lines[1]["data"], json::object());
}

TEST_F(LogEvent, WorksFromASubfolder) {
  stdfs::create_directories(tmp / "src/deep");
  auto r = run_yolo({"log-event", "phase_start", "1"}, tmp / "src/deep");
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(log_lines().size(), 1u);
}

TEST_F(LogEvent, DisabledExits3) {
  for (const char* c : {R"({"v3_event_log": false})", "{}", "not json"}) {
    config(c);
    auto r = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
    EXPECT_EQ(r.exit_code, 3) << c << dump(r);
    json out = r.json_out();
    EXPECT_EQ(out["delta"]["written"], false);
    EXPECT_EQ(out["cmd"], "log-event");
  }
  stdfs::remove(tmp / ".yolo-planning/config.json");
  EXPECT_EQ(run_yolo({"log-event", "phase_start", "1"}, tmp.path()).exit_code, 3);
  EXPECT_FALSE(stdfs::exists(log()));
}

TEST_F(LogEvent, TypedProtocolRefusesUnknownTypes) {
  config(R"({"v3_event_log": true, "v2_typed_protocol": true})");
  auto bad = run_yolo({"log-event", "not_a_real_event", "1"}, tmp.path());
  EXPECT_NE(bad.exit_code, 0) << dump(bad);
  EXPECT_EQ(bad.json_out()["delta"]["written"], false);
  EXPECT_FALSE(stdfs::exists(log()));
  auto good = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  EXPECT_EQ(good.exit_code, 0) << dump(good);
  EXPECT_EQ(log_lines().size(), 1u);
}

TEST_F(LogEvent, CorrelationIdFromStateFileElseEnv) {
  test::write_file(tmp / ".yolo-planning/.execution-state.json", R"({"phase": 1, "correlation_id": "corr-state"})");
  auto s = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  auto e = run_yolo({"log-event", "phase_start", "1"}, tmp.path(), {"YOLO_CORRELATION_ID=corr-env"});
  ASSERT_EQ(e.exit_code, 0) << dump(e);
  stdfs::remove(tmp / ".yolo-planning/.execution-state.json");
  auto none = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  ASSERT_EQ(none.exit_code, 0) << dump(none);
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["correlation_id"], "corr-state");
  EXPECT_EQ(lines[1]["correlation_id"], "corr-env") << "the environment wins over the state file";
  EXPECT_TRUE(lines[2]["correlation_id"].is_null() || lines[2]["correlation_id"] == "") << lines[2].dump();
}

TEST_F(LogEvent, BadArguments) {
  EXPECT_NE(run_yolo({"log-event", "phase_start", "one"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "two"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "2", "novalue"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "2", "=v"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event"}, tmp.path()).exit_code, 0);
  EXPECT_FALSE(stdfs::exists(log()));
}

TEST_F(LogEvent, ConcurrentInvocationsWriteWholeLines) {
  constexpr int kThreads = 6, kEach = 8;
  const std::string pad(2000, 'p');
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < kEach; ++i) {
        auto r = run_yolo({"log-event", "task_end", std::to_string(th), std::to_string(i), "pad=" + pad}, tmp.path());
        if (r.exit_code != 0) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::istringstream in(test::read_file(log()));
  std::string l;
  std::set<std::pair<int, int>> seen;
  size_t n = 0;
  while (std::getline(in, l)) {
    ++n;
    json j = json::parse(l, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "torn line: " << l.substr(0, 100);
    EXPECT_EQ(j["data"]["pad"], pad);
    seen.insert({j["phase"].get<int>(), j["plan"].get<int>()});
  }
  EXPECT_EQ(n, static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace yolo
