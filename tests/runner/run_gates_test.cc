// The run's gates stepped alone on an in-memory disk, a fixed clock and a key of the test's
// own: a gate requested and the run paused with the approve command as its next step; the
// same gate passed once a person approved it; a rejected gate halting the run; a gate on a
// missing file stopping it without a write; a wave gate covering its wave's plans, pausing the
// run before it; a pause at the open gate or the missing approval; no budget, no word.
#include "runner/run_gates.h"

#include <gtest/gtest.h>

#include "protocol/base/seal.h"
#include "protocol/gates/gate_run.h"
#include "protocol/ports/disk.h"
#include "protocol/ports/world.h"
#include "runner/phase_run.h"
#include "fake_teller.h"

namespace yolo::runner::phase {
namespace {

namespace stdfs = std::filesystem;
const stdfs::path kRoot = "/repo";
const std::string kRoadmap = ".yolo-planning/ROADMAP.md";

struct Said {  // beside what the gates tell (test::FakeTeller)
  std::string next;
  std::string halted;
  int stop_code = -1;
  execution::Result stop_result = execution::Result::Complete;
  std::string stop_message;
};

struct Project {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-28T10:00:00Z"};
  seal::Key key{std::string(32, 'k'), {}};
  World w{disk, clock, &key};
  Config cfg = config_from_json(json::object(), "config.json").config;
  StateWrites writes{w, kRoot};
  CommandApprover approver{w};
  Said said;
  test::FakeTeller told;
  RunGates gates{w, kRoot, cfg, writes, approver, told, host()};

  Project() {
    disk.put(kRoot / kRoadmap, "# Roadmap\n");
    EXPECT_TRUE(state::update(w, kRoot, [](json& d) {
                  d = {{"status", "running"}, {"plans", json::array()}};
                  return true;
                }).written);
  }
  RunGates::Host host() {
    RunGates::Host h;
    h.stop = [this](int code, execution::Result r, const std::string& m) {
      said.stop_code = code;
      said.stop_result = r;
      said.stop_message = m;
    };
    h.set_halted = [this](const std::string& why) { said.halted = why; };
    h.next_step = [this](std::string next) { said.next = std::move(next); };
    return h;
  }
  void forget() {  // what was said so far
    said = {};
    told.clear();
  }
  json gates_on_disk() { return state::load(w, kRoot).doc.value("gates", json::array()); }
};

TEST(RunGates, AFreshGateIsRequestedAndTheRunPausesWithTheApproveCommandNext) {
  Project p;
  EXPECT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Paused);
  EXPECT_TRUE(p.told.has("gate_requested"));
  EXPECT_TRUE(p.told.has("gate_paused"));
  json g = p.gates_on_disk();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(gates::has_status(g[0], gates::GateStatus::Open));
  EXPECT_EQ(g[0]["plan_path"], kRoadmap);
  const std::string id = g[0]["id"];
  EXPECT_NE(p.said.next.find("yolo approve " + id), std::string::npos) << p.said.next;
  EXPECT_EQ(p.said.stop_code, -1) << "a pause is the caller's to end the run with";
}

TEST(RunGates, TheSameGatePassesOnceAPersonApprovedItAndNothingNewOpens) {
  Project p;
  ASSERT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Paused);
  p.clock.set("2026-11-28T10:05:00Z");
  auto a = gates::approve_gate(p.w, kRoot, p.cfg, "", "erin", nullptr);  // another process: `yolo approve`
  ASSERT_TRUE(a.ok()) << a.error;
  p.forget();
  EXPECT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Passed);
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"gate_passed"});
  EXPECT_EQ(p.gates_on_disk().size(), 1u);

  // The file the approval covered changes: the approval no longer counts, the gate opens again.
  p.disk.put(kRoot / kRoadmap, "# Roadmap, edited\n");
  p.forget();
  EXPECT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Paused);
  EXPECT_TRUE(p.told.has("approval_invalidated"));
  json g = p.gates_on_disk();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(gates::has_status(g[1], gates::GateStatus::Open));
}

TEST(RunGates, ARejectedGateHaltsTheRunWithItsFeedback) {
  Project p;
  ASSERT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Paused);
  const std::string id = p.gates_on_disk()[0]["id"];
  ASSERT_TRUE(gates::reject_gate(p.w, kRoot, id, "erin", "needs a wave 0").ok());
  p.forget();
  EXPECT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Halted);
  EXPECT_TRUE(p.told.has("gate_rejected"));
  EXPECT_FALSE(p.said.halted.empty());
  EXPECT_EQ(p.said.stop_code, kExecHalted);
  EXPECT_EQ(p.said.stop_result, execution::Result::Halted);
}

