// The modules that read project files, run on the ports alone (protocol/ports/world.h): a
// MemoryDisk, a FixedClock, a key of the test's own and a fake signature check. No temp
// folder, no key file, no wall clock, no ssh-keygen: Stage 1 of plans held in memory, gate
// coverage over in-memory files, the SUMMARY gate, a gate run under the in-memory lock and
// approvals whose SSH signature a fake accepts or refuses.
#include <gtest/gtest.h>

#include "protocol/gates/approvals.h"
#include "protocol/state/audit.h"
#include "protocol/state/config.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gate_run.h"
#include "protocol/status/overview.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/plan/plan_cache.h"
#include "protocol/base/sha256.h"
#include "protocol/review/stage1.h"
#include "protocol/state/state.h"
#include "protocol/summary/summary_gate.h"
#include "protocol/ports/world.h"
#include "summary_fixtures.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using summary_fixtures::FakeGit;

const stdfs::path kRoot = "/project";
const stdfs::path kPhase = kRoot / ".yolo-planning/phases/01-core";
const std::string kNow = "2026-11-25T10:00:00Z";

std::string plan_text(const std::string& plan, const std::string& wave, const std::string& extra,
                      const std::string& body) {
  return "---\nphase: 01\nplan: " + plan + "\ntitle: Plan " + plan + "\nwave: " + wave +
         "\ndepends_on: []\nmust_haves:\n  truths: [\"it works\"]\n" + extra + "---\n# Plan\n" + body;
}

// Says yes to a gate whose signature is "good", no otherwise; requires signatures when told.
class FakeSignatures : public SignatureVerifier {
 public:
  bool require = true;
  mutable int asked = 0;
  bool required(const stdfs::path&) const override { return require; }
  Status verify(const stdfs::path&, const json& gate, bool) const override {
    ++asked;
    if (gate.value("ssh_signature", "") == "good") return {};
    return Status::fail("its SSH signature does not verify (fake)");
  }
};

// A project on a memory disk.
struct Mem {
  fs::MemoryDisk disk;
  FixedClock clock{kNow};
  seal::Key key{std::string(32, 'm'), {}};
  World w{disk, clock, &key};
  Mem() {
    disk.put(kRoot / ".yolo-planning/ROADMAP.md", "# Roadmap\n");
    EXPECT_TRUE(disk.make_dirs(kPhase).ok());
  }
  const Finding* finding(const StructuralReview& r, const std::string& check, const std::string& text) {
    for (const auto& f : r.findings)
      if (f.check == check && f.issue.find(text) != std::string::npos) return &f;
    return nullptr;
  }
};

// ---- Stage 1 ------------------------------------------------------------------------

TEST(PortsStage1, FilesArePresentOrMissingOnTheWorldsDiskAndNeverOutsideTheRoot) {
  Mem m;
  m.disk.put(kRoot / "src/a.cc", "a");
  m.disk.put(kPhase / "01-01-PLAN.md",
             plan_text("01", "1", "  artifacts:\n    - path: ../../etc/passwd\n",
                       "### Task 1: t\n**Files:** `src/a.cc`, `src/gone.cc`, `../outside.txt`, `src/b.cc` (new)\n"));
  auto r = stage1_plan_file(m.w, kPhase / "01-01-PLAN.md", kPhase, {});
  EXPECT_EQ(m.finding(r, "file_paths", "src/a.cc"), nullptr) << "present in memory";
  EXPECT_NE(m.finding(r, "file_paths", "'src/gone.cc' does not exist"), nullptr);
  EXPECT_EQ(m.finding(r, "file_paths", "src/b.cc"), nullptr) << "(new)";
  const Finding* out = m.finding(r, "file_paths", "'../outside.txt' is absolute or escapes");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->severity, Severity::High);
  EXPECT_NE(m.finding(r, "file_paths", "artifact path '../../etc/passwd'"), nullptr);
  EXPECT_EQ(r.verdict(), Verdict::Reject);
  // Created in memory: the same plan no longer misses it.
  m.disk.put(kRoot / "src/gone.cc", "g");
  r = stage1_plan_file(m.w, kPhase / "01-01-PLAN.md", kPhase, {});
  EXPECT_EQ(m.finding(r, "file_paths", "src/gone.cc"), nullptr);
  EXPECT_EQ(root_for_phase(m.w, kPhase), kRoot) << "found through the disk's folders";
}

