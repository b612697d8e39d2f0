#include "runner/phase_run.h"

#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "protocol/argv_template.h"
#include "protocol/clock.h"
#include "protocol/config.h"
#include "protocol/events.h"
#include "protocol/execution.h"
#include "protocol/fs.h"
#include "protocol/gate_coverage.h"
#include "protocol/gate_step.h"
#include "protocol/gate_run.h"
#include "protocol/json_field.h"
#include "protocol/numbers.h"
#include "protocol/plan.h"
#include "protocol/stage1.h"
#include "protocol/review_ledger.h"
#include "protocol/review_loop.h"
#include "protocol/review_report.h"
#include "protocol/reviewed.h"
#include "protocol/state.h"
#include "protocol/summary.h"
#include "protocol/summary_gate.h"
#include "protocol/text.h"
#include "protocol/waves.h"
#include "runner/agent_logs.h"
#include "runner/agent_progress.h"
#include "runner/approvers.h"
#include "runner/config_report.h"
#include "runner/git.h"
#include "runner/instance_lock.h"
#include "runner/output.h"
#include "runner/render.h"
#include "runner/subprocess.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;
using execution::PlanEntry;
using execution::SummaryState;
using out::Sym;

constexpr const char* kRoadmap = ".yolo-planning/ROADMAP.md";

using json_field::str;

std::optional<long long> as_int(const std::string& s) { return text::parse_digits(s); }

struct PhaseDir {
  long long number = 0;
  std::string folder;  // "01-demo"
  std::string slug;    // "demo"
  stdfs::path abs;
  std::string rel;  // ".yolo-planning/phases/01-demo"
};

std::vector<PhaseDir> list_phases(const stdfs::path& root) {
  std::vector<PhaseDir> out;
  std::error_code ec;
  stdfs::path dir = root / ".yolo-planning" / "phases";
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    PhaseDir p;
    p.folder = it->path().filename().string();
    if (p.folder.empty() || p.folder[0] == '.') continue;
    size_t digits = 0;
    while (digits < p.folder.size() && digits < 18 && p.folder[digits] >= '0' && p.folder[digits] <= '9') ++digits;
    p.number = digits ? std::stoll(p.folder.substr(0, digits)) : 0;
    p.slug = digits && digits < p.folder.size() && p.folder[digits] == '-' ? p.folder.substr(digits + 1) : p.folder;
    p.abs = it->path();
    p.rel = ".yolo-planning/phases/" + p.folder;
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const PhaseDir& a, const PhaseDir& b) { return a.folder < b.folder; });
  return out;
}

// The plan's SUMMARY, relative to the root: the one that exists under any name the corpus
// uses (`NN-MM-SUMMARY.md` beside `MM-PLAN.md` too), else the name the phase's naming asks for.
std::string summary_rel_for(const stdfs::path& root, const std::string& plan_rel) {
  stdfs::path sp = locate_summary(root / plan_rel).path;
  return stdfs::path(plan_rel).parent_path().append(sp.filename().string()).generic_string();
}

std::string fmt_secs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", ms / 1000.0);
  return buf;
}

// /proc/sys/kernel/random/boot_id: a pid and start time name a process only within one boot.
std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string b;
  std::getline(f, b);
  return b;
}

// What a later execute needs to know whether this executor still runs (its pid may be reused).
json executor_record(int pid) {
  return {
      {"pid", pid}, {"pgid", process_group_of(pid)}, {"start_ticks", process_start_ticks(pid)}, {"boot_id", boot_id()}};
}

enum class GateOutcome { Passed, Paused, Halted };

class Run {
 public:
  explicit Run(ExecuteOptions o) : o_(std::move(o)), root_(o_.root), git_(o_.root) { t0_ = uv_hrtime(); }

  int run();

