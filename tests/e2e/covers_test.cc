// An approval covers content, not names, and the record cannot lose a rejection: each test
// is a walk-around an agent with no key and no terminal could take with plain file edits,
// run against the real binary, real files and real git.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "protocol/base/json.h"
#include "protocol/base/sha256.h"
#include "runner/signing.h"
#include "test_support.h"

namespace yolo::test {
namespace {

const std::string kRoadmap = ".yolo-planning/ROADMAP.md";
const std::string kState = ".yolo-planning/.execution-state.json";

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The demo project (fixtures/demo: 4 plans, wave 2 holds 01-02 and 01-03) with its agents,
// committed to git.
struct Demo {
  TempDir dir;
  std::vector<std::string> env{"NO_COLOR=1"};
  stdfs::path root() const { return dir.path(); }
  explicit Demo(const json& config_patch = json::object()) {
    copy_fixture("demo", root());
    stdfs::create_directories(root() / "agents");
    for (const char* a : {"executor-ok", "reviewer-reject-until-marker", "architect-fix", "reviewer-exit-nonzero",
                          "reviewer-approve"})
      stdfs::copy_file(source_dir() / "fixtures/agents" / a, root() / "agents" / a);
    json c = json::parse(read_file(root() / ".yolo-planning/config.json"));
    c.merge_patch(config_patch);
    config(c);
    write_file(root() / ".gitignore", ".yolo-planning/.*\n.yolo-planning/audit-log.jsonl\n");
    git({"init", "-q"});
    commit("demo");
  }
  json cfg() const { return json::parse(read_file(root() / ".yolo-planning/config.json")); }
  void config(const json& c) const { write_file(root() / ".yolo-planning/config.json", c.dump(2)); }
  RunResult git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, root());
  }
  void commit(const std::string& msg) const {
    git({"add", "-A"});
    git({"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", msg});
  }
  RunResult yolo(const std::vector<std::string>& args) const { return run_yolo(args, root(), env); }
  RunResult person(const std::vector<std::string>& args) const { return run_yolo_tty(args, root(), env); }
  json state() const { return json::parse(read_file(root() / kState)); }
  void put_state(const json& s) const { write_file(root() / kState, s.dump(2)); }
  bool ran(const std::string& plan) const {
    return stdfs::exists(root() / ".yolo-planning/phases/01-demo" / (plan + "-SUMMARY.md"));
  }
};

std::string failures_of(const RunResult& v) {
  std::string all;
  json j = v.json_out();
  if (j.contains("failures"))
    for (const auto& f : j["failures"]) all += f.value("what", "") + ": " + f.value("problem", "") + "\n";
  return all;
}

struct Keys {
  TempDir dir;
  stdfs::path key(const std::string& name) const { return dir.path() / name; }
  std::string pub(const std::string& name) const {
    std::string p = read_file(key(name).string() + ".pub");
    while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
    return p;
  }
  Keys() {
    for (const char* n : {"a", "m"})
      EXPECT_EQ(run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", n, "-f", (dir.path() / n).string()})
                    .exit_code,
                0);
  }
};

// ---- the trust root of signed approvals ---------------------------------------------------

// The agent generates a key, lists itself in the working tree's allowed_signers, and signs
// the open vision gate as APPROVED with it (no seal, no terminal).
TEST(Covers, ASelfSignedApprovalDoesNotCountAndVerifyReportsIt) {
  Keys keys;
  Demo d(json{{"review_gate", "never"}});
  write_file(d.root() / ".yolo-planning/allowed_signers",
             "agent@example.invalid namespaces=\"yolo-vision,yolo-wave\" " + keys.pub("m") + "\n");
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);  // the vision gate opens, covering that file
  json st = d.state();
  ASSERT_EQ(st["gates"].back()["status"], "OPEN");
  json& g = st["gates"].back();
  g["status"] = "APPROVED";
  g["approved_by"] = "alice";
  g["resolved_at"] = "2026-01-01T00:00:00Z";
  g.erase("seal");
  st["status"] = "running";
  st["approval"]["approved"] = true;
  st["approval"]["approved_by"] = "alice";
  std::string payload = runner::signed_payload(d.root(), g);
  write_file(d.root() / "payload", payload);
  auto sig = run_program({"ssh-keygen", "-Y", "sign", "-q", "-f", keys.key("m").string(), "-n", "yolo-vision"},
                         d.root(), {}, payload);
  ASSERT_EQ(sig.exit_code, 0) << sig.err;
  g["ssh_signature"] = sig.out;
  d.put_state(st);

  EXPECT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], false);
  auto v = d.yolo({"verify", "--json"});
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_TRUE(has(failures_of(v), "not pinned")) << v.out;
  auto ex = d.yolo({"execute"});
  EXPECT_EQ(ex.exit_code, 3) << ex.out << ex.err;  // the gate opens again
  EXPECT_FALSE(d.ran("01-01"));
}

