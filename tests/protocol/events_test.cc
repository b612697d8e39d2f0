// The append-only event log (PROTOCOL.md section 8).
#include "protocol/state/events.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "protocol/ports/world.h"
#include "test_support.h"

namespace yolo {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) v.push_back(l);
  return v;
}

std::vector<std::string> log_lines(const std::filesystem::path& root) {
  return lines_of(test::read_file(events::log_path(root)));
}

// A project on an in-memory disk with a fixed clock (protocol/ports/world.h): most of the log's
// rules need no temp folder. What only a real disk shows (an I/O error from the file system,
// appends racing from threads) stays on a TempDir below.
struct Mem {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-25T08:00:00Z"};
  World w{disk, clock, nullptr};
  std::filesystem::path path() const { return "/r"; }
  std::vector<std::string> lines() const { return lines_of(disk.get(events::log_path("/r"))); }
};

const json kOn = {{"v3_event_log", true}};

TEST(Events, LogPath) {
  EXPECT_EQ(events::log_path("/r"), std::filesystem::path("/r/.yolo-planning/.events/event-log.jsonl"));
}

TEST(Events, DisabledIsNotWritten) {
  Mem t;
  events::Event e{"phase_start", 1, std::nullopt, json::object(), ""};
  for (const json& cfg :
       {json::object(), json(nullptr), json{{"v3_event_log", false}}, json{{"v3_event_log", "true"}}, json::array()}) {
    auto w = events::log(t.w, t.path(), cfg, e);
    EXPECT_FALSE(w.written) << cfg.dump();
    EXPECT_FALSE(w.reason.empty());
    EXPECT_FALSE(events::enabled(cfg)) << cfg.dump();  // what a caller asks before building events
  }
  EXPECT_FALSE(t.disk.has(events::log_path(t.path())));
  EXPECT_TRUE(events::enabled(kOn));
}

TEST(Events, LineShape) {
  Mem t;
  events::Event e{"plan_start", 2, 3, json{{"k", "v"}}, "corr-123"};
  auto w = events::log(t.w, t.path(), kOn, e);
  ASSERT_TRUE(w.written) << w.reason;
  auto lines = t.lines();
  ASSERT_EQ(lines.size(), 1u);
  json j = json::parse(lines[0]);
  EXPECT_EQ(j["event"], "plan_start");
  EXPECT_EQ(j["phase"], 2);
  EXPECT_TRUE(j["phase"].is_number_integer());
  EXPECT_EQ(j["plan"], 3);
  EXPECT_EQ(j["data"], json({{"k", "v"}}));
  EXPECT_EQ(j["correlation_id"], "corr-123");
  EXPECT_EQ(j["event_id"], w.event_id);
  static const std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(w.event_id, uuid)) << w.event_id;
  static const std::regex iso(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$)");
  EXPECT_TRUE(std::regex_match(j["ts"].get<std::string>(), iso)) << j["ts"];
  EXPECT_EQ(j["ts"], "2026-11-25T08:00:00Z") << "the world's clock";
  for (const char* k : {"ts", "event_id", "correlation_id", "event", "phase", "plan", "data"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j.size(), 7u);
}

TEST(Events, PlanIsOptionalAndDataDefaultsToObject) {
  Mem t;
  events::Event e{"phase_end", 1, std::nullopt, json(nullptr), ""};
  ASSERT_TRUE(events::log(t.w, t.path(), kOn, e).written);
  json j = json::parse(t.lines().at(0));
  EXPECT_FALSE(j.contains("plan"));
  EXPECT_EQ(j["data"], json::object());
  EXPECT_TRUE(j["correlation_id"].is_null());
}

TEST(Events, AppendsKeepEarlierLines) {
  Mem t;
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto w = events::log(t.w, t.path(), kOn, events::Event{"task_start", 1, i, json::object(), ""});
    ASSERT_TRUE(w.written);
    ids.insert(w.event_id);
  }
  auto lines = t.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(ids.size(), 5u) << "event ids are unique";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(json::parse(lines[static_cast<size_t>(i)])["plan"], i);
}

TEST(Events, TypedProtocolRefusesUnknownTypes) {
  Mem t;
  json cfg = {{"v3_event_log", true}, {"v2_typed_protocol", true}};
  auto bad = events::log(t.w, t.path(), cfg, events::Event{"made_up_event", 1, std::nullopt, json::object(), ""});
  EXPECT_FALSE(bad.written);
  EXPECT_NE(bad.reason.find("made_up_event"), std::string::npos) << bad.reason;
  EXPECT_FALSE(t.disk.has(events::log_path(t.path())));
  auto good = events::log(t.w, t.path(), cfg, events::Event{"phase_start", 1, std::nullopt, json::object(), ""});
  EXPECT_TRUE(good.written) << good.reason;
  // Without typed protocol any type is accepted.
  auto free = events::log(t.w, t.path(), kOn, events::Event{"made_up_event", 1, std::nullopt, json::object(), ""});
  EXPECT_TRUE(free.written);
  EXPECT_EQ(t.lines().size(), 2u);
}

TEST(Events, KnownTypesIncludeTheRunnersOwn) {
  for (const char* ty : {"review_agent_fallback", "review_parse_failure", "review_loop_start", "review_loop_cycle",
                         "review_loop_end", "phase_start", "plan_end"})
    EXPECT_TRUE(events::is_known_type(ty)) << ty;
  EXPECT_FALSE(events::is_known_type(""));
  EXPECT_FALSE(events::is_known_type("PHASE_START"));
}

TEST(Events, IoErrorNamesTheFile) {
  test::TempDir t;
  // .events is a file, so the log cannot be created under it.
  test::write_file(t / ".yolo-planning/.events", "in the way");
  auto w =
      events::log(test::real_world(), t.path(), kOn, events::Event{"phase_start", 1, std::nullopt, json::object(), ""});
  EXPECT_FALSE(w.written);
  EXPECT_NE(w.reason.find("event-log.jsonl"), std::string::npos) << w.reason;
}

TEST(Events, ConcurrentAppendsProduceWholeLines) {
  test::TempDir t;
  constexpr int kThreads = 8, kPerThread = 200;
  // A payload long enough that a torn write would show (several KiB per line).
  const std::string pad(3000, 'x');
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < kPerThread; ++i)
        events::log(test::real_world(), t.path(), kOn, events::Event{"task_end", th, i, json{{"pad", pad}}, ""});
    });
  for (auto& th : threads) th.join();
  auto lines = log_lines(t.path());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  std::set<std::pair<long long, long long>> seen;
  for (const auto& l : lines) {
    json j = json::parse(l, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "torn line: " << l.substr(0, 80);
    EXPECT_EQ(j["data"]["pad"].get<std::string>().size(), pad.size());
    seen.insert({j["phase"].get<long long>(), j["plan"].get<long long>()});
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST(Events, LogAlwaysIgnoresConfig) {
  Mem t;
  auto w = events::log_always(t.w, t.path(), events::Event{"anything_at_all", 4, std::nullopt, json::object(), "c"});
  EXPECT_TRUE(w.written) << w.reason;
  EXPECT_EQ(json::parse(t.lines().at(0))["phase"], 4);
}

}  // namespace
}  // namespace yolo
