// gates::ensure: which gate a step needs and what to do, as a typed action, from plain
// state documents (no project, no processes).
#include "protocol/gates/gate_step.h"

#include <gtest/gtest.h>

namespace yolo::gates {
namespace {

const std::string kRoadmap = ".yolo-planning/ROADMAP.md";
const std::string kA = "sha256:" + std::string(64, 'a'), kB = "sha256:" + std::string(64, 'b');
const seal::Key kKey{std::string(32, 'k'), {}};  // the key approvals are sealed and checked with

json requested(GateType type = GateType::Vision, const std::string& path = kRoadmap) {
  json doc = {{"status", "running"}, {"phase", 1}};
  RequestInput in;
  in.type = type;
  in.plan_path = path;
  in.now = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(request(doc, in).ok());
  return doc;
}

json approved(const std::string& digest) {
  json doc = requested();
  ResolveInput in;
  in.by = "alice";
  in.digest = digest;
  in.now = "2026-01-01T00:01:00Z";
  in.key = &kKey;
  EXPECT_TRUE(approve(doc, in).ok());
  return doc;
}

TEST(GateStep, NeverRequestedMeansRequest) {
  auto n = ensure(json::object(), GateType::Vision, kRoadmap, kA, kKey);
  EXPECT_EQ(n.step, Step::Request);
  EXPECT_EQ(ensure({{"status", "running"}, {"phase", 1}}, GateType::Wave, "p.md", kA, kKey).step, Step::Request);
}

TEST(GateStep, AnOpenGateOfAnyTypePauses) {
  auto n = ensure(requested(), GateType::Vision, kRoadmap, kA, kKey);
  EXPECT_EQ(n.step, Step::Pause);
  EXPECT_EQ(n.gate["status"], "OPEN");
  auto other = ensure(requested(GateType::Security, "sec.md"), GateType::Vision, kRoadmap, kA, kKey);
  EXPECT_EQ(other.step, Step::Pause);
  EXPECT_EQ(other.gate["gate_type"], "security");
  // A legacy pending approval object (no gates) is an open gate too.
  json legacy = {{"status", "awaiting_approval"}, {"approval", {{"plan_path", kRoadmap}, {"approved", false}}}};
  EXPECT_EQ(ensure(legacy, GateType::Vision, kRoadmap, kA, kKey).step, Step::Pause);
}

TEST(GateStep, ASealedApprovalOfTheFileAsItIsProceedsAnEditReopens) {
  json doc = approved(kA);
  auto n = ensure(doc, GateType::Vision, kRoadmap, kA, kKey);
  EXPECT_EQ(n.step, Step::Proceed);
  EXPECT_EQ(n.gate["approved_by"], "alice");
  auto edited = ensure(doc, GateType::Vision, kRoadmap, kB, kKey);
  EXPECT_EQ(edited.step, Step::Reopen);
  EXPECT_FALSE(edited.status.message.empty());
  EXPECT_EQ(ensure(doc, GateType::Vision, kRoadmap, "", kKey).step, Step::Reopen);  // unreadable now
}

TEST(GateStep, ARejectionHalts) {
  json doc = requested();
  ResolveInput in;
  in.by = "bob";
  in.feedback = "not yet";
  in.now = "2026-01-01T00:02:00Z";
  ASSERT_TRUE(reject(doc, in).ok());
  auto n = ensure(doc, GateType::Vision, kRoadmap, kA, kKey);
  EXPECT_EQ(n.step, Step::Halt);
  EXPECT_EQ(n.gate["feedback"], "not yet");
  EXPECT_EQ(to_string(n.step), "halt");
}

}  // namespace
}  // namespace yolo::gates