TEST(PortsStage1, ThePhaseIsListedAndCrossCheckedInMemory) {
  Mem m;
  m.disk.put(kPhase / "01-01-PLAN.md", plan_text("01", "1", "", "### Task 1: t\n**Files:** `src/x.cc` (new)\n"));
  m.disk.put(kPhase / "01-02-PLAN.md", plan_text("02", "1", "", "### Task 1: t\n**Files:** `src/x.cc` (new)\n"));
  m.disk.put(kPhase / "01-03-PLAN.md", plan_text("03", "2", "", "### Task 1: t\n"));
  m.disk.put(kPhase / "notes.md", "not a plan");
  EXPECT_TRUE(m.disk.make_dirs(kPhase / "02-PLAN.md").ok());  // a folder with a plan's name is no plan
  EXPECT_EQ(list_plan_files(m.w, kPhase).size(), 3u);
  auto all = stage1_phase(m.w, kPhase, {});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_NE(m.finding(all[0], "file_overlap", "src/x.cc"), nullptr);
  EXPECT_NE(m.finding(all[1], "file_overlap", "src/x.cc"), nullptr);
  EXPECT_EQ(m.finding(all[2], "file_overlap", ""), nullptr);
  // The snapshot of a review pass answers the same from memory.
  PlanCache cache;
  PhaseSnapshots snaps(&cache);
  Stage1Options o;
  o.cache = &cache;
  o.snapshots = &snaps;
  auto one = stage1_plan_file(m.w, kPhase / "01-02-PLAN.md", kPhase, o);
  EXPECT_NE(m.finding(one, "file_overlap", "src/x.cc"), nullptr);
  EXPECT_EQ(snaps.recomputes(), 1u);
}

TEST(PortsStage1, ThePlanCacheKnowsAFileByTheDisksStamp) {
  Mem m;
  const stdfs::path p = kPhase / "01-01-PLAN.md";
  m.disk.put(p, plan_text("01", "1", "", "### Task 1: t\n"));
  PlanCache c;
  ASSERT_EQ(c.load_sibling(m.w, p, 1 << 20).plan->wave, 1);
  ASSERT_EQ(c.load_sibling(m.w, p, 1 << 20).plan->wave, 1);
  EXPECT_EQ(c.hits(), 1u);
  m.disk.put(p, plan_text("01", "2", "", "### Task 1: t\n"));  // same size, new stamp
  EXPECT_EQ(c.load_sibling(m.w, p, 1 << 20).plan->wave, 2);
  m.disk.remove(p);
  auto gone = c.load_sibling(m.w, p, 1 << 20);
  EXPECT_FALSE(gone.plan);
  EXPECT_TRUE(gone.not_found);
  EXPECT_EQ(c.size(), 0u);
}

// ---- containment on a disk without links --------------------------------------------------

TEST(PortsContain, TheMemoryDiskAppliesTheOneRuleLexically) {
  fs::MemoryDisk d;
  EXPECT_TRUE(d.contain(kRoot, "src/../src/a.cc").ok());
  EXPECT_EQ(d.contain(kRoot, "src/../src/a.cc").rel, "src/a.cc");
  EXPECT_EQ(d.contain(kRoot, "../x").refusal, fs::Contained::Refusal::Escapes);
  EXPECT_EQ(d.contain(kRoot, "/project/a").refusal, fs::Contained::Refusal::Absolute);
  EXPECT_EQ(d.contain(kRoot, "/project/a", fs::AbsolutePaths::AllowInside).rel, "a");
  EXPECT_EQ(d.contain(kRoot, "/elsewhere/a", fs::AbsolutePaths::AllowInside).refusal, fs::Contained::Refusal::Escapes);
}

// ---- gate coverage --------------------------------------------------------------------

