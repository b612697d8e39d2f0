#include "protocol/state/agent_usage.h"

#include <gtest/gtest.h>

namespace yolo::usage {
namespace {

TEST(AgentUsage, ClaudeCodeJsonResult) {
  auto u =
      parse(R"({"type":"result","subtype":"success","is_error":false,"result":"VERDICT: approve\nFINDINGS:\n- none",)"
            R"("total_cost_usd":0.0421,"usage":{"input_tokens":1200,"cache_creation_input_tokens":300,)"
            R"("cache_read_input_tokens":4000,"output_tokens":250}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 1200);
  EXPECT_EQ(u->output_tokens, 250);
  EXPECT_EQ(u->cache_read_tokens, 4000);
  EXPECT_EQ(u->cache_write_tokens, 300);
  EXPECT_EQ(u->tokens(), 5750);
  EXPECT_TRUE(u->has_cost);
  EXPECT_DOUBLE_EQ(u->cost_usd, 0.0421);
  EXPECT_EQ(u->calls, 1);
}

TEST(AgentUsage, ClaudeCodeStreamJsonEndsWithTheResult) {
  std::string out =
      R"({"type":"system","subtype":"init","tools":["Bash"]})"
      "\n"
      R"({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}],"usage":{"input_tokens":5}}})"
      "\n"
      R"({"type":"result","result":"done","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":20}})"
      "\n";
  auto u = parse(out);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 10);
  EXPECT_EQ(u->output_tokens, 20);
  EXPECT_DOUBLE_EQ(u->cost_usd, 0.5);
  EXPECT_EQ(result_text(out), "done");
}

TEST(AgentUsage, CodexExecJsonSumsItsTurnsWithoutAPrice) {
  std::string out =
      R"({"type":"thread.started","thread_id":"t"})"
      "\n"
      R"({"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"first"}})"
      "\n"
      R"({"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":50}})"
      "\n"
      R"({"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"VERDICT: reject"}})"
      "\n"
      R"({"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":0,"output_tokens":30}})"
      "\n";
  auto u = parse(out);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 800);
  EXPECT_EQ(u->cache_read_tokens, 400);
  EXPECT_EQ(u->output_tokens, 80);
  EXPECT_FALSE(u->has_cost);
  EXPECT_EQ(result_text(out), "VERDICT: reject");
}

TEST(AgentUsage, GeminiJsonStatsSummedOverModels) {
  std::string out =
      R"({"response":"VERDICT: approve","stats":{"models":{)"
      R"("gemini-2.5-pro":{"tokens":{"prompt":900,"candidates":100,"total":1000,"cached":300,"thoughts":40}},)"
      R"("gemini-2.5-flash":{"tokens":{"prompt":50,"candidates":5,"cached":0}}},"tools":{}}})";
  auto u = parse(out);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 650);
  EXPECT_EQ(u->cache_read_tokens, 300);
  EXPECT_EQ(u->output_tokens, 145);
  EXPECT_EQ(result_text(out), "VERDICT: approve");
}

TEST(AgentUsage, GeminiStreamJsonResultStats) {
  const std::string out =
      R"({"type":"init","session_id":"s","model":"gemini-2.5-pro"})" "\n"
      R"({"type":"message","role":"assistant","content":"done","delta":true})" "\n"
      R"({"type":"result","status":"success","stats":{"total_tokens":130,"input_tokens":120,"output_tokens":10,)"
      R"("cached":20,"input":100,"duration_ms":5,"tool_calls":1,"models":{"gemini-2.5-pro":{"total_tokens":130,)"
      R"("input_tokens":120,"output_tokens":10,"cached":20,"input":100}}}})" "\n";
  auto u = parse(out);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 100);
  EXPECT_EQ(u->cache_read_tokens, 20);
  EXPECT_EQ(u->output_tokens, 10);
  EXPECT_FALSE(u->has_cost);
}

