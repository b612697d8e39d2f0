#include "protocol/gates/gates.h"

#include "protocol/gates/approvals.h"
#include "protocol/gates/approver_policy.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gate_run.h"
#include "protocol/base/seal.h"

#include <gtest/gtest.h>

#include "protocol/state/config.h"
#include "protocol/state/events.h"
#include "protocol/base/sha256.h"
#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo::gates {
namespace {

const std::string kNow = "2026-11-22T05:00:00Z";
const std::string kLater = "2026-11-22T06:00:00Z";
const std::string kDigestA = sha256_digest("roadmap v1");
const std::string kDigestB = sha256_digest("roadmap v2");

void expect_valid(const json& doc) { EXPECT_EQ(state::validate(doc).error, "") << doc.dump(2); }

RequestInput req(GateType t, const std::string& path, const std::string& reason = {}) {
  RequestInput in;
  in.type = t;
  in.plan_path = path;
  in.reason = reason;
  in.now = kNow;
  in.state_file = "/p/.yolo-planning/.execution-state.json";
  return in;
}

const seal::Key& kKey = test::test_key();  // real_world()'s: approvals here and through it agree

ResolveInput by(const std::string& who, const std::string& digest = kDigestA, const std::string& id = {}) {
  ResolveInput in{id, who, digest, {}, kLater};
  in.key = &kKey;
  return in;
}

json frozen_vision() {
  json doc = {{"status", "running"}, {"phase", 1}, {"correlation_id", "cid-1"}};
  auto t = request(doc, req(GateType::Vision, ".yolo-planning/ROADMAP.md"));
  EXPECT_TRUE(t.ok()) << t.error;
  return doc;
}

TEST(Gates, NamesRoundTrip) {
  for (auto t : {GateType::Vision, GateType::Wave, GateType::Security, GateType::ScopeChange})
    EXPECT_EQ(parse_gate_type(to_string(t)), t);
  EXPECT_FALSE(parse_gate_type("Vision"));
  EXPECT_FALSE(parse_gate_type(""));
  EXPECT_EQ(to_string(GateStatus::Open), "OPEN");
  EXPECT_EQ(to_string(RunState::Frozen), "FROZEN");
}

TEST(Gates, ARequestsAnswerIsReadByNameAndAnythingElseIsRejected) {
  for (Answer a : {Answer::Paused, Answer::Approved, Answer::Rejected})
    EXPECT_EQ(answer_of({{"status", answer_name(a)}}), a) << answer_name(a);
  EXPECT_EQ(answer_of({{"status", "resumed"}}), Answer::Rejected);
  EXPECT_EQ(answer_of(json::object()), Answer::Rejected);
  EXPECT_EQ(answer_of(json()), Answer::Rejected);
}

TEST(Gates, RunStateIsDerivedFromTheDocument) {
  EXPECT_EQ(run_state(json::object()), RunState::Running);
  EXPECT_EQ(run_state(json(nullptr)), RunState::Running);
  EXPECT_EQ(run_state({{"status", "running"}}), RunState::Running);
  EXPECT_EQ(run_state({{"status", "awaiting_approval"}}), RunState::Frozen);
  EXPECT_EQ(run_state({{"status", "halted"}}), RunState::Halted);
  EXPECT_EQ(run_state({{"status", "complete"}}), RunState::Complete);
  json doc = {{"status", "running"},
              {"gates", {{{"id", "g"}, {"gate_type", "wave"}, {"status", "OPEN"}, {"created_at", kNow}}}}};
  EXPECT_EQ(run_state(doc), RunState::Frozen);
}

TEST(Gates, RequestFreezesAndAnswersPaused) {
  json doc = {{"status", "running"}, {"phase", 2}, {"correlation_id", "keep-me"}};
  auto t = request(doc, req(GateType::Vision, ".yolo-planning/ROADMAP.md", "roadmap written"));
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_TRUE(t.changed);
  expect_valid(doc);
  EXPECT_EQ(doc["status"], "awaiting_approval");
  EXPECT_EQ(doc["correlation_id"], "keep-me");
  EXPECT_EQ(run_state(doc), RunState::Frozen);
  const json& a = doc["approval"];
  EXPECT_EQ(a["requested_at"], kNow);
  EXPECT_EQ(a["plan_path"], ".yolo-planning/ROADMAP.md");
  EXPECT_EQ(a["approved"], false);
  EXPECT_EQ(a["gate_type"], "vision");
  EXPECT_EQ(a["gate_id"], "vision-1");
  ASSERT_EQ(doc["gates"].size(), 1u);
  const json& g = doc["gates"][0];
  EXPECT_EQ(g["id"], "vision-1");
  EXPECT_EQ(g["status"], "OPEN");
  EXPECT_EQ(g["reason"], "roadmap written");
  EXPECT_EQ(g["created_at"], kNow);
  EXPECT_TRUE(g["resolved_at"].is_null());
  EXPECT_EQ(t.answer["status"], "paused");
  EXPECT_EQ(t.answer["approval"], json({{"requested_at", kNow},
                                        {"plan_path", ".yolo-planning/ROADMAP.md"},
                                        {"state_file", "/p/.yolo-planning/.execution-state.json"}}));
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].type, "gate_frozen");
  EXPECT_EQ(t.events[0].phase, 2);
  EXPECT_EQ(t.events[0].correlation_id, "keep-me");
  EXPECT_EQ(t.events[0].data["gate_id"], "vision-1");
  EXPECT_EQ(t.events[0].data["gate_type"], "vision");
  EXPECT_NE(t.message.find("Awaiting human approval for .yolo-planning/ROADMAP.md"), std::string::npos);
}

