#include "runner/agent_progress.h"

#include <uv.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "protocol/json_field.h"
#include "protocol/text.h"
#include "runner/output.h"

namespace yolo::runner {

namespace {

constexpr const char* kEventType = "agent_progress";

// To the nearest second: the line is redrawn once a second by a timer of the loop, whose clock
// counts whole milliseconds, so a tick can come a fraction of a millisecond before the second
// is up; cut down, that tick said "0s" again and the next "2s".
std::string secs(double ms) { return std::to_string(std::llround(ms / 1000)) + "s"; }

const char* event_name(AgentCall::Event e) {
  switch (e) {
    case AgentCall::Event::Started:
      return "started";
    case AgentCall::Event::Running:
      return "running";
    case AgentCall::Event::Ended:
      return "ended";
  }
  return "running";
}

// A line of the child's stderr that is one of its progress events (parsed into j).
bool progress_event(std::string_view line, json& j) {
  constexpr std::string_view kQuoted = "\"agent_progress\"";  // kEventType in quotes: a cheap first test
  if (line.empty() || line.front() != '{' || line.find(kQuoted) == std::string_view::npos) return false;
  JsonParse p = parse_json_bounded(line);
  if (!p.ok() || !p.doc.is_object() || json_field::str(p.doc, "type") != kEventType) return false;
  j = std::move(p.doc);
  return true;
}

}  // namespace

std::string agent_call_text(const std::string& plan_id, const std::string& agent, double elapsed_ms,
                            long long timeout_ms) {
  std::string s =
      text::sanitize_for_terminal(plan_id) + " " + text::sanitize_for_terminal(agent) + " " + secs(elapsed_ms);
  if (timeout_ms > 0) s += "/" + secs(static_cast<double>(timeout_ms));
  return s;
}

json agent_call_json(const AgentCall& c) {
  json j = {{"type", kEventType},
            {"event", event_name(c.event)},
            {"plan_id", c.plan_id},
            {"agent", c.agent},
            {"cycle", c.cycle},
            {"timeout_ms", c.timeout_ms},
            {"elapsed_ms", static_cast<long long>(c.elapsed_ms)}};
  if (c.result) j["outcome"] = c.result->describe();
  return j;
}

bool agent_progress_requested() {
  const char* v = std::getenv("YOLO_AGENT_PROGRESS");
  return v && std::string(v) == "1";
}

AgentProgress agent_progress(bool live, bool json_events) {
  if (live)
    return [](const AgentCall& c) {
      if (c.event == AgentCall::Event::Ended)
        out::set_live("");
      else
        out::set_live(out::sym(out::Sym::Diamond) + " " +
                      agent_call_text(c.plan_id, c.agent, c.elapsed_ms, c.timeout_ms));
    };
  if (json_events)
    return [](const AgentCall& c) {
      if (c.event == AgentCall::Event::Running) return;  // the parent keeps the time itself
      out::err(agent_call_json(c).dump(-1, ' ', false, json::error_handler_t::replace));
    };
  return {};
}

SpawnResult run_review_child(SpawnSpec spec, const std::string& what, bool live) {
  struct Call {
    std::string plan_id, agent;
    long long timeout_ms = 0;
    uint64_t t0 = 0;
  };
  std::optional<Call> call;
  bool saw_event = false;
  const uint64_t t0 = uv_hrtime();
  // Without a call: "◆ <what>  12s"; with one: "◆ Review gate: 01-02 reviewer 3s/600s · 12s in all"
  // (the call first: a narrow terminal cuts the end of the line).
  auto draw = [&] {
    std::string all = secs(static_cast<double>(uv_hrtime() - t0) / 1e6);
    if (call)
      out::set_live(out::sym(out::Sym::Diamond) + " Review gate: " +
                    agent_call_text(call->plan_id, call->agent, static_cast<double>(uv_hrtime() - call->t0) / 1e6,
                                    call->timeout_ms) +
                    " · " + all + " in all");
    else
      out::set_live(out::sym(out::Sym::Diamond) + " " + text::sanitize_for_terminal(what) + "  " + all);
  };
  spec.env.emplace_back("YOLO_AGENT_PROGRESS", "1");
  spec.on_line = [&](SpawnSpec::Stream stream, std::string_view line) {
    json j;
    if (stream != SpawnSpec::Stream::Err || !progress_event(line, j)) return;
    saw_event = true;
    std::string ev = json_field::str(j, "event"), plan = json_field::str(j, "plan_id"),
                agent = json_field::str(j, "agent");
    long long timeout =
        j.contains("timeout_ms") && j["timeout_ms"].is_number_integer() ? j["timeout_ms"].get<long long>() : 0;
    if (ev == "started") {
      call = Call{plan, agent, timeout, uv_hrtime()};
      if (!live)
        out::line(out::sym(out::Sym::Diamond) + " " + text::sanitize_for_terminal(plan) + ": " +
                  text::sanitize_for_terminal(agent) + " running" +
                  (timeout > 0 ? " (timeout " + secs(static_cast<double>(timeout)) + ")" : std::string()));
    } else if (ev == "ended") {
      if (!live) {
        double ms = j.contains("elapsed_ms") && j["elapsed_ms"].is_number() ? j["elapsed_ms"].get<double>() : 0;
        out::line(out::sym(out::Sym::Skip) + " " + text::sanitize_for_terminal(plan) + ": " +
                  text::sanitize_for_terminal(agent) + " done in " + secs(ms) + " (" +
                  text::sanitize_for_terminal(json_field::str(j, "outcome")) + ")");
      }
      call.reset();
    }
    if (live) draw();
  };
  RunOptions ro;
  if (live) {
    draw();
    ro.tick_ms = 250;  // the seconds shown turn over on time
    ro.on_tick = [&](double) { draw(); };
  }
  SpawnResult r = run_process(spec, ro);
  if (live) out::set_live("");
  // The events were for this display; whoever reads err (a failed review) sees the rest.
  if (saw_event) {
    std::string kept;
    json ignored;
    for (auto l : text::lines(r.err))
      if (!progress_event(l, ignored)) (kept += l) += '\n';
    r.err = kept;
  }
  return r;
}

}  // namespace yolo::runner