// A key of the person's own allowed-signers file (git's gpg.ssh.allowedSignersFile in the
// person's global config) counts; the project's file counts once a person's approval pinned it.
TEST(Covers, SignedApprovalsVerifyAgainstThePersonsOwnSignersFile) {
  Keys keys;
  Demo d(json{{"review_gate", "never"}});
  TempDir home;
  write_file(home.path() / "allowed_signers", "alice@example.com " + keys.pub("a") + "\n");
  write_file(home.path() / "gitconfig",
             "[gpg \"ssh\"]\n\tallowedSignersFile = " + (home.path() / "allowed_signers").string() + "\n");
  // The project lists only the agent's key; the person's own file lists alice.
  write_file(d.root() / ".yolo-planning/allowed_signers",
             "agent@example.invalid namespaces=\"yolo-vision\" " + keys.pub("m") + "\n");
  d.commit("signers");
  d.env.push_back("GIT_CONFIG_GLOBAL=" + (home.path() / "gitconfig").string());
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  d.git({"config", "user.signingkey", keys.key("a").string()});
  auto a = d.person({"approve", "--by", "alice"});
  EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], true);
  // In a clone with no person's file the project's file is not trusted by itself.
  d.git({"add", "-f", kState});
  d.commit("approval");
  TempDir other;
  ASSERT_EQ(run_program({"git", "clone", "-q", d.root().string(), (other.path() / "clone").string()}).exit_code, 0);
  const stdfs::path clone = other.path() / "clone";
  TempDir empty_home;
  write_file(empty_home.path() / "gitconfig", "");
  EXPECT_EQ(run_yolo({"status", "--json"}, clone, {"GIT_CONFIG_GLOBAL=" + (empty_home.path() / "gitconfig").string()})
                .json_out()["approval_counts"],
            false);
  EXPECT_EQ(run_yolo({"status", "--json"}, clone, {"GIT_CONFIG_GLOBAL=" + (home.path() / "gitconfig").string()})
                .json_out()["approval_counts"],
            true);
}

// ---- a rejection cannot vanish -----------------------------------------------------------

// The person rejects wave 2; the agent deletes the log's last line and the REJECTED gate.
TEST(Covers, ARejectionCutFromTheLogAndTheStateIsReportedByVerify) {
  Demo d(json{{"review_gate", "never"}, {"wave_approval", true}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);
  auto w = d.yolo({"execute"});
  ASSERT_EQ(w.exit_code, 3) << w.out << w.err;  // wave 1 ran; the wave-2 gate is open
  json st = d.state();
  const std::string wave_gate = st["gates"].back()["id"];
  ASSERT_EQ(st["gates"].back()["gate_type"], "wave");
  auto rej = d.person({"reject", "--by", "p", "--feedback", "not this wave"});
  ASSERT_EQ(rej.exit_code, 0) << rej.out << rej.err;
  ASSERT_EQ(d.yolo({"verify"}).exit_code, 0) << d.yolo({"verify"}).out;

  // The cut: the last audit line, and the REJECTED gate (the run made to look as before).
  const stdfs::path log = d.root() / ".yolo-planning/audit-log.jsonl";
  std::string text = read_file(log);
  text.pop_back();
  text.resize(text.rfind('\n') + 1);
  write_file(log, text);
  st = d.state();
  ASSERT_EQ(st["gates"].back()["status"], "REJECTED");
  st["gates"].erase(st["gates"].size() - 1);
  st["status"] = "running";
  d.put_state(st);

  auto v = d.yolo({"verify", "--json"});
  EXPECT_EQ(v.exit_code, 1) << v.out;
  std::string f = failures_of(v);
  EXPECT_TRUE(has(f, "gate " + wave_gate)) << f;
  EXPECT_TRUE(has(f, "were removed from its end")) << f;
}

// Plans of wave 2 marked complete in the state with no approval of wave 2's gate.
TEST(Covers, VerifyReportsCompletePlansOfAWaveWhoseGateHasNoCountingApproval) {
  Demo d(json{{"review_gate", "never"}, {"wave_approval", true}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);  // wave 1 ran; the wave-2 gate is open
  ASSERT_EQ(d.yolo({"verify"}).exit_code, 0) << d.yolo({"verify"}).out;
  json st = d.state();
  for (auto& p : st["plans"])
    if (p["wave"] == 2) p["status"] = "complete";
  d.put_state(st);
  auto v = d.yolo({"verify", "--json"});
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_TRUE(has(failures_of(v), "ran past the wave gate")) << v.out;
}

// ---- mirrors agree or are not shown ---------------------------------------------------------

TEST(Covers, AnEditedApprovalMirrorIsAFindingNeverShownAsFact) {
  Demo d(json{{"review_gate", "never"}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "alice"}).exit_code, 0);
  json st = d.state();
  ASSERT_EQ(st["approval"]["approved_by"], "alice");
  st["approval"]["approved_by"] = "mallory";
  d.put_state(st);

  auto s = d.yolo({"status"});
  EXPECT_FALSE(has(s.out + s.err, "approved by mallory")) << s.out;
  EXPECT_TRUE(has(s.out + s.err, "approved_by")) << s.out;
  EXPECT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], false);
  auto v = d.yolo({"verify", "--json"});
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_TRUE(has(failures_of(v), "mallory")) << v.out;
  auto g = d.yolo({"gates"});
  EXPECT_TRUE(has(g.out, "approval.approved_by says \"mallory\"")) << g.out;
}

