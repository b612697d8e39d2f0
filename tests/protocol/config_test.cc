// resolve_model / resolve_turns (PROTOCOL.md section 9) and config loading.
#include "protocol/state/config.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace yolo {
namespace {

json profiles() { return json::parse(test::read_file(test::source_dir() / "fixtures/profiles/model-profiles.json")); }

// --- resolve_model -------------------------------------------------------------

TEST(ResolveModel, FixtureCoversAllAgentsInAllProfiles) {
  json p = profiles();
  for (const char* prof : {"quality", "balanced", "budget"}) {
    ASSERT_TRUE(p.contains(prof)) << prof;
    for (const char* a : kAgents) {
      ASSERT_TRUE(p[prof].contains(a)) << prof << "/" << a;
      EXPECT_GT(cost_weight(p[prof][a].get<std::string>()), 0) << prof << "/" << a;
    }
  }
}

TEST(ResolveModel, DefaultProfileIsQuality) {
  json p = profiles();
  for (const char* a : kAgents) {
    auto c = resolve_model(a, json::object(), p);
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_EQ(c.model, p["quality"][a]) << a;
    EXPECT_EQ(c.cost_weight, cost_weight(c.model));
  }
}

TEST(ResolveModel, ProfilesPickTheModel) {
  json p = profiles();
  for (const char* prof : {"quality", "balanced", "budget"})
    for (const char* a : kAgents) {
      auto c = resolve_model(a, json{{"model_profile", prof}}, p);
      EXPECT_TRUE(c.error.empty()) << c.error;
      EXPECT_EQ(c.model, p[prof][a]) << prof << "/" << a;
    }
  EXPECT_EQ(resolve_model("dev", json{{"model_profile", "budget"}}, p).model, "sonnet");
  EXPECT_EQ(resolve_model("reviewer", json{{"model_profile", "budget"}}, p).model, "haiku");
}

TEST(ResolveModel, OverridesWin) {
  json p = profiles();
  json cfg = {{"model_profile", "budget"}, {"model_overrides", {{"dev", "opus"}, {"qa", ""}}}};
  auto dev = resolve_model("dev", cfg, p);
  EXPECT_EQ(dev.model, "opus");
  EXPECT_EQ(dev.cost_weight, 100);
  EXPECT_EQ(resolve_model("qa", cfg, p).model, "haiku") << "an empty override falls back to the profile";
  EXPECT_EQ(resolve_model("lead", cfg, p).model, "sonnet") << "other agents keep the profile";
}

TEST(ResolveModel, OverrideWorksEvenWithUnknownProfile) {
  json cfg = {{"model_profile", "nope"}, {"model_overrides", {{"dev", "haiku"}}}};
  auto c = resolve_model("dev", cfg, profiles());
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.model, "haiku");
}

TEST(ResolveModel, CostWeights) {
  EXPECT_EQ(cost_weight("opus"), 100);
  EXPECT_EQ(cost_weight("sonnet"), 20);
  EXPECT_EQ(cost_weight("haiku"), 2);
  EXPECT_EQ(cost_weight("gpt"), 0);
  EXPECT_EQ(cost_weight(""), 0);
}

TEST(ResolveModel, UnknownAgent) {
  auto c = resolve_model("intern", json::object(), profiles());
  EXPECT_FALSE(c.error.empty());
  EXPECT_NE(c.error.find("intern"), std::string::npos) << c.error;
}

TEST(ResolveModel, UnknownProfile) {
  auto c = resolve_model("dev", json{{"model_profile", "luxury"}}, profiles());
  EXPECT_FALSE(c.error.empty());
  EXPECT_NE(c.error.find("luxury"), std::string::npos) << c.error;
}

TEST(ResolveModel, UnknownModel) {
  auto c = resolve_model("dev", json{{"model_overrides", {{"dev", "gpt-9"}}}}, profiles());
  EXPECT_FALSE(c.error.empty());
  EXPECT_NE(c.error.find("gpt-9"), std::string::npos) << c.error;
  json p = profiles();
  p["quality"]["qa"] = "mystery";
  EXPECT_FALSE(resolve_model("qa", json::object(), p).error.empty());
}

TEST(ResolveModel, ProfileWithoutTheAgent) {
  json p = {{"quality", {{"dev", "opus"}}}};
  EXPECT_FALSE(resolve_model("qa", json::object(), p).error.empty());
  EXPECT_FALSE(resolve_model("dev", json::object(), json::array()).error.empty());
}

// --- resolve_turns -------------------------------------------------------------

