#include "protocol/status/status.h"

#include <gtest/gtest.h>

#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo {
namespace {

TEST(Status, WavesPlansReviewsAndGates) {
  json st = json::parse(R"({
    "phase": 3, "status": "awaiting_approval",
    "plans": [{"id": "03-01", "wave": 1, "status": "complete"}, {"id": "03-02", "wave": 2, "status": "ready"},
              {"id": "03-03", "wave": 2, "status": "pending"}, {"id": "03-04", "wave": 3, "status": "running"}],
    "reviews": {"03-01": {"hash": "h", "verdict": "reject", "findings": [{"severity": "high"}]},
                "99-99": {"hash": "x", "verdict": "approve"}},
    "review_loops": {"03-01": {"cycle": 3, "max": 3, "status": "failed",
                               "findings_per_cycle": [{"verdict": "reject", "finding_count": 1, "high": 1}]}},
    "approval": {"requested_at": "2026-11-22T05:00:00Z", "plan_path": "R.md", "approved": false}})");
  ASSERT_EQ(state::validate(st).error, "");
  json s = execution_status_of(st);
  EXPECT_EQ(s["ok"], true);
  EXPECT_EQ(s["run_state"], "FROZEN");
  EXPECT_EQ(s["waves_may_advance"], false);
  ASSERT_EQ(s["waves"].size(), 3u);
  EXPECT_EQ(s["waves"][0]["status"], "complete");
  EXPECT_EQ(s["waves"][1]["status"], "ready");
  EXPECT_EQ(s["waves"][1]["plans"], json({"03-02", "03-03"}));
  EXPECT_EQ(s["waves"][2]["status"], "running");
  EXPECT_EQ(s["counts"]["pending"], 1);
  const json& r = s["plans"][0]["review"];
  EXPECT_EQ(r["verdict"], "reject");
  EXPECT_EQ(r["findings"], 1);
  EXPECT_EQ(r["cycle"], 3);
  EXPECT_EQ(r["loop_status"], "failed");
  EXPECT_TRUE(s["plans"][1]["review"].is_null());
  EXPECT_EQ(s["other_reviews"]["99-99"]["verdict"], "approve");
  // A pending approval written by another tool shows as the open gate.
  ASSERT_EQ(s["open_gates"].size(), 1u);
  EXPECT_EQ(s["open_gates"][0]["plan_path"], "R.md");
}

TEST(Status, ReviewsComeFromTheLedgersAndLoopsFromTheRunOrTheRecord) {
  json st = json::parse(R"({
    "phase": 1, "status": "running",
    "plans": [{"id": "01-01", "wave": 1, "status": "pending"}, {"id": "01-02", "wave": 1, "status": "pending"}],
    "review_loops": {"01-01": {"cycle": 2, "max": 3, "status": "passed"}}})");
  json reviews = json::parse(R"({
    "01-01": {"hash": "a", "verdict": "approve", "findings": [], "loop": {"cycle": 9, "max": 9, "status": "failed"}},
    "01-02": {"hash": "b", "verdict": "conditional", "findings": [{"id": "F1"}],
              "loop": {"cycle": 1, "max": 3, "status": "passed"}},
    "07-01": {"hash": "c", "verdict": "reject", "findings": []}})");
  json s = execution_status_of(st, reviews);
  EXPECT_EQ(s["plans"][0]["review"]["verdict"], "approve");
  EXPECT_EQ(s["plans"][0]["review"]["cycle"], 2);  // the run's loop wins over the record's
  EXPECT_EQ(s["plans"][1]["review"]["verdict"], "conditional");
  EXPECT_EQ(s["plans"][1]["review"]["findings"], 1);
  EXPECT_EQ(s["plans"][1]["review"]["cycle"], 1);  // no loop in the run: the record's
  EXPECT_EQ(s["other_reviews"]["07-01"]["verdict"], "reject");
}

TEST(Status, MissingAndBrokenStateFiles) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / ".yolo-planning");
  json s = execution_status(test::real_world(), dir.path());
  EXPECT_EQ(s["ok"], true);
  EXPECT_EQ(s["exists"], false);
  EXPECT_TRUE(s["status"].is_null());
  test::write_file(dir / ".yolo-planning/.execution-state.json", "{\"status\": \"sleeping\"}");
  json b = execution_status(test::real_world(), dir.path());
  EXPECT_EQ(b["ok"], false);
  EXPECT_NE(b["error"].get<std::string>().find(".execution-state.json"), std::string::npos);
}

}  // namespace
}  // namespace yolo