TEST(PortsCoverage, CoversDigestTheInMemoryPlansAndConfig) {
  Mem m;
  m.disk.put(kPhase / "01-01-PLAN.md", "plan one");
  m.disk.put(kRoot / ".yolo-planning/config.json", R"({"reviewer": "claude", "other": 1})");
  json wave = gates::coverage(m.w, kRoot, gates::GateType::Wave,
                              {".yolo-planning/phases/01-core/01-01-PLAN.md", "missing.md", "../escape.md"});
  EXPECT_EQ(wave["file:.yolo-planning/phases/01-core/01-01-PLAN.md"], sha256_digest("plan one"));
  EXPECT_EQ(wave["file:missing.md"], "absent");
  EXPECT_EQ(wave["file:../escape.md"], "absent") << "never read outside the root";
  EXPECT_FALSE(wave.contains("config:reviewer")) << "config keys are the vision gate's";
  json vision = gates::coverage(m.w, kRoot, gates::GateType::Vision, {".yolo-planning/ROADMAP.md"});
  EXPECT_EQ(vision["config:reviewer"], sha256_digest("\"claude\""));
  EXPECT_EQ(vision["config:executor"], "absent");
  EXPECT_EQ(vision["config:other"], sha256_digest("1")) << "every key but the cosmetic ones";
  m.disk.put(kRoot / ".yolo-planning/config.json", R"({"reviewer": "other", "other": 1})");
  auto changes = gates::coverage_changes(
      vision, gates::coverage(m.w, kRoot, gates::GateType::Vision, {".yolo-planning/ROADMAP.md"}));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("config key reviewer changed"), std::string::npos) << changes[0];
  // A program an argv names by a project-relative path is covered by its content.
  m.disk.put(kRoot / "agents/review.sh", "#!/bin/sh\necho VERDICT: approve\n");
  m.disk.put(kRoot / ".yolo-planning/config.json",
             R"({"reviewer": {"command": ["agents/review.sh", "{plan_path}"]}, "executor": ["claude", "-p"]})");
  json with_program = gates::coverage(m.w, kRoot, gates::GateType::Vision, {".yolo-planning/ROADMAP.md"});
  EXPECT_EQ(with_program["file:agents/review.sh"], sha256_digest("#!/bin/sh\necho VERDICT: approve\n"));
  EXPECT_FALSE(with_program.contains("file:claude"));
  m.disk.put(kRoot / "agents/review.sh", "#!/bin/sh\necho VERDICT: approve # and more\n");
  auto edited = gates::coverage_changes(
      with_program, gates::coverage(m.w, kRoot, gates::GateType::Vision, {".yolo-planning/ROADMAP.md"}));
  ASSERT_EQ(edited.size(), 1u);
  EXPECT_NE(edited[0].find("agents/review.sh changed"), std::string::npos) << edited[0];
  EXPECT_EQ(*gates::file_digest(m.w, kRoot, "/project/.yolo-planning/ROADMAP.md"), sha256_digest("# Roadmap\n"));
  auto outside = gates::file_digest(m.w, kRoot, "/etc/passwd");
  EXPECT_FALSE(outside.ok());
  EXPECT_NE(outside.error.find("outside the project"), std::string::npos) << outside.error;
  EXPECT_EQ(gates::project_id(m.w, kRoot), "/project");
}

// ---- SUMMARY gate ---------------------------------------------------------------------

struct MemSummary : Mem {
  FakeGit git;
  MemSummary() {
    disk.put(kPhase / "01-02-PLAN.md", summary_fixtures::kPlan);
    disk.put(kRoot / "src/parser.cc", "int parse_all() { return 0; }\n");
    disk.put(kRoot / "src/parser.h", "int parse_all();\n");
    disk.put(kRoot / "src/main.cc", "#include \"src/parser.h\"\nint main() { return parse_all(); }\n");
    git.commits["abc1234"] = {"src/parser.cc", "src/parser.h"};
  }
  SummaryVerdict verify(const std::string& text) {
    disk.put(kPhase / "01-02-SUMMARY.md", text);
    return verify_summary(w, kPhase / "01-02-SUMMARY.md", std::nullopt, kRoot, SummaryMode::Strict, &git);
  }
};

