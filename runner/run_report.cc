// What `yolo execute` says (runner/run_report.h): events, lines, the event log, the live line,
// the run core's actions in words and the run's last word.
#include "runner/run_report.h"

#include <unistd.h>

#include <cstdlib>

#include "protocol/base/text.h"
#include "protocol/state/events.h"

namespace yolo::runner::phase {

namespace {
// no-color.org: NO_COLOR set to a non-empty value turns colour off; empty counts as unset.
bool color_on(FILE* f) {
  const char* nc = std::getenv("NO_COLOR");
  return f && ::isatty(::fileno(f)) == 1 && (nc == nullptr || *nc == '\0');
}
}  // namespace

RunReport::RunReport(const World& world, std::filesystem::path root, const Config& cfg, const PhaseDir& phase,
                     const std::string& cid, const std::vector<PlanEntry>& entries, bool json, Live live,
                     Streams streams)
    : world_(world),
      root_(std::move(root)),
      cfg_(cfg),
      phase_(phase),
      cid_(cid),
      entries_(entries),
      json_(json),
      live_view_(std::move(live)),
      streams_(streams),
      color_(color_on(streams.out)),
      t0_(uv_hrtime()) {}

// ---- where it writes ------------------------------------------------------------------------

// The symbols and dim text of runner/output.h, coloured by this report's own output.
std::string RunReport::sym(Sym s) const { return out::sym(s, color_); }

std::string RunReport::dim(const std::string& s) const { return out::dim(s, color_); }

// On stdout and stderr through runner/output.h (the live line cleared and drawn again).
void RunReport::line(const std::string& s) {
  if (streams_.out == stdout) return out::line(s);
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), streams_.out);
  std::fflush(streams_.out);
}

void RunReport::err(const std::string& s) {
  if (streams_.err == stderr) return out::err(s);
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), streams_.err);
  std::fflush(streams_.err);
}

void RunReport::json_line(const json& j) {
  if (streams_.out == stdout) return out::json_line(j);
  line(j.dump(-1, ' ', false, json::error_handler_t::replace));
}

// ---- what any part of the run says ------------------------------------------------------------

void RunReport::emit(const std::string& event, json data, Sym s, const std::string& human) {
  if (json_) {
    json j = {{"event", event}};
    if (data.is_object())
      for (auto& [k, v] : data.items()) j[k] = v;
    j["elapsed_ms"] = static_cast<long long>(elapsed_ms());
    json_line(j);
  } else {
    // Human lines carry plan ids, titles, paths, findings and children's output: no
    // control characters reach the terminal.
    line(sym(s) + " " + text::sanitize_for_terminal(human) + "  " + dim("[" + fmt_secs(elapsed_ms()) + "]"));
  }
}

void RunReport::note(const std::string& human, bool dimmed) {
  if (json_) return;
  std::string s = text::sanitize_for_terminal(human);
  line("    " + (dimmed ? dim(s) : s));
}

void RunReport::log(const std::string& type, const std::string& plan, json data) {
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
    err("⚠ event not logged: " + w.reason);
    log_warned_ = true;
  }
}

// ---- step 2 ----------------------------------------------------------------------------------

void RunReport::phase_start(size_t plans, long long total_waves, bool resumed, size_t done, bool was_running) {
  log("phase_start", "", {{"resumed", resumed}, {"plans", plans}, {"total_waves", total_waves}});
  std::string head = "Phase " + phase_.folder + ": " + std::to_string(plans) + " plans in " +
                     std::to_string(total_waves) + " waves" +
                     (resumed ? " (resumed, " + std::to_string(done) + " complete)" : "");
  emit("phase_start",
       {{"phase", phase_.number},
        {"phase_dir", phase_.rel},
        {"plans", plans},
        {"total_waves", total_waves},
        {"resumed", resumed},
        {"correlation_id", cid_}},
       Sym::Diamond, head);
  if (was_running) note("plans left running by an earlier run are pending again");
}

void RunReport::summary_not_counted(const std::string& id) {
  emit("summary_not_counted", {{"plan", id}}, Sym::Warn,
       "Plan " + id + ": its SUMMARY appeared after this run began, written by no executor of " + id +
           ": not counted; the plan runs (its executor writes the SUMMARY again)");
}

void RunReport::summary_failed(const std::string& id, const json& findings) {
  emit("plan_end", {{"plan", id}, {"status", to_string(PlanStatus::Failed)}, {"findings", findings}}, Sym::Fail,
       "Plan " + id + ": its SUMMARY fails the SUMMARY gate");
  for (const auto& f : findings) note("[" + str(f, "severity") + "] " + str(f, "issue"));
}

