// `yolo execute`: the wave loop (runner/phase_run_internal.h).
#include "runner/phase_run_internal.h"

#include <sys/resource.h>

namespace yolo::runner::phase {

static long open_files_limit() {
  struct rlimit rl {};
  return ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<long>(rl.rlim_cur) : -1;
}

// ---- waves ----------------------------------------------------------------------------

int Run::waves() {
  {
    const auto& snap = state_now();
    const json& doc = snap.ok() ? snap.doc : json::object();
    // Built once, dependencies resolved: the core looks each one up in O(1) and decides on
    // the current wave's plans only. Each plan brings what the state says of it: its status,
    // its worktree's merge, its dispatched job.
    std::vector<waves::PlanNode> nodes = execution::nodes(doc, entries_);
    std::vector<run::PlanSeed> seeds(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      run::PlanSeed& sd = seeds[i];
      sd.node = std::move(nodes[i]);
      if (const json* p = execution::find_plan(doc, entries_[i].id)) {
        if (auto w = p->find("worktree"); w != p->end() && w->is_object()) {
          sd.merge = execution::merge_state(*w);
          sd.head = str(*w, "head");
          if (sd.merge == MergeState::Pending) run_of(i).worktree_record = *w;  // merged from this record
        }
      }
      if (const json& d = run_of(i).dispatch_rec; !d.is_null()) {
        sd.attempt = d.value("attempt", 1);
        sd.job = d;
      }
      sd.failed_before = run_of(i).dispatch_failed_before;
    }
    run::Settings rs;
    rs.executor = executor_configured(cfg_);
    rs.isolated = isolated();
    rs.wave_approval = cfg_.wave_approval;
    rs.only = o_.only_plan;
    rs.max_parallel = rs.executor ? (dispatched() ? dispatch_sched_parallel() : cfg_.max_parallel)
                                  : static_cast<int>(entries_.size()) + 1;
    core_ = run::Core(std::move(seeds), std::move(rs));
  }
  uv_loop_init(&loop_);
  uv_timer_init(&loop_, &flush_timer_);
  flush_timer_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&flush_timer_));  // the final flush_plans() writes what is left
  uv_async_init(&loop_, &flush_done_, [](uv_async_t* a) { static_cast<Run*>(a->data)->harvest_flush(); });
  uv_timer_init(&loop_, &resume_timer_);
  resume_timer_.data = this;
  flush_done_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&flush_done_));  // the final flush_plans() waits for a write in flight
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
  for (size_t i = 0; i < runs_.size(); ++i) release(i);
  flush_plans();
  // Every start is in the state now (and no executor of this run is left): the journal goes,
  // unless the state could not be written.
  close_journal(!flush_failed_ && queued_.empty());
  loop_started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_done_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&resume_timer_), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  if (final_code_ < 0) return finish(kExecHalted, Result::Halted, "stopped with nothing left to run");
  return finish(final_code_, final_result_, final_message_);
}

const state::LoadResult& Run::state_now() {
  fs::Disk& disk = world_.files();
  const stdfs::path file = state::state_path(root_);
  std::string before = disk.stamp(file);
  if (!state_stamp_.empty() && before == state_stamp_ && state_cache_.ok()) return state_cache_;
  if (inflight_) {
    // Changed while this run's own write is in flight: most likely that write (it renamed
    // the file and is syncing it). Its end (harvest_flush, when the loop hears of it) gives
    // the document and the identity it wrote, with whatever another process wrote before it
    // (the write is a read-modify-write under the lock). For a short while the run decides
    // on what it knew a moment before: waiting here for the fsyncs held the loop a
    // millisecond or more at every batched write. Not longer: on a slow disk a
    // gate or halt that another process wrote would wait for the fsyncs unseen, so past
    // kStaleWhileWriting the write is waited for and the file read again, as always.
    constexpr uint64_t kStaleWhileWriting = 20'000'000ULL;  // ns
    if (state_cache_.ok() && uv_hrtime() - inflight_->started_ns < kStaleWhileWriting) return state_cache_;
    harvest_flush();
    before = disk.stamp(file);
    if (!state_stamp_.empty() && before == state_stamp_ && state_cache_.ok()) return state_cache_;
  }
  state_cache_ = state::load(world_, root_);
  // Kept only when the file did not change while it was read (else: read again next time).
  std::string after = disk.stamp(file);
  state_stamp_ = !before.empty() && after == before && state_cache_.ok() ? after : std::string();
  return state_cache_;
}

