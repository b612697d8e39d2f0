#include "runner/watcher.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "protocol/clock.h"
#include "protocol/config.h"
#include "protocol/execution.h"
#include "protocol/file_lock.h"
#include "protocol/fs.h"
#include "protocol/gates.h"
#include "protocol/plan.h"
#include "protocol/reconcile.h"
#include "protocol/review_ledger.h"
#include "protocol/review_loop.h"
#include "protocol/review_report.h"
#include "protocol/reviewed.h"
#include "protocol/sha256.h"
#include "protocol/state.h"
#include "protocol/text.h"
#include "protocol/watch_paths.h"
#include "runner/dir_watch.h"
#include "runner/instance_lock.h"
#include "runner/output.h"
#include "runner/review_gate.h"
#include "runner/subprocess.h"
#include "runner/config_report.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;
using watch::PathKind;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string fmt_ms(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
  return b;
}

// Content hash of a file (sha256 hex), or empty when it cannot be read.
std::string hash_file(const stdfs::path& p) { return review::file_hash(p); }

class Watcher {
 public:
  explicit Watcher(const WatchOptions& o) : o_(o), planning_(o.root / ".yolo-planning") {}

  int run() {
    std::string err;
    std::error_code pec;
    if (!stdfs::is_directory(planning_, pec)) {
      out::err("✗ no .yolo-planning folder in " + o_.root.string());
      return 1;
    }
    if (!acquire_instance_lock(err)) {
      out::err("✗ " + err);
      return 1;
    }
    auto cfg = load_config_reported(o_.root);
    if (!cfg.ok()) out::err("⚠ " + text::sanitize_for_terminal(cfg.error) + " (using defaults)");
    config_ = cfg.config;
    debounce_ms_ = o_.debounce_ms >= 0 ? o_.debounce_ms : config_.debounce_ms;
    if (debounce_ms_ < 0) debounce_ms_ = 0;

    uv_loop_init(&loop_);
    uv_timer_init(&loop_, &debounce_);
    debounce_.data = this;
    uv_timer_init(&loop_, &force_exit_);
    force_exit_.data = this;
    for (auto* s : {&sigint_, &sigterm_}) {
      uv_signal_init(&loop_, s);
      s->data = this;
    }
    uv_signal_start(
        &sigint_, [](uv_signal_t* s, int sig) { static_cast<Watcher*>(s->data)->shutdown(sig); }, SIGINT);
    uv_signal_start(
        &sigterm_, [](uv_signal_t* s, int sig) { static_cast<Watcher*>(s->data)->shutdown(sig); }, SIGTERM);

    auto t0 = Clock::now();
    dir_watch_ = std::make_unique<DirWatch>(
        &loop_, [this](const DirWatch::Change& c) { on_change(c); },
        [this](const std::string& why) { request_rescan(why); });
    dir_watch_->skip_name = [](const std::string& n) { return n == ".events" || n == ".git" || n == "node_modules"; };
    dir_watch_->on_error = [this](const stdfs::path& p, const std::error_code& ec) { walk_error(p, ec); };
    if (std::string e = dir_watch_->start(); !e.empty()) {
      out::err("✗ cannot watch: " + e);
      return 1;
    }
    dir_watch_->add_single(o_.root);  // to see .yolo-planning itself deleted and recreated
    dir_watch_->add_tree(planning_);
    load_state(/*announce=*/false);
    load_all_ledgers();
    roadmap_hash_ = hash_file(planning_ / "ROADMAP.md");
    full_rescan_ = true;
    reconcile(/*initial=*/true);
    emit(out::Sym::Diamond,
         "watching " + planning_.string() + ": " + std::to_string(dir_watch_->watch_count()) + " folders, " +
             std::to_string(plan_hash_.size()) + " plans (ready in " + fmt_ms(ms_since(t0)) + ", debounce " +
             std::to_string(debounce_ms_) + " ms)",
         {{"event", "ready"},
          {"root", o_.root.string()},
          {"folders", dir_watch_->watch_count()},
          {"plans", plan_hash_.size()},
          {"ms", ms_since(t0)},
          {"debounce_ms", debounce_ms_},
          {"pid", ::getpid()}});
    started_ = true;
    start_warming();
    if (o_.drive_execution) consider_execution(/*force=*/true);

    uv_run(&loop_, UV_RUN_DEFAULT);
    // Close what is left and let libuv release it.
    uv_walk(
        &loop_,
        [](uv_handle_t* h, void*) {
          if (!uv_is_closing(h)) uv_close(h, nullptr);
        },
        nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
    emit(out::Sym::Skip, "watch stopped", {{"event", "stopped"}});
    return 0;
  }

 private:
  // --- instance lock -------------------------------------------------------
  bool acquire_instance_lock(std::string& err) {
    // Survives .yolo-planning being deleted and recreated (runner/instance_lock.h).
    return instance_lock_.acquire(o_.root, "watch", err);
  }

  // --- output --------------------------------------------------------------
  // One reaction: a line for people (the symbol, then `msg` with control characters made
  // visible: plan ids, paths and children's stderr come from files anyone can write), or
  // the JSON line.
  void emit(out::Sym s, const std::string& msg, json j) {
    if (o_.json) {
      j["ts"] = now_iso8601();
      out::json_line(j);
    } else {
      out::line(out::sym(s) + " " + text::sanitize_for_terminal(msg));
    }
  }

  // --- events --------------------------------------------------------------
  void on_change(const DirWatch::Change& c) {
    if (stopping_) return;
    if (c.path.parent_path() == o_.root) {  // the project root: only .yolo-planning matters
      if (c.path.filename() != ".yolo-planning") return;
      if (!c.gone) dir_watch_->add_tree(planning_);
      full_rescan_ = true;
      schedule();
      return;
    }
    if (c.path == planning_) {  // deleted or moved itself
      full_rescan_ = true;
      schedule();
      return;
    }
    switch (watch::classify(planning_, c.path)) {
      case PathKind::Ignored:
      case PathKind::Other:
        return;
      case PathKind::Plan:
      case PathKind::Summary:
        dirty_files_.insert(c.path);
        break;
      case PathKind::PhaseDir:
        dirty_dirs_.insert(c.path);
        break;
      case PathKind::PhasesRoot:
        full_rescan_ = true;
        break;
      case PathKind::State:
        state_dirty_ = true;
        break;
      case PathKind::Ledger:
        dirty_ledgers_.insert(c.path);
        break;
      case PathKind::Roadmap:
        roadmap_dirty_ = true;
        break;
      case PathKind::Config:
        config_dirty_ = true;
        break;
    }
    schedule();
  }

  // A flood overflows the kernel's queue again and again: each rescan waits longer (doubling
  // up to 5 s) while overflows keep coming less than 2 s apart, so a flood cannot keep the
  // watcher rescanning back to back; a quiet spell resets it.
  void request_rescan(const std::string& why) {
    auto now = Clock::now();
    bool soon = last_rescan_request_ != Clock::time_point{} && now - last_rescan_request_ < std::chrono::seconds(2);
    last_rescan_request_ = now;
    rescan_backoff_ms_ = soon ? std::min<long long>(5000, std::max<long long>(100, rescan_backoff_ms_ * 2)) : 0;
    if (!full_rescan_)
      emit(out::Sym::Warn,
           "rescanning everything: " + why +
               (rescan_backoff_ms_ ? " (in " + std::to_string(rescan_backoff_ms_) + " ms)" : ""),
           {{"event", "rescan"}, {"reason", why}, {"backoff_ms", rescan_backoff_ms_}});
    full_rescan_ = true;
    schedule(rescan_backoff_ms_);
  }

  void schedule(long long at_least_ms = 0) {
    uv_timer_start(
        &debounce_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->reconcile(false); },
        static_cast<uint64_t>(std::max<long long>(debounce_ms_, at_least_ms)), 0);
  }