TEST(Gates, RequestOnAnEmptyStateCreatesACorrelationId) {
  json doc = json::object();
  auto t = request(doc, req(GateType::Security, "src/auth.md"));
  ASSERT_TRUE(t.ok());
  expect_valid(doc);
  EXPECT_FALSE(doc["correlation_id"].get<std::string>().empty());
  EXPECT_EQ(doc["gates"][0]["id"], "security-1");
}

TEST(Gates, SameRequestWhilePendingIsIdempotent) {
  json doc = frozen_vision();
  json before = doc;
  RequestInput again = req(GateType::Vision, ".yolo-planning/ROADMAP.md");
  again.now = kLater;  // a later call answers as the first one did
  auto t = request(doc, again);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_FALSE(t.changed);
  EXPECT_TRUE(t.events.empty());
  EXPECT_EQ(doc, before);
  EXPECT_EQ(t.answer["approval"]["requested_at"], kNow);
  EXPECT_EQ(t.answer["gate_id"], "vision-1");
}

TEST(Gates, ADifferentGateWhileFrozenIsAnError) {
  json doc = frozen_vision();
  json before = doc;
  auto other_file = request(doc, req(GateType::Vision, "other.md"));
  EXPECT_NE(other_file.error.find("Cannot freeze: already frozen"), std::string::npos) << other_file.error;
  EXPECT_NE(other_file.error.find("vision-1"), std::string::npos);
  auto other_type = request(doc, req(GateType::Security, ".yolo-planning/ROADMAP.md"));
  EXPECT_NE(other_type.error.find("Cannot freeze: already frozen"), std::string::npos);
  EXPECT_EQ(doc, before);
}

TEST(Gates, RequestOnACompleteRunIsAnError) {
  json doc = {{"status", "complete"}};
  auto t = request(doc, req(GateType::Wave, "p.md"));
  EXPECT_NE(t.error.find("Cannot freeze"), std::string::npos);
  EXPECT_EQ(doc, json({{"status", "complete"}}));
  json empty_path = json::object();
  EXPECT_FALSE(request(empty_path, req(GateType::Wave, "")).ok());
}

TEST(Gates, ApproveResumesTheRun) {
  json doc = frozen_vision();
  auto t = approve(doc, by("alice"));
  ASSERT_TRUE(t.ok()) << t.error;
  expect_valid(doc);
  EXPECT_EQ(doc["status"], "running");
  EXPECT_EQ(run_state(doc), RunState::Running);
  const json& g = doc["gates"][0];
  EXPECT_EQ(g["status"], "APPROVED");
  EXPECT_EQ(g["approved_by"], "alice");
  EXPECT_EQ(g["digest"], kDigestA);
  EXPECT_EQ(g["resolved_at"], kLater);
  const json& a = doc["approval"];
  EXPECT_EQ(a["approved"], true);
  EXPECT_EQ(a["approved_by"], "alice");
  EXPECT_EQ(a["approved_at"], kLater);
  EXPECT_EQ(a["digest"], kDigestA);
  EXPECT_EQ(doc["correlation_id"], "cid-1");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].type, "gate_resumed");
  EXPECT_EQ(t.events[0].data["gate_id"], "vision-1");
  EXPECT_EQ(t.events[0].data["approved_by"], "alice");
  EXPECT_NE(t.message.find("Vision gate: cleared"), std::string::npos);
  EXPECT_TRUE(waves_may_advance(doc));
}

TEST(Gates, ResolvingWhenNothingIsPendingIsAnError) {
  json doc = {{"status", "running"}};
  EXPECT_EQ(approve(doc, by("a")).error, "No pending approval to resolve");
  EXPECT_EQ(reject(doc, ResolveInput{{}, "a", {}, "no", kNow}).error, "No pending approval to resolve");
  EXPECT_EQ(doc, json({{"status", "running"}}));

  json frozen = frozen_vision();
  ASSERT_TRUE(approve(frozen, by("a")).ok());
  json after = frozen;
  auto twice = approve(frozen, by("b", kDigestA, "vision-1"));
  EXPECT_NE(twice.error.find("No pending approval to resolve"), std::string::npos);
  EXPECT_NE(twice.error.find("APPROVED"), std::string::npos);
  EXPECT_EQ(approve(frozen, by("b")).error, "No pending approval to resolve");
  EXPECT_NE(reject(frozen, ResolveInput{"vision-1", "b", {}, "late", kNow}).error.find("APPROVED"), std::string::npos);
  auto unknown = approve(frozen, by("b", kDigestA, "nope-9"));
  EXPECT_NE(unknown.error.find("no gate 'nope-9'"), std::string::npos) << unknown.error;
  EXPECT_EQ(frozen, after);
}