void Run::queue_plan(size_t i, execution::PlanUpdate u) {
  std::optional<execution::PlanUpdate>& q = run_of(i).queued;
  if (q)
    u = execution::merge_updates(*q, std::move(u));  // fields queued before and not written yet are kept
  else
    queued_.push_back(i);
  q = std::move(u);
  if (!loop_started_) {
    flush_plans();
    return;
  }
  arm_flush();
}

void Run::arm_flush() {
  if (flush_timer_armed_ || inflight_) return;  // a write in flight arms the timer again when it ends
  uint64_t since = uv_hrtime() - last_flush_ns_;
  // A write (its JSON and two fsyncs) costs the machine: at most one every 250 ms, and never
  // more than a tenth of the time (with a trivial executor, writing more often showed in the
  // run's wall time).
  uint64_t gap = std::max<uint64_t>(250'000'000ULL, 9 * last_flush_cost_ns_);
  uint64_t delay_ms = since >= gap ? 0 : (gap - since) / 1'000'000ULL;
  flush_timer_armed_ = true;
  uv_timer_start(
      &flush_timer_, [](uv_timer_t* t) { static_cast<Run*>(t->data)->flush_async(); }, delay_ms, 0);
}

std::vector<std::pair<std::string, execution::PlanUpdate>> Run::take_pending() {
  std::vector<std::pair<std::string, execution::PlanUpdate>> ups;
  ups.reserve(queued_.size());
  std::sort(queued_.begin(), queued_.end());  // in plan order
  for (size_t i : queued_) ups.emplace_back(entries_[i].id, std::move(*std::exchange(runs_[i].queued, std::nullopt)));
  queued_.clear();
  return ups;
}

// One locked, atomic read-modify-write of the state with the updates: the plans' records, and
// the fields beside them (the wave, the steps, and what `also` changes: the phase's end, never
// a record). Only those are checked and serialised again (state::update_plan_records). Touches
// no member of the Run: it runs on a worker thread.
static state::UpdateResult write_updates(const World& w, const stdfs::path& root,
                                         const std::vector<std::pair<std::string, execution::PlanUpdate>>& ups,
                                         const std::vector<std::string>& steps,
                                         const std::function<void(json&)>& also = nullptr) {
  return state::update_plan_records(w, root, [&](json& doc, std::vector<size_t>& changed) {
    changed = execution::apply_plan_updates(doc, ups);
    for (const auto& s : steps) execution::mark_step(doc, s);
    if (also) also(doc);
    return true;
  });
}

void Run::flush_plans(const std::function<void(json&)>& also) {
  if (flush_timer_armed_) {
    uv_timer_stop(&flush_timer_);
    flush_timer_armed_ = false;
  }
  harvest_flush();  // in order: the write in flight first
  if (queued_.empty() && steps_pending_.empty() && !also) return;
  uint64_t t = uv_hrtime();
  auto up = write_updates(world_, root_, take_pending(), std::exchange(steps_pending_, {}), also);
  flushed(std::move(up), t, uv_hrtime());
}

void Run::flush_async() {
  flush_timer_armed_ = false;
  if (inflight_ || queued_.empty() || stopping_) {
    if (stopping_) flush_plans();
    return;
  }
  auto job = std::make_unique<Inflight>();
  job->started_ns = uv_hrtime();
  Inflight* j = job.get();
  uv_async_t* done = &flush_done_;
  job->thread = std::thread([j, done, w = &world_, root = root_, ups = take_pending(), steps = std::exchange(steps_pending_, {}),
                             retired = std::move(retired_doc_)] {
    try {
      j->result = write_updates(*w, root, ups, steps);
    } catch (const std::exception& e) {  // never escapes the thread (that would end the process)
      j->result = state::UpdateResult{};
      j->result.error = state::state_path(root).string() + ": the batched write failed: " + e.what();
    }
    j->ended_ns = uv_hrtime();
    uv_async_send(done);  // wakes the loop: harvest_flush
  });
  inflight_ = std::move(job);
}

void Run::harvest_flush() {
  if (!inflight_) return;
  std::unique_ptr<Inflight> job = std::move(inflight_);
  job->thread.join();
  flushed(std::move(job->result), job->started_ns, job->ended_ns);
  // Changes queued while it was written: the next batch, on the usual cadence.
  if (!queued_.empty() && loop_started_ && !stopping_ && !flush_failed_) arm_flush();
}

