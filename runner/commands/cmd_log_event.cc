// yolo log-event TYPE PHASE [PLAN] [key=value ...]: PROTOCOL.md section 8.
#include <cstdlib>
#include <filesystem>

#include "protocol/state/events.h"
#include "protocol/ports/fs.h"
#include "protocol/base/numbers.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

struct Options {
  std::string type;
  std::string phase;
  std::vector<std::string> rest;
  bool json = false;  // output is JSON either way
};

std::optional<long long> as_int(const std::string& s) { return text::parse_digits(s); }

json read_json_file(const World& w, const std::filesystem::path& p) {
  auto r = w.files().read(p, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!r.ok()) return nullptr;
  return parse_json_bounded(r.content).doc;  // discarded when broken or nested too deep
}

int run(const Context& ctx, const Options& o) {
  auto phase = as_int(o.phase);
  if (!phase) {
    out::err("log-event: PHASE must be a number, got '" + o.phase + "'");
    return kExitUsage;
  }
  events::Event e;
  e.type = o.type;
  e.phase = *phase;
  size_t i = 0;
  if (!o.rest.empty() && o.rest[0].find('=') == std::string::npos) {
    auto plan = as_int(o.rest[0]);
    if (!plan) {
      out::err("log-event: PLAN must be a number, got '" + o.rest[0] + "'");
      return kExitUsage;
    }
    e.plan = *plan;
    i = 1;
  }
  for (; i < o.rest.size(); ++i) {
    const auto& kv = o.rest[i];
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      out::err("log-event: expected key=value, got '" + kv + "'");
      return kExitUsage;
    }
    e.data[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  json delta = {{"written", false}, {"event_type", e.type}, {"phase", e.phase}, {"event_id", nullptr}};
  const std::filesystem::path& root = ctx.root;  // found from the current folder upward
  events::WriteResult w;
  if (root.empty()) {
    w.reason = "no .yolo-planning folder here or above";
  } else {
    json config = read_json_file(ctx.world, root / ".yolo-planning" / "config.json");
    if (const char* cid = std::getenv("YOLO_CORRELATION_ID"); cid && *cid)
      e.correlation_id = cid;
    else {
      json state = read_json_file(ctx.world, root / ".yolo-planning" / ".execution-state.json");
      if (state.is_object() && state.contains("correlation_id") && state["correlation_id"].is_string())
        e.correlation_id = state["correlation_id"].get<std::string>();
    }
    w = events::log(ctx.world, root, config, e);
  }
  delta["written"] = w.written;
  if (w.written)
    delta["event_id"] = w.event_id;
  else
    delta["reason"] = w.reason;
  out::json_line({{"ok", true}, {"cmd", "log-event"}, {"delta", delta}});
  return w.written ? kExitOk : 3;
}

const CommandRegistrar reg{
    Command{"log-event", "Append an event to .yolo-planning/.events/event-log.jsonl (exit 0 written, 3 not)",
            [](CLI::App& sub) {
              auto o = std::make_shared<Options>();
              sub.add_option("TYPE", o->type, "Event type")->required();
              sub.add_option("PHASE", o->phase, "Phase number")->required();
              sub.add_option("ARGS", o->rest, "[PLAN] [key=value ...]");
              sub.add_flag("--json", o->json, "Accepted for uniformity: the output is always JSON");
              return [o](const Context& ctx) { return run(ctx, *o); };
            }}};

}  // namespace
}  // namespace yolo::runner
