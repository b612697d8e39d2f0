// `yolo execute`'s writes of the state file: changes queued, written in batches on a worker
// thread, and the executors' journal (runner/run_state_writes.h says why).
#include "runner/run_state_writes.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace yolo::runner::phase {

namespace stdfs = std::filesystem;

namespace {
// One locked, atomic read-modify-write of the state with the updates: the plans' records, and
// the fields beside them (the steps, and what `also` changes: never a record). Only those are
// checked and serialised again (state::update_plan_records). Runs on a worker thread too: it
// touches nothing but its arguments.
state::UpdateResult write_updates(const World& w, const stdfs::path& root,
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
}  // namespace

StateWrites::~StateWrites() {
  if (inflight_ && inflight_->thread.joinable()) inflight_->thread.join();
  close_journal(false);
}

void StateWrites::start(uv_loop_t* loop) {
  loop_ = loop;
  uv_timer_init(loop, &timer_);
  timer_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));  // the last flush writes what is left
  uv_async_init(loop, &done_, [](uv_async_t* a) { static_cast<StateWrites*>(a->data)->harvest(); });
  done_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&done_));  // the last flush waits for a write in flight
}

void StateWrites::end() {
  if (!loop_) return;
  loop_ = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&done_), nullptr);
}

const state::LoadResult& StateWrites::now() {
  fs::Disk& disk = world_.files();
  const stdfs::path file = state::state_path(root_);
  std::string before = disk.stamp(file);
  if (!stamp_.empty() && before == stamp_ && cache_.ok()) return cache_;
  if (inflight_) {
    // Changed while this run's own write is in flight: most likely that write (it renamed
    // the file and is syncing it). Its end (harvest, when the loop hears of it) gives the
    // document and the identity it wrote, with whatever another process wrote before it (the
    // write is a read-modify-write under the lock). For a short while the run decides on what
    // it knew a moment before: waiting here for the fsyncs held the loop a millisecond or more
    // at every batched write. Not longer: on a slow disk a gate or halt that another process
    // wrote would wait for the fsyncs unseen, so past kStaleWhileWriting the write is waited
    // for and the file read again, as always.
    constexpr uint64_t kStaleWhileWriting = 20'000'000ULL;  // ns
    if (cache_.ok() && uv_hrtime() - inflight_->started_ns < kStaleWhileWriting) return cache_;
    harvest();
    before = disk.stamp(file);
    if (!stamp_.empty() && before == stamp_ && cache_.ok()) return cache_;
  }
  cache_ = state::load(world_, root_);
  // Kept only when the file did not change while it was read (else: read again next time).
  std::string after = disk.stamp(file);
  stamp_ = !before.empty() && after == before && cache_.ok() ? after : std::string();
  return cache_;
}

void StateWrites::wrote(json doc, std::string stamp) {
  cache_ = state::LoadResult{};
  cache_.doc = std::move(doc);
  cache_.exists = true;
  stamp_ = std::move(stamp);
}

void StateWrites::queue(size_t plan, const std::string& id, execution::PlanUpdate u) {
  if (plan >= by_plan_.size()) by_plan_.resize(plan + 1);
  std::optional<execution::PlanUpdate>& q = by_plan_[plan];
  if (q)
    u = execution::merge_updates(*q, std::move(u));  // fields queued before and not written yet are kept
  else
    order_.push_back({plan, id});
  q = std::move(u);
  if (!loop_) return flush();
  arm();
}

execution::PlanUpdate* StateWrites::queued(size_t plan) {
  return plan < by_plan_.size() && by_plan_[plan] ? &*by_plan_[plan] : nullptr;
}

void StateWrites::step_done(std::string step) { steps_.push_back(std::move(step)); }

void StateWrites::arm() {
  if (armed_ || inflight_ || !loop_) return;  // a write in flight arms the timer again when it ends
  uint64_t since = uv_hrtime() - last_ns_;
  // A write (its JSON and two fsyncs) costs the machine: at most one every 250 ms, and never
  // more than a tenth of the time (with a trivial executor, writing more often showed in the
  // run's wall time).
  uint64_t gap = std::max<uint64_t>(250'000'000ULL, 9 * last_cost_ns_);
  uint64_t delay_ms = since >= gap ? 0 : (gap - since) / 1'000'000ULL;
  armed_ = true;
  uv_timer_start(
      &timer_, [](uv_timer_t* t) { static_cast<StateWrites*>(t->data)->write_async(); }, delay_ms, 0);
}