 private:
  // ---- output and events ----------------------------------------------------------
  double elapsed_ms() const { return static_cast<double>(uv_hrtime() - t0_) / 1e6; }
  void emit(const std::string& event, json data, Sym sym, const std::string& human) {
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
  void note(const std::string& human, bool dim = false) {  // extra detail lines for people only
    if (o_.json) return;
    std::string s = text::sanitize_for_terminal(human);
    out::line("    " + (dim ? out::dim(s) : s));
  }
  void note_review_outcomes(const json& detail);

  void log(const std::string& type, const std::string& plan, json data = json::object()) {
    events::Event e;
    e.type = type;
    e.phase = phase_.number;
    if (auto n = as_int(plan)) e.plan = *n;
    data["phase_dir"] = phase_.rel;
    e.data = std::move(data);
    e.correlation_id = cid_;
    auto w = events::log(root_, cfg_.raw, e);
    if (!w.written && cfg_.v3_event_log && !log_warned_) {
      out::err("⚠ event not logged: " + w.reason);
      log_warned_ = true;
    }
  }
  int finish(int code, const std::string& result, const std::string& message);
  // The one `Next:` line every stop ends with: next_ when a step set it, else by exit code.
  std::string next_step(int code) const {
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

  // ---- steps ---------------------------------------------------------------------
  int choose_phase();
  void load_plans();
  SummaryState check_summary(const PlanEntry& e, json& findings);
  bool phase_complete_on_disk(const PhaseDir& p);
  int step2();
  int check_agents();
  int dry_run();
  int precheck();
  int review_gate();
  GateOutcome ensure_gate(gates::GateType type, const std::string& rel, const std::string& reason,
                          std::optional<int> wave, const std::vector<std::string>& files = {});
  void pause_for(const json& gate);
  std::string approver_note_for(gates::GateType type) const {
    auto spec = gates::approver_spec(cfg_, type);
    switch (spec.kind) {
      case gates::ApproverSpec::Kind::Manual:
        return "manual";
      case gates::ApproverSpec::Kind::Skip:
        return "skip";
      case gates::ApproverSpec::Kind::Command:
        return "command " + (spec.argv.empty() ? std::string() : spec.argv[0]);
      case gates::ApproverSpec::Kind::Invalid:
        return "invalid: " + spec.error;
    }
    return "manual";
  }
  bool set_halted(const std::string& reason);
  void end_leftover_executors(const json& doc);
  int waves();

  // ---- the loop ---------------------------------------------------------------
  void schedule();
  void start_plans(const std::vector<size_t>& idx, long long wave);
  void mark_ready(const std::vector<size_t>& idx);
  void on_done(size_t i, SpawnResult r);
  void stop(int code, const std::string& result, const std::string& message) {
    if (final_code_ < 0) {
      final_code_ = code;
      final_result_ = result;
      final_message_ = message;
    }
    stopping_ = true;
    flush_plans();
  }

  // ---- the run's state in memory (issue 19) ------------------------------------------
  // Re-reading, validating and rewriting (with fsync) the whole state on every start and
  // end of a plan made execute quadratic. The plans' statuses are this run's own (one
  // execute per project): they are kept in nodes_ and written in batches (flush_plans: one
  // read-modify-write under the lock for every change queued), at most every 100 ms and
  // never more than a fifth of the time, and at once before anything that reads them back
  // (gates, the end of the phase, stop). The rest of the state (gates, approvals) is
  // another process's to change: state_now() reads the file again only when its identity
  // (inode, size, times) changed. A run killed between two writes loses only statuses
  // that the next run finds again (SUMMARY files; a `running` plan becomes pending).
  struct PlanUpdate {
    std::string status;
    std::optional<std::string> started_at;
    json completed_at;  // null or an ISO-8601 time
    std::string error;  // "": removed
    json findings;      // null: removed
  };
  const state::LoadResult& state_now();
  void queue_plan(size_t i, PlanUpdate u);
  void flush_plans();
  void interrupt(int signum);
  // The live line: "[████░░░░] 2/4 plans · ◆ 01-02 executor 3.1s/60s · ...".
  void draw_live() {
    size_t done = 0;
    for (size_t i = 0; i < entries_.size(); ++i)
      if (completed_.count(i) || (entries_[i].summary == SummaryState::Passed && !running_.count(i))) ++done;
    const size_t width = 12;
    size_t filled = entries_.empty() ? 0 : done * width / entries_.size();
    std::string bar = "[";
    for (size_t k = 0; k < width; ++k) bar += k < filled ? "█" : "░";
    std::string l = bar + "] " + std::to_string(done) + "/" + std::to_string(entries_.size()) + " plans";
    long long timeout = cfg_.timeout_for(cfg_.executor);
    for (const auto& [i, p] : running_) {
      double secs = static_cast<double>(uv_hrtime() - started_at_[i]) / 1e9;
      char buf[64];
      std::snprintf(buf, sizeof buf, " %.1fs/%llds", secs, timeout / 1000);
      l += " · " + out::sym(Sym::Diamond) + " " + text::sanitize_for_terminal(entries_[i].id) + " executor" + buf;
    }
    if (running_.empty()) l += " · waiting";
    out::set_live(l);
  }

  ExecuteOptions o_;
  stdfs::path root_;
  Config cfg_;
  GitCli git_;
  SummaryMode mode_ = SummaryMode::Strict;
  uint64_t t0_ = 0;
  std::string cid_;
  bool log_warned_ = false;
  PhaseDir phase_;
  std::vector<PlanEntry> entries_;
  std::string approver_note_;

  uv_loop_t loop_{};
  uv_signal_t sigint_{}, sigterm_{};
  std::map<size_t, std::unique_ptr<Process>> running_;
  InstanceLock lock_;
  std::map<size_t, uint64_t> started_at_;
  std::vector<waves::PlanNode> nodes_;                     // entries_ with this run's statuses, built once
  std::map<long long, std::vector<size_t>> wave_members_;  // wave -> entries_ indexes
  std::map<size_t, PlanUpdate> pending_;                   // status changes not written yet
  uv_timer_t flush_timer_{};
  bool flush_timer_armed_ = false, loop_started_ = false;
  uint64_t last_flush_ns_ = 0, last_flush_cost_ns_ = 0;
  state::LoadResult state_cache_;
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = -1;
    long long mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  std::optional<FileId> state_id_;
  std::map<size_t, std::vector<std::string>> argv_;  // the executor's argv, for its log
  std::set<size_t> completed_;                       // plans completed by this run
  uv_timer_t live_timer_{};
  std::set<long long> waves_started_, wave_gate_passed_, waves_ended_;
  bool frozen_noted_ = false;
  long long first_wave_ = 0;
  bool stopping_ = false;
  bool interrupted_ = false;
  int final_code_ = -1;
  std::string final_result_, final_message_;
  std::string next_;  // the next step for the person, when a step knows better than the exit code
};

int Run::finish(int code, const std::string& result, const std::string& message) {
  if (o_.json) {
    json plans = json::array();
    auto snap = state::load(root_);
    if (snap.ok())
      for (const auto& e : entries_) {
        const json* p = execution::find_plan(snap.doc, e.id);
        plans.push_back({{"id", e.id}, {"status", p ? str(*p, "status") : std::string("pending")}});
      }
    json j = {{"ok", code == kExecComplete},
              {"cmd", "execute"},
              {"result", result},
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

// ---- phase and plans ----------------------------------------------------------------

SummaryState Run::check_summary(const PlanEntry& e, json& findings) {
  stdfs::path sp = root_ / summary_rel_for(root_, e.path);
  std::error_code ec;
  if (!stdfs::exists(sp, ec)) return SummaryState::Missing;
  SummaryVerdict v = verify_summary(sp, root_ / e.path, root_, mode_, &git_);
  if (v.passed()) return SummaryState::Passed;
  findings = v.to_json().value("findings", json::array());
  return SummaryState::Failed;
}

bool Run::phase_complete_on_disk(const PhaseDir& p) {
  auto files = list_plan_files(p.abs);
  if (files.empty()) return true;
  for (const auto& f : files) {
    stdfs::path rel = stdfs::relative(f, root_);
    PlanEntry e;
    e.path = rel.generic_string();
    json ignored;
    if (check_summary(e, ignored) != SummaryState::Passed) return false;
  }
  return true;
}

int Run::choose_phase() {
  auto phases = list_phases(root_);
  if (phases.empty())
    return finish(kExecHalted, "error", "no phase folders under " + (root_ / ".yolo-planning" / "phases").string());
  if (!o_.phase.empty()) {
    std::string want = o_.phase;
    while (!want.empty() && want.back() == '/') want.pop_back();
    want = stdfs::path(want).filename().string();
    auto num = as_int(want);
    for (const auto& p : phases)
      if (p.folder == want ||
          (num && p.number == *num && !p.folder.empty() && p.folder[0] >= '0' && p.folder[0] <= '9')) {
        phase_ = p;
        return -1;
      }
    return finish(kExecUsage, "error",
                  "no phase '" + o_.phase + "' under .yolo-planning/phases (give a number or a folder name)");
  }
  auto snap = state::load(root_);
  for (const auto& p : phases) {
    if (snap.ok() && str(snap.doc, "phase_dir") == p.rel && str(snap.doc, "status") == "complete") continue;
    if (snap.ok() && str(snap.doc, "phase_dir") == p.rel) {
      phase_ = p;  // the phase the state is running
      return -1;
    }
    if (phase_complete_on_disk(p)) continue;
    phase_ = p;
    return -1;
  }
  phase_ = phases.back();
  return finish(kExecComplete, "complete", "every phase is complete (" + std::to_string(phases.size()) + " phases)");
}

void Run::load_plans() {
  for (const auto& f : list_plan_files(phase_.abs)) {
    PlanEntry e;
    e.path = stdfs::relative(f, root_).generic_string();
    auto l = load_plan(f);
    if (l.plan) {
      const Plan& p = *l.plan;
      e.plan = p.plan;
      e.id = p.phase.empty() && p.plan.empty() ? f.filename().string() : p.id();
      e.title = p.title;
      e.wave = p.wave.value_or(0);
      e.depends_on = p.depends_on;
    } else {
      e.id = f.filename().string();
    }
    entries_.push_back(std::move(e));
  }
}

int Run::step2() {
  bool executor = !cfg_.executor.argv.empty();
  for (auto& e : entries_) e.summary = check_summary(e, e.summary_findings);
  execution::PhaseInfo info{phase_.number, phase_.slug, phase_.rel};
  execution::PrepareOptions po{now_iso8601(), new_uuid(), executor};
  execution::Prepared prepared;
  auto up = state::update(root_, [&](json& doc, std::string&) {
    prepared = execution::prepare(doc, info, entries_, po);
    return true;
  });
  if (!up.ok()) return finish(kExecHalted, "error", up.error);
  cid_ = str(up.doc, "correlation_id");
  size_t done = 0;
  for (const auto& e : entries_) done += e.summary == SummaryState::Passed;
  log("phase_start", "",
      {{"resumed", !prepared.new_run}, {"plans", entries_.size()}, {"total_waves", prepared.total_waves}});
  std::string head = "Phase " + phase_.folder + ": " + std::to_string(entries_.size()) + " plans in " +
                     std::to_string(prepared.total_waves) + " waves" +
                     (prepared.new_run ? "" : " (resumed, " + std::to_string(done) + " complete)");
  emit("phase_start",
       {{"phase", phase_.number},
        {"phase_dir", phase_.rel},
        {"plans", entries_.size()},
        {"total_waves", prepared.total_waves},
        {"resumed", !prepared.new_run},
        {"correlation_id", cid_}},
       Sym::Diamond, head);
  if (prepared.was_running) note("plans left running by an earlier run are pending again");
  for (const auto& e : entries_)
    if (e.summary == SummaryState::Failed && !executor) {
      emit("plan_end", {{"plan", e.id}, {"status", "failed"}, {"findings", e.summary_findings}}, Sym::Fail,
           "Plan " + e.id + ": its SUMMARY fails the SUMMARY gate");
      for (const auto& f : e.summary_findings) note("[" + str(f, "severity") + "] " + str(f, "issue"));
    }
  if (entries_.empty()) return finish(kExecHalted, "halted", "no plans in " + phase_.rel);
  return -1;
}

bool Run::set_halted(const std::string& reason) {
  auto up = state::update(root_, [&](json& doc, std::string&) { return execution::halt(doc); });
  log("phase_end", "", {{"status", "halted"}, {"reason", reason}});
  return up.ok();
}

int Run::precheck() {
  Stage1Options po;
  po.max_tasks = cfg_.max_tasks_per_plan;
  po.root = root_;
  auto reviews = stage1_phase(phase_.abs, po);
  int rejected = 0, conditional = 0;
  for (const auto& r : reviews) {
    Verdict v = r.verdict();
    if (v == Verdict::Approve) continue;
    if (v == Verdict::Reject)
      ++rejected;
    else
      ++conditional;
    if (o_.json) {
      json j = r.to_json();
      j.erase("cmd");
      emit("precheck",
           {{"plan", r.plan_id}, {"path", r.plan_path}, {"verdict", to_string(v)}, {"findings", j["findings"]}},
           out::sym_for(v), "");
    } else {
      out::line(render::structural_review(r));
    }
  }
  if (rejected) {
    std::string why = std::to_string(rejected) + " plan(s) rejected by the structural pre-check";
    set_halted(why);
    return finish(kExecHalted, "halted",
                  "Halted before anything ran: " + why + " (fix them and run `yolo execute` again)");
  }
  emit("precheck", {{"verdict", conditional ? "conditional" : "approve"}, {"plans", reviews.size()}},
       conditional ? Sym::Warn : Sym::Ok,
       "Cross-plan validation: " + std::to_string(reviews.size()) + " plans" +
           (conditional ? ", " + std::to_string(conditional) + " with warnings" : std::string(", no findings")));
  return -1;
}

// --dry-run: the waves, each plan's dependencies and SUMMARY, and the command that would run
// it. Reads the plans, the SUMMARY files and the state; starts nothing and writes nothing.
int Run::dry_run() {
  std::vector<waves::PlanNode> nodes;
  for (const auto& e : entries_) nodes.push_back({e.id, e.plan, e.wave, e.depends_on, waves::PlanStatus::Pending});
  std::map<long long, std::vector<size_t>> by_wave;
  for (size_t i = 0; i < entries_.size(); ++i) by_wave[entries_[i].wave].push_back(i);
  bool executor = !cfg_.executor.argv.empty();
  bool reviewing = cfg_.review_gate == "always" || (o_.review && cfg_.review_gate != "never");
  json jw = json::array();
  size_t to_run = 0;
  if (!o_.json)
    out::line(out::bold("Phase " + text::sanitize_for_terminal(phase_.folder)) + ": " +
              std::to_string(entries_.size()) + " plans in " + std::to_string(by_wave.size()) + " wave(s)  " +
              out::dim("(dry run: nothing runs, nothing is written)"));
  for (const auto& [w, idx] : by_wave) {
    if (!o_.json)
      out::line(out::bold(w >= 1 ? "Wave " + std::to_string(w) : std::string("No valid wave (never runs)")));
    json jp = json::array();
    for (size_t i : idx) {
      const auto& e = entries_[i];
      json deps = json::array();
      std::string dep_text;
      for (const auto& d : e.depends_on) {
        int j = waves::resolve_dependency(nodes, d);
        std::string id = j >= 0 ? entries_[static_cast<size_t>(j)].id : d + " (unknown)";
        deps.push_back(id);
        dep_text += (dep_text.empty() ? "" : ", ") + id;
      }
      json f;
      SummaryState ss = check_summary(e, f);
      std::string summary = ss == SummaryState::Passed ? "passes" : ss == SummaryState::Failed ? "fails" : "missing";
      std::string sp = summary_rel_for(root_, e.path);
      json jl = {{"id", e.id},         {"title", e.title},   {"path", e.path},
                 {"depends_on", deps}, {"summary", summary}, {"summary_path", sp}};
      std::string what;
      if (ss == SummaryState::Passed) {
        what = out::sym(Sym::Ok) + " complete (its SUMMARY passes)";
      } else if (executor && w >= 1) {
        std::map<std::string, std::string> vars = {{"plan_path", e.path},
                                                   {"plan_id", e.id},
                                                   {"wave", std::to_string(w)},
                                                   {"phase_dir", phase_.rel},
                                                   {"summary_path", sp}};
        auto argv = expand_argv(cfg_.executor.argv, vars);
        jl["would_run"] = argv;
        std::string cmd;
        for (const auto& a : argv)
          cmd += (cmd.empty() ? "" : " ") + (a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'");
        what = out::sym(Sym::Diamond) + " would run: " + cmd;
        ++to_run;
      } else if (w >= 1) {
        what = out::sym(Sym::Skip) + " would wait for " + sp + " (no executor configured)";
        ++to_run;
      } else {
        what = out::sym(Sym::Fail) + " never runs: its wave is not a positive integer";
      }
      jp.push_back(jl);
      if (!o_.json)
        out::line("  " + text::sanitize_for_terminal(e.id) + "  " + text::sanitize_for_terminal(e.title) +
                  (dep_text.empty() ? out::dim("  (no dependencies)")
                                    : out::dim("  (after " + text::sanitize_for_terminal(dep_text) + ")")) +
                  "\n      " + text::sanitize_for_terminal(what));
    }
    jw.push_back({{"wave", w}, {"plans", jp}});
  }
  std::string review = reviewing ? "the review gate runs first (yolo review " + phase_.rel + " --changed)"
                                 : "review gate skipped (review_gate: " + cfg_.review_gate + ")";
  next_ = "`yolo execute" + (o_.phase.empty() ? std::string() : " " + o_.phase) + "` runs it";
  if (o_.json) {
    out::json_line({{"ok", true},
                    {"cmd", "execute"},
                    {"dry_run", true},
                    {"phase", phase_.number},
                    {"phase_dir", phase_.rel},
                    {"waves", jw},
                    {"review_gate", reviewing},
                    {"executor", executor},
                    {"would_run", to_run},
                    {"next", next_}});
    return kExecComplete;
  }
  out::line(out::sym(Sym::Skip) + " " + review + "; then the vision gate on ROADMAP.md");
  out::line("Next: " + next_);
  return kExecComplete;
}

// Before the run starts: a configured agent whose program does not exist. A missing executor
// would fail every plan, so the run does not start; a missing reviewer means every plan gets
// only the Stage 1 verdict (the fallback), said loudly, or refused with reviewer_required.
int Run::check_agents() {
  bool reviewing = cfg_.review_gate == "always" || (o_.review && cfg_.review_gate != "never");
  for (const auto& m : missing_agent_programs(cfg_, root_)) {
    std::string what = m.role + " program '" + m.program + "' not found (config.json " + m.role +
                       ", argv[0]; PATH or a path from the project root)";
    if (m.role == "executor") {
      next_ = "install it or correct `executor` in .yolo-planning/config.json, then `yolo execute`";
      return finish(kExecHalted, "error", "the " + what);
    }
    if (m.role == "reviewer" && reviewing && cfg_.reviewer_required) {
      next_ =
          "install it or correct `reviewer` in .yolo-planning/config.json (reviewer_required is true), then `yolo "
          "execute`";
      return finish(kExecHalted, "error",
                    "the " + what + ": reviewer_required is true, so no plan can pass the review gate");
    }
    if (m.role == "reviewer" && reviewing)
      emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
           "The " + what +
               ": every plan gets the Stage 1 verdict only (fallback, no real review). "
               "Set \"reviewer_required\": true to refuse that");
    else if (m.role == "architect" && reviewing)
      emit("agent_missing", {{"role", m.role}, {"program", m.program}}, Sym::Warn,
           "The " + what + ": a rejected plan is not revised");
  }
  return -1;
}

int Run::review_gate() {
  if (cfg_.review_gate == "never") {
    emit("review_gate", {{"status", "skipped"}, {"review_gate", "never"}}, Sym::Skip,
         "Review gate skipped (review_gate: never)");
    return -1;
  }
  if (cfg_.review_gate != "always" && !o_.review) {
    emit("review_gate", {{"status", "skipped"}, {"review_gate", cfg_.review_gate}}, Sym::Skip,
         "Review gate skipped (review_gate: " + cfg_.review_gate + "; --review runs it)");
    return -1;
  }
  // Already passed for exactly these plan contents: nothing to review again.
  auto snap = state::load(root_);
  auto ledger = review_ledger::load(root_, phase_.abs);
  if (snap.ok() && ledger.ok() && execution::has_step(snap.doc, "step_2b")) {
    std::vector<review::PlanContent> contents;
    for (const auto& e : entries_) contents.push_back({e.id, review::file_hash(root_ / e.path)});
    if (review::passed_as_is(ledger.doc, contents)) {
      emit("review_gate", {{"status", "passed"}, {"cached", true}}, Sym::Ok,
           "Review gate: already passed for these plan contents");
      return -1;
    }
  }
  emit("review_gate", {{"status", "running"}}, Sym::Diamond,
       "Review gate: yolo review " + phase_.rel + " --changed" +
           (cfg_.reviewer.argv.empty()
                ? std::string(" (no reviewer configured: Stage 1 only)")
                : " (reviewer " + cfg_.reviewer.argv.front() + ", up to " +
                      std::to_string(cfg_.timeout_for(cfg_.reviewer) / 1000) + " s per plan and cycle)"));
  SpawnSpec spec;
  // --changed: plans whose content equals their review-ledger record (a `yolo review PLAN`
  // or an earlier gate) keep that verdict; only changed plans are reviewed again.
  spec.argv = {o_.self_exe, "review", phase_.abs.string(), "--json", "--changed"};
  spec.cwd = root_;
  spec.env = {{"YOLO_CORRELATION_ID", cid_}, {"NO_COLOR", "1"}};
  spec.timeout_ms = 0;  // the review bounds each agent with its own timeout
  SpawnResult r =
      o_.json ? run_process(spec) : run_review_child(spec, "Review gate: reviewing " + phase_.rel, out::live_enabled());
  std::string verdict;
  if (r.outcome == SpawnResult::Outcome::Exited) {
    if (r.exit_code == 0)
      verdict = "approve";
    else if (r.exit_code == 2)
      verdict = "conditional";
    else if (r.exit_code == 1)
      verdict = "reject";
  }
  if (verdict.empty()) {
    std::string why = "the review gate could not run (`yolo review` " + r.describe() + ")";
    emit("review_gate", {{"status", "error"}, {"reason", why}, {"stderr", text::tail_lines(r.err, 20)}}, Sym::Fail,
         why);
    std::string tail = text::tail_lines(r.err, 20);
    for (const auto& l : text::lines(tail)) note(std::string(l));
    set_halted(why);
    return finish(kExecHalted, "halted", "Halted: " + why);
  }
  json detail = review::parse_review_output(r.out).to_json();
  if (verdict == "reject") {
    emit("review_gate", {{"status", "rejected"}, {"verdict", verdict}, {"review", detail}}, Sym::Fail,
         "Review gate: rejected: no plan of this phase executes");
    if (!o_.json)
      for (const auto& l : rejected_plans_report(detail)) out::line("    " + l);
    auto paths = rejected_plan_paths(detail);
    next_ = paths.empty() ? "edit the rejected plan, then `yolo execute`"
                          : "edit " + paths.front() +
                                (paths.size() > 1 ? " (and " + std::to_string(paths.size() - 1) + " more)" : "") +
                                ", then `yolo execute`";
    set_halted("review gate rejected the phase");
    return finish(kExecHalted, "halted", "Halted: the review gate rejected the phase (see `yolo status`)");
  }
  auto up = state::update(root_, [&](json& doc, std::string&) {
    execution::mark_step(doc, "step_2b");
    return true;
  });
  if (!up.ok()) return finish(kExecHalted, "error", up.error);
  emit("review_gate", {{"status", "passed"}, {"verdict", verdict}, {"review", detail}},
       verdict == "approve" ? Sym::Ok : Sym::Warn, "Review gate: " + verdict);
  note_review_outcomes(detail);
  return -1;
}

// One line per reviewed plan for people: its verdict, how many cycles the loop took (a
// reject revised by the architect shows here), and what decided it.
void Run::note_review_outcomes(const json& detail) {
  if (o_.json) return;  // the review_gate event carries the same detail
  for (const auto& j : detail) {
    if (!review::ReviewReport::is_review(j)) continue;
    std::string v = j.value("verdict", "?");
    Sym s = v == "approve" ? Sym::Ok : v == "conditional" ? Sym::Warn : Sym::Fail;
    long long cycles = j.contains("cycles") && j["cycles"].is_number_integer() ? j["cycles"].get<long long>() : 1;
    std::string line = out::sym(s) + " " + text::sanitize_for_terminal(j.value("plan_id", "?")) + " " + v;
    if (cycles > 1) line += " after " + std::to_string(cycles) + " cycles (the architect revised it)";
    std::string src = j.value("source", "");
    if (src == "reviewer")
      line += " (reviewer)";
    else if (src == "fallback")
      line += " (reviewer unavailable: Stage 1 verdict)";
    else if (src == "parse_failure")
      line += " (reviewer output unparseable: failed closed)";
    else if (src == "stage1_reject")
      line += " (Stage 1)";
    out::line("    " + line);
  }
}

// ---- gates --------------------------------------------------------------------------

void Run::pause_for(const json& g) {
  std::string type = str(g, "gate_type");
  std::string label(gates::label_of(type));
  std::string path = str(g, "plan_path");
  std::string id = str(g, "id");
  emit("gate_paused", {{"gate_id", id}, {"gate_type", type}, {"plan_path", path}, {"last_error", str(g, "last_error")}},
       Sym::Pause, label + " gate: Awaiting human approval for " + path + ". Execution paused.");
  if (!str(g, "last_error").empty())
    note("the approver failed: " + str(g, "last_error") + " (`yolo approve` retries it)");
  if (!id.empty()) note("approve: yolo approve " + id + " --by NAME    reject: yolo reject " + id + " --feedback TEXT");
  if (!id.empty())
    next_ =
        "`yolo approve " + id + "` in a terminal (or `yolo reject " + id + " --feedback TEXT`), then `yolo execute`";
}

GateOutcome Run::ensure_gate(gates::GateType type, const std::string& rel, const std::string& reason,
                             std::optional<int> wave, const std::vector<std::string>& files) {
  const gates::Now now = gates::now_of(root_);
  std::string tname(gates::to_string(type));
  std::string label(gates::label(type));
  bool acted = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto snap = state::load(root_);
    if (!snap.ok()) {
      stop(kExecHalted, "error", snap.error);
      return GateOutcome::Halted;
    }
    std::string err;
    std::string digest = gates::file_digest(root_, rel, err);
    gates::Need need = gates::ensure(snap.doc, type, rel, now, files);
    if (digest.empty() && need.step != gates::Step::Pause) {  // an open gate waits first
      std::string why = "the " + tname + " gate needs " + rel + ": " + err;
      emit("gate_error", {{"gate_type", tname}, {"plan_path", rel}, {"reason", why}}, Sym::Fail,
           label + " gate: " + why);
      stop(kExecHalted, "halted", "Halted: " + why);
      return GateOutcome::Halted;
    }
    const gates::ApprovalStatus& st = need.status;
    switch (need.step) {
      case gates::Step::Proceed: {
        std::string by = str(st.gate, "approved_by");
        emit("gate_passed",
             {{"gate_type", tname}, {"plan_path", rel}, {"gate_id", str(st.gate, "id")}, {"approved_by", by}}, Sym::Ok,
             label + " gate: " + (acted ? "cleared" : "approved") + (by.empty() ? "" : " (by " + by + ")") + " for " +
                 rel);
        return GateOutcome::Passed;
      }
      case gates::Step::Pause:
        pause_for(need.gate);
        return GateOutcome::Paused;
      case gates::Step::Halt: {
        std::string fb = str(st.gate, "feedback");
        emit("gate_rejected",
             {{"gate_type", tname}, {"plan_path", rel}, {"gate_id", str(st.gate, "id")}, {"feedback", fb}}, Sym::Fail,
             label + " gate: rejected: " + fb);
        note("revise " + rel + " and request approval again: yolo request-approval --plan-path " + rel +
             " --gate-type " + tname);
        set_halted(st.message);
        stop(kExecHalted, "halted", "Halted: " + st.message);
        return GateOutcome::Halted;
      }
      case gates::Step::Reopen: {
        emit("approval_invalidated", {{"gate_type", tname}, {"plan_path", rel}, {"reason", st.message}}, Sym::Warn,
             st.message);
        std::vector<events::Event> evs;
        std::string gid;
        auto up = state::update(root_, [&](json& d, std::string& e) {
          gates::Transition t = gates::reopen_if_stale(d, type, rel, now, files);
          if (!t.ok()) {
            e = t.error;
            return false;
          }
          evs = t.events;
          gid = str(t.gate, "id");
          return t.changed;
        });
        if (!up.ok()) {
          stop(kExecHalted, "error", up.error);
          return GateOutcome::Halted;
        }
        gates::log_events(root_, evs);
        if (!gid.empty()) {
          gates::GateRun a = gates::run_approver(root_, cfg_, gid, &command_approver());
          if (!a.ok()) note("approver: " + a.error);
        }
        acted = true;
        continue;
      }
      case gates::Step::Request: {
        gates::RequestInput in;
        in.type = type;
        in.plan_path = rel;
        in.reason = reason;
        in.wave = wave;
        in.files = files;
        emit("gate_requested", {{"gate_type", tname}, {"plan_path", rel}, {"reason", reason}}, Sym::Diamond,
             label + " gate: opening on " + rel + " (approver: " + approver_note_for(type) + ")");
        gates::GateRun r = gates::request_gate(root_, cfg_, in, &command_approver());
        for (const auto& m : r.messages)
          if (m.kind == gates::Outcome::Warning) note(m.text);
        if (!r.ok()) {
          emit("gate_error", {{"gate_type", tname}, {"plan_path", rel}, {"reason", r.error}}, Sym::Fail,
               label + " gate: " + r.error);
          stop(kExecHalted, "halted", "Halted: " + r.error);
          return GateOutcome::Halted;
        }
        acted = true;
        continue;
      }
    }
  }
  stop(kExecPaused, "paused", label + " gate: still not passed");
  return GateOutcome::Paused;
}

bool executor_configured(const Config& c) { return !c.executor.argv.empty(); }

// ---- waves ----------------------------------------------------------------------------

int Run::waves() {
  for (const auto& e : entries_)
    if (e.wave >= 1 && (first_wave_ == 0 || e.wave < first_wave_)) first_wave_ = e.wave;
  {
    const auto& snap = state_now();
    nodes_ = execution::nodes(snap.ok() ? snap.doc : json::object(), entries_);
    for (size_t i = 0; i < entries_.size(); ++i) wave_members_[entries_[i].wave].push_back(i);
  }
  uv_loop_init(&loop_);
  uv_timer_init(&loop_, &flush_timer_);
  flush_timer_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&flush_timer_));  // the final flush_plans() writes what is left
  loop_started_ = true;
  uv_signal_init(&loop_, &sigint_);
  uv_signal_init(&loop_, &sigterm_);
  sigint_.data = sigterm_.data = this;
  auto on_signal = [](uv_signal_t* h, int signum) { static_cast<Run*>(h->data)->interrupt(signum); };
  uv_signal_start(&sigint_, on_signal, SIGINT);
  uv_signal_start(&sigterm_, on_signal, SIGTERM);
  uv_unref(reinterpret_cast<uv_handle_t*>(&sigint_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&sigterm_));
  // On a terminal: a live line with the running executors and the phase's progress.
  bool live = !o_.json && out::live_enabled();
  if (live) {
    uv_timer_init(&loop_, &live_timer_);
    live_timer_.data = this;
    uv_timer_start(
        &live_timer_, [](uv_timer_t* t) { static_cast<Run*>(t->data)->draw_live(); }, 250, 250);
    uv_unref(reinterpret_cast<uv_handle_t*>(&live_timer_));
  }
  schedule();
  uv_run(&loop_, UV_RUN_DEFAULT);
  if (live) {
    uv_timer_stop(&live_timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&live_timer_), nullptr);
    out::set_live("");
  }
  uv_signal_stop(&sigint_);
  uv_signal_stop(&sigterm_);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  running_.clear();
  flush_plans();
  loop_started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_timer_), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  if (final_code_ < 0) return finish(kExecHalted, "halted", "stopped with nothing left to run");
  return finish(final_code_, final_result_, final_message_);
}

