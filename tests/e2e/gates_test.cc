// The gate commands on real temp repos: request-approval, approve, reject, gates, status.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "protocol/base/sha256.h"
#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo::test {
namespace {

const std::string kRoadmap = ".yolo-planning/ROADMAP.md";

struct Repo {
  TempDir dir;
  explicit Repo(const json& config = json::object()) {
    write_file(dir / kRoadmap, "# Roadmap\n\nWave 1: foundations\n");
    json c = config;
    // The approver scripts log their argv beside them (script()): the approver's sandbox is
    // granted that folder, as a user grants an approver a folder of its own.
    if (!c.contains("sandbox")) c["sandbox"] = {{"write", {{"approver", {dir.path().string()}}}}};
    write_file(dir / ".yolo-planning/config.json", c.dump());
  }
  const stdfs::path& root() const { return dir.path(); }
  // approve and reject are a person's: at a terminal (a pty), answering y.
  RunResult yolo(const std::vector<std::string>& args) const {
    if (!args.empty() && (args[0] == "approve" || args[0] == "reject")) return run_yolo_tty(args, root());
    return run_yolo(args, root());
  }
  json state() const { return json::parse(read_file(dir / ".yolo-planning/.execution-state.json")); }
  std::vector<json> events() const {
    std::vector<json> r;
    auto p = dir / ".yolo-planning/.events/event-log.jsonl";
    if (!stdfs::exists(p)) return r;
    std::string s = read_file(p);
    size_t pos = 0;
    while (pos < s.size()) {
      size_t nl = s.find('\n', pos);
      r.push_back(json::parse(s.substr(pos, nl - pos)));
      pos = nl + 1;
    }
    return r;
  }
  // An approver script written by the test; it logs its argv to approver.log.
  void script(const std::string& name, const std::string& body) const {
    auto p = dir / name;
    write_file(p, "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/approver.log\"\n" + body);
    ::chmod(p.c_str(), 0755);
  }
};

TEST(GatesE2E, RequestPausesAndApproveClears) {
  Repo repo;
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap, "--reason", "roadmap written"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json answer = r.json_out();
  EXPECT_EQ(answer["status"], "paused");
  EXPECT_EQ(answer["approval"]["plan_path"], kRoadmap);
  EXPECT_EQ(answer["approval"]["state_file"], (repo.dir / ".yolo-planning/.execution-state.json").string());
  EXPECT_FALSE(answer["approval"]["requested_at"].get<std::string>().empty());
  EXPECT_NE(r.err.find("⏸ Vision gate: Awaiting human approval for " + kRoadmap + ". Execution paused."), std::string::npos) << r.err;
  json st = repo.state();
  EXPECT_EQ(st["status"], "awaiting_approval");
  EXPECT_EQ(st["approval"]["approved"], false);
  EXPECT_EQ(state::validate(st).error, "");

  // Idempotent while pending.
  auto again = repo.yolo({"request-approval", "--plan-path", "./" + kRoadmap});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json_out(), answer);

  auto gates = repo.yolo({"gates", "--json"}).json_out();
  ASSERT_EQ(gates["open_gates"].size(), 1u);
  EXPECT_EQ(gates["run_state"], "FROZEN");
  auto status = repo.yolo({"status", "--json"}).json_out();
  EXPECT_EQ(status["run_state"], "FROZEN");
  EXPECT_EQ(status["open_gates"][0]["id"], "vision-1");

  auto a = repo.yolo({"approve", "--by", "alice", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err << a.out;
  EXPECT_EQ(a.json_out()["gate"]["status"], "APPROVED");
  st = repo.state();
  EXPECT_EQ(st["status"], "running");
  EXPECT_EQ(st["approval"]["approved"], true);
  EXPECT_EQ(st["approval"]["approved_by"], "alice");
  EXPECT_EQ(st["approval"]["digest"], sha256_digest(read_file(repo.dir / kRoadmap)));
  auto human = repo.yolo({"approve"});
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.err.find("No pending approval to resolve"), std::string::npos) << human.err;

  auto ev = repo.events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["event"], "gate_frozen");
  EXPECT_EQ(ev[1]["event"], "gate_resumed");
  EXPECT_EQ(ev[1]["data"]["gate_id"], "vision-1");
  EXPECT_EQ(ev[1]["data"]["gate_type"], "vision");
  EXPECT_EQ(ev[1]["correlation_id"], st["correlation_id"]);
}

