// `yolo execute`: the run's writes of the state file (plan updates queued, then written in one
// locked update, on a worker thread while plans run) and the executors' journal
// (runner/phase_run_internal.h).
#include <unistd.h>

#include "runner/phase_run_internal.h"

namespace yolo::runner::phase {

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

}  // namespace yolo::runner::phase