// The time comes from the World's clock through the caller, never from the system's: a
// transition without one changes nothing.
TEST(Gates, ATransitionWithoutATimeIsRefusedAndChangesNothing) {
  json doc = {{"status", "running"}};
  RequestInput untimed = req(GateType::Vision, ".yolo-planning/ROADMAP.md");
  untimed.now.clear();
  EXPECT_NE(request(doc, untimed).error.find("no time"), std::string::npos);
  EXPECT_EQ(doc, json({{"status", "running"}}));
  json frozen = frozen_vision();
  json before = frozen;
  ResolveInput a = by("a");
  a.now.clear();
  EXPECT_NE(approve(frozen, a).error.find("no time"), std::string::npos);
  EXPECT_NE(reject(frozen, ResolveInput{{}, "a", {}, "no", ""}).error.find("no time"), std::string::npos);
  EXPECT_EQ(frozen, before);
  // A legacy approval without requested_at is dated by the time passed in.
  json legacy = {{"status", "awaiting_approval"},
                 {"approval", {{"plan_path", ".yolo-planning/ROADMAP.md"}, {"approved", false}}}};
  ASSERT_TRUE(adopt_legacy_approval(legacy, kLater));
  ASSERT_EQ(legacy["gates"].size(), 1u);
  EXPECT_EQ(legacy["gates"][0]["created_at"], kLater) << legacy.dump();
}

TEST(Gates, ApproveNeedsAnApproverAndADigest) {
  json doc = frozen_vision();
  json before = doc;
  EXPECT_NE(approve(doc, by("")).error.find("approved_by"), std::string::npos);
  EXPECT_NE(approve(doc, by("a", "")).error.find("digest"), std::string::npos);
  EXPECT_NE(approve(doc, by("a", "md5:abc")).error.find("digest"), std::string::npos);
  EXPECT_EQ(doc, before);
}

TEST(Gates, RejectHaltsAndKeepsFeedbackThenARevisedRequestReopens) {
  json doc = frozen_vision();
  EXPECT_NE(reject(doc, ResolveInput{{}, "bob", {}, "   ", kLater}).error.find("feedback"), std::string::npos);
  auto t = reject(doc, ResolveInput{{}, "bob", {}, "Wave 2 is too big", kLater});
  ASSERT_TRUE(t.ok()) << t.error;
  expect_valid(doc);
  EXPECT_EQ(doc["status"], "halted");
  EXPECT_EQ(run_state(doc), RunState::Halted);
  EXPECT_EQ(doc["gates"][0]["status"], "REJECTED");
  EXPECT_EQ(doc["gates"][0]["feedback"], "Wave 2 is too big");
  EXPECT_EQ(doc["approval"]["approved"], false);
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].type, "gate_rejected");
  EXPECT_EQ(t.events[0].data["feedback"], "Wave 2 is too big");
  EXPECT_FALSE(waves_may_advance(doc));
  EXPECT_NE(set_running(doc).error.find("halted"), std::string::npos);

  auto again = request(doc, req(GateType::Vision, ".yolo-planning/ROADMAP.md"));
  ASSERT_TRUE(again.ok()) << again.error;
  expect_valid(doc);
  EXPECT_EQ(again.gate["id"], "vision-2");
  EXPECT_EQ(doc["status"], "awaiting_approval");
  EXPECT_EQ(doc["gates"][0]["feedback"], "Wave 2 is too big");  // kept for the author
  ASSERT_TRUE(approve(doc, by("bob", kDigestB)).ok());
  EXPECT_EQ(doc["status"], "running");
}

TEST(Gates, ResumeKeepsCorrelationIdAndNeverOverwritesAwaitingApproval) {
  json doc = frozen_vision();
  EXPECT_EQ(resume(doc, "new-id"), RunState::Frozen);
  EXPECT_EQ(doc["correlation_id"], "cid-1");
  EXPECT_EQ(doc["status"], "awaiting_approval");
  std::string err = set_running(doc).error;
  EXPECT_NE(err.find("vision-1"), std::string::npos) << err;
  EXPECT_EQ(doc["status"], "awaiting_approval");
  // Only an approval brings it back.
  ASSERT_TRUE(approve(doc, by("a")).ok());
  EXPECT_EQ(set_running(doc).error, "");
  EXPECT_EQ(doc["status"], "running");

  json fresh = json::object();
  EXPECT_EQ(resume(fresh, "cid-new"), RunState::Running);
  EXPECT_EQ(fresh["correlation_id"], "cid-new");
  EXPECT_EQ(fresh["status"], "running");
  json complete = {{"status", "complete"}, {"correlation_id", "x"}};
  EXPECT_EQ(resume(complete, "y"), RunState::Complete);
  EXPECT_EQ(complete["correlation_id"], "x");
  EXPECT_NE(set_running(complete).error, "");
}

