// `yolo review` end to end: the built binary, real plan files, the stand-in agents of
// fixtures/agents/ as real child processes.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "protocol/base/sha256.h"
#include "test_support.h"

extern char** environ;

namespace yolo {
namespace {

using test::read_file;
using test::run_yolo;
using test::TempDir;
using test::write_file;
namespace stdfs = std::filesystem;

std::string agent(const std::string& name) { return (test::source_dir() / "fixtures" / "agents" / name).string(); }

std::string plan_text(const std::string& plan, const std::string& title = "Build the core", bool must_haves = true) {
  std::string s = "---\nphase: \"01\"\nplan: \"" + plan + "\"\ntitle: " + json(title).dump() +
                  "\nwave: 1\ndepends_on: []\n";
  if (must_haves) s += "must_haves:\n  - \"the core works\"\n";
  s += "---\n\n## Tasks\n\n### Task 1: Write it\n\nWrite the code.\n";
  return s;
}

// A repo with one phase folder; config built from the given reviewer/architect argv.
struct Repo {
  TempDir dir;
  stdfs::path root = dir.path();
  stdfs::path phase = root / ".yolo-planning" / "phases" / "01-core";
  stdfs::path plan = phase / "01-01-PLAN.md";

  Repo() { write_file(plan, plan_text("01")); }

  void config(json extra) {
    // The stand-in agents' side channels (pid files, argv dumps) lie in the test's folder:
    // granted to them as a user grants an agent a folder of its own.
    json c = {{"v3_event_log", true},
              {"command_timeout_ms", 20000},
              {"sandbox", {{"write", {{"reviewer", {root.string()}}, {"architect", {root.string()}}}}}}};
    for (auto it = extra.begin(); it != extra.end(); ++it) c[it.key()] = it.value();
    write_file(root / ".yolo-planning" / "config.json", c.dump());
  }
  json state() const { return json::parse(read_file(root / ".yolo-planning" / ".execution-state.json")); }
  // Each plan's last review loop, from the review ledgers (plan id -> loop).
  json run_loops() const {
    json loops = json::object();
    json records = test::review_records(root);
    for (const auto& [id, rec] : records.items()) loops[id] = rec["loop"];
    return loops;
  }
  std::vector<json> events() const {
    std::vector<json> v;
    std::istringstream in(read_file(root / ".yolo-planning" / ".events" / "event-log.jsonl"));
    std::string l;
    while (std::getline(in, l))
      if (!l.empty()) v.push_back(json::parse(l));
    return v;
  }
  std::vector<std::string> event_types() const {
    std::vector<std::string> t;
    for (const auto& e : events()) t.push_back(e["event"]);
    return t;
  }
  test::RunResult review(std::vector<std::string> args, const std::vector<std::string>& env = {}) const {
    args.insert(args.begin(), "review");
    return run_yolo(args, root, env);
  }
};

json only_line(const test::RunResult& r) {
  auto lines = r.json_lines();
  EXPECT_EQ(lines.size(), 1u) << r.out << r.err;
  return lines.empty() ? json::object() : lines[0];
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

size_t count_of(const std::vector<std::string>& v, const std::string& x) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), x));
}

