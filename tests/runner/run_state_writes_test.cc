// The run's writes of the state file, stepped alone on a libuv loop and an in-memory disk:
// changes queued, merged per plan, written in one batch; a failed write stops the owner; the
// state read again only when another process changed it.
#include "runner/run_state_writes.h"

#include <gtest/gtest.h>

#include "protocol/ports/disk.h"
#include "protocol/ports/world.h"

namespace yolo::runner::phase {
namespace {

namespace stdfs = std::filesystem;
const stdfs::path kRoot = "/repo";

struct Project {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-28T10:00:00Z"};
  World w{disk, clock, nullptr};
  Project() {
    EXPECT_TRUE(disk.make_dirs(kRoot / ".yolo-planning").ok());
    EXPECT_TRUE(state::update(w, kRoot, [](json& d) {
                  d = {{"status", "running"},
                       {"plans", {{{"id", "01-01"}, {"status", "pending"}}, {{"id", "01-02"}, {"status", "pending"}}}}};
                  return true;
                }).written);
  }
  json on_disk() { return json::parse(disk.get(state::state_path(kRoot))); }
};

// Runs the loop until done() holds (checked every few milliseconds), at most two seconds.
void run_until(uv_loop_t* loop, const std::function<bool()>& done) {
  struct Check {
    uv_timer_t t{};
    std::function<bool()> done;
    int left = 400;
  } c;
  c.done = done;
  uv_timer_init(loop, &c.t);
  c.t.data = &c;
  uv_timer_start(
      &c.t,
      [](uv_timer_t* t) {
        auto* self = static_cast<Check*>(t->data);
        if (self->done() || --self->left == 0) uv_timer_stop(t);
      },
      5, 5);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t*>(&c.t), nullptr);
  uv_run(loop, UV_RUN_DEFAULT);
}

TEST(StateWrites, OutsideTheLoopEachChangeIsWrittenAtOnce) {
  Project p;
  StateWrites writes(p.w, kRoot);
  const size_t before = p.disk.writes();
  writes.queue(0, "01-01", execution::started(std::string("2026-11-28T10:00:01Z")));
  EXPECT_EQ(p.disk.writes(), before + 1);
  EXPECT_TRUE(writes.all_written());
  EXPECT_EQ(p.on_disk()["plans"][0]["status"], "running") << p.on_disk().dump();
}

TEST(StateWrites, OnTheLoopAPlansChangesAreMergedAndWrittenInOneBatch) {
  Project p;
  uv_loop_t loop;
  uv_loop_init(&loop);
  StateWrites writes(p.w, kRoot);
  writes.start(&loop);
  const size_t before = p.disk.writes();
  writes.on_failed = [](const std::string& e) { ADD_FAILURE() << e; };
  writes.queue(1, "01-02", execution::started(std::string("2026-11-28T10:00:01Z")));
  writes.queue(0, "01-01", execution::started(std::string("2026-11-28T10:00:01Z")));
  writes.queue(1, "01-02", execution::ended({execution::PlanStatus::Complete, "", json::array()}, "2026-11-28T10:00:02Z"));
  ASSERT_NE(writes.queued(1), nullptr);
  EXPECT_EQ(writes.queued(1)->status, execution::PlanStatus::Complete);
  EXPECT_EQ(writes.queued(1)->started_at, "2026-11-28T10:00:01Z") << "what was queued earlier is kept";
  EXPECT_EQ(p.disk.writes(), before) << "nothing written before the loop runs";
  run_until(&loop, [&] { return writes.all_written() && !writes.writing(); });
  EXPECT_TRUE(writes.all_written());
  EXPECT_EQ(writes.queued(1), nullptr);
  EXPECT_EQ(p.disk.writes(), before + 1) << "three changes, one write";
  json d = p.on_disk();
  EXPECT_EQ(d["plans"][0]["status"], "running") << d.dump();
  EXPECT_EQ(d["plans"][1]["status"], "complete") << d.dump();
  EXPECT_EQ(d["plans"][1]["started_at"], "2026-11-28T10:00:01Z") << d.dump();
  writes.flush();
  EXPECT_EQ(p.disk.writes(), before + 1) << "nothing left to write";
  writes.end();
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST(StateWrites, AFailedWriteStopsTheOwnerWithItsErrorAndLeavesTheFile) {
  Project p;
  StateWrites writes(p.w, kRoot);
  std::string said;
  writes.on_failed = [&](const std::string& e) { said = e; };
  const std::string before = p.disk.get(state::state_path(kRoot));
  p.disk.fail_writes("No space left on device");
  writes.queue(0, "01-01", execution::started(std::string("2026-11-28T10:00:01Z")));
  EXPECT_TRUE(writes.failed());
  EXPECT_NE(said.find("No space left on device"), std::string::npos) << said;
  EXPECT_EQ(p.disk.get(state::state_path(kRoot)), before);
}

TEST(StateWrites, TheStateIsReadAgainOnlyWhenAnotherProcessChangedIt) {
  Project p;
  StateWrites writes(p.w, kRoot);
  writes.queue(0, "01-01", execution::started(std::string("2026-11-28T10:00:01Z")));
  const state::LoadResult& first = writes.now();
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_EQ(first.doc["status"], "running");
  EXPECT_EQ(&writes.now(), &first);
  // Another process halts the run: its write is seen at the next read.
  json d = p.on_disk();
  d["status"] = "halted";
  p.disk.put(state::state_path(kRoot), d.dump(2) + "\n");
  EXPECT_EQ(writes.now().doc["status"], "halted") << writes.now().doc.dump();
}

TEST(StateWrites, AStartsExecutorsWaitForTheNextBatchUnlessTheJournalFailedOrTheirPlanWasWrittenAlready) {
  Project p;
  uv_loop_t loop;
  uv_loop_init(&loop);
  StateWrites writes(p.w, kRoot);
  writes.start(&loop);
  writes.on_failed = [](const std::string& e) { ADD_FAILURE() << e; };
  const json exec0 = {{"pid", 100}, {"pgid", 100}}, exec1 = {{"pid", 101}, {"pgid", 101}};
  // Plan 01-01 started: its change queued with who runs it (as the executor's start adds it).
  execution::PlanUpdate u = execution::started(std::string("2026-11-28T10:00:01Z"));
  u.set["executor"] = exec0;
  writes.queue(0, "01-01", u);
  const size_t before = p.disk.writes();
  EXPECT_EQ(writes.record_executors({{0, "01-01", exec0}}, /*journaled=*/true), "");
  EXPECT_EQ(p.disk.writes(), before) << "the journal has it: the next batch writes it";
  // The journal failed: the queued change is written now.
  EXPECT_EQ(writes.record_executors({{0, "01-01", exec0}}, /*journaled=*/false), "");
  EXPECT_EQ(p.disk.writes(), before + 1);
  EXPECT_EQ(p.on_disk()["plans"][0]["executor"], exec0) << p.on_disk().dump();
  // Plan 01-02's `running` was written before its executor was spawned (nothing queued now):
  // its executor is written at once, into its running record only; 01-01's is kept.
  writes.queue(1, "01-02", execution::started(std::string("2026-11-28T10:00:02Z")));
  writes.flush();
  ASSERT_EQ(writes.queued(1), nullptr);
  EXPECT_EQ(writes.record_executors({{1, "01-02", exec1}, {0, "01-01", {{"pid", 999}}}}, /*journaled=*/true), "");
  json d = p.on_disk();
  EXPECT_EQ(d["plans"][1]["executor"], exec1) << d.dump();
  EXPECT_EQ(d["plans"][1]["status"], "running") << d.dump();
  EXPECT_EQ(d["plans"][0]["executor"], exec0) << "an executor recorded already is kept";
  writes.end();
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST(StateWrites, ExecutorsThatCannotBeWrittenSayWhy) {
  Project p;
  StateWrites writes(p.w, kRoot);
  writes.queue(1, "01-02", execution::started(std::string("2026-11-28T10:00:02Z")));  // written at once
  p.disk.fail_writes("No space left on device");
  const std::string err = writes.record_executors({{1, "01-02", {{"pid", 101}}}}, /*journaled=*/true);
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
}

}  // namespace
}  // namespace yolo::runner::phase