TEST(Gates, AStateWithNoApprovalHasNotPassedTheVisionGate) {
  json doc = {{"status", "running"}};
  EXPECT_FALSE(waves_may_advance(doc));
  auto st = approval_status(doc, GateType::Vision, ".yolo-planning/ROADMAP.md", kDigestA, kKey);
  EXPECT_EQ(st.check, ApprovalCheck::Missing);
  EXPECT_FALSE(st.counts());
}

TEST(Gates, AnEditAfterApprovalInvalidatesItAndReopensTheGate) {
  const std::string path = ".yolo-planning/ROADMAP.md";
  json doc = frozen_vision();
  EXPECT_EQ(approval_status(doc, GateType::Vision, path, kDigestA, kKey).check, ApprovalCheck::Pending);
  ASSERT_TRUE(approve(doc, by("alice", kDigestA)).ok());
  EXPECT_TRUE(approval_status(doc, GateType::Vision, path, kDigestA, kKey).counts());
  // Unchanged: nothing to do.
  auto same = reopen_if_stale(doc, GateType::Vision, path, kDigestA, kKey, kLater);
  EXPECT_TRUE(same.ok());
  EXPECT_FALSE(same.changed);

  auto st = approval_status(doc, GateType::Vision, path, kDigestB, kKey);
  EXPECT_EQ(st.check, ApprovalCheck::Stale);
  EXPECT_NE(st.message.find("changed after it was approved by alice"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("no longer counts"), std::string::npos);

  auto t = reopen_if_stale(doc, GateType::Vision, path, kDigestB, kKey, kLater);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_TRUE(t.changed);
  expect_valid(doc);
  EXPECT_EQ(doc["status"], "awaiting_approval");
  EXPECT_EQ(doc["approval"]["approved"], false);
  EXPECT_EQ(doc["gates"].size(), 2u);
  EXPECT_EQ(doc["gates"][1]["status"], "OPEN");
  EXPECT_NE(doc["gates"][1]["reason"].get<std::string>().find("changed after"), std::string::npos);
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].type, "approval_invalidated");
  EXPECT_EQ(t.events[0].data["gate_id"], "vision-1");
  EXPECT_EQ(t.events[1].type, "gate_frozen");
  EXPECT_FALSE(waves_may_advance(doc));
  EXPECT_EQ(approval_status(doc, GateType::Vision, path, kDigestB, kKey).check, ApprovalCheck::Pending);
  ASSERT_TRUE(approve(doc, by("alice", kDigestB)).ok());
  EXPECT_TRUE(approval_status(doc, GateType::Vision, path, kDigestB, kKey).counts());
  EXPECT_EQ(approval_status(doc, GateType::Vision, path, kDigestA, kKey).check, ApprovalCheck::Stale);
}

TEST(Gates, StaleWhileAnotherGateIsOpenIsReportedNotReopened) {
  const std::string path = ".yolo-planning/ROADMAP.md";
  json doc = frozen_vision();
  ASSERT_TRUE(approve(doc, by("a", kDigestA)).ok());
  ASSERT_TRUE(request(doc, req(GateType::Security, "sec.md")).ok());
  json before = doc;
  auto t = reopen_if_stale(doc, GateType::Vision, path, kDigestB, kKey, kLater);
  EXPECT_NE(t.error.find("security-2"), std::string::npos) << t.error;
  EXPECT_EQ(doc, before);
}

TEST(Gates, ASecurityGateMidRunFreezesWavesUntilApproved) {
  json doc = frozen_vision();
  ASSERT_TRUE(approve(doc, by("a", kDigestA)).ok());
  EXPECT_TRUE(waves_may_advance(doc));
  auto t = request(doc, req(GateType::Security, "security/REVIEW.md", "auth change"));
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(waves_may_advance(doc));
  EXPECT_EQ(run_state(doc), RunState::Frozen);
  // The vision approval still counts on its own.
  EXPECT_TRUE(approval_status(doc, GateType::Vision, ".yolo-planning/ROADMAP.md", kDigestA, kKey).counts());
  ASSERT_TRUE(approve(doc, by("sec-team", kDigestB)).ok());
  EXPECT_TRUE(waves_may_advance(doc));
  EXPECT_EQ(list_gates(doc).size(), 2u);
  EXPECT_TRUE(list_gates(doc, true).empty());
}