const state::LoadResult& Run::state_now() {
  auto id_of = [&](FileId& id) {
    struct stat st {};
    if (::stat(state::state_path(root_).c_str(), &st) != 0) return false;
    id = FileId{st.st_dev, st.st_ino, st.st_size,
                static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
                static_cast<long long>(st.st_ctim.tv_sec) * 1000000000LL + st.st_ctim.tv_nsec};
    return true;
  };
  FileId before;
  if (state_id_ && id_of(before) && before == *state_id_ && state_cache_.ok()) return state_cache_;
  bool known = id_of(before);
  state_cache_ = state::load(root_);
  FileId after;
  // Kept only when the file did not change while it was read (else: read again next time).
  if (known && id_of(after) && after == before && state_cache_.ok())
    state_id_ = after;
  else
    state_id_.reset();
  return state_cache_;
}

void Run::queue_plan(size_t i, PlanUpdate u) {
  if (auto it = pending_.find(i); it != pending_.end() && !u.started_at) u.started_at = it->second.started_at;
  pending_[i] = std::move(u);
  if (!loop_started_) {
    flush_plans();
    return;
  }
  if (flush_timer_armed_) return;
  uint64_t since = uv_hrtime() - last_flush_ns_;
  uint64_t gap = std::max<uint64_t>(100'000'000ULL, 4 * last_flush_cost_ns_);
  uint64_t delay_ms = since >= gap ? 0 : (gap - since) / 1'000'000ULL;
  flush_timer_armed_ = true;
  uv_timer_start(
      &flush_timer_, [](uv_timer_t* t) { static_cast<Run*>(t->data)->flush_plans(); }, delay_ms, 0);
}

