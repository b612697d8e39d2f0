// What the run's parts reach of its plans (runner/plans_host.h: PlansHost), alone: a Host's
// shared members are set and reach the run's entries, records, queued writes, core, flags and
// next step; a member a Host lacks is left out, and what only that part asks stays the run's.
#include "runner/plans_host.h"

#include <gtest/gtest.h>

#include "protocol/ports/disk.h"
#include "protocol/ports/world.h"

namespace yolo::runner::phase {
namespace {

struct ARun {  // what a run holds, as PlansHost reads it
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-28T10:00:00Z"};
  World w{disk, clock, nullptr};
  std::vector<execution::PlanEntry> entries;
  PlanRuns runs;
  StateWrites writes{w, "/repo"};
  run::Core core;
  bool interrupted = false, stopping = false, isolated = false;
  std::string next;
  PlansHost host{entries, runs, writes, core, interrupted, stopping, next, [this] { return isolated; }};

  ARun() {
    for (const char* id : {"01-01", "01-02"}) {
      execution::PlanEntry e;
      e.id = id;
      entries.push_back(e);
    }
    runs.reset(std::vector<PlanRun>(2));
    EXPECT_TRUE(disk.make_dirs("/repo/.yolo-planning").ok());
    writes.on_failed = [this](const std::string& e) { write_error = e; };
    EXPECT_TRUE(state::update(w, "/repo", [](json& d) {
                  d = {{"status", "running"},
                       {"plans",
                        {{{"id", "01-01"}, {"path", "p/01-01-PLAN.md"}, {"status", "pending"}},
                         {{"id", "01-02"}, {"path", "p/01-02-PLAN.md"}, {"status", "pending"}}}}};
                  return true;
                }).written);
  }
  json plan_on_disk(size_t i) { return state::load(w, "/repo").doc["plans"][i]; }
  std::string write_error;
};

// Every shared member, as a part's Host has them (the hold of one returns its child, of
// another nothing), and one of its own.
struct AllShared {
  std::function<size_t()> plans;
  std::function<const execution::PlanEntry&(size_t)> entry;
  std::function<PlanRun&(size_t)> plan;
  std::function<const PlanRun*(size_t)> plan_at;
  std::function<Process*(size_t, std::unique_ptr<Process>)> hold;
  std::function<void(size_t)> release;
  std::function<size_t()> running;
  std::function<void(size_t, execution::PlanUpdate)> queue;
  std::function<void()> flush;
  std::function<run::Core&()> core;
  std::function<bool()> interrupted;
  std::function<bool()> stopping;
  std::function<bool()> isolated;
  std::function<void(std::string)> next_step;
  std::function<void()> own;  // only this part's: the run's to set
};
struct Few {
  std::function<const execution::PlanEntry&(size_t)> entry;
  std::function<void(size_t, std::unique_ptr<Process>)> hold;
  std::function<int()> own;
};

TEST(PlansHost, TheSharedMembersReachTheRunsPlans) {
  ARun r;
  AllShared h = r.host.fill(AllShared{});
  EXPECT_FALSE(h.own) << "what only the part asks is not set";
  EXPECT_EQ(h.plans(), 2u);
  EXPECT_EQ(h.entry(1).id, "01-02");
  EXPECT_EQ(&h.plan(1), r.runs.at(1));
  EXPECT_EQ(h.plan_at(0), r.runs.at(0));
  EXPECT_EQ(h.plan_at(5), nullptr);
  EXPECT_EQ(h.hold(1, nullptr), nullptr);
  EXPECT_EQ(h.running(), 1u);
  EXPECT_TRUE(r.runs.at(1)->running);
  h.release(1);
  EXPECT_EQ(r.runs.running(), 0u);
  EXPECT_EQ(&h.core(), &r.core);

  h.queue(1, execution::started("2026-11-28T10:00:00Z"));  // no loop: written at once, by its id
  h.flush();
  EXPECT_EQ(r.write_error, "");
  EXPECT_EQ(r.plan_on_disk(1)["status"], "running");
  EXPECT_EQ(r.plan_on_disk(0)["status"], "pending");

  EXPECT_FALSE(h.interrupted() || h.stopping() || h.isolated());
  r.stopping = true;  // read when called, not when filled
  EXPECT_TRUE(h.stopping() && !h.interrupted() && !h.isolated());
  r.interrupted = true;
  EXPECT_TRUE(h.interrupted() && !h.isolated());
  r.isolated = true;
  EXPECT_TRUE(h.isolated());
  h.next_step("yolo approve g-1");
  EXPECT_EQ(r.next, "yolo approve g-1");
}

TEST(PlansHost, AHostGetsOnlyTheMembersItHas) {
  ARun r;
  Few h = r.host.fill(Few{});
  EXPECT_EQ(h.entry(0).id, "01-01");
  h.hold(0, nullptr);  // its hold returns nothing
  EXPECT_EQ(r.runs.running(), 1u);
  EXPECT_FALSE(h.own);
}

}  // namespace
}  // namespace yolo::runner::phase