TEST(Gates, ALegacyPendingApprovalIsAdoptedAsAGate) {
  json doc = {{"status", "awaiting_approval"},
              {"approval", {{"requested_at", kNow}, {"plan_path", ".yolo-planning/ROADMAP.md"}, {"approved", false}}}};
  EXPECT_EQ(run_state(doc), RunState::Frozen);
  auto open = list_gates(doc, true);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0]["gate_type"], "vision");
  auto t = approve(doc, by("carol"));
  ASSERT_TRUE(t.ok()) << t.error;
  expect_valid(doc);
  EXPECT_EQ(doc["approval"]["approved"], true);
  EXPECT_EQ(doc["status"], "running");
  EXPECT_TRUE(seal::valid(t.gate, kKey)) << t.gate.dump();
  // A legacy approved object (another tool's, or written by hand) carries no seal: it does
  // not count, and the gate opens again like a stale approval.
  json legacy = {{"status", "running"}, {"approval", {{"plan_path", "R.md"}, {"approved", true}}}};
  auto st = approval_status(legacy, GateType::Vision, "R.md", kDigestA, kKey);
  EXPECT_EQ(st.check, ApprovalCheck::Stale);
  EXPECT_NE(st.message.find("carries no valid seal"), std::string::npos) << st.message;
  EXPECT_EQ(approval_status(legacy, GateType::Security, "R.md", kDigestA, kKey).check, ApprovalCheck::Missing);
}

// A fresh state with the vision gate open on `path`.
json vision_gate_open_on(const std::string& path) {
  json doc = json::object();
  RequestInput in;
  in.plan_path = path;
  in.now = kNow;
  EXPECT_TRUE(request(doc, in).ok());
  return doc;
}

// Approvals cannot be forged: writing APPROVED (even with a digest and a made-up seal) into
// the state does not pass a gate; changing any sealed field of a real approval breaks it.
TEST(Gates, OnlySealedApprovalsCount) {
  json doc = vision_gate_open_on("R.md");
  json forged = doc;
  forged["gates"][0]["status"] = "APPROVED";
  forged["gates"][0]["approved_by"] = "mallory";
  forged["gates"][0]["digest"] = kDigestA;
  forged["gates"][0]["resolved_at"] = kNow;
  forged["approval"]["approved"] = true;
  forged["status"] = "running";
  EXPECT_EQ(approval_status(forged, GateType::Vision, "R.md", kDigestA, kKey).check, ApprovalCheck::Stale);
  forged["gates"][0]["seal"] = "hmac-sha256:" + std::string(64, '0');
  EXPECT_EQ(approval_status(forged, GateType::Vision, "R.md", kDigestA, kKey).check, ApprovalCheck::Stale);

  ResolveInput r;
  r.by = "carol";
  r.digest = kDigestA;
  r.now = kNow;
  json unkeyed = doc;
  EXPECT_NE(approve(unkeyed, r).error.find("must be sealed"), std::string::npos) << "no key, no approval";
  r.key = &kKey;
  ASSERT_TRUE(approve(doc, r).ok());
  EXPECT_TRUE(approval_status(doc, GateType::Vision, "R.md", kDigestA, kKey).counts());
  for (const char* field : {"id", "plan_path", "approved_by", "digest", "resolved_at", "gate_type"}) {
    json tampered = doc;
    tampered["gates"][0][field] = std::string(field) == "gate_type" ? "security" : "sha256:" + std::string(64, 'b');
    EXPECT_FALSE(seal::valid(tampered["gates"][0], kKey)) << field;
  }
  // Another machine's key (another user) does not accept this machine's seal.
  const seal::Key other{std::string(32, 'k'), {}};
  EXPECT_EQ(approval_status(doc, GateType::Vision, "R.md", kDigestA, other).check, ApprovalCheck::Stale);
  EXPECT_TRUE(approval_status(doc, GateType::Vision, "R.md", kDigestA, kKey).counts());
}

// A person deciding in place of a failing approver: the approval is sealed like any other,
// and the gate says it was an override.
TEST(Gates, ApproveInPlaceOfAFailingApproverIsMarked) {
  json doc = vision_gate_open_on("R.md");
  ResolveInput r{{}, "dana", kDigestA, {}, kLater};
  r.key = &kKey;
  r.override_approver = true;
  auto t = approve(doc, r);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_EQ(doc["gates"][0]["override"], true);
  EXPECT_NE(t.message.find("in place of its failing approver"), std::string::npos) << t.message;
  EXPECT_TRUE(approval_status(doc, GateType::Vision, "R.md", kDigestA, kKey).counts());
  expect_valid(doc);
}