// ---- no silent fallback ------------------------------------------------------------------

TEST(Covers, AReviewerThatCannotRunNeverPassesAPlanUnlessThePersonAllowedIt) {
  const std::string plan = ".yolo-planning/phases/01-demo/01-01-PLAN.md";
  json reviewer = {{"command", {"agents/reviewer-exit-nonzero", "{plan_path}"}}, {"timeout_ms", 10000}};
  Demo d(json{{"reviewer", reviewer}});
  auto r = d.yolo({"review", plan});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // reviewer_required defaults to true: reject
  EXPECT_FALSE(has(r.out, "approve after")) << r.out;

  json c = d.cfg();
  c["reviewer_required"] = false;  // the person allows the fallback: it is loud
  d.config(c);
  auto f = d.yolo({"review", plan});
  EXPECT_EQ(f.exit_code, 4) << f.out << f.err;
  EXPECT_TRUE(has(f.out, "no real review")) << f.out;
  auto s = d.yolo({"status"});
  EXPECT_TRUE(has(s.out, "no real review")) << s.out;

  TempDir fresh;
  ASSERT_EQ(run_yolo({"init", fresh.path().string()}, fresh.path()).exit_code, 0);
  EXPECT_EQ(json::parse(read_file(fresh.path() / ".yolo-planning/config.json"))["reviewer_required"], true);
}

// ---- covers by content -----------------------------------------------------------------

// Each edit an agent can make without touching a covered name, after the person approved.
TEST(Covers, TheVisionApprovalCoversProgramsConfigProfilesAndTheWaveMap) {
  struct Edit {
    const char* what;
    std::function<void(Demo&)> apply;
    const char* shown;  // what `yolo execute` names as changed
  };
  std::vector<Edit> edits = {
      {"the executor script", [](Demo& d) { write_file(d.root() / "agents/executor-ok", "#!/bin/sh\nexit 0\n"); },
       "agents/executor-ok"},
      {"agent_max_turns",
       [](Demo& d) {
         json c = d.cfg();
         c["agent_max_turns"] = {{"reviewer", 1}};
         d.config(c);
       },
       "config key agent_max_turns"},
      {"model_overrides",
       [](Demo& d) {
         json c = d.cfg();
         c["model_overrides"] = {{"reviewer", "haiku"}};
         d.config(c);
       },
       "config key model_overrides"},
      {"the model profiles",
       [](Demo& d) { write_file(d.root() / ".yolo-planning/model-profiles.json", "{\"quality\": {}}\n"); },
       "model-profiles.json"},
      {"every plan moved to wave 1",
       [](Demo& d) {
         for (const char* n : {"01-02", "01-03", "01-04"}) {
           stdfs::path p = d.root() / ".yolo-planning/phases/01-demo" / (std::string(n) + "-PLAN.md");
           std::string t = read_file(p);
           for (const char* w : {"wave: 2", "wave: 3"})
             for (size_t at; (at = t.find(w)) != std::string::npos;) t.replace(at, 7, "wave: 1");
           size_t dep = t.find("depends_on:");
           t.replace(dep, t.find('\n', dep) - dep, "depends_on: []");
           write_file(p, t);
         }
       },
       "wave map of phase 01-demo"},
  };
  for (const auto& e : edits) {
    SCOPED_TRACE(e.what);
    Demo d(json{{"review_gate", "never"}, {"wave_approval", true}});
    ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
    ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);
    ASSERT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], true);
    e.apply(d);
    EXPECT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], false);
    auto ex = d.yolo({"execute"});
    EXPECT_EQ(ex.exit_code, 3) << ex.out << ex.err;  // the vision gate opens again
    EXPECT_TRUE(has(ex.out + ex.err, e.shown)) << ex.out << ex.err;
    EXPECT_FALSE(d.ran("01-01"));
    // `yolo approve` shows what changed since the last approval, by name.
    auto a = d.person({"approve", "--by", "p"});
    EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
    EXPECT_TRUE(has(a.err, "since the last approval")) << a.err;
    EXPECT_TRUE(has(a.err, e.shown)) << a.err;
  }
}