TEST(GatesE2E, ApprovedByFallsBackToGitUser) {
  Repo repo;
  run_program({"git", "init", "-q"}, repo.root());
  run_program({"git", "config", "user.name", "Grace Hopper"}, repo.root());
  ASSERT_EQ(repo.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  ASSERT_EQ(repo.yolo({"approve", "vision-1"}).exit_code, 0);
  EXPECT_EQ(repo.state()["approval"]["approved_by"], "Grace Hopper");
}

TEST(GatesE2E, ProjectIsFoundUpwardOrWithRepo) {
  Repo repo;
  stdfs::create_directories(repo.dir / "src/deep");
  auto r = run_yolo({"request-approval", "--plan-path", kRoadmap}, repo.dir / "src/deep");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  TempDir elsewhere;
  auto g = run_yolo({"gates", "--json", "--repo", repo.root().string()}, elsewhere.path());
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.json_out()["open_gates"].size(), 1u);
  auto none = run_yolo({"request-approval", "--plan-path", "R.md", "--json"}, elsewhere.path());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.json_out()["error"].get<std::string>().find(".yolo-planning"), std::string::npos);
  EXPECT_EQ(run_yolo({"status"}, elsewhere.path()).exit_code, 1);
  auto bad = repo.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "bogus"});
  EXPECT_EQ(bad.exit_code, 64);
  auto outside = repo.yolo({"request-approval", "--plan-path", "../../etc/passwd", "--gate-type", "security"});
  EXPECT_EQ(outside.exit_code, 1);
  EXPECT_NE(outside.err.find("outside the project"), std::string::npos);
}

TEST(GatesE2E, RejectHaltsWithFeedbackAndARevisedRequestReopens) {
  Repo repo;
  ASSERT_EQ(repo.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  auto other = repo.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "security"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("Cannot freeze: already frozen"), std::string::npos);
  EXPECT_NE(repo.yolo({"reject"}).exit_code, 0);  // --feedback is required
  auto r = repo.yolo({"reject", "--feedback", "Split wave 1", "--by", "bob", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json st = repo.state();
  EXPECT_EQ(st["status"], "halted");
  EXPECT_EQ(st["gates"][0]["feedback"], "Split wave 1");
  auto status = repo.yolo({"status", "--json"}).json_out();
  EXPECT_EQ(status["run_state"], "HALTED");
  auto table = repo.yolo({"gates"});
  EXPECT_NE(table.out.find("✗ vision-1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Split wave 1"), std::string::npos);
  EXPECT_EQ(repo.events().back()["event"], "gate_rejected");

  write_file(repo.dir / kRoadmap, "# Roadmap\n\nWave 1a, wave 1b\n");
  auto again = repo.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json_out()["gate_id"], "vision-2");
  EXPECT_EQ(repo.state()["status"], "awaiting_approval");
  EXPECT_EQ(repo.state()["gates"][0]["feedback"], "Split wave 1");
}

TEST(GatesE2E, SkipApprovesAtOnceAndSaysSo) {
  Repo repo(json({{"approvers", {{"vision", "skip"}}}}));
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json_out()["status"], "approved");
  json st = repo.state();
  EXPECT_EQ(st["status"], "running");
  EXPECT_EQ(st["approval"]["approved_by"], "skip");
  EXPECT_EQ(st["gates"][0]["approved_by"], "skip");
}

TEST(GatesE2E, CommandApproverGetsItsArgvAndApproves) {
  Repo repo(json({{"approvers", {{"security", {"./ok.sh", "{plan_path}", "{gate_type}", "{gate_id}", "{reason}"}}}}}));
  repo.script("ok.sh", "printf '{\"decision\":\"approved\",\"feedback\":\"lgtm\"}'\n");
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "security", "--reason", "a b; $(touch pwned)"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json_out()["status"], "approved");
  EXPECT_EQ(read_file(repo.dir / "approver.log"), kRoadmap + " security security-1 a b; $(touch pwned)\n");
  EXPECT_FALSE(stdfs::exists(repo.dir / "pwned"));
  json g = repo.state()["gates"][0];
  EXPECT_EQ(g["status"], "APPROVED");
  EXPECT_EQ(g["approved_by"], "approver:ok.sh");
  EXPECT_EQ(g["feedback"], "lgtm");
}