// RFC 4231 test case 2 ("Jefe" / "what do ya want for nothing?").
TEST(Seal, HmacSha256KnownAnswer) {
  EXPECT_EQ(seal::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // RFC 4231 test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(seal::hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Gates, ParseVerdict) {
  auto a = parse_verdict("{\"decision\":\"approved\"}\n");
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.decision, Decision::Approved);
  auto r = parse_verdict(R"({"decision":"rejected","feedback":"split plan 3"})");
  EXPECT_EQ(r.decision, Decision::Rejected);
  EXPECT_EQ(r.feedback, "split plan 3");
  EXPECT_EQ(parse_verdict(R"({"decision":"pending"})").decision, Decision::Pending);
  for (const char* bad : {"", "yes", "[1]", "{\"decision\":\"ok\"}", "{\"decision\":1}", "{\"feedback\":\"x\"}",
                          "{\"decision\":\"approved\",\"feedback\":3}", "{\"decision\":\"approved\"} trailing"})
    EXPECT_FALSE(parse_verdict(bad).error.empty()) << bad;
}

TEST(Gates, ApproverSpecFromConfig) {
  auto cfg = [](const json& j) { return config_from_json(j, "config.json").config; };
  EXPECT_EQ(approver_spec(cfg(json::object()), GateType::Vision).kind, ApproverSpec::Kind::Manual);
  EXPECT_EQ(approver_spec(cfg({{"approvers", {{"vision", "skip"}}}}), GateType::Vision).kind, ApproverSpec::Kind::Skip);
  EXPECT_EQ(approver_spec(cfg({{"approvers", {{"default", "skip"}}}}), GateType::Wave).kind, ApproverSpec::Kind::Skip);
  auto c = approver_spec(cfg({{"approvers", {{"security", {"bin/ok", "{plan_path}"}}}}}), GateType::Security);
  EXPECT_EQ(c.kind, ApproverSpec::Kind::Command);
  EXPECT_EQ(c.argv, (std::vector<std::string>{"bin/ok", "{plan_path}"}));
  auto o = approver_spec(cfg({{"approvers", {{"wave", {{"command", {"x"}}, {"timeout_ms", 500}}}}}}), GateType::Wave);
  EXPECT_EQ(o.kind, ApproverSpec::Kind::Command);
  EXPECT_EQ(o.timeout_ms, 500);
  for (const json& bad : {json("maybe"), json::array(), json({1, 2}), json(42), json({{"command", "x"}})}) {
    auto s = approver_spec(cfg({{"approvers", {{"vision", bad}}}}), GateType::Vision);
    EXPECT_EQ(s.kind, ApproverSpec::Kind::Invalid) << bad.dump();
    EXPECT_NE(s.error.find("approvers.vision"), std::string::npos);
  }
}

TEST(Gates, ApplyVerdictOutcomes) {
  json doc = frozen_vision();
  // An error keeps the gate pending with last_error.
  auto e = apply_verdict(doc, "vision-1", ApproverVerdict{Decision::Pending, {}, "exited with status 3"}, "approver:x",
                         {}, kLater);
  ASSERT_TRUE(e.ok());
  expect_valid(doc);
  EXPECT_EQ(doc["gates"][0]["status"], "OPEN");
  EXPECT_EQ(doc["gates"][0]["last_error"], "exited with status 3");
  EXPECT_EQ(e.events.at(0).type, "gate_error");
  EXPECT_EQ(run_state(doc), RunState::Frozen);
  // Pending clears the error and keeps the feedback.
  auto p =
      apply_verdict(doc, "vision-1", ApproverVerdict{Decision::Pending, "needs a human", {}}, "approver:x", {}, kLater);
  EXPECT_TRUE(p.changed);
  EXPECT_TRUE(doc["gates"][0]["last_error"].is_null());
  EXPECT_EQ(doc["gates"][0]["feedback"], "needs a human");
  EXPECT_EQ(doc["status"], "awaiting_approval");
  // Approved without a digest (file vanished) is an error, not an approval.
  auto nd = apply_verdict(doc, "vision-1", ApproverVerdict{Decision::Approved, {}, {}}, "approver:x", "", kLater);
  EXPECT_EQ(doc["gates"][0]["status"], "OPEN");
  EXPECT_FALSE(doc["gates"][0]["last_error"].is_null());
  // Approved.
  auto a = apply_verdict(doc, "vision-1", ApproverVerdict{Decision::Approved, {}, {}}, "approver:x", kDigestA, kLater,
                         nullptr, {}, &kKey);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(doc["gates"][0]["status"], "APPROVED");
  EXPECT_EQ(doc["gates"][0]["approved_by"], "approver:x");
  EXPECT_TRUE(doc["gates"][0]["last_error"].is_null());
  // Not open any more: left alone.
  json before = doc;
  auto late =
      apply_verdict(doc, "vision-1", ApproverVerdict{Decision::Rejected, "no", {}}, "approver:x", kDigestA, kLater);
  EXPECT_TRUE(late.ok());
  EXPECT_FALSE(late.changed);
  EXPECT_EQ(doc, before);
  EXPECT_FALSE(apply_verdict(doc, "zzz", ApproverVerdict{}, "x", {}, kLater).ok());
  // Rejected without feedback still records why.
  json d2 = frozen_vision();
  ASSERT_TRUE(
      apply_verdict(d2, "vision-1", ApproverVerdict{Decision::Rejected, {}, {}}, "approver:x", {}, kLater).ok());
  EXPECT_EQ(d2["status"], "halted");
  EXPECT_EQ(d2["gates"][0]["feedback"], "rejected by approver:x");
}