TEST(PortsSummary, ATruthfulSummaryPassesOnInMemoryFiles) {
  MemSummary m;
  auto v = m.verify(summary_fixtures::summary_text());
  EXPECT_EQ(v.verdict(), VerifyVerdict::Pass) << summary_fixtures::dump(v);
  EXPECT_EQ(v.plan_path, (kPhase / "01-02-PLAN.md").string()) << "found beside it in memory";
  auto where = locate_summary(m.w, kPhase / "01-02-PLAN.md");
  EXPECT_TRUE(where.exists);
  EXPECT_EQ(where.path, kPhase / "01-02-SUMMARY.md");
}

TEST(PortsSummary, ClaimsAreCheckedAgainstTheInMemoryFiles) {
  MemSummary m;
  m.disk.put(kRoot / "src/parser.cc", "int something_else();\n");  // the artifact lacks parse_all
  m.disk.remove(kRoot / "src/main.cc");
  auto v = m.verify(summary_fixtures::summary_text(
      "", "- `src/parser.cc` (new)\n- `src/main.cc` (wired)\n- `../../outside.txt` (read)\n"));
  EXPECT_EQ(v.verdict(), VerifyVerdict::Fail) << summary_fixtures::dump(v);
  auto has = [&](const std::string& check, const std::string& text) {
    for (const auto* f : summary_fixtures::findings_of(v, check))
      if (f->issue.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("files_exist", "'src/main.cc'")) << summary_fixtures::dump(v);
  EXPECT_TRUE(has("files_exist", "'../../outside.txt' is absolute or escapes")) << summary_fixtures::dump(v);
  EXPECT_TRUE(has("artifacts", "parse_all")) << summary_fixtures::dump(v);
  auto missing = verify_summary(m.w, kPhase / "09-09-SUMMARY.md", std::nullopt, kRoot, SummaryMode::Strict, &m.git);
  EXPECT_EQ(missing.verdict(), VerifyVerdict::Fail);
}

// ---- a gate run under the in-memory lock ------------------------------------------------

Config config(const json& j) { return config_from_json(j, "config.json").config; }

gates::RequestInput roadmap() {
  gates::RequestInput in;
  in.plan_path = ".yolo-planning/ROADMAP.md";
  return in;
}

TEST(PortsGateRun, ARequestAndAnApprovalRunOnTheWorldsDiskClockAndKey) {
  Mem m;
  auto r = gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.answer["status"], "paused");
  EXPECT_FALSE(m.disk.locked(state::lock_path(kRoot))) << "the lock is let go after the update";
  m.clock.set("2026-11-25T10:05:00Z");
  auto a = gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr);
  ASSERT_TRUE(a.ok()) << a.error;
  auto st = state::load(m.w, kRoot);
  ASSERT_TRUE(st.ok()) << st.error;
  const json& g = st.doc["gates"][0];
  EXPECT_EQ(g["status"], "APPROVED");
  EXPECT_EQ(g["resolved_at"], "2026-11-25T10:05:00Z") << "the world's clock";
  EXPECT_EQ(g["project"], "/project");
  EXPECT_TRUE(seal::valid(g, m.key)) << "sealed with the world's key";
  EXPECT_TRUE(
      gates::approval_status(st.doc, gates::GateType::Vision, ".yolo-planning/ROADMAP.md", gates::now_of(m.w, kRoot))
          .counts());
  EXPECT_TRUE(m.disk.has(audit::path(kRoot))) << "every transition is in the audit log";
  EXPECT_TRUE(audit::check(m.w, kRoot).problems.empty());
  // Edited in memory after the approval: stale.
  m.disk.put(kRoot / ".yolo-planning/ROADMAP.md", "# Roadmap, edited\n");
  EXPECT_EQ(
      gates::approval_status(st.doc, gates::GateType::Vision, ".yolo-planning/ROADMAP.md", gates::now_of(m.w, kRoot))
          .check,
      gates::ApprovalCheck::Stale);
}

