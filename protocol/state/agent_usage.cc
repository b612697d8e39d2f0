#include "protocol/state/agent_usage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "protocol/base/text.h"

namespace yolo::usage {
namespace {

long long num(const json& j, const char* k) {
  if (!j.is_object()) return 0;
  auto it = j.find(k);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return std::max<long long>(0, it->get<long long>());
  if (it->is_number()) return std::max<long long>(0, static_cast<long long>(it->get<double>()));
  return 0;
}

std::string s(const json& j, const char* k) {
  auto it = j.is_object() ? j.find(k) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Each JSON object of the output: the whole of it when it is one document, else one per line.
std::vector<json> objects(std::string_view out) {
  std::vector<json> v;
  std::string_view t = text::trim(out);
  if (t.empty() || (t.front() != '{' && t.find("\n{") == std::string_view::npos)) return v;
  if (t.front() == '{') {
    JsonParse whole = parse_json_bounded(t);
    if (whole.ok() && whole.doc.is_object()) {
      v.push_back(std::move(whole.doc));
      return v;
    }
  }
  for (auto l : text::lines(out)) {
    std::string_view lt = text::trim(l);
    if (lt.empty() || lt.front() != '{') continue;
    JsonParse p = parse_json_bounded(lt);
    if (p.ok() && p.doc.is_object()) v.push_back(std::move(p.doc));
  }
  return v;
}

bool claude_result(const json& o) {
  return s(o, "type") == "result" && (o.contains("usage") || o.contains("total_cost_usd"));
}

}  // namespace

Usage& Usage::operator+=(const Usage& o) {
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cache_read_tokens += o.cache_read_tokens;
  cache_write_tokens += o.cache_write_tokens;
  cost_usd += o.cost_usd;
  has_cost = has_cost || o.has_cost;
  calls += o.calls;
  return *this;
}

json Usage::to_json() const {
  json j = {{"input_tokens", input_tokens},
            {"output_tokens", output_tokens},
            {"cache_read_tokens", cache_read_tokens},
            {"cache_write_tokens", cache_write_tokens},
            {"tokens", tokens()},
            {"calls", calls}};
  j["cost_usd"] = has_cost ? json(cost_usd) : json(nullptr);
  return j;
}

Usage Usage::from_json(const json& j) {
  Usage u;
  u.input_tokens = num(j, "input_tokens");
  u.output_tokens = num(j, "output_tokens");
  u.cache_read_tokens = num(j, "cache_read_tokens");
  u.cache_write_tokens = num(j, "cache_write_tokens");
  u.calls = j.is_object() && j.contains("calls") ? num(j, "calls") : 1;
  if (j.is_object())
    if (auto c = j.find("cost_usd"); c != j.end() && c->is_number()) {
      u.cost_usd = std::max(0.0, c->get<double>());
      u.has_cost = true;
    }
  return u;
}

std::optional<Usage> parse(std::string_view out) {
  std::vector<json> objs = objects(out);
  if (objs.empty()) return std::nullopt;
  // Claude Code: the result object (stream-json ends with it; json is only it).
  for (auto it = objs.rbegin(); it != objs.rend(); ++it)
    if (claude_result(*it)) {
      Usage u;
      const json& us = it->value("usage", json::object());
      u.input_tokens = num(us, "input_tokens");
      u.output_tokens = num(us, "output_tokens");
      u.cache_read_tokens = num(us, "cache_read_input_tokens");
      u.cache_write_tokens = num(us, "cache_creation_input_tokens");
      if (auto c = it->find("total_cost_usd"); c != it->end() && c->is_number()) {
        u.cost_usd = std::max(0.0, c->get<double>());
        u.has_cost = true;
      }
      u.calls = 1;
      return u;
    }
  // Codex CLI: each turn's usage. Its input_tokens include the cached ones.
  Usage codex;
  bool any_turn = false;
  for (const auto& o : objs)
    if (s(o, "type") == "turn.completed" && o.contains("usage") && o["usage"].is_object()) {
      const json& us = o["usage"];
      long long cached = num(us, "cached_input_tokens");
      codex.input_tokens += std::max(0LL, num(us, "input_tokens") - cached);
      codex.cache_read_tokens += cached;
      codex.output_tokens += num(us, "output_tokens");
      any_turn = true;
    }
  if (any_turn) {
    codex.calls = 1;
    return codex;
  }
  // Gemini CLI: stats.models.<name>.tokens (prompt includes cached; thoughts are output).
  for (auto it = objs.rbegin(); it != objs.rend(); ++it) {
    auto st = it->find("stats");
    if (st == it->end() || !st->is_object() || !st->contains("models") || !(*st)["models"].is_object()) continue;
    Usage g;
    for (auto& [name, m] : (*st)["models"].items()) {
      if (m.is_object() && !m.contains("tokens") && m.contains("input_tokens")) {
        // `stream-json`'s result: {input_tokens (the prompt, cached included), output_tokens, cached}
        long long cached = num(m, "cached");
        g.input_tokens += std::max(0LL, num(m, "input_tokens") - cached);
        g.cache_read_tokens += cached;
        g.output_tokens += num(m, "output_tokens");
        continue;
      }
      const json& tk = m.is_object() ? m.value("tokens", json::object()) : json::object();
      long long cached = num(tk, "cached");
      long long prompt = tk.contains("prompt") ? num(tk, "prompt") : num(tk, "input") + cached;
      g.input_tokens += std::max(0LL, prompt - cached);
      g.cache_read_tokens += cached;
      g.output_tokens += num(tk, "candidates") + num(tk, "thoughts");
    }
    g.calls = 1;
    return g;
  }
  return std::nullopt;
}

namespace {
// What a tool's input names: its command, file, pattern or address ("" when none of them).
std::string what_of(const json& input) {
  if (!input.is_object()) return {};
  for (const char* k : {"command", "file_path", "absolute_path", "path", "pattern", "url", "query", "dir_path"})
    if (auto it = input.find(k); it != input.end()) {
      if (it->is_string()) return it->get<std::string>();
      if (it->is_array()) {  // Codex's shell argv
        std::string out;
        for (const auto& a : *it)
          if (a.is_string()) out += (out.empty() ? "" : " ") + a.get<std::string>();
        return out;
      }
    }
  return {};
}
std::string tool_text(const std::string& tool, const std::string& what) {
  return what.empty() ? tool : tool + ": " + what;
}
}  // namespace

std::optional<std::string> tool_call(std::string_view line) {
  if (line.empty() || line.front() != '{') return std::nullopt;
  json o = json::parse(line.begin(), line.end(), nullptr, false);
  if (!o.is_object()) return std::nullopt;
  const std::string type = s(o, "type");
  if (type == "assistant" && o.contains("message") && o["message"].is_object()) {  // Claude Code
    const json& content = o["message"].value("content", json::array());
    if (!content.is_array()) return std::nullopt;
    for (auto it = content.rbegin(); it != content.rend(); ++it)
      if (it->is_object() && s(*it, "type") == "tool_use")
        return tool_text(s(*it, "name"), what_of(it->value("input", json::object())));
    return std::nullopt;
  }
  if (type == "item.started" && o.contains("item") && o["item"].is_object()) {  // Codex
    const json& item = o["item"];
    const std::string kind = s(item, "type");
    if (kind == "command_execution") return tool_text("shell", s(item, "command"));
    if (kind == "mcp_tool_call") return tool_text(s(item, "server") + "." + s(item, "tool"), "");
    if (kind == "web_search") return tool_text("web_search", s(item, "query"));
    if (kind == "file_change") {
      const json& ch = item.value("changes", json::array());
      std::string path = ch.is_array() && !ch.empty() && ch[0].is_object() ? s(ch[0], "path") : std::string();
      return tool_text("edit", path);
    }
    return std::nullopt;
  }
  if (type == "tool_use" && o.contains("tool_name"))  // Gemini CLI
    return tool_text(s(o, "tool_name"), what_of(o.value("parameters", json::object())));
  return std::nullopt;
}

std::optional<std::string> result_text(std::string_view out) {
  std::vector<json> objs = objects(out);
  for (auto it = objs.rbegin(); it != objs.rend(); ++it)
    if (claude_result(*it) && (*it)["result"].is_string()) return (*it)["result"].get<std::string>();
  std::optional<std::string> codex;
  for (const auto& o : objs)
    if (s(o, "type") == "item.completed" && o.contains("item") && s(o["item"], "type") == "agent_message")
      codex = s(o["item"], "text");
  if (codex) return codex;
  for (auto it = objs.rbegin(); it != objs.rend(); ++it)
    if (it->contains("stats") && (*it)["response"].is_string()) return (*it)["response"].get<std::string>();
  return std::nullopt;
}

json Record::to_json() const {
  json j = {{"ts", ts}, {"run", run}, {"phase", phase}, {"plan", plan}, {"agent", agent}, {"cycle", cycle}};
  j["usage"] = usage.to_json();
  return j;
}

std::optional<Record> Record::from_json(const json& j) {
  if (!j.is_object() || !j.contains("usage") || !j["usage"].is_object()) return std::nullopt;
  Record r;
  r.ts = s(j, "ts");
  r.run = s(j, "run");
  r.phase = s(j, "phase");
  r.plan = s(j, "plan");
  r.agent = s(j, "agent");
  r.cycle = static_cast<int>(num(j, "cycle"));
  r.usage = Usage::from_json(j["usage"]);
  return r;
}

std::filesystem::path ledger_path(const std::filesystem::path& root) {
  return root / ".yolo-planning" / ".costs" / "usage.jsonl";
}

Status append(const World& w, const std::filesystem::path& root, const Record& r) {
  std::string line = r.to_json().dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return w.files().append(
      ledger_path(root), [&](const std::string&) { return line; }, 0, /*durable=*/false);
}

std::vector<Record> read_all(const World& w, const std::filesystem::path& root) {
  std::vector<Record> v;
  auto r = w.files().read(ledger_path(root), 64u << 20, /*text=*/false);
  if (!r.ok()) return v;
  for (auto l : text::lines(r.content)) {
    if (text::trim(l).empty()) continue;
    JsonParse p = parse_json_bounded(l);
    if (!p.ok()) continue;
    if (auto rec = Record::from_json(p.doc)) v.push_back(std::move(*rec));
  }
  return v;
}

json Totals::to_json() const {
  json p = json::object();
  for (const auto& [id, u] : plans) p[id] = u.to_json();
  return {{"run", run.to_json()}, {"phase", phase.to_json()}, {"plans", p}};
}

Totals totals(const std::vector<Record>& records, const std::string& run, const std::string& phase) {
  Totals t;
  for (const auto& r : records) {
    if (r.run != run) continue;
    t.run += r.usage;
    if (r.phase != phase) continue;
    t.phase += r.usage;
    if (r.plan.empty()) continue;
    auto it = std::find_if(t.plans.begin(), t.plans.end(), [&](const auto& p) { return p.first == r.plan; });
    if (it == t.plans.end())
      t.plans.emplace_back(r.plan, r.usage);
    else
      it->second += r.usage;
  }
  return t;
}

Budget budget_of(const json& config) {
  Budget b;
  if (!config.is_object()) return b;
  auto it = config.find("budget");
  if (it == config.end() || !it->is_object()) return b;
  auto money = [&](const char* k) -> std::optional<double> {
    auto v = it->find(k);
    if (v == it->end() || !v->is_number() || v->get<double>() <= 0) return std::nullopt;
    return v->get<double>();
  };
  auto count = [&](const char* k) -> std::optional<long long> {
    auto v = it->find(k);
    if (v == it->end() || !v->is_number_integer() || v->get<long long>() <= 0) return std::nullopt;
    return v->get<long long>();
  };
  b.phase_usd = money("phase_usd");
  b.run_usd = money("run_usd");
  b.phase_tokens = count("phase_tokens");
  b.run_tokens = count("run_tokens");
  return b;
}

std::string Overrun::describe() const {
  char buf[160];
  if (unit == "usd")
    std::snprintf(buf, sizeof buf, "spent $%.2f of its $%.2f budget", spent, limit);
  else
    std::snprintf(buf, sizeof buf, "used %lld of its %lld tokens", static_cast<long long>(spent),
                  static_cast<long long>(limit));
  return "the " + scope + " " + buf + (level > 1 ? " (" + std::to_string(level) + " times over)" : "");
}

std::optional<Overrun> over_budget(const Budget& b, const Totals& t) {
  auto check = [](const char* scope, const char* unit, double spent, double limit) -> std::optional<Overrun> {
    if (limit <= 0 || spent <= limit) return std::nullopt;
    Overrun o{scope, unit, spent, limit, static_cast<long long>(std::floor(spent / limit))};
    return o;
  };
  std::optional<Overrun> o;
  if (!o && b.phase_usd) o = check("phase", "usd", t.phase.cost_usd, *b.phase_usd);
  if (!o && b.phase_tokens) o = check("phase", "tokens", static_cast<double>(t.phase.tokens()), *b.phase_tokens);
  if (!o && b.run_usd) o = check("run", "usd", t.run.cost_usd, *b.run_usd);
  if (!o && b.run_tokens) o = check("run", "tokens", static_cast<double>(t.run.tokens()), *b.run_tokens);
  return o;
}

std::string statement(const Overrun& o, const std::string& phase, const std::string& run) {
  char lim[64];
  if (o.unit == "usd")
    std::snprintf(lim, sizeof lim, "$%.2f", o.limit);
  else
    std::snprintf(lim, sizeof lim, "%lld tokens", static_cast<long long>(o.limit));
  return "# Budget passed\n\n"
         "The " +
         o.scope + (o.scope == "phase" ? " " + phase : std::string()) + " passed " +
         (o.level > 1 ? std::to_string(o.level) + " times " : std::string()) + "its budget of " + lim +
         " (config `budget`).\n\n"
         "Approving this gate lets the run go on until it passes " +
         std::to_string(o.level + 1) + " times the budget; rejecting it halts the run.\n\nRun: " + run + "\n";
}

}  // namespace yolo::usage