void Run::flush_plans() {
  if (flush_timer_armed_) {
    uv_timer_stop(&flush_timer_);
    flush_timer_armed_ = false;
  }
  if (pending_.empty()) return;
  uint64_t t = uv_hrtime();
  auto up = state::update(root_, [&](json& doc, std::string&) {
    std::unordered_map<std::string, json*> by_id;
    if (doc.contains("plans") && doc["plans"].is_array())
      for (auto& p : doc["plans"]) by_id.emplace(str(p, "id"), &p);  // the first of an id, as find_plan
    for (const auto& [i, u] : pending_) {
      auto f = by_id.find(entries_[i].id);
      if (f == by_id.end()) continue;
      json& p = *f->second;
      p["status"] = u.status;
      if (u.started_at) p["started_at"] = *u.started_at;
      p["completed_at"] = u.completed_at;
      if (!u.error.empty())
        p["error"] = u.error;
      else
        p.erase("error");
      if (!u.findings.is_null())
        p["findings"] = u.findings;
      else
        p.erase("findings");
      if (u.status != "running") p.erase("executor");  // ended: its executor's pid/pgid/start no longer matter
    }
    execution::update_wave(doc);
    return true;
  });
  pending_.clear();
  last_flush_ns_ = uv_hrtime();
  last_flush_cost_ns_ = last_flush_ns_ - t;
  if (!up.ok()) stop(kExecHalted, "error", up.error);
}

