// `yolo execute`: what the run says (runner/phase_run_internal.h): its events as JSON lines
// or lines for people, the event log, the one `Next:` line and the last word of a run.
#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

void Run::emit(const std::string& event, json data, Sym sym, const std::string& human) {
  if (o_.json) {
    json j = {{"event", event}};
    if (data.is_object())
      for (auto& [k, v] : data.items()) j[k] = v;
    j["elapsed_ms"] = static_cast<long long>(elapsed_ms());
    out::json_line(j);
  } else {
    // Human lines carry plan ids, titles, paths, findings and children's output: no
    // control characters reach the terminal.
    out::line(out::sym(sym) + " " + text::sanitize_for_terminal(human) + "  " +
              out::dim("[" + fmt_secs(elapsed_ms()) + "]"));
  }
}

void Run::note(const std::string& human, bool dim) {  // extra detail lines for people only
  if (o_.json) return;
  std::string s = text::sanitize_for_terminal(human);
  out::line("    " + (dim ? out::dim(s) : s));
}

void Run::log(const std::string& type, const std::string& plan, json data) {
  if (!events::enabled(cfg_.raw)) return;  // the event log is off: nothing to build
  events::Event e;
  e.type = type;
  e.phase = phase_.number;
  if (auto n = as_int(plan)) e.plan = *n;
  data["phase_dir"] = phase_.rel;
  e.data = std::move(data);
  e.correlation_id = cid_;
  auto w = events::log(world_, root_, cfg_.raw, e);
  if (!w.written && cfg_.v3_event_log && !log_warned_) {
    out::err("⚠ event not logged: " + w.reason);
    log_warned_ = true;
  }
}

// The one `Next:` line every stop ends with: next_ when a step set it, else by exit code.
std::string Run::next_step(int code) const {
  if (!next_.empty()) return next_;
  switch (code) {
    case kExecComplete:
      return "`yolo execute` runs the next phase that is not complete; `yolo status` shows the project";
    case kExecPaused:
      return "`yolo gates` shows the open gate; `yolo approve` (or `yolo reject --feedback TEXT`), then `yolo "
             "execute`";
    case kExecWaitingSummary:
      return "write the SUMMARY files named above (or configure an `executor`), then `yolo execute`";
    case kExecUsage:
      return "`yolo status` lists the phases and plans; `yolo execute --help` shows the options";
    default:
      return "fix what is reported above, then `yolo execute` (`yolo status` shows the run)";
  }
}

int Run::finish(int code, Result result, const std::string& message) {
  worktrees_.tidy();  // what killed runs left, once (runner/run_worktrees.h)
  if (o_.json) {
    json plans = json::array();
    auto snap = state::load(world_, root_);
    if (snap.ok()) {
      auto statuses = execution::nodes(snap.doc, entries_);  // one pass over the state's plans
      for (size_t i = 0; i < entries_.size(); ++i)
        plans.push_back({{"id", entries_[i].id}, {"status", std::string(waves::to_string(statuses[i].status))}});
    }
    json j = {{"ok", code == kExecComplete},
              {"cmd", "execute"},
              {"result", execution::to_string(result)},
              {"exit_code", code},
              {"message", message}};
    if (!phase_.folder.empty()) {
      j["phase"] = phase_.number;
      j["phase_dir"] = phase_.rel;
    }
    j["plans"] = plans;
    j["next"] = next_step(code);
    j["elapsed_ms"] = static_cast<long long>(elapsed_ms());
    out::json_line(j);
  } else {
    Sym s = code == kExecComplete         ? Sym::Ok
            : code == kExecPaused         ? Sym::Pause
            : code == kExecWaitingSummary ? Sym::Diamond
                                          : Sym::Fail;
    std::string m = text::sanitize_for_terminal(message);
    std::string nl = "Next: " + text::sanitize_for_terminal(next_step(code));
    if (code == kExecHalted || code == kExecUsage) {
      if (!m.empty()) out::err(out::sym(s) + " " + m);
      out::err(nl);
    } else {
      if (!m.empty()) out::line(out::sym(s) + " " + m);
      out::line(nl);
    }
  }
  return code;
}

}  // namespace yolo::runner::phase
