// `yolo execute`'s writes of the state file, a part of the Run (runner/phase_run_internal.h)
// with a class of its own.
//
// Re-reading, validating and rewriting (with fsync) the whole state on every start and end of
// a plan made execute quadratic. The plans' statuses are this run's own (one execute per
// project): their changes are queued here and written in batches (one read-modify-write under
// the lock for every change queued, checking only the plans it changed against the schema), at
// most every 250 ms and never more than a tenth of the time, and at once before anything that
// reads them back (gates, the end of the phase, stop). The timer's batches are written on a
// worker thread: the same locked, atomic read-modify-write, while the loop goes on reaping and
// starting executors; one write at a time, in order, and a write at once (flush) first waits
// for the one in flight. Starts are batched too: who runs a started plan is appended to the
// executors' journal at its spawn (journal), which is what a later run needs after a kill -9
// of this one. The rest of the state (gates, approvals) is another process's to change: now()
// reads the file again only when its identity (inode, size, times) is not the one this run
// last wrote or read. After a batched write, the document it gives has no "plans" (the write
// keeps them for the next one, state::update_plan_records): during the loop, the plans'
// statuses are the run core's. A run killed between two writes loses only statuses that the
// next run finds again (SUMMARY files; a `running` plan becomes pending, its executor ended
// through the journal).
#pragma once
#include <uv.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "protocol/ports/world.h"
#include "protocol/run/execution.h"
#include "protocol/state/state.h"

namespace yolo::runner::phase {

class StateWrites {
 public:
  StateWrites(const World& w, std::filesystem::path root) : world_(w), root_(std::move(root)) {}
  StateWrites(const StateWrites&) = delete;
  StateWrites& operator=(const StateWrites&) = delete;
  ~StateWrites();

  // A write that failed: the owner stops with its error (called on the loop).
  std::function<void(const std::string& error)> on_failed;
  // The owner is stopping: a batch due is written at once, and none is armed again.
  std::function<bool()> stopping = [] { return false; };

  // From the loop's start to its end, changes are written in batches (the loop's timer, a
  // worker thread); outside it, each change is written at once.
  void start(uv_loop_t* loop);
  void end();  // after the last flush: its handles closed (the loop then runs them out)

  // The state now: the file read again only when its identity changed since this run last
  // wrote or read it (and, while a write is in flight, not for its first 20 ms).
  const state::LoadResult& now();
  // A document this run wrote by another path (the phase's prepare, a gate): the state now.
  void wrote(json doc, std::string stamp);

  // Plan `plan` (its id `id`) changes: merged with its change not written yet, if any.
  void queue(size_t plan, const std::string& id, execution::PlanUpdate u);
  // The plan's change not written yet (nullptr: none).
  execution::PlanUpdate* queued(size_t plan);
  void step_done(std::string step);  // a steps_completed entry, in the next write
  // Writes every queued change now (after the write in flight, if any). `also`: one more
  // change of the state, in the same write (a field beside the plans: never a record).
  void flush(const std::function<void(json&)>& also = nullptr);
  // The write in flight, once it ended (waits for it): its document becomes the state now.
  void harvest();
  bool writing() const { return inflight_ != nullptr; }
  bool failed() const { return failed_; }
  bool all_written() const { return order_.empty(); }

  // Who runs a plan that just started: one line appended to the executors' journal, so the
  // plan's `running` can wait for the next batch. false when the journal cannot be written
  // (the caller then writes the state at once).
  bool journal(const std::string& plan_id, const json& record);
  void close_journal(bool remove);  // at the end of the loop (remove: every start is in the state)
  // Who runs each plan of a start, once its executors are spawned, for a later execute to
  // find them (after a kill -9 of this one). The journal has them (journaled: every record
  // reached it) and each plan's `running` and executor reach the state with its queued
  // change, in the next batch. Without the journal, the queued changes are written now; a
  // plan whose change was written before its spawn (none queued now) has its executor
  // written now, in its `running` record. "" or why the state could not be written.
  struct Spawned {
    size_t plan;
    std::string id;
    json executor;  // runner/phase_parts.h: executor_record
  };
  std::string record_executors(const std::vector<Spawned>& spawned, bool journaled);

 private:
  using Batch = std::vector<std::pair<std::string, execution::PlanUpdate>>;
  void arm();  // the timer for the next batch
  void write_async();
  Batch take();
  void written(state::UpdateResult up, uint64_t started_ns, uint64_t ended_ns);

  const World& world_;
  std::filesystem::path root_;
  uv_loop_t* loop_ = nullptr;  // set while the loop runs
  uv_timer_t timer_{};
  uv_async_t done_{};
  bool armed_ = false;
  std::vector<std::optional<execution::PlanUpdate>> by_plan_;
  std::vector<std::pair<size_t, std::string>> order_;  // plans with a change queued, and their ids
  std::vector<std::string> steps_;
  struct Inflight {
    std::thread thread;
    state::UpdateResult result;
    uint64_t started_ns = 0, ended_ns = 0;
  };
  std::unique_ptr<Inflight> inflight_;
  uint64_t last_ns_ = 0, last_cost_ns_ = 0;
  state::LoadResult cache_;
  // The document cache_ held before the last write: freed on the next write's thread, not on
  // the loop (freeing 800 plan records is half a millisecond the loop would spend).
  json retired_;
  std::string stamp_;  // fs::Disk::stamp of the file cache_ holds ("": read it again)
  int journal_fd_ = -1;
  bool failed_ = false;
};

}  // namespace yolo::runner::phase