  // The folder git keeps this work tree's state in (.git, or the one a `.git` file names).
  stdfs::path git_dir() const {
    std::error_code ec;
    stdfs::path dot = o_.root / ".git";
    if (stdfs::is_directory(dot, ec)) return dot;
    auto r = fs::read_text(dot, 4096);
    if (!r.ok()) return {};
    std::string t(text::trim(r.content));
    if (!t.starts_with("gitdir:")) return {};
    stdfs::path g = std::string(text::trim(std::string_view(t).substr(7)));
    return g.is_absolute() ? g : o_.root / g;
  }

  // What git is in the middle of (files half applied), or empty.
  std::string git_busy() const {
    stdfs::path g = git_dir();
    if (g.empty()) return {};
    std::error_code ec;
    for (const auto& [f, what] :
         std::initializer_list<std::pair<const char*, const char*>>{{"rebase-merge", "a rebase"},
                                                                    {"rebase-apply", "a rebase or am"},
                                                                    {"MERGE_HEAD", "a merge"},
                                                                    {"CHERRY_PICK_HEAD", "a cherry-pick"},
                                                                    {"REVERT_HEAD", "a revert"},
                                                                    {"index.lock", "a git command (index.lock)"}})
      if (stdfs::exists(g / f, ec)) {
        // A lock left by a git that crashed does not hold the watcher forever.
        if (std::string_view(f) == "index.lock") {
          auto t = stdfs::last_write_time(g / f, ec);
          if (!ec && stdfs::file_time_type::clock::now() - t > std::chrono::seconds(60)) continue;
        }
        return what;
      }
    return {};
  }