long long turns(const std::string& agent, const json& cfg, const std::string& effort = "") {
  auto t = resolve_turns(agent, cfg, effort);
  EXPECT_TRUE(t.error.empty()) << t.error;
  return t.turns;
}

TEST(ResolveTurns, DefaultBases) {
  const std::pair<const char*, int> expected[] = {{"scout", 15},    {"qa", 25},         {"architect", 30},
                                                  {"debugger", 80}, {"lead", 50},       {"dev", 75},
                                                  {"docs", 30},     {"researcher", 15}, {"reviewer", 15}};
  for (const auto& [a, n] : expected) {
    EXPECT_EQ(default_base_turns(a), n) << a;
    EXPECT_EQ(turns(a, nullptr), n) << a;
    EXPECT_EQ(turns(a, json::object(), "balanced"), n) << a;
  }
  EXPECT_EQ(default_base_turns("nobody"), -1);
}

TEST(ResolveTurns, EffortsAndAliases) {
  // dev 75: thorough 112.5 -> 113 (half up), balanced 75, fast 60, turbo 45
  EXPECT_EQ(turns("dev", nullptr, "thorough"), 113);
  EXPECT_EQ(turns("dev", nullptr, "high"), 113);
  EXPECT_EQ(turns("dev", nullptr, "balanced"), 75);
  EXPECT_EQ(turns("dev", nullptr, "medium"), 75);
  EXPECT_EQ(turns("dev", nullptr, "fast"), 60);
  EXPECT_EQ(turns("dev", nullptr, "turbo"), 45);
  EXPECT_EQ(turns("dev", nullptr, "low"), 45);
  // scout 15: 22.5 -> 23, 12, 9
  EXPECT_EQ(turns("scout", nullptr, "thorough"), 23);
  EXPECT_EQ(turns("scout", nullptr, "fast"), 12);
  EXPECT_EQ(turns("scout", nullptr, "turbo"), 9);
  // qa 25: 37.5 -> 38, 20, 15
  EXPECT_EQ(turns("qa", nullptr, "thorough"), 38);
  EXPECT_EQ(turns("qa", nullptr, "fast"), 20);
  EXPECT_EQ(turns("qa", nullptr, "turbo"), 15);
  EXPECT_EQ(turns("debugger", nullptr, "thorough"), 120);
  EXPECT_EQ(turns("lead", nullptr, "turbo"), 30);
}

TEST(ResolveTurns, EffortFromConfigAndArgumentWins) {
  json cfg = {{"effort", "thorough"}};
  EXPECT_EQ(turns("dev", cfg), 113);
  EXPECT_EQ(turns("dev", cfg, "turbo"), 45);
  EXPECT_EQ(turns("dev", json{{"effort", "low"}}), 45);
}

TEST(ResolveTurns, NumericOverrideIsTheBase) {
  json cfg = {{"agent_max_turns", {{"dev", 40}}}};
  EXPECT_EQ(turns("dev", cfg), 40);
  EXPECT_EQ(turns("dev", cfg, "thorough"), 60);
  EXPECT_EQ(turns("dev", cfg, "fast"), 32);
  EXPECT_EQ(turns("dev", cfg, "turbo"), 24);
  EXPECT_EQ(turns("qa", cfg), 25) << "other agents keep their default";
  json odd = {{"agent_max_turns", {{"qa", 7}}}};
  EXPECT_EQ(turns("qa", odd, "thorough"), 11) << "10.5 rounds half up";
  json one = {{"agent_max_turns", {{"qa", 1}}}};
  EXPECT_EQ(turns("qa", one, "turbo"), 1) << "at least 1";
}

TEST(ResolveTurns, LegacyMaxTurnsKey) {
  EXPECT_EQ(turns("dev", json{{"max_turns", {{"dev", 10}}}}), 10);
  json both = {{"agent_max_turns", {{"dev", 20}}}, {"max_turns", {{"dev", 10}}}};
  EXPECT_EQ(turns("dev", both), 20) << "agent_max_turns wins over the legacy key";
}

TEST(ResolveTurns, ZeroFalseOrNegativeMeansNoBudget) {
  for (const json& v : {json(0), json(false), json(-5)}) {
    json cfg = {{"agent_max_turns", {{"dev", v}}}};
    for (const char* e : {"thorough", "balanced", "fast", "turbo"})
      EXPECT_EQ(turns("dev", cfg, e), 0) << v.dump() << " " << e;
  }
}

