// `yolo watch`, the loop: start-up, file events and timers into the watch core, its actions
// carried out, shutdown (runner/watcher_impl.h lists the other parts).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "protocol/ports/clock.h"
#include "protocol/base/numbers.h"
#include "protocol/review/review_loop.h"
#include "protocol/base/text.h"
#include "protocol/watch/watch_paths.h"
#include "runner/config_report.h"
#include "runner/watcher_impl.h"

namespace yolo::runner {
namespace watch_impl {

using watch::PathKind;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string fmt_ms(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
  return b;
}

int Watcher::run() {
  std::string err;
  std::error_code pec;
  if (!stdfs::is_directory(planning_, pec)) {
    out::err("✗ no .yolo-planning folder in " + ctx_.root.string());
    return 1;
  }
  // One watcher per project; survives .yolo-planning being deleted and recreated
  // (runner/instance_lock.h).
  if (!instance_lock_.acquire(ctx_.root, "watch", err)) {
    out::err("✗ " + err);
    return 1;
  }
  auto cfg = ctx_.read_config();
  if (!cfg.ok()) out::err("⚠ " + text::sanitize_for_terminal(cfg.error) + " (using defaults)");
  config_ = cfg.config;

  uv_loop_init(&loop_);
  uv_timer_init(&loop_, &debounce_);
  debounce_.data = this;
  uv_timer_init(&loop_, &force_exit_);
  force_exit_.data = this;
  uv_timer_init(&loop_, &record_retry_);
  record_retry_.data = this;
  for (auto* s : {&sigint_, &sigterm_}) {
    uv_signal_init(&loop_, s);
    s->data = this;
  }
  uv_signal_start(
      &sigint_, [](uv_signal_t* s, int sig) { static_cast<Watcher*>(s->data)->shutdown(sig); }, SIGINT);
  uv_signal_start(
      &sigterm_, [](uv_signal_t* s, int sig) { static_cast<Watcher*>(s->data)->shutdown(sig); }, SIGTERM);

  auto t0 = Clock::now();
  WatchReviews::Hooks hooks;
  hooks.ended = [this](watch::Lane lane, const ReviewGateResult& res, const std::string& error, double ms,
                       const std::map<stdfs::path, std::string>& before) {
    on_reviews_ended(lane, res, error, ms, before);
  };
  reviews_ = std::make_unique<WatchReviews>(&loop_, ctx_.world, ctx_.root, &read_ahead_.plan_cache(), &read_ahead_.fresh_snapshots(), std::move(hooks));
  reviews_->configure(config_, fixing());
  watch::CoreOptions co;
  co.root = ctx_.root;
  co.review = o_.review;
  co.drive_asked = o_.drive_execution;
  co.debounce_ms = o_.debounce_ms >= 0 ? o_.debounce_ms : config_.debounce_ms;
  co.now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
  };
  // The disk port lists nothing for a folder it cannot read: the reason, to say it.
  co.why_unlistable = [](const stdfs::path& p) -> std::string {
    std::error_code ec;
    stdfs::directory_iterator it(p, ec);
    if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return "";
    return ec.message();
  };
  co.plan_changed = [this](const stdfs::path& p) { read_ahead_.note_plan_changed(p); };
  core_ = std::make_unique<watch::Core>(world_, std::move(co));
  core_->configure(!config_.reviewer.argv.empty() || !config_.architect.argv.empty());
  dir_watch_ = std::make_unique<DirWatch>(
      &loop_, [this](const DirWatch::Change& c) { on_change(c); },
      [this](const std::string& why) {
        if (stopping_) return;
        core_->overflow(why);
        carry_out();
      });
  // yolo's own output folders (.logs holds one folder per plan run) hold nothing the watcher
  // acts on: under the inotify watch limit, their watches went before the phase folders'.
  dir_watch_->skip_name = [](const std::string& n) {
    return n == ".events" || n == ".git" || n == "node_modules" || n == ".logs" || n == ".cache";
  };
  dir_watch_->on_error = [this](const stdfs::path& p, const std::error_code& ec) {
    core_->walk_error(p, ec.message());
    carry_out();
  };
  // Under the inotify watch limit the folders whose changes the watcher acts on get their
  // watches first: the phase folders, the phases folder and the review ledgers' folder.
  dir_watch_->rank = [this](const stdfs::path& p) {
    const stdfs::path parent = p.parent_path();
    bool first = parent == planning_ / "phases" || p == planning_ / "phases" || p == planning_ / ".reviews";
    return first ? 0 : 1;
  };
  dir_watch_->on_limit = [this](const std::vector<stdfs::path>& recovered) { on_watch_limit(recovered); };
  if (std::string e = dir_watch_->start(); !e.empty()) {
    out::err("✗ cannot watch: " + e);
    return 1;
  }
  dir_watch_->add_single(ctx_.root);  // to see .yolo-planning itself deleted and recreated
  dir_watch_->add_tree(planning_);
  core_->start();
  // What starting found to say (a folder that cannot be walked, a broken state) comes before
  // `ready`; what it sets going, after.
  auto started = core_->take_actions();
  for (auto& a : started)
    if (a.kind == watch::Action::Kind::Say) act(a);
  emit(out::Sym::Diamond,
       "watching " + planning_.string() + ": " + std::to_string(dir_watch_->watch_count()) + " folders, " +
           std::to_string(core_->plans_listed()) + " plans (ready in " + fmt_ms(ms_since(t0)) + ", debounce " +
           std::to_string(core_->debounce_ms()) + " ms)",
       {{"event", "ready"},
        {"root", ctx_.root.string()},
        {"folders", dir_watch_->watch_count()},
        {"plans", core_->plans_listed()},
        {"ms", ms_since(t0)},
        {"debounce_ms", core_->debounce_ms()},
        {"pid", ::getpid()},
        {"backlog", core_->backlog()}});
  for (auto& a : started)
    if (a.kind != watch::Action::Kind::Say) act(a);
  carry_out();  // the phases are learnt after `ready`, then the siblings parsed ahead