// Gone = no such process, or a zombie waiting for a reaper that is not ours.
bool process_gone(int pid) {
  for (int i = 0; i < 150; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<int> read_pids(const stdfs::path& f) {
  std::vector<int> pids;
  std::istringstream in(read_file(f));
  int p;
  while (in >> p) pids.push_back(p);
  return pids;
}

TEST(Review, ApproveRecordsTheReviewInTheState) {
  Repo repo;
  repo.config({{"reviewer", {agent("reviewer-approve"), "{plan_path}"}}});
  auto r = repo.review({".yolo-planning/phases/01-core/01-01-PLAN.md", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json j = only_line(r);
  EXPECT_EQ(j["plan_id"], "01-01");
  EXPECT_EQ(j["plan"], ".yolo-planning/phases/01-core/01-01-PLAN.md");
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["source"], "reviewer");
  EXPECT_EQ(j["stage1"]["verdict"], "approve");
  EXPECT_EQ(j["cycles"], 1);
  std::string hash = sha256_hex(read_file(repo.plan));
  EXPECT_EQ(j["hash"], hash);
  json st = repo.run_loops();  // no run: the loops are the ledgers'
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["hash"], hash);
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["verdict"], "approve");
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["path"], ".yolo-planning/phases/01-core/01-01-PLAN.md");
  EXPECT_TRUE(test::review_records(repo.root)["01-01"]["reviewed_at"].is_string());
  EXPECT_EQ(st["01-01"], json::parse(R"({"cycle":1,"max":3,"status":"passed",
      "findings_per_cycle":[{"verdict":"approve","finding_count":0,"high":0}]})"));
  auto types = repo.event_types();
  EXPECT_EQ(count_of(types, "review_start"), 1u);
  EXPECT_EQ(count_of(types, "review_end"), 1u);
  EXPECT_EQ(count_of(types, "review_loop_start"), 0u);

  // Human output: the ◆ line and the ✓ verdict.
  auto h = repo.review({repo.plan.string()});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_TRUE(contains(h.out, "◆ Reviewing plan 01-01 (cycle 1/3)")) << h.out;
  EXPECT_TRUE(contains(h.out, "✓ 01-01: approve after 1 cycle (reviewer)")) << h.out;
}

TEST(Review, ConditionalCarriesFindingsAndReportsUnparsedLines) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-conditional")})}});
  auto r = repo.review({repo.plan.string(), "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  json j = only_line(r);
  EXPECT_EQ(j["verdict"], "conditional");
  ASSERT_EQ(j["findings"].size(), 3u) << j.dump(2);
  EXPECT_EQ(j["findings"][0], json::parse(R"({"id":"f-010","severity":"medium","file":"src/x.cc",
      "title":"Task 2 does not name its test","description":"Task 2 does not name its test",
      "suggestion":"Add the test file to Task 2"})"));
  EXPECT_EQ(j["findings"][1]["id"], "f-011");
  EXPECT_EQ(j["findings"][2]["status"], "unparsed");
  ASSERT_EQ(j["unparsed"].size(), 1u);
  EXPECT_EQ(j["unparsed"][0]["line"], 8);
  EXPECT_TRUE(contains(j["unparsed"][0]["reason"], "urgent"));
  EXPECT_TRUE(contains(r.err, "could not be read"));
  EXPECT_FALSE(stdfs::exists(repo.root / ".yolo-planning" / ".execution-state.json"));  // a review is no run
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["verdict"], "conditional");
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["findings"].size(), 3u);
}

TEST(Review, RejectThenRevisedThenApprovedInCycle2) {
  Repo repo;
  repo.config({{"reviewer", {agent("reviewer-reject-until-marker"), "{plan_path}", "{cycle}"}},
               {"architect", {agent("architect-fix"), "{plan_path}"}}});
  std::string before = sha256_hex(read_file(repo.plan));
  auto r = repo.review({repo.plan.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = only_line(r);
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["cycles"], 2);
  EXPECT_EQ(j["loop_status"], "passed");
  ASSERT_EQ(j["architect"].size(), 1u);
  EXPECT_EQ(j["architect"][0]["delta_count"], 2);  // the high and the medium finding, not the low one
  EXPECT_EQ(j["architect"][0]["changed"], true);
  EXPECT_EQ(j["history"][0]["verdict"], "reject");
  EXPECT_EQ(j["history"][0]["hash"], before);
  std::string after = sha256_hex(read_file(repo.plan));
  EXPECT_NE(after, before);
  EXPECT_EQ(j["hash"], after);
  EXPECT_TRUE(contains(read_file(repo.plan), "REVIEW-FIX-APPLIED"));
  json st = repo.run_loops();
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["hash"], after);
  EXPECT_EQ(st["01-01"]["cycle"], 2);
  EXPECT_EQ(st["01-01"]["status"], "passed");
  EXPECT_EQ(st["01-01"]["findings_per_cycle"],
            json::parse(R"([{"verdict":"reject","finding_count":3,"high":1},{"verdict":"approve","finding_count":1,"high":0}])"));
  auto types = repo.event_types();
  EXPECT_EQ(count_of(types, "review_loop_start"), 1u);
  EXPECT_EQ(count_of(types, "review_loop_cycle"), 2u);
  EXPECT_EQ(count_of(types, "review_loop_end"), 1u);
  for (const auto& e : repo.events()) {
    EXPECT_EQ(e["phase"], 1);
    EXPECT_EQ(e["plan"], 1);
    EXPECT_EQ(e["data"]["plan_id"], "01-01");
  }
}

