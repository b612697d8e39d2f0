// End-to-end: the real `yolo` binary on real files. resolve-model, resolve-turns.
#include <gtest/gtest.h>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using test::run_yolo;

// --- resolve-model / resolve-turns -----------------------------------------------

class Resolve : public ::testing::Test {
 protected:
  void SetUp() override {
    profiles = (test::source_dir() / "fixtures/profiles/model-profiles.json").string();
    cfg("{}");
  }
  void cfg(const std::string& c) { test::write_file(tmp / "config.json", c); }
  std::string config() const { return (tmp / "config.json").string(); }
  test::TempDir tmp;
  std::string profiles;
};

TEST_F(Resolve, ModelPlainOutput) {
  auto r = run_yolo({"resolve-model", "dev", config(), profiles});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.out, "opus\n");
  cfg(R"({"model_profile": "budget"})");
  EXPECT_EQ(run_yolo({"resolve-model", "reviewer", config(), profiles}).out, "haiku\n");
  cfg(R"({"model_profile": "balanced", "model_overrides": {"scout": "opus"}})");
  EXPECT_EQ(run_yolo({"resolve-model", "scout", config(), profiles}).out, "opus\n");
  EXPECT_EQ(run_yolo({"resolve-model", "dev", config(), profiles}).out, "sonnet\n");
}

TEST_F(Resolve, ModelWithCost) {
  cfg(R"({"model_profile": "balanced"})");
  auto r = run_yolo({"resolve-model", "architect", config(), profiles, "--with-cost"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.json_out(), json({{"model", "opus"}, {"cost_weight", 100}}));
  EXPECT_EQ(run_yolo({"resolve-model", "dev", config(), profiles, "--with-cost"}).json_out(),
            json({{"model", "sonnet"}, {"cost_weight", 20}}));
  EXPECT_EQ(run_yolo({"resolve-model", "scout", config(), profiles, "--with-cost"}).json_out(),
            json({{"model", "haiku"}, {"cost_weight", 2}}));
}

TEST_F(Resolve, ModelAll) {
  json p = json::parse(test::read_file(profiles));
  auto r = run_yolo({"resolve-model", "--all", config(), profiles});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json all = r.json_out();
  ASSERT_EQ(all.size(), 9u);
  for (const char* a : {"lead", "dev", "qa", "scout", "debugger", "architect", "docs", "researcher", "reviewer"})
    EXPECT_EQ(all[a], p["quality"][a]) << a;
  auto c = run_yolo({"resolve-model", "--all", config(), profiles, "--with-cost"});
  ASSERT_EQ(c.exit_code, 0) << dump(c);
  json costs = c.json_out();
  ASSERT_EQ(costs.size(), 9u);
  EXPECT_EQ(costs["dev"], json({{"model", "opus"}, {"cost_weight", 100}}));
  EXPECT_EQ(costs["scout"], json({{"model", "haiku"}, {"cost_weight", 2}}));
}

TEST_F(Resolve, JsonFlag) {
  auto m = run_yolo({"resolve-model", "dev", config(), profiles, "--json"});
  ASSERT_EQ(m.exit_code, 0) << dump(m);
  EXPECT_EQ(m.json_out(), json({{"model", "opus"}}));
  auto t = run_yolo({"resolve-turns", "dev", config(), "turbo", "--json"});
  ASSERT_EQ(t.exit_code, 0) << dump(t);
  EXPECT_EQ(t.json_out(), json({{"agent", "dev"}, {"turns", 45}}));  // 75 x 0.6
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config(), "turbo"}).out, "45\n");
}

TEST_F(Resolve, ModelFailures) {
  auto unknown_agent = run_yolo({"resolve-model", "intern", config(), profiles});
  EXPECT_EQ(unknown_agent.exit_code, 1) << dump(unknown_agent);
  EXPECT_NE(unknown_agent.err.find("intern"), std::string::npos) << unknown_agent.err;
  EXPECT_TRUE(unknown_agent.out.empty()) << "nothing on stdout that a caller could take for a model";

  auto missing_cfg = run_yolo({"resolve-model", "dev", (tmp / "none.json").string(), profiles});
  EXPECT_EQ(missing_cfg.exit_code, 1) << dump(missing_cfg);
  EXPECT_NE(missing_cfg.err.find("none.json"), std::string::npos) << missing_cfg.err;

  auto missing_profiles = run_yolo({"resolve-model", "dev", config(), (tmp / "p.json").string()});
  EXPECT_EQ(missing_profiles.exit_code, 1) << dump(missing_profiles);

  test::write_file(tmp / "broken.json", "{oops");
  EXPECT_EQ(run_yolo({"resolve-model", "dev", (tmp / "broken.json").string(), profiles}).exit_code, 1);

  cfg(R"({"model_profile": "luxury"})");
  auto bad_profile = run_yolo({"resolve-model", "dev", config(), profiles});
  EXPECT_EQ(bad_profile.exit_code, 1) << dump(bad_profile);
  EXPECT_NE(bad_profile.err.find("luxury"), std::string::npos);

  cfg(R"({"model_overrides": {"dev": "gpt-9"}})");
  auto bad_model = run_yolo({"resolve-model", "dev", config(), profiles});
  EXPECT_EQ(bad_model.exit_code, 1) << dump(bad_model);
  EXPECT_NE(bad_model.err.find("gpt-9"), std::string::npos);
  EXPECT_EQ(run_yolo({"resolve-model", "--all", config(), profiles}).exit_code, 1) << "--all fails on any agent";
}

TEST_F(Resolve, Turns) {
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config()}).out, "75\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config(), "thorough"}).out, "113\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "scout", config(), "high"}).out, "23\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "qa", config(), "fast"}).out, "20\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "low"}).out, "30\n");
  cfg(R"({"effort": "turbo", "agent_max_turns": {"dev": 40, "qa": false, "lead": {"high": 99, "medium": 55}}})");
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config()}).out, "24\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "qa", config(), "thorough"}).out, "0\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "thorough"}).out, "99\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "balanced"}).out, "55\n");
}

TEST_F(Resolve, TurnsDefaultsOnMissingOrMalformedConfig) {
  auto missing = run_yolo({"resolve-turns", "debugger", (tmp / "none.json").string()});
  EXPECT_EQ(missing.exit_code, 0) << dump(missing);
  EXPECT_EQ(missing.out, "80\n");
  cfg("{broken");
  EXPECT_EQ(run_yolo({"resolve-turns", "reviewer", config()}).out, "15\n");
  cfg("[1, 2, 3]");
  EXPECT_EQ(run_yolo({"resolve-turns", "architect", config(), "thorough"}).out, "45\n");
  auto unknown = run_yolo({"resolve-turns", "intern", config()});
  EXPECT_EQ(unknown.exit_code, 1) << dump(unknown);
  EXPECT_TRUE(unknown.out.empty());
}

}  // namespace
}  // namespace yolo