StateWrites::Batch StateWrites::take() {
  Batch ups;
  ups.reserve(order_.size());
  std::sort(order_.begin(), order_.end());  // in plan order
  for (auto& [plan, id] : order_) ups.emplace_back(std::move(id), std::move(*std::exchange(by_plan_[plan], std::nullopt)));
  order_.clear();
  return ups;
}

void StateWrites::flush(const std::function<void(json&)>& also) {
  if (armed_) {
    uv_timer_stop(&timer_);
    armed_ = false;
  }
  harvest();  // in order: the write in flight first
  if (order_.empty() && steps_.empty() && !also) return;
  uint64_t t = uv_hrtime();
  auto up = write_updates(world_, root_, take(), std::exchange(steps_, {}), also);
  written(std::move(up), t, uv_hrtime());
}

void StateWrites::write_async() {
  armed_ = false;
  if (inflight_ || order_.empty() || stopping()) {
    if (stopping()) flush();
    return;
  }
  auto job = std::make_unique<Inflight>();
  job->started_ns = uv_hrtime();
  Inflight* j = job.get();
  uv_async_t* done = &done_;
  job->thread = std::thread([j, done, w = &world_, root = root_, ups = take(), steps = std::exchange(steps_, {}),
                             retired = std::move(retired_)] {
    try {
      j->result = write_updates(*w, root, ups, steps);
    } catch (const std::exception& e) {  // never escapes the thread (that would end the process)
      j->result = state::UpdateResult{};
      j->result.error = state::state_path(root).string() + ": the batched write failed: " + e.what();
    }
    j->ended_ns = uv_hrtime();
    uv_async_send(done);  // wakes the loop: harvest
  });
  inflight_ = std::move(job);
}

void StateWrites::harvest() {
  if (!inflight_) return;
  std::unique_ptr<Inflight> job = std::move(inflight_);
  job->thread.join();
  written(std::move(job->result), job->started_ns, job->ended_ns);
  // Changes queued while it was written: the next batch, on the usual cadence.
  if (!order_.empty() && loop_ && !stopping() && !failed_) arm();
}

void StateWrites::written(state::UpdateResult up, uint64_t started_ns, uint64_t ended_ns) {
  last_ns_ = ended_ns;
  last_cost_ns_ = ended_ns - started_ns;
  if (!up.ok()) {
    failed_ = true;
    if (on_failed) on_failed(up.error);
    return;
  }
  // The document just written is the state now: the next now() need not read it back
  // (unless another process wrote the file since: its identity differs then).
  if (loop_) retired_ = std::move(cache_.doc);  // freed by the next write_async's thread
  wrote(std::move(up.doc), std::move(up.stamp));
}

bool StateWrites::journal(const std::string& plan_id, const json& record) {
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

std::string StateWrites::record_executors(const std::vector<Spawned>& spawned, bool journaled) {
  if (spawned.empty()) return "";
  const bool missing =
      std::any_of(spawned.begin(), spawned.end(), [&](const Spawned& s) { return queued(s.plan) == nullptr; });
  if (!journaled || missing) flush();
  if (!missing) return "";
  auto rec = state::update(world_, root_, [&](json& doc) {
    bool any = false;
    for (const auto& s : spawned)
      if (json* p = execution::find_plan(doc, s.id);
          p && execution::plan_status(*p) == execution::PlanStatus::Running && !p->contains("executor")) {
        (*p)["executor"] = s.executor;
        any = true;
      }
    return any;
  });
  return rec.ok() ? "" : rec.error;
}

void StateWrites::close_journal(bool remove) {
  if (journal_fd_ < 0) return;
  ::close(journal_fd_);
  journal_fd_ = -1;
  if (remove) ::unlink((root_ / execution::kExecutorsJournal).c_str());
}

}  // namespace yolo::runner::phase
