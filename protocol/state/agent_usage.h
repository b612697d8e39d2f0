// What agent calls cost: the tokens and money an agent CLI reports in its machine-readable
// output, one record per call in `.yolo-planning/.costs/usage.jsonl`, totals per plan, phase
// and run, and the `budget` of config that a run may not pass without a person's approval.
//
// Read from what each CLI prints (nothing is estimated):
//  - Claude Code, `--output-format json` (one object) or `stream-json` (one per line): the
//    `{"type":"result", "usage": {...}, "total_cost_usd": x}` object.
//  - Codex CLI, `exec --json` (one event per line): every `turn.completed` event's `usage`.
//  - Gemini CLI, `--output-format json`: `stats.models.<model>.tokens`, summed over models.
// Codex and Gemini print no price: their calls have tokens and no cost.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::usage {

struct Usage {
  long long input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  double cost_usd = 0;
  bool has_cost = false;  // the CLI printed a price
  long long calls = 0;    // agent calls that reported usage
  long long tokens() const { return input_tokens + output_tokens + cache_read_tokens + cache_write_tokens; }
  Usage& operator+=(const Usage& o);
  json to_json() const;
  static Usage from_json(const json& j);
};

// The usage in an agent's standard output; nullopt when it printed none of the forms above.
std::optional<Usage> parse(std::string_view out);

// The agent's own answer inside a machine-readable output (Claude Code's `result`, the last
// Codex `agent_message`, Gemini's `response`); nullopt when the output is not one of them,
// so plain text is read as it is.
std::optional<std::string> result_text(std::string_view out);

// The tool call one line of a CLI's event stream starts, as "TOOL: what" (the command, the
// file or the pattern it names, when it names one): Claude Code's `stream-json` assistant
// message with a `tool_use` block, a Codex `exec --json` `item.started` (a command, a file
// change, an MCP tool), a Gemini `stream-json` `tool_use` event. nullopt for any other line.
std::optional<std::string> tool_call(std::string_view line);

// One agent call.
struct Record {
  std::string ts, run, phase, plan, agent;  // run: the correlation id ("" outside a run); phase: its folder
  int cycle = 0;
  Usage usage;
  json to_json() const;
  static std::optional<Record> from_json(const json& j);
};

std::filesystem::path ledger_path(const std::filesystem::path& root);
// Appends one record (a line, under the file's lock).
Status append(const World& w, const std::filesystem::path& root, const Record& r);
// Every record of the ledger (lines that do not parse are skipped).
std::vector<Record> read_all(const World& w, const std::filesystem::path& root);

struct Totals {
  Usage run, phase;
  std::vector<std::pair<std::string, Usage>> plans;  // the phase's plans, in the order first seen
  json to_json() const;
};
// The run's (records of correlation id `run`) and, within it, the phase's and each plan's.
Totals totals(const std::vector<Record>& records, const std::string& run, const std::string& phase);

// config `budget`: {"phase_usd", "run_usd", "phase_tokens", "run_tokens"}; each optional.
struct Budget {
  std::optional<double> phase_usd, run_usd;
  std::optional<long long> phase_tokens, run_tokens;
  bool any() const { return phase_usd || run_usd || phase_tokens || run_tokens; }
};
Budget budget_of(const json& config);

// A budget passed: which (scope "phase" | "run", unit "usd" | "tokens"), what was spent and
// the limit, and how many times over (level = floor(spent / limit) >= 1: each further
// multiple of the budget asks again).
struct Overrun {
  std::string scope, unit;
  double spent = 0, limit = 0;
  long long level = 0;
  std::string describe() const;  // "phase 01-demo spent $0.82 of its $0.50 budget"
};
// The first budget the totals pass (phase before run, money before tokens); nullopt: none.
std::optional<Overrun> over_budget(const Budget& b, const Totals& t);
// The text of the file the budget gate covers: it changes only when the scope, the budget
// or the level changes, so an approval holds until the next multiple of the budget.
std::string statement(const Overrun& o, const std::string& phase, const std::string& run);

}  // namespace yolo::usage