void Run::interrupt(int signum) {
  if (interrupted_) return;
  interrupted_ = true;
  stop(kExecHalted, "interrupted",
       "Interrupted (signal " + std::to_string(signum) +
           "): running executors were stopped; their plans are pending again");
  for (auto& [i, p] : running_) p->cancel();
}

void Run::schedule() {
  if (stopping_) return;
  const auto& snap = state_now();
  if (!snap.ok()) {
    stop(kExecHalted, "error", snap.error);
    return;
  }
  const json& doc = snap.doc;
  gates::RunState rs = gates::run_state(doc);
  if (rs == gates::RunState::Halted) {
    std::string msg = "the run is halted";
    if (doc.contains("gates") && doc["gates"].is_array() && !doc["gates"].empty() &&
        str(doc["gates"].back(), "status") == "REJECTED") {
      const json& g = doc["gates"].back();
      msg = str(g, "gate_type") + " gate " + str(g, "id") + " for " + str(g, "plan_path") +
            " was rejected: " + str(g, "feedback");
      emit("gate_rejected",
           {{"gate_id", str(g, "id")}, {"gate_type", str(g, "gate_type")}, {"feedback", str(g, "feedback")}}, Sym::Fail,
           "Halted: " + msg);
      note("revise and request approval again: yolo request-approval --plan-path " + str(g, "plan_path") +
           " --gate-type " + str(g, "gate_type"));
    }
    stop(kExecHalted, "halted", "Halted: " + msg);
    return;
  }
  bool executor = executor_configured(cfg_);
  waves::Options wo;
  wo.max_parallel = executor ? cfg_.max_parallel : static_cast<int>(entries_.size()) + 1;
  wo.frozen = rs == gates::RunState::Frozen || !gates::waves_may_advance(doc);
  wo.only = o_.only_plan;
  waves::Decision d = waves::next(nodes_, wo);
  if (d.outcome != waves::Outcome::Start && d.outcome != waves::Outcome::Waiting) flush_plans();
  switch (d.outcome) {
    case waves::Outcome::Waiting:
      return;
    case waves::Outcome::Complete: {
      if (!running_.empty()) return;
      waves::Options all = wo;
      all.only.clear();
      all.frozen = false;
      bool phase_done = waves::next(nodes_, all).outcome == waves::Outcome::Complete;
      if (!phase_done) {
        emit("plan_complete", {{"plan", o_.only_plan}}, Sym::Ok, "Plan " + o_.only_plan + " is complete");
        next_ = "`yolo execute` runs the rest of the phase";
        stop(kExecComplete, "complete", "Plan " + o_.only_plan + " complete (--plan); the rest of the phase is not");
        return;
      }
      std::string now = now_iso8601();
      auto up = state::update(root_, [&](json& s, std::string&) {
        execution::complete_phase(s, now);
        return true;
      });
      if (!up.ok()) {
        stop(kExecHalted, "error", up.error);
        return;
      }
      log("phase_end", "",
          {{"status", "complete"}, {"plans", entries_.size()}, {"elapsed_ms", static_cast<long long>(elapsed_ms())}});
      emit("phase_end", {{"status", "complete"}, {"plans", entries_.size()}}, Sym::Ok,
           "Phase " + phase_.folder + " complete: " + std::to_string(entries_.size()) + "/" +
               std::to_string(entries_.size()) + " plans");
      stop(kExecComplete, "complete", "");
      return;
    }
    case waves::Outcome::Frozen: {
      if (!running_.empty()) {
        if (!frozen_noted_) {
          frozen_noted_ = true;
          emit("frozen", {{"running", running_.size()}}, Sym::Pause,
               "A gate is open: no new plan starts; waiting for the " + std::to_string(running_.size()) +
                   " running plan(s)");
        }
        return;
      }
      if (const json* g = gates::open_gate(doc))
        pause_for(*g);
      else if (doc.contains("approval") && doc["approval"].is_object())
        pause_for(doc["approval"]);
      stop(kExecPaused, "paused", "Paused at a gate: after `yolo approve`, run `yolo execute` again to continue");
      return;
    }
    case waves::Outcome::Failed:
    case waves::Outcome::Blocked: {
      if (!running_.empty()) return;
      set_halted(d.reason);
      if (o_.json) emit("phase_end", {{"status", "halted"}, {"reason", d.reason}}, Sym::Fail, "Halted: " + d.reason);
      stop(kExecHalted, "halted", "Phase " + phase_.folder + " halted: " + d.reason);
      return;
    }
    case waves::Outcome::Start:
      break;
  }
  long long w = d.wave;
  if (cfg_.wave_approval && w > first_wave_ && !wave_gate_passed_.count(w)) {
    if (!running_.empty()) return;
    std::string rel, ids;
    std::vector<std::string> files;  // the wave gate covers every plan of the wave
    for (const auto& e : entries_)
      if (e.wave == w) {
        if (rel.empty()) rel = e.path;
        files.push_back(e.path);
        ids += (ids.empty() ? "" : ", ") + e.id;
      }
    std::string reason = "wave " + std::to_string(w) + " of phase " + phase_.folder + ": plans " + ids;
    flush_plans();
    GateOutcome g = ensure_gate(gates::GateType::Wave, rel, reason, static_cast<int>(w), files);
    if (g == GateOutcome::Passed) {
      wave_gate_passed_.insert(w);
      schedule();
    } else if (g == GateOutcome::Paused) {
      stop(kExecPaused, "paused", "Paused before wave " + std::to_string(w) + ": its wave gate awaits approval");
    }
    return;
  }
  if (!waves_started_.count(w)) {
    waves_started_.insert(w);
    json ids = json::array();
    std::string names;
    for (const auto& e : entries_)
      if (e.wave == w) {
        ids.push_back(e.id);
        names += (names.empty() ? "" : ", ") + e.id;
      }
    log("wave_start", "", {{"wave", w}, {"plans", ids}});
    emit("wave_start", {{"wave", w}, {"total_waves", d.total_waves}, {"plans", ids}}, Sym::Diamond,
         "Wave " + std::to_string(w) + "/" + std::to_string(d.total_waves) + ": " + names);
  }
  if (executor)
    start_plans(d.start, w);
  else
    mark_ready(d.start);
}