// A stale approval reopened as execute does it: one locked write, the events in the audit log,
// the new gate's approver run; an approval that still counts reopens nothing.
TEST(PortsGateRun, AStaleApprovalReopensItsGateAndRunsItsApprover) {
  Mem m;
  const std::string rm = ".yolo-planning/ROADMAP.md";
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr).ok());
  auto same = gates::reopen_stale_gate(m.w, kRoot, config(json::object()), gates::GateType::Vision, rm,
                                       gates::now_of(m.w, kRoot), {}, nullptr);
  ASSERT_TRUE(same.ok()) << same.error;
  EXPECT_TRUE(same.gate.is_null()) << "it still counts: nothing reopened";
  EXPECT_EQ(state::load(m.w, kRoot).doc["gates"].size(), 1u);

  m.disk.put(kRoot / rm, "# Roadmap, edited\n");
  m.clock.set("2026-11-25T10:07:00Z");
  auto r = gates::reopen_stale_gate(m.w, kRoot, config(json::object()), gates::GateType::Vision, rm,
                                    gates::now_of(m.w, kRoot), {}, nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_TRUE(r.gate.is_object());
  EXPECT_EQ(r.gate["status"], "OPEN");
  EXPECT_EQ(r.gate["created_at"], "2026-11-25T10:07:00Z") << "the world's clock";
  auto st = state::load(m.w, kRoot);
  ASSERT_EQ(st.doc["gates"].size(), 2u);
  EXPECT_EQ(st.doc["status"], "awaiting_approval");
  EXPECT_TRUE(audit::check(m.w, kRoot).problems.empty()) << "the reopening is in the audit log, anchored";
  bool waiting = false;  // the manual approver: a person decides
  for (const auto& msg : r.messages) waiting = waiting || msg.kind == gates::Outcome::Waiting;
  EXPECT_TRUE(waiting);

  auto waiting_gate = gates::reopen_stale_gate(m.w, kRoot, config(json::object()), gates::GateType::Vision, rm,
                                               gates::now_of(m.w, kRoot), {}, nullptr);
  ASSERT_TRUE(waiting_gate.ok()) << waiting_gate.error;
  EXPECT_TRUE(waiting_gate.gate.is_null()) << "an open gate is not stale: nothing reopened while it waits";

  // With a skip approver the reopened gate is approved again at once.
  ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr).ok());
  m.disk.put(kRoot / rm, "# Roadmap, edited twice\n");
  auto skipped = gates::reopen_stale_gate(m.w, kRoot, config({{"approvers", {{"vision", "skip"}}}}),
                                          gates::GateType::Vision, rm, gates::now_of(m.w, kRoot), {}, nullptr);
  ASSERT_TRUE(skipped.ok()) << skipped.error;
  ASSERT_TRUE(skipped.gate.is_object());
  EXPECT_EQ(skipped.gate["status"], "APPROVED");
  EXPECT_EQ(state::load(m.w, kRoot).doc["gates"].size(), 3u);
}

// The one rule behind the git hooks' agents and MCP's approvals: the vision approval counts.
TEST(PortsGateRun, TheConfigCountsOnlyUnderAVisionApprovalAndMcpOnlyForWhatItCovered) {
  Mem m;
  json cfg = {{"mcp_can_approve", true}};
  m.disk.put(kRoot / ".yolo-planning/config.json", cfg.dump());
  json wave_gate = {{"gate_type", "wave"}, {"id", "wave-1"}};
  json vision_gate = {{"gate_type", "vision"}, {"id", "vision-1"}};
  auto none = state::load(m.w, kRoot).doc;
  EXPECT_FALSE(gates::config_approval(none, gates::now_of(m.w, kRoot)).counts());
  auto refused = gates::mcp_may_resolve(none, wave_gate, cfg, gates::now_of(m.w, kRoot));
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.why, "mcp_can_approve is not covered by a vision approval that counts");
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(cfg), roadmap(), nullptr).ok());
  ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(cfg), "", "erin", nullptr).ok());
  auto st = state::load(m.w, kRoot).doc;
  EXPECT_TRUE(gates::config_approval(st, gates::now_of(m.w, kRoot)).counts());
  EXPECT_TRUE(gates::mcp_may_resolve(st, wave_gate, cfg, gates::now_of(m.w, kRoot)).allowed);
  auto vision = gates::mcp_may_resolve(st, vision_gate, cfg, gates::now_of(m.w, kRoot));
  EXPECT_FALSE(vision.allowed);
  EXPECT_EQ(vision.why, "the vision gate is never resolved over MCP");
  auto off = gates::mcp_may_resolve(st, wave_gate, json{{"mcp_can_approve", false}}, gates::now_of(m.w, kRoot));
  EXPECT_FALSE(off.allowed);
  EXPECT_EQ(off.why, "") << "the config does not allow it: the plain refusal";
}