TEST(Review, EscalationHaltsThePhase) {
  Repo repo;
  // 01-01 is already fixed (approves); 01-02 is churned by the architect but never fixed.
  write_file(repo.plan, plan_text("01") + "\n<!-- REVIEW-FIX-APPLIED -->\n");
  write_file(repo.phase / "01-02-PLAN.md", plan_text("02", "Second plan"));
  repo.config({{"reviewer", {agent("reviewer-reject-until-marker"), "{plan_path}", "{cycle}"}},
               {"architect", {agent("architect-churn"), "{plan_path}"}}});
  auto r = repo.review({repo.phase.string(), "--json", "--max-cycles", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto lines = r.json_lines();
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["plan_id"], "01-01");
  EXPECT_EQ(lines[0]["verdict"], "approve");
  EXPECT_EQ(lines[1]["plan_id"], "01-02");
  EXPECT_EQ(lines[1]["verdict"], "reject");
  // f-001 is high in cycles 1 and 2: escalated, so the loop stops there without calling the
  // architect again, before max cycles.
  EXPECT_EQ(lines[1]["cycles"], 2);
  EXPECT_EQ(lines[1]["loop_status"], "failed");
  EXPECT_TRUE(contains(lines[1]["stop_reason"], "escalated"));
  EXPECT_EQ(lines[1]["escalated"], json::array({"f-001"}));
  EXPECT_EQ(lines[1]["architect"].size(), 1u);
  json sum = lines[2];
  EXPECT_EQ(sum["type"], "phase_summary");
  EXPECT_EQ(sum["halted"], true);
  EXPECT_EQ(sum["verdict"], "reject");
  ASSERT_EQ(sum["plans"].size(), 2u);
  // Accumulated findings de-duplicated by id: 01-01's f-003, 01-02's f-001..f-003 once each.
  EXPECT_EQ(sum["findings"].size(), 4u) << sum["findings"].dump(2);
  json st = repo.run_loops();
  EXPECT_EQ(st["01-02"]["status"], "failed");
  EXPECT_EQ(st["01-02"]["cycle"], 2);
  EXPECT_EQ(st["01-02"]["max"], 3);
  EXPECT_EQ(st["01-02"]["findings_per_cycle"].size(), 2u);
  EXPECT_EQ(test::review_records(repo.root)["01-02"]["verdict"], "reject");
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["verdict"], "approve");
  EXPECT_EQ(count_of(repo.event_types(), "review_halt"), 1u);

  // The human summary table.
  write_file(repo.phase / "01-02-PLAN.md", plan_text("02", "Second plan"));
  auto h = repo.review({repo.phase.string(), "--max-cycles", "2"});
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_TRUE(contains(h.out, "Review summary")) << h.out;
  EXPECT_TRUE(contains(h.out, "✗ Phase halted: 1 of 2 plans rejected")) << h.out;
  EXPECT_TRUE(contains(h.out, "Accumulated findings (4, de-duplicated by id)")) << h.out;
  // The last line says what to do next: revise the rejected plan, then review again.
  std::string last = h.out.substr(h.out.find_last_of('\n', h.out.size() - 2) + 1);
  EXPECT_TRUE(contains(last, "Next: revise the rejected plan 01-02")) << last;
  EXPECT_TRUE(contains(last, "`yolo review ")) << last;

  // A phase that passes: the next step is execute.
  write_file(repo.phase / "01-02-PLAN.md", plan_text("02", "Second plan"));
  repo.config(json::object());
  auto ok = repo.review({repo.phase.string()});
  std::string ok_last = ok.out.substr(ok.out.find_last_of('\n', ok.out.size() - 2) + 1);
  EXPECT_TRUE(contains(ok.out, "Phase review passed")) << ok.out;
  EXPECT_TRUE(contains(ok_last, "Next: `yolo execute` runs the phase")) << ok.out;
}