void Run::mark_ready(const std::vector<size_t>& idx) {
  auto up = state::update(root_, [&](json& doc, std::string&) {
    std::vector<std::string> ids;
    for (size_t i : idx) ids.push_back(entries_[i].id);
    execution::mark_ready(doc, ids);
    return true;
  });
  if (!up.ok()) {
    stop(kExecHalted, "error", up.error);
    return;
  }
  for (size_t i : idx) {
    const auto& e = entries_[i];
    std::string sp = summary_rel_for(root_, e.path);
    emit("plan_ready", {{"plan", e.id}, {"wave", e.wave}, {"plan_path", e.path}, {"summary_path", sp}}, Sym::Diamond,
         "Plan " + e.id + " ready: waiting for " + sp);
  }
  stop(kExecWaitingSummary, "waiting_for_summary",
       "Waiting for SUMMARY: no executor is configured; " + std::to_string(idx.size()) +
           " plan(s) are ready for an agent or a person. Run `yolo execute` again once their SUMMARY files exist.");
}

void Run::start_plans(const std::vector<size_t>& idx, long long wave) {
  std::string now = now_iso8601();
  // A gate opened by another process since schedule() read the state: nothing starts.
  const auto& snap = state_now();
  if (!snap.ok()) {
    stop(kExecHalted, "error", snap.error);
    return;
  }
  if (gates::run_state(snap.doc) != gates::RunState::Running || !gates::waves_may_advance(snap.doc)) {
    schedule();  // sees the gate now
    return;
  }
  for (size_t i : idx) {
    nodes_[i].status = waves::PlanStatus::Running;
    queue_plan(i, PlanUpdate{"running", now, nullptr, "", nullptr});
  }
  json spawned = json::object();  // plan id -> who runs it, for a later run to find (kill -9 of this one)
  for (size_t i : idx) {
    const auto& e = entries_[i];
    std::map<std::string, std::string> vars = {{"plan_path", e.path},
                                               {"plan_id", e.id},
                                               {"wave", std::to_string(wave)},
                                               {"phase_dir", phase_.rel},
                                               {"summary_path", summary_rel_for(root_, e.path)}};
    SpawnSpec spec;
    spec.argv = expand_argv(cfg_.executor.argv, vars);
    spec.cwd = root_;
    spec.env = {{"YOLO_CORRELATION_ID", cid_},       {"YOLO_PLAN_ID", e.id},
                {"YOLO_PHASE_DIR", phase_.rel},      {"YOLO_PLAN_PATH", e.path},
                {"YOLO_WAVE", std::to_string(wave)}, {"YOLO_SUMMARY_PATH", summary_rel_for(root_, e.path)}};
    spec.timeout_ms = cfg_.timeout_for(cfg_.executor);
    started_at_[i] = uv_hrtime();
    argv_[i] = spec.argv;
    running_[i] = Process::start(&loop_, std::move(spec), [this, i](SpawnResult r) { on_done(i, std::move(r)); });
    int pid = running_[i]->pid();
    if (pid > 0) spawned[e.id] = executor_record(pid);
    log("plan_start", e.plan, {{"plan_id", e.id}, {"wave", wave}, {"pid", pid}});
    emit("plan_start", {{"plan", e.id}, {"wave", wave}, {"title", e.title}, {"pid", pid}, {"running", running_.size()}},
         Sym::Diamond, "Plan " + e.id + " started: " + e.title + "  (" + std::to_string(running_.size()) + " running)");
  }
  if (!spawned.empty()) {
    // The plans' `running` and who runs them are on disk before anything else happens: a
    // later execute (after a kill -9 of this one) must find both to end the executors.
    flush_plans();
    auto rec = state::update(root_, [&](json& doc, std::string&) {
      bool any = false;
      for (auto& [id, r] : spawned.items())
        if (json* p = execution::find_plan(doc, id); p && str(*p, "status") == "running") {
          (*p)["executor"] = r;
          any = true;
        }
      return any;
    });
    if (!rec.ok()) note("could not record the executors' pids: " + rec.error);
  }
}