TEST(PortsGateRun, AHeldLockOrAMissingKeyStopsTheRunAndSaysWhy) {
  Mem m;
  auto held = m.disk.lock(state::lock_path(kRoot));
  ASSERT_TRUE(held.ok()) << held.error;
  auto r = gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find(".lock"), std::string::npos) << r.error;
  EXPECT_FALSE(m.disk.has(state::state_path(kRoot))) << "nothing written without the lock";
  held->reset();
  // A world without a key: the gate opens, but nothing is approved (and no key is made).
  World keyless{m.disk, m.clock};
  ASSERT_TRUE(gates::request_gate(keyless, kRoot, config(json::object()), roadmap(), nullptr).ok());
  auto a = gates::approve_gate(keyless, kRoot, config(json::object()), "", "erin", nullptr);
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error.find("must be sealed"), std::string::npos) << a.error;
  EXPECT_EQ(state::load(m.w, kRoot).doc["gates"][0]["status"], "OPEN");
}

// A signer that says what it was given.
struct FakeSigner : gates::ApprovalSigner {
  bool want = true;
  std::string fail;
  mutable std::vector<json> signed_gates;
  bool wanted(const std::filesystem::path&) const override { return want; }
  yolo::Result<std::string> sign(const std::filesystem::path&, const json& gate) const override {
    signed_gates.push_back(gate);
    if (!fail.empty()) return yolo::Status::fail(fail);
    return "SIG-" + gate.value("approved_by", "");
  }
};

TEST(PortsGateRun, ASignedApprovalIsOneLockedWriteWithItsSignature) {
  size_t plain_writes = 0;
  {
    Mem m;
    ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
    size_t before = m.disk.writes();
    ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr).ok());
    plain_writes = m.disk.writes() - before;
  }
  Mem m;
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  FakeSigner signer;
  size_t before = m.disk.writes();
  auto a = gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr, false, nullptr, {}, &signer);
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(m.disk.writes() - before, plain_writes) << "the signature is in the approval's own write";
  ASSERT_EQ(signer.signed_gates.size(), 1u);
  EXPECT_EQ(signer.signed_gates[0]["status"], "APPROVED") << "what is signed is the approved gate";
  const json g = state::load(m.w, kRoot).doc["gates"][0];
  EXPECT_EQ(g["ssh_signature"], "SIG-erin");
  EXPECT_EQ(a.gate["ssh_signature"], "SIG-erin");
  EXPECT_TRUE(seal::valid(g, m.key)) << "the seal still holds beside the signature";
}