TEST(RunGates, AGateOnAMissingFileStopsTheRunAndWritesNoGate) {
  Project p;
  const size_t before = p.disk.writes();
  EXPECT_EQ(p.gates.ensure(gates::GateType::Wave, ".yolo-planning/phases/01/missing.md", "wave 2", 2), GateOutcome::Halted);
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"gate_error"});
  EXPECT_EQ(p.said.stop_code, kExecHalted);
  EXPECT_NE(p.said.stop_message.find("missing.md"), std::string::npos) << p.said.stop_message;
  EXPECT_EQ(p.disk.writes(), before);
  EXPECT_TRUE(p.gates_on_disk().empty());
}

// The phase's plans: waves 1, 1, 2, 2 (their files on the disk).
std::vector<execution::PlanEntry> plans(fs::MemoryDisk& disk) {
  std::vector<execution::PlanEntry> v(4);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i].plan = "0" + std::to_string(i + 1);
    v[i].id = "01-" + v[i].plan;
    v[i].wave = i < 2 ? 1 : 2;
    v[i].path = ".yolo-planning/phases/01-demo/" + v[i].id + "-PLAN.md";
    disk.put(kRoot / v[i].path, "# plan " + v[i].id + "\n");
  }
  return v;
}

TEST(RunGates, AWaveGateCoversThePlansOfItsWaveAndPausesTheRunBeforeIt) {
  Project p;
  const auto entries = plans(p.disk);
  EXPECT_EQ(p.gates.wave_gate(2, entries, "01-demo"), GateOutcome::Paused);
  EXPECT_EQ(p.said.stop_code, kExecPaused);
  EXPECT_EQ(p.said.stop_result, execution::Result::Paused);
  EXPECT_EQ(p.said.stop_message, "Paused before wave 2: its wave gate awaits approval");
  json g = p.gates_on_disk();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0]["gate_type"], "wave");
  EXPECT_EQ(g[0]["wave"], 2);
  EXPECT_EQ(g[0]["plan_path"], entries[2].path) << "the wave's first plan";
  EXPECT_EQ(g[0]["reason"], "wave 2 of phase 01-demo: plans 01-03, 01-04");
  const std::string id = g[0]["id"];
  EXPECT_NE(p.said.next.find("yolo approve " + id), std::string::npos) << p.said.next;

  // Approved, it passes; a plan of the wave changed since, it opens again (it covers them all).
  p.clock.set("2026-11-28T10:05:00Z");
  ASSERT_TRUE(gates::approve_gate(p.w, kRoot, p.cfg, id, "erin", nullptr).ok());
  p.forget();
  EXPECT_EQ(p.gates.wave_gate(2, entries, "01-demo"), GateOutcome::Passed);
  EXPECT_EQ(p.said.stop_code, -1);
  p.disk.put(kRoot / entries[3].path, "# plan 01-04, edited\n");
  EXPECT_EQ(p.gates.wave_gate(2, entries, "01-demo"), GateOutcome::Paused);
  EXPECT_TRUE(p.told.has("approval_invalidated"));
}

TEST(RunGates, APauseStopsTheRunAtTheOpenGateOrTheApprovalItLacks) {
  Project p;
  ASSERT_EQ(p.gates.ensure(gates::GateType::Vision, kRoadmap, "the phase starts", std::nullopt), GateOutcome::Paused);
  const std::string id = p.gates_on_disk()[0]["id"];
  p.forget();
  p.gates.pause(state::load(p.w, kRoot).doc);
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"gate_paused"});
  EXPECT_NE(p.said.next.find("yolo approve " + id), std::string::npos) << p.said.next;
  EXPECT_EQ(p.said.stop_code, kExecPaused);
  EXPECT_EQ(p.said.stop_result, execution::Result::Paused);
  EXPECT_EQ(p.said.stop_message, "Paused at a gate: after `yolo approve`, run `yolo execute` again to continue");

  // No gate open, an approval the waves lack: the run pauses for it.
  p.forget();
  p.gates.pause({{"approval", {{"gate_type", "vision"}, {"plan_path", kRoadmap}, {"approved", false}}}});
  EXPECT_EQ(p.told.names(), std::vector<std::string>{"gate_paused"});
  EXPECT_EQ(p.said.stop_code, kExecPaused);

  // Neither: the run pauses all the same, with nothing more to say.
  p.forget();
  p.gates.pause(json::object());
  EXPECT_TRUE(p.told.events.empty());
  EXPECT_EQ(p.said.stop_code, kExecPaused);
}

TEST(RunGates, WithoutABudgetInTheConfigTheBudgetGatePassesWithoutAWord) {
  Project p;
  EXPECT_EQ(p.gates.budget(2, "01-core", "cid-1"), GateOutcome::Passed);
  EXPECT_TRUE(p.told.names().empty());
  EXPECT_TRUE(p.gates_on_disk().empty());
}

}  // namespace
}  // namespace yolo::runner::phase