// ---- against a real project folder, with a fake approver port ------------------------------

struct FakePort : ApproverPort {
  std::vector<ApproverVerdict> answers;
  std::vector<ApproverRequest> seen;
  ApproverVerdict decide(const ApproverRequest& r) override {
    seen.push_back(r);
    ApproverVerdict v = answers.empty() ? ApproverVerdict{} : answers.front();
    if (!answers.empty()) answers.erase(answers.begin());
    return v;
  }
};

struct Project {
  test::TempDir dir;
  Project() { test::write_file(dir / ".yolo-planning/ROADMAP.md", "# Roadmap\n"); }
  const std::filesystem::path& root() const { return dir.path(); }
  json state() const { return state::load(test::real_world(), root()).doc; }
  std::vector<json> events() const {
    std::vector<json> r;
    std::string s;
    if (std::filesystem::exists(events::log_path(root()))) s = test::read_file(events::log_path(root()));
    size_t pos = 0;
    while (pos < s.size()) {
      size_t nl = s.find('\n', pos);
      r.push_back(json::parse(s.substr(pos, nl - pos)));
      pos = nl + 1;
    }
    return r;
  }
};

Config config(const json& j) { return config_from_json(j, "config.json").config; }

RequestInput roadmap_request() {
  RequestInput in;
  in.plan_path = ".yolo-planning/ROADMAP.md";
  return in;
}

TEST(GateRuns, ManualStaysPendingAndSkipApprovesAtOnce) {
  Project p;
  auto r = request_gate(test::real_world(), p.root(), config(json::object()), roadmap_request(), nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.answer["status"], "paused");
  EXPECT_EQ(r.answer["approval"]["state_file"], state::state_path(p.root()).string());
  EXPECT_EQ(p.state()["status"], "awaiting_approval");

  Project q;
  auto s = request_gate(test::real_world(), q.root(), config({{"approvers", {{"vision", "skip"}}}}), roadmap_request(),
                        nullptr);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(s.answer["status"], "approved");
  json st = q.state();
  EXPECT_EQ(st["status"], "running");
  EXPECT_EQ(st["gates"][0]["approved_by"], "skip");
  EXPECT_NE(st["gates"][0]["feedback"].get<std::string>().find("skip"), std::string::npos);
  EXPECT_EQ(st["approval"]["digest"], sha256_digest("# Roadmap\n"));
  auto ev = q.events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["event"], "gate_frozen");
  EXPECT_EQ(ev[1]["event"], "gate_resumed");
  EXPECT_EQ(ev[1]["data"]["gate_id"], "vision-1");
  EXPECT_EQ(ev[1]["correlation_id"], st["correlation_id"]);
}

TEST(GateRuns, CommandApproverVerdicts) {
  json cfgj = {{"approvers", {{"vision", {"bin/approve", "{plan_path}", "{gate_id}"}}}}};
  {
    Project p;
    FakePort port;
    port.answers.push_back({Decision::Approved, "fine", {}});
    auto r = request_gate(test::real_world(), p.root(), config(cfgj), roadmap_request(), &port);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(port.seen.size(), 1u);
    EXPECT_EQ(port.seen[0].argv_template, (std::vector<std::string>{"bin/approve", "{plan_path}", "{gate_id}"}));
    EXPECT_EQ(port.seen[0].gate_id, "vision-1");
    EXPECT_EQ(port.seen[0].plan_path, ".yolo-planning/ROADMAP.md");
    EXPECT_EQ(port.seen[0].timeout_ms, 30000);
    EXPECT_EQ(p.state()["gates"][0]["approved_by"], "approver:approve");
    EXPECT_EQ(r.answer["status"], "approved");
  }
  {
    Project p;
    FakePort port;
    port.answers.push_back({Decision::Rejected, "too vague", {}});
    auto r = request_gate(test::real_world(), p.root(), config(cfgj), roadmap_request(), &port);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.answer["status"], "rejected");
    EXPECT_EQ(p.state()["status"], "halted");
    EXPECT_EQ(p.state()["gates"][0]["feedback"], "too vague");
  }
  {
    Project p;
    FakePort port;
    port.answers.push_back({Decision::Pending, {}, "exited with status 2"});
    port.answers.push_back({Decision::Approved, {}, {}});
    auto r = request_gate(test::real_world(), p.root(), config(cfgj), roadmap_request(), &port);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.answer["status"], "paused");
    EXPECT_EQ(r.answer["last_error"], "exited with status 2");
    EXPECT_EQ(p.state()["gates"][0]["last_error"], "exited with status 2");
    // The same request again is idempotent: the approver does not run again.
    auto again = request_gate(test::real_world(), p.root(), config(cfgj), roadmap_request(), &port);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(port.seen.size(), 1u);
    // `approve` retries the approver that errored.
    auto a = approve_gate(test::real_world(), p.root(), config(cfgj), "", "dave", &port);
    ASSERT_TRUE(a.ok()) << a.error;
    EXPECT_EQ(port.seen.size(), 2u);
    json st = p.state();
    EXPECT_EQ(st["gates"][0]["status"], "APPROVED");
    EXPECT_EQ(st["gates"][0]["approved_by"], "approver:approve");
    EXPECT_TRUE(st["gates"][0]["last_error"].is_null());
  }
}