TEST(Review, ArchitectThatChangesNothingStopsTheLoop) {
  Repo repo;
  repo.config({{"reviewer", {agent("reviewer-reject-until-marker"), "{plan_path}", "{cycle}"}},
               {"architect", {agent("architect-noop"), "{plan_path}"}}});
  auto r = repo.review({repo.plan.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "unchanged (same content hash)")) << r.out;
  EXPECT_FALSE(contains(r.out, "cycle 2/3")) << r.out;
  EXPECT_EQ(repo.run_loops()["01-01"]["status"], "failed");
  EXPECT_EQ(repo.run_loops()["01-01"]["cycle"], 1);
}

TEST(Review, GarbageFailsClosedAndShowsTheLast20Lines) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-garbage")})}, {"architect", {agent("architect-fix"), "{plan_path}"}}});
  std::string before = read_file(repo.plan);
  auto r = repo.review({repo.plan.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "no valid VERDICT line — failing closed (reject)")) << r.out;
  EXPECT_TRUE(contains(r.out, "│ final garbage line"));
  EXPECT_TRUE(contains(r.out, "│ garbage line 14: "));
  EXPECT_FALSE(contains(r.out, "garbage line 13: "));
  EXPECT_EQ(read_file(repo.plan), before);  // no revision on a parse failure
  auto types = repo.event_types();
  EXPECT_EQ(count_of(types, "review_parse_failure"), 1u);
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["verdict"], "reject");

  auto j = repo.review({repo.plan.string(), "--json"});
  json line = only_line(j);
  EXPECT_EQ(line["source"], "parse_failure");
  EXPECT_EQ(line["verdict"], "reject");
  EXPECT_TRUE(contains(line["output_tail"], "VERDICT: maybe"));
  EXPECT_TRUE(contains(j.err, "│ final garbage line"));  // people still see it, on stderr
}

// A reviewer that cannot run, with the fallback allowed (reviewer_required: false): Stage 1
// approves and the review exits 4, "no real review"; with no reviewer at all, 0.
void expect_fallback(const Repo& repo, const test::RunResult& r, const std::string& reason_part, int exit = 4) {
  EXPECT_EQ(r.exit_code, exit) << r.out << r.err;  // Stage 1 approves
  EXPECT_TRUE(contains(r.out, "⚠ Reviewer agent unavailable — falling back to CLI review for plan 01-01")) << r.out;
  auto evs = repo.events();
  bool found = false;
  for (const auto& e : evs)
    if (e["event"] == "review_agent_fallback") {
      found = true;
      EXPECT_TRUE(contains(e["data"]["reason"], reason_part)) << e.dump();
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["source"], "fallback");
}

TEST(Review, MissingBinaryFallsBackToTheCliVerdict) {
  Repo repo;
  repo.config({{"reviewer", {(repo.root / "no-such-reviewer").string(), "{plan_path}"}}, {"reviewer_required", false}});
  expect_fallback(repo, repo.review({repo.plan.string()}), "could not start");
}

TEST(Review, NonZeroExitFallsBack) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-exit-nonzero")})}, {"reviewer_required", false}});
  expect_fallback(repo, repo.review({repo.plan.string()}), "exited with status 3");
}

