// yolo status [--json] [--repo DIR]: phase, waves, each plan's state and review, the
// approval and the open gates, from .yolo-planning/.execution-state.json.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "protocol/state/agent_usage.h"
#include "protocol/base/numbers.h"
#include "protocol/status/status.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/config_report.h"
#include "runner/gates_view.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo;
  bool json = false;
  bool records = false;
};

std::string money(const json& u) {
  if (!u.contains("cost_usd") || !u["cost_usd"].is_number()) return "cost not reported";
  char b[32];
  std::snprintf(b, sizeof b, "$%.4f", u["cost_usd"].get<double>());
  return b;
}

std::string usage_line(const std::string& what, const json& u) {
  long long calls = u.value("calls", 0LL);
  return "  " + what + std::string(what.size() < 8 ? 8 - what.size() : 1, ' ') + money(u) + "  " +
         std::to_string(u.value("tokens", 0LL)) + " tokens (" + std::to_string(u.value("input_tokens", 0LL)) + " in, " +
         std::to_string(u.value("output_tokens", 0LL)) + " out, " +
         std::to_string(u.value("cache_read_tokens", 0LL) + u.value("cache_write_tokens", 0LL)) + " cache)  " +
         std::to_string(calls) + (calls == 1 ? " call" : " calls");
}

// What the run's agent calls cost, as their CLIs reported it (protocol/state/agent_usage.h): the
// run, its phase and each plan; and the budget, when config has one.
void add_usage(const World& w, json& s, const stdfs::path& root, const Config& cfg) {
  std::string cid = s.value("correlation_id", json()).is_string() ? s["correlation_id"].get<std::string>() : "";
  std::string dir = s.value("phase_dir", json()).is_string() ? s["phase_dir"].get<std::string>() : "";
  std::string phase = stdfs::path(dir).lexically_normal().filename().string();
  auto records = usage::read_all(w, root);
  usage::Budget b = usage::budget_of(cfg.raw);
  if (records.empty() && !b.any()) return;
  usage::Totals t = usage::totals(records, cid, phase);
  s["usage"] = t.to_json();
  s["usage"]["phase_dir"] = dir;
  if (b.any()) {
    json bj = json::object();
    if (b.phase_usd) bj["phase_usd"] = *b.phase_usd;
    if (b.run_usd) bj["run_usd"] = *b.run_usd;
    if (b.phase_tokens) bj["phase_tokens"] = *b.phase_tokens;
    if (b.run_tokens) bj["run_tokens"] = *b.run_tokens;
    auto over = usage::over_budget(b, t);
    bj["passed"] = over ? json(over->describe()) : json(nullptr);
    s["budget"] = bj;
  }
}

std::string render_usage(const json& s) {
  const json& u = s["usage"];
  std::string r = "Agents' cost (as their CLIs reported it):\n" + usage_line("run", u["run"]) + "\n" +
                  usage_line("phase", u["phase"]);
  for (auto& [id, pu] : u["plans"].items()) r += "\n" + usage_line(text::sanitize_for_terminal(id), pu);
  if (s.contains("budget")) {
    const json& b = s["budget"];
    if (b["passed"].is_string())
      r += "\n" + out::sym(out::Sym::Warn) + " Budget: " + b["passed"].get<std::string>() +
           " (the budget gate asks a person before the next wave)";
    else
      r += "\n" + out::sym(out::Sym::Ok) + " Within the budget (config `budget`)";
  }
  return r;
}

int run(const Context& ctx, const Options& o) {
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) {
    if (o.json) out::json_line({{"ok", false}, {"cmd", "status"}, {"error", err}});
    out::err(out::sym(out::Sym::Fail) + " status: " + err);
    return kExitFail;
  }
  StatusOptions so{o.records, nullptr};
  // On a terminal, a status that takes a while (the first one on a large project checks every
  // review ledger once) shows how far it is, after YOLO_LIVE_AFTER_MS (1000) of work.
  const bool live = !o.json && out::live_enabled();
  if (live) {
    const auto start = std::chrono::steady_clock::now();
    long long after_ms = 1000;
    if (const char* v = std::getenv("YOLO_LIVE_AFTER_MS"); v && *v)
      if (auto n = text::parse_digits(v)) after_ms = *n;
    auto last = start - std::chrono::seconds(1);
    so.progress = [=](size_t done, size_t total) mutable {
      auto now = std::chrono::steady_clock::now();
      if (now - start < std::chrono::milliseconds(after_ms) || now - last < std::chrono::milliseconds(100)) return;
      last = now;
      out::set_live(out::sym(out::Sym::Diamond) + " Reading the phases' review ledgers: " + std::to_string(done) + "/" +
                    std::to_string(total) + " (a first status checks each once; later ones reuse it)");
    };
  }
  json s = execution_status(ctx.world, *root, so);
  if (live) out::set_live("");
  if (!s.value("ok", false)) {
    if (o.json) out::json_line(s);
    out::err(out::sym(out::Sym::Fail) +
             " status: " + text::sanitize_for_terminal(s.value("error", std::string("cannot read the state"))));
    return kExitFail;
  }
  ConfigLoad cfg = load_config(ctx.world, *root);
  if (!o.json) report_config_warnings(cfg);  // unknown keys are worth knowing here too
  add_usage(ctx.world, s, *root, cfg.config);
  if (o.json) {
    out::json_line(s);
  } else {
    out::line(render_status(s));
    if (s.contains("usage")) out::line(render_usage(s));
  }
  return kExitOk;
}

const CommandRegistrar reg{Command{
    "status", "Phase, waves, plans, reviews and gates of the current run (a table; --json for machines)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--json", o->json, "One JSON document on stdout");
      sub.add_flag("--records,--all", o->records,
                   "Every review record and every phase's row (default: the run's phase's records, the other ledgers "
                   "only named; at most 50 phase rows, those with work left)");
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