TEST(PortsGateRun, AnApprovalThatCannotBeSignedIsRecordedWithAWarningAndNoSignature) {
  Mem m;
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  FakeSigner signer;
  signer.fail = "no signing key";
  auto a = gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr, false, nullptr, {}, &signer);
  ASSERT_TRUE(a.ok()) << a.error;
  bool warned = false;
  for (const auto& msg : a.messages) warned = warned || msg.text.find("could not be signed: no signing key") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_FALSE(state::load(m.w, kRoot).doc["gates"][0].contains("ssh_signature"));
  // A project that does not ask for signatures: the signer is not asked.
  Mem n;
  ASSERT_TRUE(gates::request_gate(n.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  FakeSigner unwanted;
  unwanted.want = false;
  ASSERT_TRUE(gates::approve_gate(n.w, kRoot, config(json::object()), "", "erin", nullptr, false, nullptr, {}, &unwanted).ok());
  EXPECT_TRUE(unwanted.signed_gates.empty());
}

TEST(PortsGateRun, ASkipApproverApprovesWithTheWorldsKey) {
  Mem m;
  size_t before = m.disk.writes();
  auto r = gates::request_gate(m.w, kRoot, config({{"approvers", {{"vision", "skip"}}}}), roadmap(), nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.answer["status"], "approved");
  // Opened and approved in one locked write of the state, and one append to the audit log
  // that holds both transitions (plus the event log's lines).
  std::string audit_log = m.disk.read(audit::path(kRoot), 1 << 20, true).content;
  EXPECT_NE(audit_log.find("gate_frozen"), std::string::npos) << audit_log;
  EXPECT_NE(audit_log.find("gate_resumed"), std::string::npos) << audit_log;
  EXPECT_LT(audit_log.find("gate_frozen"), audit_log.find("gate_resumed"));
  EXPECT_TRUE(audit::check(m.w, kRoot).problems.empty());
  EXPECT_EQ(m.disk.writes() - before, 1u + 1u + 2u) << "state, audit log, two events";
  EXPECT_EQ(r.state["gates"][0]["status"], "APPROVED");
  EXPECT_EQ(r.gate["status"], "APPROVED");
  const json g = state::load(m.w, kRoot).doc["gates"][0];
  EXPECT_EQ(g["approved_by"], "skip");
  EXPECT_TRUE(seal::valid(g, m.key));
  seal::Key other{std::string(32, 'o'), {}};
  EXPECT_FALSE(seal::valid(g, other));
}

// Each transition anchors the audit log's head in the state it writes: a cut tail or a gate
// removed from the state no longer agrees with it.
TEST(PortsGateRun, TheStateAnchorsTheAuditLogsHead) {
  Mem m;
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  ASSERT_TRUE(gates::reject_gate(m.w, kRoot, "", "erin", "not yet").ok());
  json doc = state::load(m.w, kRoot).doc;
  ASSERT_TRUE(doc.contains("audit_head")) << doc.dump(2);
  auto log = audit::check(m.w, kRoot);
  EXPECT_TRUE(audit::check_anchor(m.w, doc, log).empty());
  // The last line cut: the chain is intact, the anchor is not.
  std::string text = m.disk.read(audit::path(kRoot), 1 << 20, true).content;
  text.pop_back();
  m.disk.put(audit::path(kRoot), text.substr(0, text.rfind('\n') + 1));
  auto cut = audit::check(m.w, kRoot);
  EXPECT_TRUE(cut.problems.empty());
  auto problems = audit::check_anchor(m.w, doc, cut);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("removed from its end"), std::string::npos) << problems[0];
  // The rejected gate removed from the state.
  json without = doc;
  without["gates"].erase(0);
  auto gone = audit::check_anchor(m.w, without, log);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_NE(gone[0].find("gates changed"), std::string::npos) << gone[0];
  // An anchor rewritten without the key.
  json forged = doc;
  forged["audit_head"]["seq"] = 1;
  EXPECT_NE(audit::check_anchor(m.w, forged, cut).at(0).find("no valid mac"), std::string::npos);
}

// The approval object mirrors its gate; a disagreement is named field by field.
TEST(PortsGateRun, AMirrorThatDisagreesWithItsGateIsNamed) {
  Mem m;
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr).ok());
  json doc = state::load(m.w, kRoot).doc;
  EXPECT_TRUE(gates::mirror_problems(doc).empty());
  doc["approval"]["approved_by"] = "mallory";
  auto p = gates::mirror_problems(doc);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("approval.approved_by says \"mallory\""), std::string::npos) << p[0];
  doc["approval"]["gate_id"] = "vision-9";
  EXPECT_NE(gates::mirror_problems(doc).at(0).find("not in the state's gates"), std::string::npos);
}

// ---- the signature check as a port --------------------------------------------------------