// A plan left `running` by an execute that died (kill -9): if its executor still lives (the
// same pid, boot and start time), end its process group before the plan starts again, so
// no plan ever runs twice at once.
void Run::end_leftover_executors(const json& doc) {
  if (!doc.contains("plans") || !doc["plans"].is_array()) return;
  std::string boot = boot_id();
  for (const auto& p : doc["plans"]) {
    if (str(p, "status") != "running" || !p.contains("executor") || !p["executor"].is_object()) continue;
    const json& r = p["executor"];
    int pid = r.value("pid", 0), pgid = r.value("pgid", 0);
    unsigned long long ticks = r.value("start_ticks", 0ULL);
    if (pid <= 0 || ticks == 0 || r.value("boot_id", std::string()) != boot || process_start_ticks(pid) != ticks)
      continue;
    emit("leftover_executor", {{"plan", str(p, "id")}, {"pid", pid}, {"pgid", pgid}}, Sym::Warn,
         "Plan " + str(p, "id") + ": its executor (pid " + std::to_string(pid) +
             ") from an execute that stopped without cleaning up still runs; ending it before the plan starts again");
    auto alive = [&] { return process_start_ticks(pid) == ticks; };
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGTERM);
    ::kill(pid, SIGTERM);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(50 * 1000);  // 5 s to finish cleanly
    if (pgid > 1 && pgid == pid) ::kill(-pgid, SIGKILL);
    if (alive()) ::kill(pid, SIGKILL);
    for (int k = 0; k < 100 && alive(); ++k) ::usleep(20 * 1000);
  }
}