TEST(ResolveTurns, PerEffortObject) {
  json cfg = {{"agent_max_turns", {{"dev", {{"thorough", 200}, {"balanced", 100}, {"turbo", 11}}}}}};
  EXPECT_EQ(turns("dev", cfg, "thorough"), 200) << "used as is, no multiplier";
  EXPECT_EQ(turns("dev", cfg, "balanced"), 100);
  EXPECT_EQ(turns("dev", cfg, "turbo"), 11);
  EXPECT_EQ(turns("dev", cfg, "fast"), 100) << "fast -> medium (absent) -> balanced";
}

TEST(ResolveTurns, PerEffortObjectLegacyAliases) {
  json cfg = {{"agent_max_turns", {{"dev", {{"high", 150}, {"medium", 70}, {"low", 9}}}}}};
  EXPECT_EQ(turns("dev", cfg, "thorough"), 150);
  EXPECT_EQ(turns("dev", cfg, "balanced"), 70);
  EXPECT_EQ(turns("dev", cfg, "fast"), 70);
  EXPECT_EQ(turns("dev", cfg, "turbo"), 9);
  EXPECT_EQ(turns("dev", cfg, "low"), 9);
  json only_medium = {{"agent_max_turns", {{"dev", {{"medium", 44}}}}}};
  EXPECT_EQ(turns("dev", only_medium, "thorough"), 44) << "thorough -> high -> balanced -> medium";
  json only_balanced = {{"agent_max_turns", {{"dev", {{"balanced", 33}}}}}};
  EXPECT_EQ(turns("dev", only_balanced, "turbo"), 33);
  json zero = {{"agent_max_turns", {{"dev", {{"thorough", 0}}}}}};
  EXPECT_EQ(turns("dev", zero, "thorough"), 0);
}

TEST(ResolveTurns, MalformedConfigFallsBackToDefaults) {
  for (const json& cfg : {json(nullptr), json::array({1, 2}), json("text"), json(42),
                          json{{"agent_max_turns", "garbage"}}, json{{"agent_max_turns", {{"dev", "many"}}}},
                          json{{"agent_max_turns", {{"dev", json::array()}}}}, json{{"effort", 7}}}) {
    EXPECT_EQ(turns("dev", cfg), 75) << cfg.dump();
  }
}

TEST(ResolveTurns, UnknownAgent) {
  auto t = resolve_turns("intern", json::object(), "");
  EXPECT_FALSE(t.error.empty());
  EXPECT_NE(t.error.find("intern"), std::string::npos);
}

// --- config loading ------------------------------------------------------------

TEST(ConfigLoad, MissingFileIsDefaults) {
  test::TempDir t;
  auto c = load_config(test::real_world(), t.path());
  EXPECT_TRUE(c.ok()) << c.error;
  EXPECT_EQ(c.config.max_tasks_per_plan, 5);
  EXPECT_EQ(c.config.review_max_cycles, 3);
  EXPECT_EQ(c.config.review_gate, "on_request");
  EXPECT_EQ(c.config.command_timeout_ms, 30000);
  EXPECT_FALSE(c.config.v3_event_log);
}

TEST(ConfigLoad, ValuesAndBrokenFiles) {
  test::TempDir t;
  test::write_file(t / ".yolo-planning/config.json", R"({"max_tasks_per_plan": 8, "v3_event_log": true, "custom": 1})");
  auto c = load_config(test::real_world(), t.path());
  EXPECT_TRUE(c.ok()) << c.error;
  EXPECT_EQ(c.config.max_tasks_per_plan, 8);
  EXPECT_TRUE(c.config.v3_event_log);
  EXPECT_EQ(c.config.raw["custom"], 1);

  test::write_file(t / ".yolo-planning/config.json", "{not json");
  auto bad = load_config(test::real_world(), t.path());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("config.json"), std::string::npos) << bad.error;
  EXPECT_EQ(bad.config.max_tasks_per_plan, 5);

  test::write_file(t / ".yolo-planning/config.json", "[1,2]");
  EXPECT_FALSE(load_config(test::real_world(), t.path()).ok());
}

TEST(ConfigLoad, CorpusConfigLoads) {
  auto dir = test::corpus_dir() / "slavpetroff-yolo" / ".vbw-planning";
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "corpus not present";
  json raw = json::parse(test::read_file(dir / "config.json"));
  auto from = config_from_json(raw, "corpus config.json");
  EXPECT_TRUE(from.ok()) << from.error;
  EXPECT_EQ(from.config.max_tasks_per_plan, 5);
  EXPECT_EQ(turns("dev", raw), 113) << "corpus config: effort thorough, dev 75";
}

}  // namespace
}  // namespace yolo