TEST(PortsSignatures, AFakeVerifierDecidesWhetherASignedApprovalCounts) {
  Mem m;
  ASSERT_TRUE(gates::request_gate(m.w, kRoot, config(json::object()), roadmap(), nullptr).ok());
  ASSERT_TRUE(gates::approve_gate(m.w, kRoot, config(json::object()), "", "erin", nullptr).ok());
  json doc = state::load(m.w, kRoot).doc;
  FakeSignatures sigs;
  World signing = m.w;
  signing.signatures = &sigs;
  const std::string roadmap_path = ".yolo-planning/ROADMAP.md";
  // Required, and the approval carries no signature: its seal alone does not count.
  auto st = gates::approval_status(doc, gates::GateType::Vision, roadmap_path, gates::now_of(signing, kRoot));
  EXPECT_EQ(st.check, gates::ApprovalCheck::Stale);
  EXPECT_NE(st.message.find("carries no SSH signature"), std::string::npos) << st.message;
  // Signed: the fake says yes, then no.
  doc["gates"][0]["ssh_signature"] = "good";
  EXPECT_TRUE(
      gates::approval_status(doc, gates::GateType::Vision, roadmap_path, gates::now_of(signing, kRoot)).counts());
  doc["gates"][0]["ssh_signature"] = "forged";
  st = gates::approval_status(doc, gates::GateType::Vision, roadmap_path, gates::now_of(signing, kRoot));
  EXPECT_EQ(st.check, gates::ApprovalCheck::Stale);
  EXPECT_NE(st.message.find("does not verify (fake)"), std::string::npos) << st.message;
  EXPECT_EQ(sigs.asked, 2);
  // Not required and unsigned: the seal counts, the verifier is not asked.
  sigs.require = false;
  doc["gates"][0].erase("ssh_signature");
  EXPECT_TRUE(
      gates::approval_status(doc, gates::GateType::Vision, roadmap_path, gates::now_of(signing, kRoot)).counts());
  EXPECT_EQ(sigs.asked, 2);
  // No verifier at all (World::signatures null): a signed approval is checked by its seal.
  EXPECT_TRUE(gates::approval_status(doc, gates::GateType::Vision, roadmap_path, gates::now_of(m.w, kRoot)).counts());
}

// A key that does not exist until an approval makes it (the runner's key file on a fresh
// machine): checking() answers an error of its own until then.
class LateKey : public seal::KeySource {
 public:
  const seal::Key& sealing() override {
    if (!made.ok()) made = seal::Key{std::string(32, 'l'), {}};
    return made;
  }
  const seal::Key& checking() override { return made.ok() ? made : none; }

 private:
  seal::Key made{{}, "not made yet"}, none{{}, "no approval key yet"};
};

TEST(PortsGateRun, AKeyMadeAfterTheCheckWasSetUpIsSeen) {
  Mem m;
  LateKey late;
  World w{m.disk, m.clock, nullptr, &late};
  gates::Now now = gates::now_of(w, kRoot);  // taken before any key exists (execute does so)
  auto r = gates::request_gate(w, kRoot, config({{"approvers", {{"vision", "skip"}}}}), roadmap(), nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.answer["status"], "approved");
  json doc = state::load(w, kRoot).doc;
  EXPECT_TRUE(gates::approval_status(doc, gates::GateType::Vision, ".yolo-planning/ROADMAP.md", now).counts());
}

// ---- the project overview -------------------------------------------------------------

TEST(PortsOverview, CountsPlansAndSummariesInMemory) {
  MemSummary m;
  m.disk.put(kPhase / "01-02-SUMMARY.md", summary_fixtures::summary_text());
  m.disk.put(kPhase / "01-03-PLAN.md", plan_text("03", "1", "", "### Task 1: t\n"));
  m.disk.put(kRoot / ".yolo-planning/phases/README.md", "a file, not a phase");
  json o = project_overview(m.w, kRoot);
  EXPECT_EQ(o["totals"]["phases"], 1);
  EXPECT_EQ(o["totals"]["plans"], 2);
  EXPECT_EQ(o["totals"]["summaries"], 1);
  auto cfg = load_config(m.w, kRoot);
  EXPECT_TRUE(cfg.error.empty()) << "no config.json: defaults";
  m.disk.put(kRoot / ".yolo-planning/config.json", "{not json");
  EXPECT_NE(load_config(m.w, kRoot).error.find("config.json"), std::string::npos);
}

}  // namespace
}  // namespace yolo