void Run::flushed(state::UpdateResult up, uint64_t started_ns, uint64_t ended_ns) {
  last_flush_ns_ = ended_ns;
  last_flush_cost_ns_ = ended_ns - started_ns;
  if (!up.ok()) {
    flush_failed_ = true;
    stop(kExecHalted, Result::Error, up.error);
    return;
  }
  // The document just written is the state now: the next state_now() need not read it back
  // (unless another process wrote the file since: its identity differs then).
  if (loop_started_) retired_doc_ = std::move(state_cache_.doc);  // freed by the next flush_async's thread
  state_cache_ = state::LoadResult{};
  state_cache_.doc = std::move(up.doc);
  state_cache_.exists = true;
  state_stamp_ = up.stamp;
}

bool Run::journal_executor(const std::string& plan_id, const json& record) {
  if (journal_fd_ < 0) {
    journal_fd_ = ::open((root_ / execution::kExecutorsJournal).c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (journal_fd_ < 0) return false;
  }
  const std::string line = execution::journal_line(plan_id, record);
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(journal_fd_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

void Run::end_journaled_executors() {
  const stdfs::path file = root_ / execution::kExecutorsJournal;
  auto r = world_.files().read(file, 16u << 20, false);
  if (!r.ok()) return;  // none (the usual case), or unreadable: the state's records remain
  end_leftover_executors(execution::journal_plans(r.content));
  ::unlink(file.c_str());
}

void Run::close_journal(bool remove) {
  if (journal_fd_ < 0) return;
  ::close(journal_fd_);
  journal_fd_ = -1;
  if (remove) ::unlink((root_ / execution::kExecutorsJournal).c_str());
}

void Run::interrupt(int signum) {
  if (interrupted_) return;
  interrupted_ = true;
  stop(kExecHalted, Result::Interrupted,
       "Interrupted (signal " + std::to_string(signum) +
           "): running executors were stopped; their plans are pending again");
  // A dispatch submit is left to end (its timeout bounds it): killed midway, it may have
  // queued a job whose handle nobody would know; ended, its job is cancelled.
  for (auto& r : runs_)
    if (r.running && r.proc && !r.dispatch_submitting) r.proc->cancel();
  for (auto& [k, p] : wave_wait_procs_)  // a wave's poller: its plans' jobs are cancelled when it ends
    if (p) p->cancel();
}

// How many executors can run at once within this process's file descriptor limit: each
// running plan holds a few (its output pipes, its log files, its pidfd, and with worktree
// isolation git's pipes while its slot is made ready). Started past the limit, a plan fails
// ("too many open files") instead of waiting for a slot; so the limit lowers max_parallel.
static int fd_parallel_cap(bool isolated) {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1 << 30;
  long open_now = 0;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator("/proc/self/fd", ec); !ec && it != stdfs::directory_iterator();
       it.increment(ec))
    ++open_now;
  const long per_plan = isolated ? 10 : 6, reserve = 24;  // reserve: state writes, logs, the event loop
  long room = static_cast<long>(rl.rlim_cur) - open_now - reserve;
  return static_cast<int>(std::max(1L, room / per_plan));
}

// The driver of the run core (protocol/run/run_core.h): the core decides what comes next from
// the plans' records and what the state file says; this carries its actions out.
void Run::schedule() {
  if (stopping_) return;
  bool executor = executor_configured(cfg_);
  if (executor && !dispatched() && fd_cap_ < 0) {  // executors at once within the fd limit, once
    int want = cfg_.max_parallel;
    fd_cap_ = fd_parallel_cap(isolated());
    if (fd_cap_ < want)
      emit("max_parallel_lowered", {{"max_parallel", want}, {"now", fd_cap_}}, Sym::Warn,
           "max_parallel " + std::to_string(want) + " lowered to " + std::to_string(fd_cap_) +
               ": this process may open only " + std::to_string(open_files_limit()) +
               " files (`ulimit -n`); the other plans wait for a slot (raise it: `ulimit -n 4096`)");
    core_.set_max_parallel(std::min(want, fd_cap_));
  }
  for (bool again = true; again && !stopping_;) {
    again = false;
    const auto& snap = state_now();
    if (stopping_) return;  // a write that ended in state_now() failed
    if (!snap.ok()) {
      stop(kExecHalted, Result::Error, snap.error);
      return;
    }
    gates::RunState rs = gates::run_state(snap.doc);
    run::Outlook look;
    look.halted = rs == gates::RunState::Halted;
    look.frozen = rs == gates::RunState::Frozen || !gates::waves_may_advance(snap.doc);
    for (const run::Action& a : core_.next(look)) {
      if (stopping_) return;
      switch (a.kind) {
        case run::Act::WriteState:
          flush_plans();
          break;
        case run::Act::Merge:
          merge_plans(a.plans);
          again = true;  // a conflict fails its plan: the core decides again
          break;
        case run::Act::MergeRefused:
          stop(kExecHalted, Result::Halted,
               "Halted: plan " + entries_[a.plans.front()].id + " passed its gates but could not be merged");
          return;
        case run::Act::WaveEnd: {
          std::string ws = to_string(a.failed ? PlanStatus::Failed : PlanStatus::Complete);
          log("wave_end", "", {{"wave", a.wave}, {"status", ws}});
          emit("wave_end", {{"wave", a.wave}, {"status", ws}}, a.failed ? Sym::Fail : Sym::Ok,
               "Wave " + std::to_string(a.wave) + " " + ws);
          break;
        }
        case run::Act::Halted: {
          const json& doc = state_now().doc;
          std::string msg = "the run is halted";
          if (doc.contains("gates") && doc["gates"].is_array() && !doc["gates"].empty() &&
              str(doc["gates"].back(), "status") == "REJECTED") {
            const json& g = doc["gates"].back();
            msg = str(g, "gate_type") + " gate " + str(g, "id") + " for " + str(g, "plan_path") +
                  " was rejected: " + str(g, "feedback");
            emit("gate_rejected",
                 {{"gate_id", str(g, "id")}, {"gate_type", str(g, "gate_type")}, {"feedback", str(g, "feedback")}},
                 Sym::Fail, "Halted: " + msg);
            note("revise and request approval again: yolo request-approval --plan-path " + str(g, "plan_path") +
                 " --gate-type " + str(g, "gate_type"));
          }
          stop(kExecHalted, Result::Halted, "Halted: " + msg);
          return;
        }
        case run::Act::Frozen:
          emit("frozen", {{"running", running_count_}}, Sym::Pause,
               "A gate is open: no new plan starts; waiting for the " + std::to_string(running_count_) +
                   " running plan(s)");
          break;
        case run::Act::Pause: {
          const json& doc = state_now().doc;
          if (const json* g = gates::open_gate(doc))
            pause_for(*g);
          else if (doc.contains("approval") && doc["approval"].is_object())
            pause_for(doc["approval"]);
          stop(kExecPaused, Result::Paused,
               "Paused at a gate: after `yolo approve`, run `yolo execute` again to continue");
          return;
        }
        case run::Act::Halt:
          set_halted(a.reason);
          if (o_.json)
            emit("phase_end", {{"status", to_string(RunStatus::Halted)}, {"reason", a.reason}}, Sym::Fail,
                 "Halted: " + a.reason);
          stop(kExecHalted, Result::Halted, "Phase " + phase_.folder + " halted: " + a.reason);
          return;
        case run::Act::PlanComplete:
          emit("plan_complete", {{"plan", o_.only_plan}}, Sym::Ok, "Plan " + o_.only_plan + " is complete");
          next_ = "`yolo execute` runs the rest of the phase";
          stop(kExecComplete, Result::Complete,
               "Plan " + o_.only_plan + " complete (--plan); the rest of the phase is not");
          return;
        case run::Act::Complete: {
          std::string now = world_.now();
          flush_plans([&](json& st) { execution::complete_phase(st, now); });  // the last records and the end
          if (stopping_) return;  // the write failed: flushed() stopped the run with its error
          log("phase_end", "",
              {{"status", to_string(RunStatus::Complete)},
               {"plans", entries_.size()},
               {"elapsed_ms", static_cast<long long>(elapsed_ms())}});
          emit("phase_end", {{"status", to_string(RunStatus::Complete)}, {"plans", entries_.size()}}, Sym::Ok,
               "Phase " + phase_.folder + " complete: " + std::to_string(entries_.size()) + "/" +
                   std::to_string(entries_.size()) + " plans");
          stop(kExecComplete, Result::Complete, "");
          return;
        }
        case run::Act::AskWaveGate: {
          const long long w = a.wave;
          std::string rel, ids;
          std::vector<std::string> files;  // the wave gate covers every plan of the wave
          for (const auto& e : entries_)
            if (e.wave == w) {
              if (rel.empty()) rel = e.path;
              files.push_back(e.path);
              ids += (ids.empty() ? "" : ", ") + e.id;
            }
          std::string reason = "wave " + std::to_string(w) + " of phase " + phase_.folder + ": plans " + ids;
          GateOutcome g = ensure_gate(gates::GateType::Wave, rel, reason, static_cast<int>(w), files);
          core_.wave_gate(w, g == GateOutcome::Passed ? run::Answer::Passed : run::Answer::Stopped);
          if (g == GateOutcome::Paused)
            stop(kExecPaused, Result::Paused,
                 "Paused before wave " + std::to_string(w) + ": its wave gate awaits approval");
          again = g == GateOutcome::Passed;
          break;
        }
        case run::Act::AskBudget: {             // what the agents cost so far, before the wave starts
          GateOutcome g = budget_gate(a.wave);  // paused or halted: the run stopped
          core_.budget(a.wave, g == GateOutcome::Passed ? run::Answer::Passed : run::Answer::Stopped);
          again = g == GateOutcome::Passed;
          break;
        }
        case run::Act::WaveStart: {
          json ids = json::array();
          std::string names;  // for people: the first few, then how many more (a wave of 80 was one 700-character line)
          constexpr size_t kNamesShown = 8;
          for (size_t x : a.plans) {
            const auto& e = entries_[x];
            ids.push_back(e.id);
            if (ids.size() <= kNamesShown) names += (names.empty() ? "" : ", ") + e.id;
          }
          if (ids.size() > kNamesShown) names += " and " + std::to_string(ids.size() - kNamesShown) + " more";
          log("wave_start", "", {{"wave", a.wave}, {"plans", ids}});
          emit("wave_start", {{"wave", a.wave}, {"total_waves", a.total_waves}, {"plans", ids}}, Sym::Diamond,
               "Wave " + std::to_string(a.wave) + "/" + std::to_string(a.total_waves) + ": " + names);
          break;
        }
        case run::Act::Start:
          start_plans(a.plans, a.wave, a.jobs);
          break;
        case run::Act::MarkReady:
          mark_ready(a.plans);
          break;
      }
    }
  }
}

void Run::mark_ready(const std::vector<size_t>& idx) {
  auto up = state::update(world_, root_, [&](json& doc) {
    std::vector<std::string> ids;
    for (size_t i : idx) ids.push_back(entries_[i].id);
    execution::mark_ready(doc, ids);
    return true;
  });
  if (!up.ok()) {
    stop(kExecHalted, Result::Error, up.error);
    return;
  }
  for (size_t i : idx) {
    const auto& e = entries_[i];
    std::string sp = summary_rel_for(world_, root_, e.path);
    emit("plan_ready", {{"plan", e.id}, {"wave", e.wave}, {"plan_path", e.path}, {"summary_path", sp}}, Sym::Diamond,
         "Plan " + e.id + " ready: waiting for " + sp);
  }
  stop(kExecWaitingSummary, Result::WaitingForSummary,
       "Waiting for SUMMARY: no executor is configured; " + std::to_string(idx.size()) +
           " plan(s) are ready for an agent or a person. Run `yolo execute` again once their SUMMARY files exist.");
}

// The live line: "[████░░░░] 2/4 plans · ◆ 01-02 executor 3.1s/60s · ...".
void Run::draw_live() {
  size_t done = 0;
  for (size_t i = 0; i < entries_.size(); ++i)
    if ((core_.plan(i).step == run::Step::Done && core_.plan(i).status == PlanStatus::Complete) ||
        (entries_[i].summary == SummaryState::Passed && !runs_[i].running))
      ++done;
  const size_t width = 12;
  size_t filled = entries_.empty() ? 0 : done * width / entries_.size();
  std::string bar = "[";
  for (size_t k = 0; k < width; ++k) bar += k < filled ? "█" : "░";
  std::string l = bar + "] " + std::to_string(done) + "/" + std::to_string(entries_.size()) + " plans";
  long long timeout = cfg_.timeout_for(cfg_.executor);
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (!runs_[i].running) continue;
    double secs = static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e9;
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.1fs/%llds", secs, timeout / 1000);
    l += " · " + out::sym(Sym::Diamond) + " " + text::sanitize_for_terminal(entries_[i].id) + " executor" + buf;
    if (const std::string& t = run_of(i).tool; !t.empty()) {  // its current tool call, cut to fit
      l += " " + text::cut(text::sanitize_for_terminal(t), running_count_ > 1 ? 24 : 60);
    }
  }
  if (running_count_ == 0) l += " · waiting";
  out::set_live(l);
}

}  // namespace yolo::runner::phase