TEST(GateRuns, ApproveRecordsDigestAndAnEditReopens) {
  Project p;
  ASSERT_TRUE(request_gate(test::real_world(), p.root(), config(json::object()), roadmap_request(), nullptr).ok());
  auto a = approve_gate(test::real_world(), p.root(), config(json::object()), "", "erin", nullptr);
  ASSERT_TRUE(a.ok()) << a.error;
  json st = p.state();
  EXPECT_EQ(st["approval"]["approved_by"], "erin");
  EXPECT_EQ(st["approval"]["digest"], sha256_digest("# Roadmap\n"));
  EXPECT_EQ(approve_gate(test::real_world(), p.root(), config(json::object()), "", "erin", nullptr).error,
            "No pending approval to resolve");

  test::write_file(p.dir / ".yolo-planning/ROADMAP.md", "# Roadmap, edited\n");
  std::string now = *file_digest(test::real_world(), p.root(), ".yolo-planning/ROADMAP.md");
  auto check = approval_status(st, GateType::Vision, ".yolo-planning/ROADMAP.md", now, kKey);
  EXPECT_EQ(check.check, ApprovalCheck::Stale);
}

TEST(GateRuns, BadPathsAreClearErrors) {
  Project p;
  auto outside = request_gate(test::real_world(), p.root(), config(json::object()),
                              RequestInput{GateType::Vision, "../x.md", {}, {}, {}, {}}, nullptr);
  EXPECT_NE(outside.error.find("outside the project"), std::string::npos) << outside.error;
  auto missing = request_gate(test::real_world(), p.root(), config(json::object()),
                              RequestInput{GateType::Vision, "nope.md", {}, {}, {}, {}}, nullptr);
  EXPECT_NE(missing.error.find("nope.md"), std::string::npos) << missing.error;
  EXPECT_FALSE(std::filesystem::exists(state::state_path(p.root())));
  EXPECT_EQ(*normalize_plan_path(test::real_world(), p.root(), (p.root() / ".yolo-planning/ROADMAP.md").string()),
            ".yolo-planning/ROADMAP.md");
  EXPECT_EQ(*normalize_plan_path(test::real_world(), p.root(), "./.yolo-planning//ROADMAP.md"),
            ".yolo-planning/ROADMAP.md");
  auto outside_path = normalize_plan_path(test::real_world(), p.root(), "/etc/passwd");
  EXPECT_FALSE(outside_path.ok());
  EXPECT_EQ(outside_path.error, "/etc/passwd is outside the project " + p.root().string());
}

TEST(GateRuns, RejectGateHaltsWithFeedback) {
  Project p;
  ASSERT_TRUE(request_gate(test::real_world(), p.root(), config(json::object()), roadmap_request(), nullptr).ok());
  EXPECT_FALSE(reject_gate(test::real_world(), p.root(), "", "f", "").ok());
  auto r = reject_gate(test::real_world(), p.root(), "vision-1", "frank", "needs a wave 0");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(p.state()["status"], "halted");
  EXPECT_EQ(p.events().back()["event"], "gate_rejected");
  EXPECT_EQ(p.events().back()["data"]["feedback"], "needs a wave 0");
}

TEST(Gates, AGateRecordsStatusIsReadOnlyAsOneOfTheThree) {
  EXPECT_EQ(status_of(json{{"status", "OPEN"}}), GateStatus::Open);
  EXPECT_EQ(status_of(json{{"status", "APPROVED"}}), GateStatus::Approved);
  EXPECT_EQ(status_of(json{{"status", "REJECTED"}}), GateStatus::Rejected);
  EXPECT_EQ(status_of(json{{"status", "approved"}}), std::nullopt);  // case counts
  EXPECT_EQ(status_of(json{{"status", 1}}), std::nullopt);
  EXPECT_EQ(status_of(json::object()), std::nullopt);
  EXPECT_EQ(status_of(json::array()), std::nullopt);
  EXPECT_TRUE(has_status(json{{"status", "APPROVED"}}, GateStatus::Approved));
  EXPECT_FALSE(has_status(json{{"status", "OPEN"}}, GateStatus::Approved));
}

}  // namespace
}  // namespace yolo::gates