// The live line's "current tool call", from one line of each CLI's event stream.
TEST(AgentUsage, ToolCallsFromEachCliStream) {
  EXPECT_EQ(tool_call(R"({"type":"assistant","message":{"content":[{"type":"text","text":"x"},)"
                      R"({"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git commit -m done"}}]}})"),
            "Bash: git commit -m done");
  EXPECT_EQ(tool_call(R"({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write",)"
                      R"("input":{"file_path":"/p/greeting/en.txt","content":"hi"}}]}})"),
            "Write: /p/greeting/en.txt");
  EXPECT_EQ(tool_call(R"({"type":"item.started","item":{"id":"i1","type":"command_execution",)"
                      R"("command":"bash -lc 'git add -A'","status":"in_progress"}})"),
            "shell: bash -lc 'git add -A'");
  EXPECT_EQ(tool_call(R"({"type":"item.started","item":{"type":"file_change","changes":[{"path":"a.txt","kind":"add"}]}})"),
            "edit: a.txt");
  EXPECT_EQ(tool_call(R"({"type":"tool_use","timestamp":"t","tool_name":"run_shell_command","tool_id":"x",)"
                      R"("parameters":{"command":"git status"}})"),
            "run_shell_command: git status");
  EXPECT_EQ(tool_call(R"({"type":"tool_use","tool_name":"list_directory","parameters":{}})"), "list_directory");
  // Anything else is no tool call: text, a result, a finished item, plain output.
  for (const char* no : {R"({"type":"assistant","message":{"content":[{"type":"text","text":"hello"}]}})",
                         R"({"type":"item.completed","item":{"type":"command_execution","command":"ls"}})",
                         R"({"type":"result","result":"VERDICT: approve"})", "VERDICT: approve", "{not json", ""})
    EXPECT_FALSE(tool_call(no)) << no;
}

TEST(AgentUsage, PlainTextHasNoUsageAndIsReadAsItIs) {
  EXPECT_FALSE(parse("VERDICT: approve\nFINDINGS:\n- none\n"));
  EXPECT_FALSE(result_text("VERDICT: approve\n"));
  EXPECT_FALSE(parse("{not json"));
  EXPECT_FALSE(parse(R"({"type":"result"})")) << "a result without usage or cost";
  EXPECT_FALSE(parse(""));
}

Record rec(const std::string& run, const std::string& phase, const std::string& plan, double usd, long long in) {
  Record r;
  r.run = run;
  r.phase = phase;
  r.plan = plan;
  r.agent = "executor";
  r.usage.cost_usd = usd;
  r.usage.has_cost = true;
  r.usage.input_tokens = in;
  r.usage.calls = 1;
  return r;
}

TEST(AgentUsage, TotalsPerRunPhaseAndPlan) {
  std::vector<Record> rs = {rec("r1", "01-a", "01-01", 0.25, 100), rec("r1", "01-a", "01-01", 0.5, 10),
                            rec("r1", "01-a", "01-02", 1.0, 1), rec("r1", "02-b", "02-01", 2.0, 1000),
                            rec("r0", "01-a", "01-01", 9.0, 9)};
  Totals t = totals(rs, "r1", "01-a");
  EXPECT_DOUBLE_EQ(t.run.cost_usd, 3.75);
  EXPECT_DOUBLE_EQ(t.phase.cost_usd, 1.75);
  EXPECT_EQ(t.phase.calls, 3);
  ASSERT_EQ(t.plans.size(), 2u);
  EXPECT_EQ(t.plans[0].first, "01-01");
  EXPECT_DOUBLE_EQ(t.plans[0].second.cost_usd, 0.75);
  EXPECT_EQ(t.plans[0].second.input_tokens, 110);
  json j = t.to_json();
  EXPECT_EQ(j["plans"]["01-02"]["calls"], 1);
  // A record survives its JSON line.
  auto back = Record::from_json(rs[0].to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->plan, "01-01");
  EXPECT_DOUBLE_EQ(back->usage.cost_usd, 0.25);
}

TEST(AgentUsage, BudgetPassedAndItsLevel) {
  json cfg = {{"budget", {{"phase_usd", 1.0}, {"run_tokens", 500}}}};
  Budget b = budget_of(cfg);
  ASSERT_TRUE(b.any());
  Totals t;
  t.phase.cost_usd = 0.9;
  t.run.input_tokens = 100;
  EXPECT_FALSE(over_budget(b, t));
  t.phase.cost_usd = 2.3;
  auto o = over_budget(b, t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->scope, "phase");
  EXPECT_EQ(o->level, 2);
  EXPECT_EQ(o->describe(), "the phase spent $2.30 of its $1.00 budget (2 times over)");
  // The statement the gate covers changes with the level, not with every cent.
  Overrun o2 = *o;
  o2.spent = 2.9;
  EXPECT_EQ(statement(*o, "01-a", "r1"), statement(o2, "01-a", "r1"));
  o2.level = 3;
  EXPECT_NE(statement(*o, "01-a", "r1"), statement(o2, "01-a", "r1"));
  t.phase.cost_usd = 0;
  t.run.input_tokens = 600;
  o = over_budget(b, t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->scope, "run");
  EXPECT_EQ(o->unit, "tokens");
  EXPECT_FALSE(budget_of(json::object()).any());
  EXPECT_FALSE(budget_of({{"budget", {{"phase_usd", -1}}}}).any());
}

}  // namespace
}  // namespace yolo::usage
