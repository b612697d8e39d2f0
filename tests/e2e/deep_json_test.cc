// End-to-end: the real `yolo` binary on real files. deeply nested JSON in config and
// state files is a clear error, not a crash.
#include <gtest/gtest.h>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using e2e::PrecheckFixture;
using test::run_yolo;

// --- deeply nested JSON from disk -------------------------------------------------------

std::string deep_json() { return "{\"x\":" + std::string(300000, '[') + std::string(300000, ']') + "}"; }

TEST_F(PrecheckFixture, DeepConfigIsAClearErrorNotACrash) {
  test::write_file(tmp / ".yolo-planning/config.json", deep_json());
  auto r = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string(), phase("01-approve").string()});
  EXPECT_EQ(r.exit_code, 0) << dump(r) << "\nthe plan is reviewed with the default config";
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << dump(r);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << dump(r);
  EXPECT_NO_THROW(r.json_out());
  auto p = run_yolo({"review-plan", "--phase", phase("01-approve").string()});
  EXPECT_LT(p.exit_code, 3) << dump(p);
  EXPECT_NE(p.err.find("nested deeper than 64 levels"), std::string::npos) << dump(p);
  // Other readers of config.json.
  auto v = run_yolo({"validate", (tmp / ".yolo-planning/config.json").string()});
  EXPECT_EQ(v.exit_code, 1) << dump(v);
  EXPECT_NE(v.out.find("nested deeper than 64 levels"), std::string::npos) << dump(v);
  auto l = run_yolo({"log-event", "plan_start", "1"}, tmp.path());
  EXPECT_LT(l.exit_code, 64) << dump(l);
  auto t = run_yolo({"resolve-turns", "dev", (tmp / ".yolo-planning/config.json").string()});
  EXPECT_LT(t.exit_code, 64) << dump(t);
  auto m = run_yolo({"resolve-model", "dev", (tmp / ".yolo-planning/config.json").string(),
                     (tmp / ".yolo-planning/config.json").string()});
  EXPECT_EQ(m.exit_code, 1) << dump(m);
  EXPECT_NE(m.err.find("nested deeper than 64 levels"), std::string::npos) << dump(m);
}

TEST(DeepJson, DeepExecutionStateIsAClearErrorForStatus) {
  test::TempDir t;
  test::write_file(t / ".yolo-planning/.execution-state.json", deep_json());
  auto r = run_yolo({"status"}, t.path());
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find(".execution-state.json"), std::string::npos) << dump(r);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << dump(r);
  auto j = run_yolo({"status", "--json"}, t.path());
  EXPECT_EQ(j.exit_code, 1) << dump(j);
  json doc = j.json_out();
  EXPECT_EQ(doc["ok"], false);
  EXPECT_NE(doc["error"].get<std::string>().find("nested deeper than 64 levels"), std::string::npos) << doc.dump();
  auto g = run_yolo({"gates"}, t.path());
  EXPECT_EQ(g.exit_code, 1) << dump(g);
  EXPECT_NE(g.err.find("nested deeper than 64 levels"), std::string::npos) << dump(g);
  auto l = run_yolo({"log-event", "plan_start", "1"}, t.path());
  EXPECT_LT(l.exit_code, 64) << dump(l);
}

}  // namespace
}  // namespace yolo