void RunReport::already_complete(size_t plans) {
  emit("phase_end", {{"status", to_string(RunStatus::Complete)}, {"plans", plans}}, Sym::Ok,
       "Phase " + phase_.folder + " complete: every plan has a SUMMARY that passes the gate");
}

// ---- the run core's actions ---------------------------------------------------------------------

void RunReport::max_parallel_lowered(int want, int now, long files_limit) {
  emit("max_parallel_lowered", {{"max_parallel", want}, {"now", now}}, Sym::Warn,
       "max_parallel " + std::to_string(want) + " lowered to " + std::to_string(now) + ": this process may open only " +
           std::to_string(files_limit) +
           " files (`ulimit -n`); the other plans wait for a slot (raise it: `ulimit -n 4096`)");
}

void RunReport::wave_start(long long wave, long long total, const std::vector<std::string>& ids) {
  json plans = json::array();
  std::string names;  // for people: the first few, then how many more (a wave of 80 was one 700-character line)
  constexpr size_t kNamesShown = 8;
  for (const std::string& id : ids) {
    plans.push_back(id);
    if (plans.size() <= kNamesShown) names += (names.empty() ? "" : ", ") + id;
  }
  if (ids.size() > kNamesShown) names += " and " + std::to_string(ids.size() - kNamesShown) + " more";
  log("wave_start", "", {{"wave", wave}, {"plans", plans}});
  emit("wave_start", {{"wave", wave}, {"total_waves", total}, {"plans", plans}}, Sym::Diamond,
       "Wave " + std::to_string(wave) + "/" + std::to_string(total) + ": " + names);
}

void RunReport::wave_end(long long wave, bool failed) {
  std::string ws = to_string(failed ? PlanStatus::Failed : PlanStatus::Complete);
  log("wave_end", "", {{"wave", wave}, {"status", ws}});
  emit("wave_end", {{"wave", wave}, {"status", ws}}, failed ? Sym::Fail : Sym::Ok,
       "Wave " + std::to_string(wave) + " " + ws);
}

std::string RunReport::halted(const json& doc) {
  std::string msg = "the run is halted";
  if (doc.contains("gates") && doc["gates"].is_array() && !doc["gates"].empty() &&
      gates::has_status(doc["gates"].back(), gates::GateStatus::Rejected)) {
    const json& g = doc["gates"].back();
    msg = str(g, "gate_type") + " gate " + str(g, "id") + " for " + str(g, "plan_path") +
          " was rejected: " + str(g, "feedback");
    emit("gate_rejected",
         {{"gate_id", str(g, "id")}, {"gate_type", str(g, "gate_type")}, {"feedback", str(g, "feedback")}}, Sym::Fail,
         "Halted: " + msg);
    note("revise and request approval again: yolo request-approval --plan-path " + str(g, "plan_path") +
         " --gate-type " + str(g, "gate_type"));
  }
  return "Halted: " + msg;
}

void RunReport::frozen(size_t running) {
  emit("frozen", {{"running", running}}, Sym::Pause,
       "A gate is open: no new plan starts; waiting for the " + std::to_string(running) + " running plan(s)");
}

std::string RunReport::halt(const std::string& reason) {
  if (json_)
    emit("phase_end", {{"status", to_string(RunStatus::Halted)}, {"reason", reason}}, Sym::Fail, "Halted: " + reason);
  return "Phase " + phase_.folder + " halted: " + reason;
}

std::string RunReport::plan_complete(const std::string& plan) {
  emit("plan_complete", {{"plan", plan}}, Sym::Ok, "Plan " + plan + " is complete");
  next_ = "`yolo execute` runs the rest of the phase";
  return "Plan " + plan + " complete (--plan); the rest of the phase is not";
}

void RunReport::phase_complete(size_t plans) {
  log("phase_end", "",
      {{"status", to_string(RunStatus::Complete)},
       {"plans", plans},
       {"elapsed_ms", static_cast<long long>(elapsed_ms())}});
  emit("phase_end", {{"status", to_string(RunStatus::Complete)}, {"plans", plans}}, Sym::Ok,
       "Phase " + phase_.folder + " complete: " + std::to_string(plans) + "/" + std::to_string(plans) + " plans");
}

std::string RunReport::merge_refused(const std::string& plan) const {
  return "Halted: plan " + plan + " passed its gates but could not be merged";
}

std::string RunReport::plans_ready(const std::vector<ReadyPlan>& plans) {
  for (const ReadyPlan& p : plans)
    emit("plan_ready", {{"plan", p.id}, {"wave", p.wave}, {"plan_path", p.path}, {"summary_path", p.summary}},
         Sym::Diamond, "Plan " + p.id + " ready: waiting for " + p.summary);
  return "Waiting for SUMMARY: no executor is configured; " + std::to_string(plans.size()) +
         " plan(s) are ready for an agent or a person. Run `yolo execute` again once their SUMMARY files exist.";
}

