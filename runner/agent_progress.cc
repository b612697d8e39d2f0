#include "runner/agent_progress.h"

#include <uv.h>

#include <cmath>
#include <optional>
#include <utility>

#include "protocol/base/text.h"
#include "runner/output.h"

namespace yolo::runner {

namespace {

// To the nearest second: the line is redrawn once a second by a timer of the loop, whose clock
// counts whole milliseconds, so a tick can come a fraction of a millisecond before the second
// is up; cut down, that tick said "0s" again and the next "2s".
std::string secs(double ms) { return std::to_string(std::llround(ms / 1000)) + "s"; }

}  // namespace

std::string agent_call_text(const std::string& plan_id, const std::string& agent, double elapsed_ms,
                            long long timeout_ms) {
  std::string s =
      text::sanitize_for_terminal(plan_id) + " " + text::sanitize_for_terminal(agent) + " " + secs(elapsed_ms);
  if (timeout_ms > 0) s += "/" + secs(static_cast<double>(timeout_ms));
  return s;
}

AgentProgress agent_progress(bool live) {
  if (live)
    return [](const AgentCall& c) {
      if (c.event == AgentCall::Event::Ended)
        out::set_live("");
      else
        out::set_live(out::sym(out::Sym::Diamond) + " " +
                      agent_call_text(c.plan_id, c.agent, c.elapsed_ms, c.timeout_ms));
    };
  return {};
}

ReviewGateProgress::ReviewGateProgress(std::string what, bool live)
    : what_(std::move(what)), live_(live), t0_(uv_hrtime()) {
  if (live_) draw();
}

ReviewGateProgress::~ReviewGateProgress() {
  if (live_) out::set_live("");
}

// Without a call: "◆ <what>  12s"; with one: "◆ Review gate: 01-02 reviewer 3s/600s · 12s in all"
// (the call first: a narrow terminal cuts the end of the line).
void ReviewGateProgress::draw() const {
  std::string all = secs(static_cast<double>(uv_hrtime() - t0_) / 1e6);
  if (call_)
    out::set_live(out::sym(out::Sym::Diamond) + " Review gate: " +
                  agent_call_text(call_->plan_id, call_->agent, call_->elapsed_ms, call_->timeout_ms) + " · " + all +
                  " in all");
  else
    out::set_live(out::sym(out::Sym::Diamond) + " " + text::sanitize_for_terminal(what_) + "  " + all);
}

void ReviewGateProgress::on_call(const AgentCall& c) {
  const std::string plan = text::sanitize_for_terminal(c.plan_id), agent = text::sanitize_for_terminal(c.agent);
  switch (c.event) {
    case AgentCall::Event::Started:
      call_ = c;
      if (!live_)
        out::line(out::sym(out::Sym::Diamond) + " " + plan + ": " + agent + " running" +
                  (c.timeout_ms > 0 ? " (timeout " + secs(static_cast<double>(c.timeout_ms)) + ")" : std::string()));
      break;
    case AgentCall::Event::Running:
      call_ = c;
      break;
    case AgentCall::Event::Ended:
      if (!live_)
        out::line(out::sym(out::Sym::Skip) + " " + plan + ": " + agent + " done in " + secs(c.elapsed_ms) + " (" +
                  text::sanitize_for_terminal(c.result ? c.result->describe() : std::string("ended")) + ")");
      call_.reset();
      break;
  }
  if (live_) draw();
}

AgentProgress ReviewGateProgress::progress() {
  return [this](const AgentCall& c) { on_call(c); };
}

}  // namespace yolo::runner