  // --- reconcile -------------------------------------------------------------
  void reconcile(bool initial) {
    if (stopping_) return;
    // Mid-rebase, mid-merge, mid-checkout: plans are half applied. Wait (polling, .git is
    // not watched), then reconcile everything once.
    if (!initial) {
      if (std::string busy = git_busy(); !busy.empty()) {
        if (!git_waiting_)
          emit(out::Sym::Pause, "git is in the middle of " + busy + ": waiting for it to finish before reviewing",
               {{"event", "git_busy"}, {"operation", busy}});
        git_waiting_ = true;
        full_rescan_ = true;
        uv_timer_start(
            &debounce_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->reconcile(false); }, 200, 0);
        return;
      }
      if (git_waiting_) {
        git_waiting_ = false;
        emit(out::Sym::Ok, "git finished: reconciling once", {{"event", "git_done"}});
      }
    }
    if (config_dirty_) {
      config_dirty_ = false;
      auto cfg = load_config_reported(o_.root);
      if (cfg.ok())
        config_ = cfg.config;
      else
        emit(out::Sym::Warn, cfg.error, {{"event", "config_error"}, {"error", cfg.error}});
    }
    std::map<stdfs::path, std::vector<stdfs::path>> changed;  // phase dir -> changed plans
    bool summaries_changed = false;
    // What was last reviewed first: a plan is compared with its freshest record.
    if (full_rescan_) {
      dirty_ledgers_.clear();
      load_all_ledgers();
    }
    for (const auto& f : dirty_ledgers_) load_ledger(f);
    dirty_ledgers_.clear();
    if (full_rescan_) {
      full_rescan_ = false;
      dirty_files_.clear();
      dirty_dirs_.clear();
      std::set<stdfs::path> present;
      std::error_code ec;
      for (auto it = stdfs::directory_iterator(planning_ / "phases", ec); !ec && it != stdfs::directory_iterator();
           it.increment(ec)) {
        // A symlink loop (ELOOP) or a folder we may not read (EACCES) is named and skipped.
        std::error_code dec;
        bool dir = it->is_directory(dec);
        if (dec)
          walk_error(it->path(), dec);
        else if (dir)
          scan_phase(it->path(), present, changed, summaries_changed);
      }
      if (ec && ec != std::errc::no_such_file_or_directory) walk_error(planning_ / "phases", ec);
      forget_missing([&](const stdfs::path& p) { return !present.count(p); }, changed, summaries_changed);
      if (!initial) state_dirty_ = roadmap_dirty_ = true;
    } else {
      for (const auto& d : dirty_dirs_) {
        std::set<stdfs::path> present;
        scan_phase(d, present, changed, summaries_changed);
        forget_missing([&](const stdfs::path& p) { return p.parent_path() == d && !present.count(p); }, changed,
                       summaries_changed);
      }
      dirty_dirs_.clear();
      for (const auto& f : dirty_files_) check_file(f, changed, summaries_changed);
      dirty_files_.clear();
    }
    if (state_dirty_) {
      state_dirty_ = false;
      load_state(/*announce=*/true);
    }
    bool roadmap_changed = false;
    if (roadmap_dirty_) {
      roadmap_dirty_ = false;
      std::string h = hash_file(planning_ / "ROADMAP.md");
      if (h != roadmap_hash_) {
        roadmap_hash_ = h;
        roadmap_changed = !h.empty();
        if (roadmap_changed)
          emit(out::Sym::Diamond, "ROADMAP.md changed → vision gate", {{"event", "roadmap_changed"}});
      }
    }
    watch::Changes found{std::move(changed), summaries_changed, roadmap_changed, approvals_changed_};
    approvals_changed_ = false;
    auto act = watch::decide(found, situation());
    for (const auto& [phase, plans] : act.reviews) start_review(phase, plans);
    if (act.request_vision_gate) request_vision_gate();
    if (act.run_execute) consider_execution(false);
  }

  void scan_phase(const stdfs::path& dir, std::set<stdfs::path>& present,
                  std::map<stdfs::path, std::vector<stdfs::path>>& changed, bool& summaries_changed) {
    std::error_code ec;
    for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!is_plan_filename(name) && !is_summary_filename(name)) continue;
      present.insert(it->path());
      check_file(it->path(), changed, summaries_changed);
    }
    if (ec && ec != std::errc::no_such_file_or_directory) walk_error(dir, ec);
  }

  // A folder of the tree that cannot be walked: said once per path and reason, then skipped.
  void walk_error(const stdfs::path& p, const std::error_code& ec) {
    std::string msg = "skipping " + p.string() + ": " + ec.message();
    if (!walk_errors_.insert(msg).second) return;
    emit(out::Sym::Warn, msg, {{"event", "walk_error"}, {"path", p.string()}, {"error", ec.message()}});
  }

  template <typename Pred>
  void forget_missing(Pred missing, std::map<stdfs::path, std::vector<stdfs::path>>& changed, bool& summaries_changed) {
    for (auto it = plan_hash_.begin(); it != plan_hash_.end();) {
      if (missing(it->first)) {
        changed[it->first.parent_path()];  // siblings' cross-plan checks change
        it = plan_hash_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = summary_hash_.begin(); it != summary_hash_.end();) {
      if (missing(it->first)) {
        summaries_changed = true;
        it = summary_hash_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void check_file(const stdfs::path& p, std::map<stdfs::path, std::vector<stdfs::path>>& changed,
                  bool& summaries_changed) {
    std::string name = p.filename().string();
    bool is_plan = is_plan_filename(name);
    auto& cache = is_plan ? plan_hash_ : summary_hash_;
    std::error_code ec;
    if (!stdfs::is_regular_file(p, ec)) {
      if (cache.erase(p)) {
        if (is_plan)
          changed[p.parent_path()];
        else
          summaries_changed = true;
      }
      return;
    }
    std::string h = hash_file(p);
    auto it = cache.find(p);
    std::optional<std::string_view> seen;
    if (it != cache.end()) seen = it->second;
    if (!is_plan) {
      if (seen && *seen == h) return;  // touched, not changed
      cache[p] = h;
      summaries_changed = true;
      if (!started_) return;  // the first scan finds what is there: nothing was written
      emit(out::Sym::Diamond, name + " written", {{"event", "summary_changed"}, {"path", p.string()}});
      return;
    }
    auto rev = reviewed_hash_.find(p);
    auto seen_now = watch::plan_seen(seen, rev != reviewed_hash_.end() ? rev->second : std::string(), h);
    cache[p] = h;
    if (seen_now != watch::PlanSeen::NeedsReview) return;  // touched, or already reviewed as it is
    std::string id = plan_label(p);
    changed[p.parent_path()].push_back(p);
    emit(out::Sym::Diamond, id + (o_.review ? " changed → reviewing" : " changed"),
         {{"event", "plan_changed"}, {"plan_id", id}, {"path", p.string()}, {"hash", h}});
  }

  std::string plan_label(const stdfs::path& p) {
    auto l = load_plan(p);
    if (l.plan && (!l.plan->phase.empty() || !l.plan->plan.empty())) return l.plan->id();
    return p.filename().string();
  }

  // --- state -----------------------------------------------------------------
  void load_state(bool announce) {
    // A state file with the bytes last loaded says the same: skip its parse and schema check.
    // A review's own write asks twice (its child's exit, then its inotify event).
    auto before = fs::read_bytes(state::state_path(o_.root), 64u << 20);
    if (state_cached_ && before.ok() && before.content == state_bytes_) return;
    state_cached_ = false;
    std::string().swap(state_bytes_);  // a peak of one state text less while loading
    auto s = state::load(o_.root);
    if (!s.ok()) {
      if (s.error != last_state_error_) emit(out::Sym::Fail, s.error, {{"event", "state_error"}, {"error", s.error}});
      last_state_error_ = s.error;
      return;
    }
    last_state_error_.clear();
    const json& d = s.doc;
    active_run_ = execution::run_in_progress(d);  // a review's records are no run
    run_status_ = d.value("status", json("")).is_string() ? d.value("status", "") : "";
    // Approval/gate fingerprint: what unblocks or blocks the run.
    json approvals = {{"approval", d.value("approval", json(nullptr))}, {"gates", json::array()}};
    if (auto g = d.find("gates"); g != d.end() && g->is_array())
      for (const auto& gate : *g) approvals["gates"].push_back({gate.value("id", ""), gate.value("status", "")});
    std::string fp = approvals.dump();
    if (fp != approvals_fp_) {
      if (announce) announce_approval_change(d);
      approvals_fp_ = fp;
      approvals_changed_ = true;
    }
    // Remember the bytes only when the file read the same on both sides of the load, so
    // what was loaded is what they say.
    s.doc = json();  // done with it: no parsed state and two texts in memory at once
    auto after = fs::read_bytes(state::state_path(o_.root), 64u << 20);
    if (before.ok() && after.ok() && after.content == before.content) {
      state_bytes_ = std::move(before.content);
      state_cached_ = true;
    }
  }

  void announce_approval_change(const json& d) {
    const json approval = d.value("approval", json(nullptr));
    bool awaiting = d.value("status", "") == "awaiting_approval";
    if (awaiting && approval.is_object()) {
      std::string p = approval.value("plan_path", "");
      emit(out::Sym::Pause, "waiting for approval of " + p, {{"event", "awaiting_approval"}, {"plan_path", p}});
    } else if (approval.is_object() && approval.value("approved", false)) {
      std::string by = approval.value("approved_by", json("")).is_string() ? approval.value("approved_by", "") : "";
      // Whether it counts is the gates' own question (seal, digest of the file now).
      std::string p = approval.value("plan_path", "");
      auto type = gates::parse_gate_type(approval.value("gate_type", "vision")).value_or(gates::GateType::Vision);
      auto st = gates::approval_status(d, type, p, gates::now_of(o_.root));
      if (!st.counts()) {
        emit(out::Sym::Warn, "an approval of " + p + " does not count: " + st.message,
             {{"event", "approval_not_counted"}, {"plan_path", p}, {"approved_by", by}, {"reason", st.message}});
        return;  // when driving, execute runs anyway (the state changed): it re-opens the gate and says why
      }
      emit(out::Sym::Ok, "approval landed" + (by.empty() ? "" : " (by " + by + ")") + (driving() ? " → resuming" : ""),
           {{"event", "approved"}, {"approved_by", by}});
    }
  }

  // --- review ledgers (what was last reviewed: plan path -> content hash) -----------------
  void load_all_ledgers() {
    ledger_seen_.clear();
    std::error_code ec;
    for (stdfs::directory_iterator it(review_ledger::dir(o_.root), ec), end; !ec && it != end; it.increment(ec))
      if (watch::classify(planning_, it->path()) == PathKind::Ledger) load_ledger(it->path());
  }

  // A ledger whose bytes are the ones last loaded says the same: no parse, no schema check
  // (every review of ours writes one, and its inotify event comes back here).
  void load_ledger(const stdfs::path& file) {
    auto bytes = fs::read_bytes(file, 16u << 20);
    if (!bytes.ok()) {
      ledger_seen_.erase(file);  // gone: the hashes it gave stay (a review too many, never one too few)
      return;
    }
    size_t h = std::hash<std::string>{}(bytes.content);
    if (auto it = ledger_seen_.find(file); it != ledger_seen_.end() && it->second == h) return;
    auto r = review_ledger::load_file(file);
    if (!r.ok()) {
      emit(out::Sym::Fail, r.error, {{"event", "ledger_error"}, {"error", r.error}});
      return;
    }
    for (const auto& [id, rec] : r.doc["reviews"].items()) {
      if (!rec.contains("path") || !rec["path"].is_string()) continue;
      stdfs::path p = rec["path"].get<std::string>();
      if (p.is_relative()) p = o_.root / p;
      reviewed_hash_[p.lexically_normal()] = rec["hash"].get<std::string>();
    }
    ledger_seen_[file] = h;
  }

  watch::Situation situation() const { return {o_.review, o_.drive_execution, active_run_}; }
  bool driving() const { return watch::drives_execution(situation()); }

  // --- children ----------------------------------------------------------------
  struct Job {
    std::unique_ptr<Process> proc;
    bool rerun = false;
    std::set<stdfs::path> pending;  // plans changed while it ran
  };

  SpawnSpec child(std::vector<std::string> args) {
    SpawnSpec s;
    s.argv = {o_.self_exe};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.cwd = o_.root;
    s.timeout_ms = 0;  // the child applies its own per-agent timeouts
    s.kill_grace_ms = 300;
    return s;
  }

  // Without a reviewer or architect agent configured, a review is Stage 1 and its record:
  // no child can hang, so the watcher runs it here (the same review gate `yolo review`
  // runs), sparing a process start per save. With agents, a child `yolo review` runs them,
  // so this loop never blocks on an agent and can stop it on a signal.
  bool review_in_process() const { return config_.reviewer.argv.empty() && config_.architect.argv.empty(); }
  bool fixing() const { return o_.fix || config_.watch_fix; }

  void start_review(const stdfs::path& phase, const std::vector<stdfs::path>& plans) {
    if (review_in_process()) {
      if (!plans.empty()) review_here(phase, plans);
      return;
    }
    auto& job = reviews_[phase];
    if (job.proc && job.proc->running()) {
      job.rerun = true;  // queue behind the running review: never two for one plan
      job.pending.insert(plans.begin(), plans.end());
      return;
    }
    job.rerun = false;
    job.pending.clear();
    std::vector<std::string> args = {"review", phase.string(), "--changed", "--json"};
    // The architect rewrites a plan only when asked (--fix or watch.fix): one cycle otherwise,
    // so the file the person just saved is never changed under them.
    if (!fixing()) args.insert(args.end(), {"--max-cycles", "1"});
    job.proc =
        Process::start(&loop_, child(args), [this, phase](SpawnResult r) { on_review_done(phase, std::move(r)); });
  }

  void review_here(const stdfs::path& phase, const std::vector<stdfs::path>& plans) {
    auto t0 = Clock::now();
    ReviewGateOptions g;
    g.root = o_.root;
    g.config = config_;
    g.quiet = true;
    g.plan_cache = &plan_cache_;
    if (!fixing()) g.max_cycles = 1;
    std::vector<review::PlanTarget> targets;
    for (const auto& p : plans) targets.push_back(review::PlanTarget{p, phase, ""});
    ReviewGateResult res;
    try {
      res = run_review_gate(g, targets, /*is_phase=*/false);
    } catch (const std::exception& e) {
      emit(out::Sym::Fail, "review of " + phase.filename().string() + " failed: " + e.what(),
           {{"event", "review_failed"}, {"phase_dir", phase.string()}, {"error", e.what()}});
      return;
    }
    double ms = ms_since(t0);
    for (const auto& e : res.state_errors)
      emit(out::Sym::Warn, "review result not recorded: " + e, {{"event", "record_error"}, {"error", e}});
    bool recorded = res.state_errors.empty();
    for (const auto& j : res.plan_lines) {
      if (recorded && j.contains("hash") && j["hash"].is_string() && !j["hash"].get<std::string>().empty()) {
        stdfs::path p = j.value("plan", "");
        if (p.is_relative()) p = o_.root / p;
        reviewed_hash_[p.lexically_normal()] = j["hash"].get<std::string>();
      }
      announce_review(j, ms);
    }
    // Our own write of the ledger comes back as an event: remember its bytes now, so that
    // event costs a read, not a parse.
    auto file = review_ledger::path_for(o_.root, phase);
    if (recorded)
      if (auto b = fs::read_bytes(file, 16u << 20); b.ok()) ledger_seen_[file] = std::hash<std::string>{}(b.content);
  }

  // After the first reconcile, the siblings the cross-plan checks read are parsed ahead, a
  // phase per loop turn (events are handled between turns), so the first save in any phase
  // costs the review of one plan, not the parse of its whole phase. Then the loop sleeps.
  void start_warming() {
    std::set<stdfs::path> phases;
    for (const auto& [p, _] : plan_hash_) phases.insert(p.parent_path());
    warm_queue_.assign(phases.begin(), phases.end());
    if (warm_queue_.empty() || !o_.review) return;
    uv_idle_init(&loop_, &warm_);
    warm_.data = this;
    uv_idle_start(&warm_, [](uv_idle_t* h) { static_cast<Watcher*>(h->data)->warm_one(); });
  }

  void warm_one() {
    if (stopping_ || warm_queue_.empty()) {
      uv_idle_stop(&warm_);
      warm_queue_.clear();
      return;
    }
    stdfs::path phase = warm_queue_.back();
    warm_queue_.pop_back();
    for (const auto& f : list_plan_files(phase)) plan_cache_.load_sibling(f, PrecheckOptions{}.max_file_bytes);
  }

  void announce_review(const json& j, double fallback_ms) {
    std::string id = j.value("plan_id", j.value("plan", std::string("?")));
    std::string verdict = j["verdict"].is_string() ? j["verdict"].get<std::string>() : "?";
    auto v = parse_verdict(verdict).value_or(Verdict::Reject);
    double ms = j.contains("elapsed_ms") && j["elapsed_ms"].is_number() ? j["elapsed_ms"].get<double>() : fallback_ms;
    std::string word = v == Verdict::Approve ? "approved" : v == Verdict::Conditional ? "conditional" : "rejected";
    std::string why;
    if (v == Verdict::Reject) {  // say why: its most severe finding
      const json found = j.contains("findings") && j["findings"].is_array() ? j["findings"] : json::array();
      for (const char* sev : {"high", "medium", "low"}) {
        for (const auto& f : found)
          if (f.is_object() && f.value("severity", "") == sev) {
            std::string t = f.value("title", "");
            if (t.empty()) t = f.value("description", "");
            why = " — [" + std::string(sev) + "] " + t;
            break;
          }
        if (!why.empty()) break;
      }
    }
    // What the architect changed (only with --fix / watch.fix).
    if (j.contains("architect") && j["architect"].is_array())
      for (const auto& a : j["architect"])
        if (a.is_object() && a.value("changed", false)) {
          std::string path = j.value("plan", "");
          emit(out::Sym::Warn, id + " was rewritten by the architect: `git diff -- " + path + "` shows the change",
               {{"event", "plan_revised"}, {"plan_id", id}, {"path", path}});
          break;
        }
    emit(out::sym_for(v), id + " " + word + " (" + fmt_ms(ms) + ")" + why,
         {{"event", "reviewed"},
          {"plan_id", id},
          {"verdict", verdict},
          {"ms", ms},
          {"path", j.value("plan", "")},
          {"source", j.value("source", "")}});
  }

  void on_review_done(const stdfs::path& phase, SpawnResult r) {
    if (stopping_) {
      maybe_finish_shutdown();
      return;
    }
    bool ok_exit = r.outcome == SpawnResult::Outcome::Exited && r.exit_code >= 0 && r.exit_code <= 2;
    // Plans `--changed` left alone (already reviewed as they are) and the phase roll-up are
    // not reviews.
    auto report = review::parse_review_output(r.out);
    for (const json* j : report.reviews()) announce_review(*j, r.elapsed_ms);
    if (!ok_exit) {
      std::string tail = text::tail_lines(r.err, 5);
      emit(out::Sym::Fail,
           "review of " + phase.filename().string() + " failed: " + r.describe() + (tail.empty() ? "" : "\n" + tail),
           {{"event", "review_failed"}, {"phase_dir", phase.string()}, {"error", r.describe()}, {"stderr", tail}});
    }
    load_state(/*announce=*/true);                         // the child may have written the run's review_loops
    load_ledger(review_ledger::path_for(o_.root, phase));  // and recorded the hashes it reviewed
    auto& job = reviews_[phase];
    if (job.rerun) start_review(phase, {job.pending.begin(), job.pending.end()});
  }

  void request_vision_gate() {
    if (gate_proc_ && gate_proc_->running()) return;
    gate_proc_ = Process::start(&loop_,
                                child({"request-approval", "--plan-path", (planning_ / "ROADMAP.md").string(),
                                       "--gate-type", "vision", "--json"}),
                                [this](SpawnResult r) {
                                  if (stopping_) return maybe_finish_shutdown();
                                  if (!r.ok())
                                    emit(out::Sym::Fail,
                                         "vision gate request failed: " + r.describe() + " " +
                                             std::string(text::trim(text::tail_lines(r.err, 3))),
                                         {{"event", "gate_error"}, {"error", r.describe()}});
                                  load_state(true);
                                });
  }

  void consider_execution(bool force) {
    if (stopping_) return;
    if (exec_proc_ && exec_proc_->running()) {
      exec_rerun_ = true;
      return;
    }
    if (!force && !driving()) return;
    exec_rerun_ = false;
    auto t0 = Clock::now();
    std::vector<std::string> args{"execute", "--json"};
    args.insert(args.end(), o_.execute_args.begin(), o_.execute_args.end());
    exec_proc_ = Process::start(&loop_, child(std::move(args)), [this, t0](SpawnResult r) {
      if (stopping_) return maybe_finish_shutdown();
      on_execute_done(std::move(r), ms_since(t0));
    });
  }

  void on_execute_done(SpawnResult r, double ms) {
    std::string what;
    out::Sym s = out::Sym::Fail;
    if (r.outcome == SpawnResult::Outcome::Exited) {
      switch (r.exit_code) {
        case 0:
          what = "phase complete";
          s = out::Sym::Ok;
          break;
        case 1:
          what = "run halted or failed";
          s = out::Sym::Fail;
          break;
        case 3:
          what = "paused at a gate";
          s = out::Sym::Pause;
          break;
        case 4:
          what = "waiting for SUMMARY files";
          s = out::Sym::Skip;
          break;
        default:
          what = "execute " + r.describe();
          break;
      }
    } else {
      what = "execute " + r.describe();
    }
    std::string tail =
        r.ok() || r.exit_code == 3 || r.exit_code == 4 ? "" : std::string(text::trim(text::tail_lines(r.err, 5)));
    emit(s, what + " (" + fmt_ms(ms) + ")" + (tail.empty() ? "" : "\n" + tail),
         {{"event", "execute_done"}, {"exit_code", r.exit_code}, {"outcome", what}, {"ms", ms}});
    load_state(/*announce=*/true);
    approvals_changed_ = false;  // what execute itself wrote is not news...
    // ...but an approval that landed while it was pausing is: the state says so (the run
    // is not awaiting approval any more). Once per state of the approvals, so a run that
    // pauses again on the same state does not loop.
    bool paused = r.outcome == SpawnResult::Outcome::Exited && r.exit_code == 3;
    if (watch::gate_resolved_since_pause(paused, run_status_) && approvals_fp_ != resumed_fp_) {
      resumed_fp_ = approvals_fp_;
      exec_rerun_ = true;
    }
    if (exec_rerun_) consider_execution(true);
  }

  // --- shutdown ----------------------------------------------------------------
  void shutdown(int sig) {
    if (stopping_) return;
    stopping_ = true;
    (void)sig;
    uv_timer_stop(&debounce_);
    dir_watch_->stop();
    for (auto& [_, job] : reviews_)
      if (job.proc && job.proc->running()) job.proc->cancel();
    if (exec_proc_ && exec_proc_->running()) exec_proc_->cancel();
    if (gate_proc_ && gate_proc_->running()) gate_proc_->cancel();
    // Children get SIGTERM now and SIGKILL after their grace; never wait past a second.
    uv_timer_start(
        &force_exit_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->finish(); }, 900, 0);
    maybe_finish_shutdown();
  }

  void maybe_finish_shutdown() {
    if (!stopping_) return;
    for (auto& [_, job] : reviews_)
      if (job.proc && job.proc->running()) return;
    if (exec_proc_ && exec_proc_->running()) return;
    if (gate_proc_ && gate_proc_->running()) return;
    finish();
  }

  void finish() {
    reviews_.clear();  // Process destructors SIGKILL anything still running
    exec_proc_.reset();
    gate_proc_.reset();
    uv_stop(&loop_);
  }

  WatchOptions o_;
  stdfs::path planning_;
  Config config_;
  int debounce_ms_ = 20;
  InstanceLock instance_lock_;
  std::set<std::string> walk_errors_;  // said already
  bool git_waiting_ = false;           // a git operation is in progress: reconcile when it ends
  Clock::time_point last_rescan_request_{};
  long long rescan_backoff_ms_ = 0;
  uv_loop_t loop_{};
  uv_timer_t debounce_{}, force_exit_{};
  uv_signal_t sigint_{}, sigterm_{};
  std::unique_ptr<DirWatch> dir_watch_;
  bool stopping_ = false;
  bool started_ = false;  // the first reconcile is done
  bool full_rescan_ = false, state_dirty_ = false, roadmap_dirty_ = false, config_dirty_ = false;
  bool approvals_changed_ = false, active_run_ = false, exec_rerun_ = false;
  std::set<stdfs::path> dirty_files_, dirty_dirs_, dirty_ledgers_;
  std::map<stdfs::path, size_t> ledger_seen_;
  // Siblings as the cross-plan checks read them (slim, ~1 KB a plan; at most 20,000 kept),
  // reused while their files stay the same.
  PlanCache plan_cache_;
  uv_idle_t warm_{};
  std::vector<stdfs::path> warm_queue_;  // ledger file -> hash of the bytes last loaded
  std::map<stdfs::path, std::string> plan_hash_, summary_hash_, reviewed_hash_;
  std::string roadmap_hash_, approvals_fp_, last_state_error_;
  std::string run_status_;  // the state's status as last loaded
  std::string resumed_fp_;  // the approvals' fingerprint execute was last run again for
  std::string state_bytes_;  // the state file as last loaded (valid when state_cached_)
  bool state_cached_ = false;
  std::map<stdfs::path, Job> reviews_;
  std::unique_ptr<Process> exec_proc_, gate_proc_;
};

}  // namespace

int run_watch(const WatchOptions& opts) {
  Watcher w(opts);
  return w.run();
}

}  // namespace yolo::runner