void Run::on_done(size_t i, SpawnResult r) {
  // Drop the Process now, inside its own done callback: its handles are still closing, so
  // it detaches cleanly (destroying it after the loop has closed them would touch freed memory).
  if (auto it = running_.find(i); it != running_.end()) running_.erase(it);
  const PlanEntry& e = entries_[i];
  std::string log_file = write_agent_log(root_, phase_.rel, e.id, "executor", 0, argv_[i], r);
  if (!log_file.empty()) note("output: " + log_file + "  (yolo logs " + e.id + ")", true);
  std::string sp = summary_rel_for(root_, e.path);
  std::string status, error;
  json findings = json::array();
  bool summary_failed = false;
  if (interrupted_) {
    status = "pending";
    error = "interrupted";
  } else if (!r.ok()) {
    status = "failed";
    error = "the executor " + r.describe();
  } else {
    json f = json::array();
    switch (check_summary(e, f)) {
      case SummaryState::Passed:
        status = "complete";
        completed_.insert(i);
        break;
      case SummaryState::Missing:
        status = "failed";
        error = "the executor exited 0 but wrote no SUMMARY (" + sp + ")";
        break;
      case SummaryState::Failed:
        status = "failed";
        error = "its SUMMARY fails the SUMMARY gate (" + sp + ")";
        findings = f;
        summary_failed = true;
        break;
    }
  }
  std::string now = now_iso8601();
  nodes_[i].status = waves::parse_status(status).value_or(waves::PlanStatus::Pending);
  queue_plan(i, PlanUpdate{status, std::nullopt, status == "pending" ? json(nullptr) : json(now), error,
                           status == "failed" ? findings : json(nullptr)});
  long long ms = static_cast<long long>(r.elapsed_ms);
  if (summary_failed) {
    int high = 0;
    for (const auto& f : findings) high += str(f, "severity") == "high";
    log("summary_claims_failed", e.plan,
        {{"plan_id", e.id}, {"summary_path", sp}, {"findings", findings.size()}, {"high", high}});
  }
  log("plan_end", e.plan, {{"plan_id", e.id}, {"status", status}, {"elapsed_ms", ms}, {"outcome", r.describe()}});
  json data = {{"plan", e.id}, {"status", status}, {"wave", e.wave}, {"elapsed_ms", ms}};
  if (!error.empty()) data["error"] = error;
  if (!findings.empty()) data["findings"] = findings;
  if (status == "complete") {
    emit("plan_end", data, Sym::Ok, "Plan " + e.id + " complete (" + fmt_secs(r.elapsed_ms) + ")");
  } else if (status == "pending") {
    emit("plan_end", data, Sym::Warn, "Plan " + e.id + " stopped (interrupted)");
  } else {
    data["stderr_tail"] = text::tail_lines(r.err, 10);
    emit("plan_end", data, Sym::Fail, "Plan " + e.id + " failed: " + error);
    size_t shown = 0;
    for (const auto& f : findings) {
      if (shown++ == 5) {
        note("... " + std::to_string(findings.size() - 5) + " more (yolo status --json)");
        break;
      }
      note("[" + str(f, "severity") + "] " + str(f, "check") + ": " + str(f, "issue"));
    }
    if (!r.ok()) {
      std::string tail = text::tail_lines(r.err, 5);
      for (const auto& l : text::lines(tail))
        if (!text::trim(l).empty()) note(std::string(l), true);
    }
  }
  // wave_end once every plan of the wave is complete or failed.
  if (!waves_ended_.count(e.wave)) {
    bool all_done = true, any_failed = false;
    for (size_t x : wave_members_[e.wave]) {
      auto s = nodes_[x].status;
      if (s != waves::PlanStatus::Complete && s != waves::PlanStatus::Failed) all_done = false;
      if (s == waves::PlanStatus::Failed) any_failed = true;
    }
    if (all_done) {
      waves_ended_.insert(e.wave);
      std::string ws = any_failed ? "failed" : "complete";
      log("wave_end", "", {{"wave", e.wave}, {"status", ws}});
      emit("wave_end", {{"wave", e.wave}, {"status", ws}}, any_failed ? Sym::Fail : Sym::Ok,
           "Wave " + std::to_string(e.wave) + " " + ws);
    }
  }
  schedule();
}

// ---- the whole run ----------------------------------------------------------------------

int Run::run() {
  // One execute per project: a second one would start the same plans again.
  std::string lock_err;
  if (!lock_.acquire(root_, "execute", lock_err))
    return finish(kExecHalted, "locked",
                  lock_err + "; wait for it to finish, or stop it (kill " +
                      (lock_.holder_pid() > 0 ? std::to_string(lock_.holder_pid()) : std::string("<pid>")) + ")");
  auto c = load_config_reported(root_);
  if (!c.ok()) return finish(kExecHalted, "error", c.error);
  cfg_ = c.config;
  mode_ = mode_from_config(cfg_.summary_checks);
  auto snap = state::load(root_);
  if (!snap.ok()) {
    std::string msg = snap.error;
    if (!snap.kept_copy.empty()) msg += " (a copy was kept at " + snap.kept_copy + ")";
    return finish(kExecHalted, "error", msg);
  }
  if (int rc = choose_phase(); rc >= 0) return rc;
  load_plans();
  if (!o_.only_plan.empty()) {  // --plan naming no plan of the phase: a usage error, nothing written
    std::vector<waves::PlanNode> nodes;
    for (const auto& e : entries_) nodes.push_back({e.id, e.plan, e.wave, e.depends_on, waves::PlanStatus::Pending});
    if (waves::resolve_dependency(nodes, o_.only_plan) < 0) {
      std::string ids;
      for (const auto& e : entries_) ids += (ids.empty() ? "" : ", ") + e.id;
      next_ = "`yolo execute --plan ID` with one of: " + (ids.empty() ? std::string("(no plans)") : ids);
      return finish(kExecUsage, "error", "no plan '" + o_.only_plan + "' in " + phase_.rel);
    }
  }
  if (o_.dry_run) return dry_run();
  if (int rc = check_agents(); rc >= 0) return rc;
  end_leftover_executors(snap.doc);
  if (int rc = step2(); rc >= 0) return rc;
  snap = state::load(root_);
  if (snap.ok() && str(snap.doc, "status") == "complete") {
    emit("phase_end", {{"status", "complete"}, {"plans", entries_.size()}}, Sym::Ok,
         "Phase " + phase_.folder + " complete: every plan has a SUMMARY that passes the gate");
    return finish(kExecComplete, "complete", "");
  }
  if (int rc = precheck(); rc >= 0) return rc;
  if (int rc = review_gate(); rc >= 0) return rc;
  std::string err;
  std::string roadmap = gates::normalize_plan_path(root_, kRoadmap, err);
  if (roadmap.empty()) roadmap = kRoadmap;
  GateOutcome g = ensure_gate(gates::GateType::Vision, roadmap,
                              "yolo execute: the vision gate on the roadmap before any wave", std::nullopt);
  if (g == GateOutcome::Paused)
    return finish(kExecPaused, "paused", "Paused at the vision gate: after `yolo approve`, run `yolo execute` again");
  if (g == GateOutcome::Halted)
    return finish(final_code_ < 0 ? kExecHalted : final_code_, final_result_, final_message_);
  auto up = state::update(root_, [&](json& doc, std::string&) {
    execution::mark_step(doc, "step_2c");
    return true;
  });
  if (!up.ok()) return finish(kExecHalted, "error", up.error);
  return waves();
}

}  // namespace

int execute(const ExecuteOptions& opts) {
  Run run(opts);
  return run.run();
}

}  // namespace yolo::runner
