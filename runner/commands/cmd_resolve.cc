// yolo resolve-model / resolve-turns: PROTOCOL.md section 9.
#include "protocol/state/config.h"
#include "protocol/ports/fs.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

struct ModelOptions {
  std::vector<std::string> args;
  bool with_cost = false;
  bool all = false;
  bool json = false;
};

// Reads a JSON file for resolve-model: a missing or unreadable file is an error.
bool read_json(const std::string& path, json& out) {
  auto r = fs::read_text(path);
  if (!r.ok()) {
    out::err("resolve-model: " + r.error->message);
    return false;
  }
  JsonParse parsed = parse_json_bounded(r.content);
  out = std::move(parsed.doc);
  if (!parsed.ok()) {
    out::err("resolve-model: " + path + ": " + parsed.message);
    return false;
  }
  return true;
}

int run_model(const ModelOptions& o) {
  size_t need = o.all ? 2 : 3;
  if (o.args.size() != need) {
    out::err(o.all ? "usage: yolo resolve-model --all CONFIG PROFILES [--with-cost]"
                   : "usage: yolo resolve-model AGENT CONFIG PROFILES [--with-cost]");
    return kExitUsage;
  }
  json config, profiles;
  if (!read_json(o.args[need - 2], config) || !read_json(o.args[need - 1], profiles)) return kExitFail;
  auto one = [&](const std::string& agent, json& result) {
    ModelChoice c = resolve_model(agent, config, profiles);
    if (!c.error.empty()) {
      out::err("resolve-model: " + c.error);
      return false;
    }
    result = o.with_cost ? json{{"model", c.model}, {"cost_weight", c.cost_weight}} : json(c.model);
    return true;
  };
  if (o.all) {
    json all = json::object();
    for (const char* a : kAgents)
      if (!one(a, all[a])) return kExitFail;
    out::json_line(all);
    return kExitOk;
  }
  json r;
  if (!one(o.args[0], r)) return kExitFail;
  if (o.with_cost)
    out::json_line(r);
  else if (o.json)
    out::json_line({{"model", r}});
  else
    out::line(r.get<std::string>());
  return kExitOk;
}

struct TurnsOptions {
  std::string agent, config, effort;
  bool json = false;
};

int run_turns(const TurnsOptions& o) {
  json config = nullptr;
  if (auto r = fs::read_text(o.config); r.ok()) config = parse_json_bounded(r.content).doc;
  if (config.is_discarded() || !config.is_object()) config = nullptr;  // defaults
  TurnsChoice t = resolve_turns(o.agent, config, o.effort);
  if (!t.error.empty()) {
    out::err("resolve-turns: " + t.error);
    return kExitFail;
  }
  if (o.json)
    out::json_line({{"agent", o.agent}, {"turns", t.turns}});
  else
    out::line(std::to_string(t.turns));
  return kExitOk;
}

const CommandRegistrar model_reg{
    Command{"resolve-model", "Print the model (opus, sonnet, haiku) for an agent", [](CLI::App& sub) {
              auto o = std::make_shared<ModelOptions>();
              sub.add_option("AGENT CONFIG PROFILES", o->args, "AGENT CONFIG PROFILES (CONFIG PROFILES with --all)")
                  ->expected(2, 3);
              sub.add_flag("--with-cost", o->with_cost, "Print {\"model\", \"cost_weight\"}");
              sub.add_flag("--all", o->all, "Print {agent: model} for all nine agents");
              sub.add_flag("--json", o->json,
                           "Print {\"model\"} instead of the bare name (--with-cost and --all always print JSON)");
              return [o](const Context&) { return run_model(*o); };
            }}};

const CommandRegistrar turns_reg{Command{
    "resolve-turns", "Print the turn budget for an agent", [](CLI::App& sub) {
      auto o = std::make_shared<TurnsOptions>();
      sub.add_option("AGENT", o->agent, "lead, dev, qa, scout, debugger, architect, docs, researcher or reviewer")
          ->required();
      sub.add_option("CONFIG", o->config, "config.json (missing or malformed: the defaults)")->required();
      sub.add_option("EFFORT", o->effort, "thorough|balanced|fast|turbo (or high|medium|low)");
      sub.add_flag("--json", o->json, "Print {\"agent\", \"turns\"} instead of the bare number");
      return [o](const Context&) { return run_turns(*o); };
    }}};

}  // namespace
}  // namespace yolo::runner