  uv_run(&loop_, UV_RUN_DEFAULT);
  // Close what is left and let libuv release it.
  uv_walk(
      &loop_,
      [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);  // also waits for a review batch still on a worker thread
  uv_loop_close(&loop_);
  emit(out::Sym::Skip, "watch stopped", {{"event", "stopped"}});
  return 0;
}

ReadAhead::Host Watcher::read_ahead_host() {
  ReadAhead::Host h;
  h.core = [this]() -> watch::Core& { return *core_; };
  h.stopping = [this] { return stopping_; };
  h.fresh_running = [this] { return reviews_ && reviews_->fresh_running(); };
  h.drain = [this] { dir_watch_->drain(); };
  h.carry_out = [this] { carry_out(); };
  return h;
}

// One reaction: a line for people (the symbol, then `msg` with control characters made
// visible: plan ids, paths and children's stderr come from files anyone can write), or
// the JSON line.
void Watcher::emit(out::Sym s, const std::string& msg, json j) {
  if (o_.json) {
    if (!j.contains("ts")) j["ts"] = world_.now();
    out::json_line(j);
  } else {
    out::line(out::sym(s) + " " + text::sanitize_for_terminal(msg));
  }
}

void Watcher::on_change(const DirWatch::Change& c) {
  if (stopping_) return;
  if (c.path.parent_path() == ctx_.root) {  // the project root: only .yolo-planning matters
    if (c.path.filename() != ".yolo-planning") return;
    if (!c.gone) dir_watch_->add_tree(planning_);
    core_->planning_replaced();
    return carry_out();
  }
  const watch::PathKind kind = core_->path_changed(c.path, c.gone);
  if (kind == watch::PathKind::Plan || kind == watch::PathKind::Summary)
    read_ahead_.prefetch_ledger(c.path.parent_path());  // a phase not learnt yet: its ledger, during the debounce
  if (kind == watch::PathKind::Plan)
    read_ahead_.prefetch_snapshot(c.path.parent_path());  // its siblings for the save's review, during the debounce
  carry_out();
}

// The core's actions, carried out in order (each may lead to more: a learnt phase's backlog).
void Watcher::carry_out() {
  for (auto actions = core_->take_actions(); !actions.empty(); actions = core_->take_actions())
    for (auto& a : actions) act(a);
}

void Watcher::act(watch::Action& a) {
  using K = watch::Action::Kind;
  switch (a.kind) {
    case K::ArmSettle:
      if (!stopping_)
        uv_timer_start(
            &debounce_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->settle(); }, static_cast<uint64_t>(a.ms),
            0);
      break;
    case K::ArmRetry:
      if (!stopping_)
        uv_timer_start(
            &record_retry_,
            [](uv_timer_t* t) {
              auto* w = static_cast<Watcher*>(t->data);
              if (w->stopping_) return;
              w->core_->retry_fired();
              w->carry_out();
            },
            static_cast<uint64_t>(a.ms), 0);
      break;
    case K::Review:
      reviews_->start(std::move(a.batch));
      break;
    case K::RequestGate:
      request_vision_gate();
      break;
    case K::RunExecute:
      start_execute();
      break;
    case K::Learn:
      read_ahead_.learn(a.dir, a.plans_only);
      break;
    case K::ReloadConfig:
      reload_config();
      break;
    case K::Warm:
      read_ahead_.start_warming();
      break;
    case K::Say: {
      static constexpr out::Sym kSym[] = {out::Sym::Ok,      out::Sym::Warn,  out::Sym::Fail,
                                          out::Sym::Diamond, out::Sym::Pause, out::Sym::Skip};
      emit(kSym[static_cast<int>(a.mark)], a.text, std::move(a.event));
      break;
    }
  }
}

void Watcher::settle() {
  if (stopping_) return;
  read_ahead_.take_prefetches();
  core_->settle(read_ahead_.git_busy());
  carry_out();
}

void Watcher::reload_config() {
  auto cfg = ctx_.read_config();
  if (!cfg.ok()) return emit(out::Sym::Warn, cfg.error, {{"event", "config_error"}, {"error", cfg.error}});
  config_ = cfg.config;
  reviews_->configure(config_, fixing());
  core_->configure(!config_.reviewer.argv.empty() || !config_.architect.argv.empty());
}

namespace {
// The inotify watch limit that applies to this process: the system's, or a lower one of its
// user namespace (a container's), as a number and the setting that raises it.
std::pair<long long, std::string> watch_limit() {
  // Files of /proc say they are empty (st_size 0): read as a stream, not by their size.
  auto number = [](const char* file) -> long long {
    std::ifstream in(file);
    std::string s;
    if (!(in >> s)) return -1;
    return text::parse_digits(s).value_or(-1);
  };
  long long sys = number("/proc/sys/fs/inotify/max_user_watches"), ns = number("/proc/sys/user/max_inotify_watches");
  if (ns >= 0 && (sys < 0 || ns < sys)) return {ns, "user.max_inotify_watches"};
  return {sys, "fs.inotify.max_user_watches"};
}
}  // namespace

// The limit left folders without a watch, or some have one again. Said with the folders
// (changes there are seen only at a rescan until then) and the command that raises the
// limit; the watches are added again by themselves once it allows (DirWatch::retry_unwatched).
void Watcher::on_watch_limit(const std::vector<stdfs::path>& recovered) {
  if (stopping_) return;
  auto rel = [&](const stdfs::path& p) {
    auto r = p.lexically_relative(planning_);
    return r.empty() || r.native().starts_with("..") ? p.string() : ".yolo-planning/" + r.string();
  };
  if (!recovered.empty()) {
    json folders = json::array();
    for (const auto& p : recovered) folders.push_back(rel(p));
    emit(out::Sym::Ok,
         "watching again " + std::to_string(recovered.size()) + " folder(s) the inotify limit had left out: rescanning",
         {{"event", "watches_recovered"}, {"folders", folders}, {"unwatched", dir_watch_->unwatched().size()}});
    core_->rescan_quietly();  // what changed there meanwhile
    carry_out();
  }
  const auto& left = dir_watch_->unwatched();
  if (left.empty()) return;
  if (!recovered.empty() && left.size() == last_unwatched_said_) return;
  last_unwatched_said_ = left.size();
  auto [limit, setting] = watch_limit();
  long long raise_to = std::max<long long>(limit * 2, 65536);
  std::string hint = "sudo sysctl " + setting + "=" + std::to_string(raise_to) +
                     " (and a line in /etc/sysctl.d/ to keep it); yolo adds the missing watches by itself";
  json folders = json::array();
  std::string names;
  for (size_t i = 0; i < left.size(); ++i) {
    folders.push_back(rel(left[i]));
    if (i < 5) names += (i ? ", " : "") + rel(left[i]);
  }
  if (left.size() > 5) names += " and " + std::to_string(left.size() - 5) + " more";
  emit(out::Sym::Warn,
       "inotify watch limit reached (" + setting + " = " + std::to_string(limit) + "): " + std::to_string(left.size()) +
           " folder(s) not watched (" + names + "); changes there are missed until they are. Raise it: " + hint,
       {{"event", "watch_limit"}, {"unwatched", folders}, {"limit", limit}, {"setting", setting}, {"hint", hint}});
}

void Watcher::shutdown(int sig) {
  if (stopping_) return;
  stopping_ = true;
  (void)sig;
  uv_timer_stop(&debounce_);
  uv_timer_stop(&record_retry_);
  dir_watch_->stop();
  // A review batch on a worker thread takes no new plan now; an agent it runs gets this
  // signal itself (the review gate stops its group) and the batch ends.
  reviews_->stop();
  if (exec_proc_ && exec_proc_->running()) exec_proc_->cancel();
  if (gate_proc_ && gate_proc_->running()) gate_proc_->cancel();
  // Children get SIGTERM now and SIGKILL after their grace; never wait past a second.
  uv_timer_start(
      &force_exit_, [](uv_timer_t* t) { static_cast<Watcher*>(t->data)->finish(); }, 900, 0);
  maybe_finish_shutdown();
}

void Watcher::maybe_finish_shutdown() {
  if (!stopping_) return;
  if (reviews_->running()) return;
  if (exec_proc_ && exec_proc_->running()) return;
  if (gate_proc_ && gate_proc_->running()) return;
  finish();
}

void Watcher::finish() {
  exec_proc_.reset();  // Process destructors SIGKILL anything still running
  gate_proc_.reset();
  uv_stop(&loop_);
}

}  // namespace watch_impl

int run_watch(const Context& ctx, const WatchOptions& opts) {
  watch_impl::Watcher w(ctx, opts);
  return w.run();
}

}  // namespace yolo::runner