TEST(GatesE2E, CommandApproverRejectsOrLeavesItPending) {
  Repo repo(json({{"approvers", {{"vision", {"./no.sh"}}, {"scope_change", {"./later.sh"}}}}}));
  repo.script("no.sh", "echo '{\"decision\":\"rejected\",\"feedback\":\"missing wave 0\"}'\n");
  repo.script("later.sh", "echo '{\"decision\":\"pending\",\"feedback\":\"needs a human\"}'\n");
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json_out()["status"], "rejected");
  EXPECT_EQ(r.json_out()["feedback"], "missing wave 0");
  EXPECT_EQ(repo.state()["status"], "halted");

  auto p = repo.yolo({"request-approval", "--plan-path", kRoadmap, "--gate-type", "scope_change"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.json_out()["status"], "paused");
  EXPECT_EQ(repo.state()["gates"][1]["feedback"], "needs a human");
  // A person resolves a pending gate; the approver is not asked again.
  auto a = repo.yolo({"approve", "--by", "carol"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(repo.state()["gates"][1]["approved_by"], "carol");
}

TEST(GatesE2E, AnErroringApproverLeavesLastErrorAndApproveRetries) {
  Repo repo(json({{"approvers", {{"vision", {{"command", {"./flaky.sh"}}, {"timeout_ms", 5000}}}}}}));
  repo.script("flaky.sh",
              "if [ -f \"$(dirname \"$0\")/ready\" ]; then echo '{\"decision\":\"approved\"}'; exit 0; fi\n"
              "echo 'approval service down' >&2\nexit 3\n");
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json answer = r.json_out();
  EXPECT_EQ(answer["status"], "paused");
  std::string err = answer["last_error"];
  EXPECT_NE(err.find("exited with status 3"), std::string::npos) << err;
  EXPECT_NE(err.find("approval service down"), std::string::npos) << err;
  json g = repo.state()["gates"][0];
  EXPECT_EQ(g["status"], "OPEN");
  EXPECT_EQ(g["last_error"], err);
  EXPECT_EQ(repo.events().back()["event"], "gate_error");
  auto table = repo.yolo({"gates"});
  EXPECT_NE(table.out.find("⚠ vision-1"), std::string::npos) << table.out;

  // Still failing: approve retries, the gate stays pending, exit 1.
  auto fail = repo.yolo({"approve", "--by", "x"});
  EXPECT_EQ(fail.exit_code, 1);
  EXPECT_EQ(repo.state()["gates"][0]["status"], "OPEN");
  write_file(repo.dir / "ready", "");
  auto ok = repo.yolo({"approve", "--by", "x"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err << ok.out;
  g = repo.state()["gates"][0];
  EXPECT_EQ(g["status"], "APPROVED");
  EXPECT_EQ(g["approved_by"], "approver:flaky.sh");
  EXPECT_TRUE(g["last_error"].is_null());
  // Three runs: the request, the failed retry, the good retry.
  std::string log = read_file(repo.dir / "approver.log");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3);
}

// An approver that keeps failing does not lock people out: `approve --override` approves as
// the person instead of retrying, and says so in the gate.
TEST(GatesE2E, ApproveOverrideDecidesInPlaceOfAFailingApprover) {
  Repo repo(json({{"approvers", {{"vision", {{"command", {"./down.sh"}}, {"timeout_ms", 5000}}}}}}));
  repo.script("down.sh", "echo 'approval service down' >&2\nexit 3\n");
  ASSERT_EQ(repo.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  EXPECT_EQ(repo.yolo({"approve", "--by", "dana"}).exit_code, 1);  // a plain approve retries it, in vain
  EXPECT_EQ(repo.state()["gates"][0]["status"], "OPEN");
  auto ok = repo.yolo({"approve", "--by", "dana", "--override"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("in place of its failing approver"), std::string::npos) << ok.out;
  json g = repo.state()["gates"][0];
  EXPECT_EQ(g["status"], "APPROVED");
  EXPECT_EQ(g["approved_by"], "dana");
  EXPECT_EQ(g["override"], true);
  EXPECT_TRUE(g["last_error"].is_null());
  EXPECT_EQ(repo.state()["status"], "running");
  // The approver ran twice (the request, the plain approve), not for the override.
  std::string log = read_file(repo.dir / "approver.log");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2);
}

TEST(GatesE2E, GarbageFromTheApproverIsAnError) {
  Repo repo(json({{"approvers", {{"vision", {"./talk.sh"}}}}}));
  repo.script("talk.sh", "echo 'sure, approved!'\n");
  auto r = repo.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.json_out()["last_error"].get<std::string>().find("no JSON verdict"), std::string::npos);
  EXPECT_EQ(repo.state()["status"], "awaiting_approval");
  Repo missing(json({{"approvers", {{"vision", {"./does-not-exist"}}}}}));
  auto m = missing.yolo({"request-approval", "--plan-path", kRoadmap});
  ASSERT_EQ(m.exit_code, 0);
  EXPECT_FALSE(m.json_out()["last_error"].get<std::string>().empty());
}

TEST(GatesE2E, AnEditAfterApprovalShowsInStatus) {
  Repo repo;
  ASSERT_EQ(repo.yolo({"request-approval", "--plan-path", kRoadmap}).exit_code, 0);
  ASSERT_EQ(repo.yolo({"approve", "--by", "alice"}).exit_code, 0);
  EXPECT_EQ(repo.yolo({"status", "--json"}).json_out()["approval_counts"], true);
  write_file(repo.dir / kRoadmap, "# Roadmap\n\nsomething else entirely\n");
  auto s = repo.yolo({"status", "--json"}).json_out();
  EXPECT_EQ(s["approval_counts"], false);
  EXPECT_NE(s["approval_problem"].get<std::string>().find("changed after it was approved by alice"), std::string::npos);
  auto table = repo.yolo({"status"});
  EXPECT_NE(table.out.find("⚠ Approval: " + kRoadmap + " changed after"), std::string::npos) << table.out;
}

TEST(GatesE2E, StatusTableShowsWavesPlansAndReviews) {
  Repo repo;
  json st = {{"phase", 1},
             {"phase_name", "demo"},
             {"status", "running"},
             {"wave", 2},
             {"total_waves", 2},
             {"correlation_id", "c-1"},
             {"plans",
              {{{"id", "01-01"}, {"title", "Core"}, {"wave", 1}, {"status", "complete"}},
               {{"id", "01-02"}, {"title", "CLI"}, {"wave", 2}, {"status", "running"}},
               {{"id", "01-03"}, {"title", "Docs"}, {"wave", 2}, {"status", "failed"}, {"error", "SUMMARY.md missing"}}}},
             {"reviews", {{"01-01", {{"hash", "h"}, {"verdict", "approve"}}}, {"01-02", {{"hash", "h2"}, {"verdict", "conditional"}}}}},
             {"review_loops", {{"01-02", {{"cycle", 2}, {"max", 3}, {"status", "passed"}}}}},
             {"approval", {{"plan_path", kRoadmap}, {"approved", true}, {"approved_by", "alice"}}}};
  write_file(repo.dir / ".yolo-planning/.execution-state.json", st.dump());
  auto j = repo.yolo({"status", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json s = j.json_out();
  EXPECT_EQ(s["waves"].size(), 2u);
  EXPECT_EQ(s["waves"][0]["status"], "complete");
  EXPECT_EQ(s["waves"][1]["status"], "failed");
  EXPECT_EQ(s["plans"][1]["review"]["verdict"], "conditional");
  EXPECT_EQ(s["plans"][1]["review"]["cycle"], 2);
  EXPECT_EQ(s["counts"]["complete"], 1);
  auto t = repo.yolo({"status"});
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("Phase 1 (demo)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("✓ 01-01"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("◆ 01-02"), std::string::npos);
  EXPECT_NE(t.out.find("✗ 01-03"), std::string::npos);
  EXPECT_NE(t.out.find("SUMMARY.md missing"), std::string::npos);
  EXPECT_NE(t.out.find("review ⚠ conditional (cycle 2/3)"), std::string::npos);
  EXPECT_EQ(t.out.find("\x1b["), std::string::npos);  // no colour off a TTY
}

TEST(GatesE2E, ABrokenStateFileIsNeverOverwritten) {
  Repo repo;
  const std::string garbage = "{\"status\": \"running\", \"gates\": [";
  write_file(repo.dir / ".yolo-planning/.execution-state.json", garbage);
  for (auto args : std::vector<std::vector<std::string>>{{"request-approval", "--plan-path", kRoadmap},
                                                        {"approve", "--by", "a"},
                                                        {"reject", "--feedback", "x"},
                                                        {"gates"},
                                                        {"status"}}) {
    auto r = repo.yolo(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find(".execution-state.json"), std::string::npos) << args[0] << ": " << r.err;
  }
  EXPECT_EQ(read_file(repo.dir / ".yolo-planning/.execution-state.json"), garbage);
}

}  // namespace
}  // namespace yolo::test