TEST(Review, TimeoutFallsBack) {
  Repo repo;
  repo.config({{"reviewer", {{"command", json::array({agent("reviewer-hang")})}, {"timeout_ms", 300}}},
               {"reviewer_required", false}});
  auto t0 = std::chrono::steady_clock::now();
  auto r = repo.review({repo.plan.string()});
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  expect_fallback(repo, r, "timed out");
  EXPECT_LT(ms, 10000);
}

TEST(Review, NoReviewerConfiguredIsTheFallbackPath) {
  Repo repo;
  repo.config(json::object());
  auto r = repo.review({repo.plan.string()});
  expect_fallback(repo, r, "no reviewer", 0);
  // Stage 1's own verdict decides: a conditional plan (7 tasks) exits 2.
  std::string many = plan_text("01");
  for (int i = 2; i <= 7; ++i) many += "\n### Task " + std::to_string(i) + ": more\n";
  write_file(repo.plan, many);
  auto c = repo.review({repo.plan.string(), "--json"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(only_line(c)["source"], "fallback");
}

TEST(Review, GrandchildIsKilledOnTimeout) {
  Repo repo;
  repo.config({{"reviewer", {{"command", json::array({agent("reviewer-grandchild-hang")})}, {"timeout_ms", 500}}},
               {"reviewer_required", false}});
  auto pidfile = repo.root / "pids";
  auto r = repo.review({repo.plan.string(), "--json"}, {"YOLO_TEST_PIDFILE=" + pidfile.string()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(only_line(r)["source"], "fallback");
  auto pids = read_pids(pidfile);
  ASSERT_EQ(pids.size(), 2u) << read_file(pidfile);
  for (int pid : pids) EXPECT_TRUE(process_gone(pid)) << "process " << pid << " outlived the review";
}

TEST(Review, SigtermKillsTheReviewerGroupBeforeExiting) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-grandchild-hang")})}});
  auto pidfile = repo.root / "pids";
  std::string env_kv = "YOLO_TEST_PIDFILE=" + pidfile.string();
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  envs.push_back(env_kv);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {test::yolo_bin(), "review", repo.plan.string(), "--json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, repo.root.c_str());
  pid_t yolo = 0;
  ASSERT_EQ(posix_spawn(&yolo, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  for (int i = 0; i < 500 && read_pids(pidfile).size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto pids = read_pids(pidfile);
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_EQ(::kill(yolo, SIGTERM), 0);
  int status = 0;
  pid_t w = 0;
  for (int i = 0; i < 500 && (w = ::waitpid(yolo, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (w == 0) {
    ::kill(yolo, SIGKILL);
    ::waitpid(yolo, &status, 0);
    FAIL() << "yolo review did not exit within 5 s of SIGTERM";
  }
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  for (int pid : pids) EXPECT_TRUE(process_gone(pid)) << "process " << pid << " outlived yolo review";
  // An interrupted review is not a review: nothing recorded for the plan.
  EXPECT_FALSE(stdfs::exists(repo.root / ".yolo-planning" / ".execution-state.json"));
}

TEST(Review, FloodIsCappedAndTheVerdictAtTheEndStillCounts) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-flood")})}});
  auto r = repo.review({repo.plan.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json j = only_line(r);
  EXPECT_EQ(j["source"], "reviewer");
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["reviewer"]["out_truncated"], true);
  EXPECT_GT(j["reviewer"]["out_bytes"].get<size_t>(), 8000000u);  // ~8 MB written, 1 MiB kept
  EXPECT_LT(r.out.size(), 64u << 10);  // the flood is not echoed
}

TEST(Review, Stage1RejectNeverSpawns) {
  Repo repo;
  write_file(repo.plan, plan_text("01", "No must-haves", false));
  auto dump = repo.root / "dump.jsonl";
  repo.config({{"reviewer", json::array({agent("reviewer-argv-dump")})}});
  auto r = repo.review({repo.plan.string(), "--json"}, {"YOLO_TEST_DUMP=" + dump.string()});
  EXPECT_EQ(r.exit_code, 1);
  json j = only_line(r);
  EXPECT_EQ(j["source"], "stage1_reject");
  EXPECT_EQ(j["stage1"]["verdict"], "reject");
  EXPECT_FALSE(stdfs::exists(dump)) << "the reviewer was spawned";
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["verdict"], "reject");
}

TEST(Review, HostileTextReachesTheChildOnlyAsLiteralArgv) {
  TempDir dir;
  stdfs::path root = dir.path();
  stdfs::create_directories(root / "victim");
  std::string title = "$(touch " + (root / "x").string() + "); rm -rf " + (root / "victim").string();
  std::string phase_name = "01-$(touch y)'; echo pwned";
  stdfs::path phase = root / ".yolo-planning" / "phases" / phase_name;
  std::string plan_no = "01'; echo pwned";
  stdfs::path plan = phase / "01-01-PLAN.md";
  write_file(plan, plan_text(plan_no, title));
  auto dump = root / "dump.jsonl";
  write_file(root / ".yolo-planning" / "config.json",
             json({{"reviewer",
                    {agent("reviewer-argv-dump"), "{plan_title}", "{plan_id}", "{phase_dir}", "--prompt={prompt}",
                     "{prompt_file}", "{model}", "{max_turns}", "{cycle}", "{unknown}"}},
                   {"sandbox", {{"write", {{"reviewer", {root.string()}}}}}}})  // its dump
                 .dump());
  auto r = run_yolo({"review", plan.string(), "--json"}, root,
                    {"YOLO_TEST_DUMP=" + dump.string(), "YOLO_CORRELATION_ID=cid-123"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json d = json::parse(read_file(dump));
  json argv = d["argv"];
  ASSERT_EQ(argv.size(), 10u) << d.dump(2);
  EXPECT_EQ(argv[1], title);
  EXPECT_EQ(argv[2], "01-" + plan_no);
  EXPECT_EQ(argv[3], phase.string());
  EXPECT_TRUE(contains(argv[4], "--prompt=Review this plan adversarially."));
  EXPECT_TRUE(contains(argv[4], plan.string()));
  EXPECT_EQ(argv[6], "sonnet");
  EXPECT_EQ(argv[7], "15");
  EXPECT_EQ(argv[8], "1");
  EXPECT_EQ(argv[9], "{unknown}");
  EXPECT_FALSE(stdfs::exists(argv[5].get<std::string>())) << "the prompt file is removed afterwards";
  EXPECT_FALSE(stdfs::exists(root / "x"));
  EXPECT_FALSE(stdfs::exists(root / "y"));
  EXPECT_TRUE(stdfs::exists(root / "victim"));
  EXPECT_EQ(d["env"]["YOLO_PLAN_ID"], "01-" + plan_no);
  EXPECT_EQ(d["env"]["YOLO_PHASE_DIR"], phase.string());
  EXPECT_EQ(d["env"]["YOLO_CYCLE"], "1");
  EXPECT_EQ(d["env"]["YOLO_CORRELATION_ID"], "cid-123");
  EXPECT_EQ(d["cwd"], stdfs::canonical(root).string());
  EXPECT_EQ(d["stdin"], "");  // the prompt went through argv, not stdin
  for (const auto& out : {r.out, r.err}) {
    std::istringstream in(out);
    std::string l;
    while (std::getline(in, l)) EXPECT_NE(l, "pwned");
  }
  EXPECT_EQ(test::review_records(root)["01-" + plan_no]["verdict"], "approve");
}

TEST(Review, PromptOnStdinModelOverrideAndTurns) {
  Repo repo;
  auto dump = repo.root / "dump.jsonl";
  repo.config({{"reviewer", {agent("reviewer-argv-dump"), "{model}", "{max_turns}"}},
               {"model_overrides", {{"reviewer", "haiku"}}},
               {"agent_max_turns", {{"reviewer", 7}}}});
  auto r = repo.review({repo.plan.string()}, {"YOLO_TEST_DUMP=" + dump.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json d = json::parse(read_file(dump));
  EXPECT_EQ(d["argv"][1], "haiku");
  EXPECT_EQ(d["argv"][2], "7");
  EXPECT_TRUE(contains(d["stdin"], "Plan path: " + repo.plan.string()));
  EXPECT_TRUE(contains(d["stdin"], "VERDICT: approve|reject|conditional"));
  EXPECT_FALSE(d["env"]["YOLO_CORRELATION_ID"].get<std::string>().empty());
}

TEST(Review, ChangedReviewsOnlyPlansWhoseHashMoved) {
  Repo repo;
  write_file(repo.phase / "01-02-PLAN.md", plan_text("02", "Second"));
  auto dump = repo.root / "dump.jsonl";
  repo.config({{"reviewer", {agent("reviewer-argv-dump"), "{plan_id}"}}});
  std::vector<std::string> env = {"YOLO_TEST_DUMP=" + dump.string()};
  auto first = repo.review({repo.phase.string(), "--json", "--changed"}, env);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  auto count_runs = [&] {
    std::istringstream in(read_file(dump));
    std::string l;
    size_t n = 0;
    while (std::getline(in, l)) n += l.empty() ? 0 : 1;
    return n;
  };
  EXPECT_EQ(count_runs(), 2u);
  auto again = repo.review({repo.phase.string(), "--json", "--changed"}, env);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(count_runs(), 2u);
  auto lines = again.json_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["source"], "unchanged");
  EXPECT_EQ(lines[0]["skipped"], true);
  write_file(repo.phase / "01-02-PLAN.md", plan_text("02", "Second, edited"));
  auto third = repo.review({repo.phase.string(), "--json", "--changed"}, env);
  EXPECT_EQ(count_runs(), 3u);
  lines = third.json_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["source"], "unchanged");
  EXPECT_EQ(lines[1]["source"], "reviewer");
  EXPECT_EQ(lines[1]["hash"], sha256_hex(read_file(repo.phase / "01-02-PLAN.md")));
}

TEST(Review, RunsFromAnywhereInsideTheRepo) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-approve")})}, {"review_max_cycles", 5}});
  stdfs::create_directories(repo.root / "src" / "deep");
  auto r = run_yolo({"review", "../../.yolo-planning/phases/01-core/01-01-PLAN.md", "--json"}, repo.root / "src" / "deep");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(only_line(r)["max_cycles"], 5);  // the repo's config was read
  EXPECT_EQ(test::review_records(repo.root)["01-01"]["path"], ".yolo-planning/phases/01-core/01-01-PLAN.md");
}

TEST(Review, BadTargetsAreUsageErrors) {
  Repo repo;
  repo.config(json::object());
  auto r = repo.review({"nope/01-01-PLAN.md"});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_TRUE(contains(r.err, "nope/01-01-PLAN.md"));
  stdfs::create_directories(repo.root / "empty");
  auto e = repo.review({"empty"});
  EXPECT_EQ(e.exit_code, 64);
  EXPECT_TRUE(contains(e.err, "no plan files"));
  TempDir outside;
  write_file(outside / "01-01-PLAN.md", plan_text("01"));
  auto o = run_yolo({"review", (outside / "01-01-PLAN.md").string()}, outside.path());
  EXPECT_EQ(o.exit_code, 64);
  EXPECT_TRUE(contains(o.err, ".yolo-planning"));
}

TEST(Review, BrokenStateFileIsReportedNotOverwritten) {
  Repo repo;
  repo.config({{"reviewer", json::array({agent("reviewer-approve")})}});
  write_file(repo.root / ".yolo-planning" / ".execution-state.json", "{not json");
  auto r = repo.review({repo.plan.string()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, ".execution-state.json")) << r.err;
  EXPECT_EQ(read_file(repo.root / ".yolo-planning" / ".execution-state.json"), "{not json");
}

// The state's review_loops are the run's: before `yolo execute` starts a run, a review writes
// no state at all (a review never creates or marks a run); with a run, only its phase's
// loops. Every review is in its phase's ledger.
TEST(Review, TheStateKeepsTheLoopsOfTheRunsPhaseTheLedgersKeepEveryReview) {
  Repo repo;
  repo.config(json::object());
  stdfs::path state_file = repo.root / ".yolo-planning" / ".execution-state.json";
  stdfs::path phase2 = repo.root / ".yolo-planning" / "phases" / "02-api";
  std::string p2 = plan_text("01");
  p2.replace(p2.find("phase: \"01\""), 11, "phase: \"02\"");
  write_file(phase2 / "02-01-PLAN.md", p2);
  ASSERT_EQ(repo.review({repo.phase.string()}).exit_code, 0);
  ASSERT_EQ(repo.review({phase2.string()}).exit_code, 0);
  EXPECT_FALSE(stdfs::exists(state_file));
  json recs = test::review_records(repo.root);
  EXPECT_EQ(recs["01-01"]["loop"]["status"], "passed");
  EXPECT_EQ(recs["02-01"]["loop"]["status"], "passed");
  EXPECT_TRUE(stdfs::exists(repo.root / ".yolo-planning/.reviews/01-core.json"));
  EXPECT_TRUE(stdfs::exists(repo.root / ".yolo-planning/.reviews/02-api.json"));
  // A run of phase 1: reviewing phase 2 leaves the run's loops alone.
  json st = {{"status", "running"}, {"phase", 1}, {"phase_name", "core"}, {"review_loops", json::object()}};
  write_file(state_file, st.dump());
  write_file(phase2 / "02-01-PLAN.md", p2 + "\nMore detail.\n");
  ASSERT_EQ(repo.review({phase2.string()}).exit_code, 0);
  EXPECT_EQ(repo.state()["review_loops"], json::object());
  EXPECT_EQ(test::review_records(repo.root)["02-01"]["hash"], sha256_hex(read_file(phase2 / "02-01-PLAN.md")));
  ASSERT_EQ(repo.review({repo.phase.string()}).exit_code, 0);
  EXPECT_TRUE(repo.state()["review_loops"].contains("01-01"));
  // `yolo status` shows both, each from its ledger.
  auto s = run_yolo({"status", "--json", "--records"}, repo.root);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  json sj = s.json_out();
  EXPECT_EQ(sj["other_reviews"]["02-01"]["verdict"], "approve") << sj.dump();
  EXPECT_EQ(sj["other_reviews"]["01-01"]["verdict"], "approve") << sj.dump();
  // By default only the run's phase (1) is read; phase 2's ledger is named, not read.
  auto b = run_yolo({"status", "--json"}, repo.root);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  json bj = b.json_out();
  EXPECT_EQ(bj["other_reviews"]["01-01"]["verdict"], "approve") << bj.dump();
  EXPECT_FALSE(bj["other_reviews"].contains("02-01")) << bj.dump();
  EXPECT_EQ(bj["other_ledgers"]["count"], 1) << bj.dump();
  EXPECT_EQ(bj["other_ledgers"]["files"], json({"02-api.json"})) << bj.dump();
}

TEST(Review, ChangedSkipsWhatTheLedgerSaysWasReviewedAsItIs) {
  Repo repo;
  repo.config(json::object());
  ASSERT_EQ(repo.review({repo.phase.string()}).exit_code, 0);
  auto again = repo.review({repo.phase.string(), "--changed", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json_lines()[0]["skipped"], true) << again.out;
  // A broken ledger is named, kept, and the plan is reviewed again (never skipped on it).
  stdfs::path ledger = repo.root / ".yolo-planning/.reviews/01-core.json";
  write_file(ledger, "[]");
  auto broken = repo.review({repo.phase.string(), "--changed", "--json"});
  EXPECT_TRUE(contains(broken.err, "01-core.json")) << broken.err;
  EXPECT_EQ(broken.json_lines()[0].value("skipped", false), false) << broken.out;
  EXPECT_EQ(read_file(ledger), "[]");
}

}  // namespace
}  // namespace yolo