// A cosmetic key does not re-open the gate.
TEST(Covers, ACosmeticKeyDoesNotReopenTheGate) {
  Demo d(json{{"review_gate", "never"}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);
  json c = d.cfg();
  c["max_parallel"] = 1;
  c["watch"] = {{"debounce_ms", 50}};
  d.config(c);
  EXPECT_EQ(d.yolo({"status", "--json"}).json_out()["approval_counts"], true);
}

// docs/trust.md lists what an approval covers as the code's own list prints it.
TEST(Covers, TheDocumentedCoverageIsTheCodesList) {
  auto h = run_yolo({"help", "covers"}, source_dir());
  ASSERT_EQ(h.exit_code, 0) << h.err;
  std::string doc = read_file(source_dir() / "docs/trust.md");
  const std::string begin = "<!-- covers:begin (generated: yolo help covers) -->\n", end = "<!-- covers:end -->";
  size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  std::string section = doc.substr(b + begin.size(), e - b - begin.size());
  std::string table = h.out.substr(h.out.find("| gate |"));
  EXPECT_EQ(section, table) << "regenerate the section of docs/trust.md from `yolo help covers`";
  EXPECT_TRUE(has(table, "max_parallel")) << table;
}

// ---- MCP: authorised under the lock, on the exact gate ------------------------------------

std::string mcp_line(const json& j) { return j.dump() + "\n"; }

// How many gates of the state an MCP client approved.
int mcp_approved(const json& state) {
  int n = 0;
  for (const auto& g : state["gates"])
    if (g.contains("approved_by") && g["approved_by"].is_string() &&
        g["approved_by"].get<std::string>().rfind("mcp:", 0) == 0)
      ++n;
  return n;
}

std::string mcp_calls(int n) {
  std::string in = mcp_line({{"jsonrpc", "2.0"},
                             {"id", 0},
                             {"method", "initialize"},
                             {"params",
                              {{"protocolVersion", "2025-06-18"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "agent"}, {"version", "1"}}}}}}) +
                   mcp_line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  for (int i = 1; i <= n; ++i)
    in += mcp_line({{"jsonrpc", "2.0"},
                    {"id", i},
                    {"method", "tools/call"},
                    {"params", {{"name", "manage_hitl_gate"}, {"arguments", {{"action", "approve"}}}}}});
  return in;
}

// mcp_can_approve approved by the person lets an MCP client approve other gates, never the
// vision gate: a pending legacy approval object is not adopted as a gate on that path.
TEST(Covers, McpNeverApprovesALegacyApprovalObjectAdoptedAsAVisionGate) {
  Demo d(json{{"review_gate", "never"}, {"mcp_can_approve", true}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);  // the person approved mcp_can_approve: true
  json st = d.state();
  st["approval"] = {
      {"requested_at", "2026-01-01T00:00:00Z"}, {"plan_path", kRoadmap}, {"approved", false}, {"gate_type", "vision"}};
  d.put_state(st);
  auto r = run_yolo({"mcp"}, d.root(), {}, mcp_calls(3));
  EXPECT_EQ(mcp_approved(d.state()), 0) << r.out;
}

TEST(Covers, McpCannotApproveThroughAToggledConfigAndALegacyApprovalObject) {
  Demo d(json{{"review_gate", "never"}, {"mcp_can_approve", false}});
  ASSERT_EQ(d.yolo({"execute"}).exit_code, 3);
  ASSERT_EQ(d.person({"approve", "--by", "p"}).exit_code, 0);  // the person approved mcp_can_approve: false
  // A pending legacy approval object, no gate behind it.
  json st = d.state();
  st["approval"] = {{"requested_at", "2026-01-01T00:00:00Z"},
                    {"plan_path", kRoadmap},
                    {"approved", false},
                    {"gate_type", "vision"}};
  d.put_state(st);
  json off = d.cfg(), on = d.cfg();
  on["mcp_can_approve"] = true;
  // The toggle: config.json flips between true and false (atomically) while the calls run.
  std::atomic<bool> stop{false};
  std::thread toggler([&] {
    const stdfs::path cfg = d.root() / ".yolo-planning/config.json", tmp = d.root() / ".yolo-planning/.cfg.tmp";
    for (int i = 0; !stop; ++i) {
      write_file(tmp, (i % 2 ? on : off).dump(2));
      stdfs::rename(tmp, cfg);
    }
  });
  auto r = run_yolo({"mcp"}, d.root(), {}, mcp_calls(500));
  stop = true;
  toggler.join();
  d.config(off);
  EXPECT_EQ(mcp_approved(d.state()), 0) << r.out;
}

}  // namespace
}  // namespace yolo::test