// ---- the run's stop messages ------------------------------------------------------------------

std::string RunReport::interrupted(int signum) const {
  return "Interrupted (signal " + std::to_string(signum) +
         "): running executors were stopped; their plans are pending again";
}

std::string RunReport::nothing_left() const { return "stopped with nothing left to run"; }

// ---- the live line ------------------------------------------------------------------------------

LiveView live_view(const run::Core& core, const std::vector<PlanEntry>& entries, const std::vector<PlanRun>& runs,
                   long long timeout_ms, uint64_t now_ns) {
  LiveView v;
  v.total = entries.size();
  for (size_t i = 0; i < entries.size(); ++i)
    if ((core.plan(i).step == run::Step::Done && core.plan(i).status == PlanStatus::Complete) ||
        (entries[i].summary == SummaryState::Passed && !(i < runs.size() && runs[i].running)))
      ++v.done;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].running) continue;
    double secs = static_cast<double>(now_ns - runs[i].started_at) / 1e9;
    v.running.push_back({entries[i].id, secs, timeout_ms, runs[i].tool});
  }
  for (size_t i = 0; i < runs.size(); ++i)
    if (const char* step = runs[i].aside_step) v.aside.push_back({entries[i].id, step});
  return v;
}

std::string RunReport::live_line(const LiveView& v) const {
  const size_t width = 12;
  size_t filled = v.total == 0 ? 0 : v.done * width / v.total;
  std::string l = "[";
  for (size_t k = 0; k < width; ++k) l += k < filled ? "█" : "░";
  l += "] " + std::to_string(v.done) + "/" + std::to_string(v.total) + " plans";
  for (const LiveView::Running& r : v.running) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.1fs/%llds", r.secs, r.timeout_ms / 1000);
    l += " · " + sym(Sym::Diamond) + " " + text::sanitize_for_terminal(r.id) + " executor" + buf;
    if (!r.tool.empty())  // its current tool call, cut to fit
      l += " " + text::cut(text::sanitize_for_terminal(r.tool), v.running.size() > 1 ? 24 : 60);
  }
  for (const LiveView::Aside& a : v.aside)
    l += " · " + sym(Sym::Diamond) + " " + text::sanitize_for_terminal(a.id) + " " + a.step;
  if (v.running.empty()) l += " · waiting";
  return l;
}

void RunReport::start_live(uv_loop_t* loop) {
  if (json_ || streams_.out != stdout || !out::live_enabled() || live_) return;
  live_ = true;
  uv_timer_init(loop, &live_timer_);
  live_timer_.data = this;
  uv_timer_start(
      &live_timer_, [](uv_timer_t* t) { static_cast<RunReport*>(t->data)->draw_live(); }, 250, 250);
  uv_unref(reinterpret_cast<uv_handle_t*>(&live_timer_));
}

void RunReport::stop_live() {
  if (!live_) return;
  live_ = false;
  uv_timer_stop(&live_timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&live_timer_), nullptr);
  out::set_live("");
}

void RunReport::draw_live() {
  if (live_view_) out::set_live(live_line(live_view_()));
}

// ---- the last word --------------------------------------------------------------------------------

std::string RunReport::next_step(int code) const {
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

json RunReport::plans() const {
  auto snap = state::load(world_, root_);
  return snap.ok() ? execution::plan_statuses(snap.doc, entries_) : json::array();
}

int RunReport::finish(int code, Result result, const std::string& message) {
  if (json_) {
    json j = {{"ok", code == kExecComplete},
              {"cmd", "execute"},
              {"result", execution::to_string(result)},
              {"exit_code", code},
              {"message", message}};
    if (!phase_.folder.empty()) {
      j["phase"] = phase_.number;
      j["phase_dir"] = phase_.rel;
    }
    j["plans"] = plans();
    j["next"] = next_step(code);
    j["elapsed_ms"] = static_cast<long long>(elapsed_ms());
    json_line(j);
  } else {
    Sym s = code == kExecComplete         ? Sym::Ok
            : code == kExecPaused         ? Sym::Pause
            : code == kExecWaitingSummary ? Sym::Diamond
                                          : Sym::Fail;
    std::string m = text::sanitize_for_terminal(message);
    std::string nl = "Next: " + text::sanitize_for_terminal(next_step(code));
    if (code == kExecHalted || code == kExecUsage) {
      if (!m.empty()) err(sym(s) + " " + m);
      err(nl);
    } else {
      if (!m.empty()) line(sym(s) + " " + m);
      line(nl);
    }
  }
  return code;
}

}  // namespace yolo::runner::phase
