// yolo verify-summary on real temporary git repositories.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>

#include "test_support.h"

namespace yolo::test {
namespace {

const char* kPlan = R"(---
phase: 01
plan: 02
title: Parser
wave: 1
depends_on: []
must_haves:
  truths: ["parses"]
  artifacts:
    - path: src/parser.cc
      provides: the parser
      contains: "parse_all"
  key_links:
    - from: src/main.cc
      to: src/parser.h
      via: include
---
# Plan
### Task 1: parser
**Files:** `src/parser.cc` (new), `src/parser.h` (new)
### Task 2: wire it
**Files:** `src/main.cc`
)";

std::string find_real_git() {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    stdfs::path p = stdfs::path(dir) / "git";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "/usr/bin/git";
}

// A temporary git repository with a .yolo-planning phase holding the plan above.
class GitProject {
 public:
  TempDir dir;
  stdfs::path phase;

  GitProject() {
    phase = dir / ".yolo-planning/phases/01-parser";
    write_file(phase / "01-02-PLAN.md", kPlan);
    git({"init", "-q"});
    git({"config", "user.name", "Test"});
    git({"config", "user.email", "test@example.com"});
    git({"config", "commit.gpgsign", "false"});
  }

  RunResult git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "-C", dir.path().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run_program(argv);
    EXPECT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
    return r;
  }

  // Writes the files, commits them, returns the short hash.
  std::string commit(const std::map<std::string, std::string>& files, const std::string& msg) {
    for (const auto& [p, c] : files) write_file(dir / p, c);
    git({"add", "-A"});
    git({"commit", "-q", "-m", msg});
    std::string h = git({"rev-parse", "--short=9", "HEAD"}).out;
    while (!h.empty() && (h.back() == '\n' || h.back() == '\r')) h.pop_back();
    return h;
  }

  // The truthful history: two commits implementing the plan.
  std::vector<std::string> implement() {
    return {commit({{"src/parser.cc", "int parse_all() { return 0; }\n"}, {"src/parser.h", "int parse_all();\n"}},
                   "parser"),
            commit({{"src/main.cc", "#include \"src/parser.h\"\nint main() { return parse_all(); }\n"}}, "wire")};
  }

  stdfs::path write_summary(const std::vector<std::string>& hashes, const std::string& files = "",
                            const std::string& counts = "tasks_completed: 2\ntasks_total: 2\n") {
    std::string list;
    for (size_t i = 0; i < hashes.size(); ++i) list += (i ? ", " : "") + json(hashes[i]).dump();
    std::string body_files = files.empty() ? "- `src/parser.cc` (new)\n- `src/parser.h` (new)\n- `src/main.cc` (wired)\n" : files;
    stdfs::path p = phase / "01-02-SUMMARY.md";
    write_file(p, "---\nphase: 01\nplan: 02\ntitle: Parser\nstatus: complete\ncompleted: 2026-02-24\n" + counts +
                      "commit_hashes: [" + list + "]\ndeviations: []\n---\n\n## What Was Built\nA parser.\n\n"
                      "## Files Modified\n" +
                      body_files + "\n## Deviations\nNone\n");
    return p;
  }

  RunResult verify(const stdfs::path& summary, std::vector<std::string> extra = {},
                   const std::vector<std::string>& env = {}) {
    std::vector<std::string> args{"verify-summary", summary.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_yolo(args, dir.path(), env);
  }
};

std::vector<json> findings_of(const json& j, const std::string& check) {
  std::vector<json> out;
  for (const auto& f : j["findings"])
    if (f["check"] == check) out.push_back(f);
  return out;
}

TEST(VerifySummaryE2E, TruthfulSummaryPasses) {
  GitProject g;
  auto hashes = g.implement();
  auto s = g.write_summary(hashes);
  auto r = g.verify(s, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cmd"], "verify-summary");
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["mode"], "strict");
  EXPECT_EQ(j["plan_id"], "01-02");
  EXPECT_TRUE(j["findings"].empty()) << j.dump(2);
  EXPECT_EQ(stdfs::path(j["plan"].get<std::string>()).filename(), "01-02-PLAN.md");
  bool saw_touch = false;
  for (const auto& c : j["checks"]) {
    EXPECT_EQ(c["status"], "pass") << c.dump();
    if (c["name"] == "commits_touch_plan_files") {
      saw_touch = true;
      EXPECT_EQ(c["plan_files_touched"], 3);
    }
  }
  EXPECT_TRUE(saw_touch);

  // Run from elsewhere with a relative-free absolute path: the root is still found.
  TempDir elsewhere;
  auto r2 = run_yolo({"verify-summary", s.string(), "--human"}, elsewhere.path(), {"NO_COLOR=1"});
  EXPECT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  EXPECT_NE(r2.out.find("✓ 01-02  pass"), std::string::npos) << r2.out;
}

TEST(VerifySummaryE2E, InventedCommitHashFails) {
  GitProject g;
  auto hashes = g.implement();
  hashes.push_back("deadbeef1");
  auto r = g.verify(g.write_summary(hashes));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  json j = r.json_out();
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["verdict"], "fail");
  auto fs = findings_of(j, "commits_exist");
  ASSERT_EQ(fs.size(), 1u) << j.dump(2);
  EXPECT_EQ(fs[0]["severity"], "high");
  EXPECT_EQ(fs[0]["issue"], "commit deadbeef1 is not a commit of this repository");
  EXPECT_EQ(fs[0]["hash"], "deadbeef1");
}

TEST(VerifySummaryE2E, HexLookingBranchNameIsNotACommit) {
  GitProject g;
  auto hashes = g.implement();
  g.git({"branch", "cafe"});
  auto r = g.verify(g.write_summary({hashes[0], "cafe"}));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "commits_exist");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0]["hash"], "cafe");
}

TEST(VerifySummaryE2E, CommitTouchingNoneOfThePlansFilesFails) {
  GitProject g;
  g.implement();
  std::string other = g.commit({{"README.md", "hello\n"}, {"docs/notes.md", "x\n"}}, "unrelated");
  auto r = g.verify(g.write_summary({other}));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "commits_touch_plan_files");
  ASSERT_EQ(fs.size(), 1u) << r.out;
  EXPECT_EQ(fs[0]["issue"], "the commits (" + other + ") touch none of the 3 files the plan names");
}

TEST(VerifySummaryE2E, MissingListedFileFails) {
  GitProject g;
  auto hashes = g.implement();
  auto r = g.verify(g.write_summary(hashes, "- `src/parser.cc` (new)\n- `src/lexer.cc` (new)\n- `src/old.cc` (deleted)\n"));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "files_exist");
  ASSERT_EQ(fs.size(), 1u) << r.out;
  EXPECT_EQ(fs[0]["path"], "src/lexer.cc");
  EXPECT_EQ(fs[0]["line"], 18);
  EXPECT_NE(fs[0]["issue"].get<std::string>().find("does not exist"), std::string::npos);
}

TEST(VerifySummaryE2E, MissingArtifactFails) {
  GitProject g;
  auto hashes = g.implement();
  g.git({"rm", "-q", "src/parser.cc"});
  g.git({"commit", "-q", "-m", "drop parser"});
  auto r = g.verify(g.write_summary(hashes, "- `src/parser.h` (new)\n- `src/main.cc`\n"));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "artifacts");
  ASSERT_EQ(fs.size(), 1u) << r.out;
  EXPECT_EQ(fs[0]["issue"], "artifact 'src/parser.cc' named by the plan's must_haves does not exist");
}

TEST(VerifySummaryE2E, ArtifactWithoutItsContainsTextFails) {
  GitProject g;
  std::vector<std::string> hashes = {
      g.commit({{"src/parser.cc", "// TODO: write the parser\n"}, {"src/parser.h", "int parse_all();\n"}}, "stub"),
      g.commit({{"src/main.cc", "#include \"src/parser.h\"\n"}}, "wire")};
  auto r = g.verify(g.write_summary(hashes));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "artifacts");
  ASSERT_EQ(fs.size(), 1u) << r.out;
  EXPECT_EQ(fs[0]["issue"], "artifact 'src/parser.cc' does not contain 'parse_all'");
  EXPECT_EQ(fs[0]["contains"], "parse_all");
}

TEST(VerifySummaryE2E, WrongTaskCountFails) {
  GitProject g;
  auto hashes = g.implement();
  auto r = g.verify(g.write_summary(hashes, "", "tasks_completed: 3\ntasks_total: 3\n"));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto fs = findings_of(r.json_out(), "plan_task_count");
  ASSERT_FALSE(fs.empty()) << r.out;
  EXPECT_NE(fs[0]["issue"].get<std::string>().find("tasks_total is 3 but the plan"), std::string::npos);
  EXPECT_NE(fs[0]["issue"].get<std::string>().find("has 2 tasks"), std::string::npos);
}

TEST(VerifySummaryE2E, BrokenKeyLinkIsAWarningOnly) {
  GitProject g;
  std::vector<std::string> hashes = {
      g.commit({{"src/parser.cc", "int parse_all() { return 0; }\n"}, {"src/parser.h", "int parse_all();\n"}}, "p"),
      g.commit({{"src/main.cc", "int main() { return 0; }\n"}}, "main without the parser")};
  auto r = g.verify(g.write_summary(hashes));
  ASSERT_EQ(r.exit_code, 2) << r.out;
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["verdict"], "warn");
  auto fs = findings_of(j, "key_links");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0]["severity"], "low");
  EXPECT_EQ(j["findings"].size(), 1u) << j.dump(2);
}

TEST(VerifySummaryE2E, HostileHashesAreRefusedAndNothingRuns) {
  GitProject g;
  auto hashes = g.implement();
  TempDir side;
  // A git on PATH that logs every argv element and its stdin, then runs the real git.
  stdfs::path log = side / "git-argv.log";
  stdfs::path bin = side / "bin";
  std::string in = (side / "stdin.$$").string();
  write_file(bin / "git", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + log.string() + "'; done\n" +
                              "cat > \"" + in + "\"\ncat \"" + in + "\" >> '" + log.string() + "'\n" + "exec '" +
                              find_real_git() + "' \"$@\" < \"" + in + "\"\n");
  ::chmod((bin / "git").c_str(), 0755);
  stdfs::path out = side / "x";
  stdfs::path pwned = side / "pwned";
  bool tmp_x_existed = stdfs::exists("/tmp/x");
  std::vector<std::string> hostile = {"--output=" + out.string(), "HEAD; touch " + pwned.string(), "HEAD; rm -rf ~",
                                      "--output=/tmp/x", "$(touch " + pwned.string() + ")", "abc123 --help"};
  std::vector<std::string> all = hostile;
  all.push_back(hashes[0]);
  auto r = g.verify(g.write_summary(all), {}, {"PATH=" + bin.string() + ":" + std::string(std::getenv("PATH"))});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto fs = findings_of(r.json_out(), "commits_exist");
  ASSERT_EQ(fs.size(), hostile.size()) << r.out;
  for (const auto& f : fs) EXPECT_NE(f["issue"].get<std::string>().find("is not a commit hash"), std::string::npos);
  EXPECT_FALSE(stdfs::exists(out));
  EXPECT_FALSE(stdfs::exists(pwned));
  if (!tmp_x_existed) {
    EXPECT_FALSE(stdfs::exists("/tmp/x"));
  }
  std::string logged = read_file(log);
  EXPECT_NE(logged.find(hashes[0]), std::string::npos) << "the wrapper was not used: " << logged;
  for (const auto& h : hostile) EXPECT_EQ(logged.find(h), std::string::npos) << h;
  EXPECT_EQ(logged.find("--output"), std::string::npos);
  EXPECT_EQ(logged.find("HEAD"), std::string::npos);
}

TEST(VerifySummaryE2E, WithoutGitStrictFailsAndStructuralPasses) {
  TempDir d;
  write_file(d / ".yolo-planning/phases/01-parser/01-02-PLAN.md", kPlan);
  stdfs::path s = d / ".yolo-planning/phases/01-parser/01-02-SUMMARY.md";
  write_file(s, "---\nphase: 01\nplan: 02\ntitle: Parser\nstatus: complete\ncompleted: 2026-02-24\ntasks_completed: 2\n"
                "tasks_total: 2\ncommit_hashes: [abc1234]\ndeviations: []\n---\n## What Was Built\nx\n## Files Modified\n"
                "- `src/parser.cc`\n## Deviations\nNone\n");
  auto strict = run_yolo({"verify-summary", s.string()}, d.path(), {"GIT_CEILING_DIRECTORIES=" + d.path().parent_path().string()});
  ASSERT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_EQ(findings_of(strict.json_out(), "git").size(), 1u) << strict.out;
  auto structural = run_yolo({"verify-summary", s.string(), "--mode", "structural"}, d.path());
  EXPECT_EQ(structural.exit_code, 0) << structural.out;
  EXPECT_EQ(structural.json_out()["mode"], "structural");
  // The config key chooses the mode when --mode is not given.
  write_file(d / ".yolo-planning/config.json", R"({"summary_checks": "structural"})");
  auto cfg = run_yolo({"verify-summary", s.string()}, d.path());
  EXPECT_EQ(cfg.exit_code, 0) << cfg.out;
  EXPECT_EQ(cfg.json_out()["mode"], "structural");
}

TEST(VerifySummaryE2E, BadInputGetsClearErrors) {
  TempDir d;
  auto missing = run_yolo({"verify-summary", (d / "01-SUMMARY.md").string(), "--mode", "structural"}, d.path());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("SUMMARY not found"), std::string::npos) << missing.out;
  auto bad_mode = run_yolo({"verify-summary", (d / "01-SUMMARY.md").string(), "--mode", "lenient"}, d.path());
  EXPECT_EQ(bad_mode.exit_code, 64);
  EXPECT_NE(bad_mode.out.find("--mode must be strict, structural or off"), std::string::npos) << bad_mode.out;
}

TEST(VerifySummaryE2E, RenamedAndMergedWorkCounts) {
  GitProject g;
  auto head = [&] {
    std::string h = g.git({"rev-parse", "--short=9", "HEAD"}).out;
    while (!h.empty() && h.back() == '\n') h.pop_back();
    return h;
  };
  g.commit({{"src/old_parser.cc", "int parse_all() { return 0; }\n"}}, "old");
  g.git({"mv", "src/old_parser.cc", "src/parser.cc"});
  g.git({"commit", "-q", "-m", "rename"});
  std::string renamed = head();
  g.git({"checkout", "-q", "-b", "feature"});
  g.commit({{"src/parser.h", "int parse_all();\n"}, {"src/main.cc", "#include \"src/parser.h\"\n"}}, "rest");
  g.git({"checkout", "-q", "-"});
  g.git({"merge", "-q", "--no-ff", "-m", "merge feature", "feature"});
  std::string merge = head();
  std::string files = "- `src/parser.cc`\n- `src/old_parser.cc` (deleted)\n";
  auto r = g.verify(g.write_summary({renamed}, files));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // A merge commit alone: its files are those it brings in against its first parent.
  auto m = g.verify(g.write_summary({merge}, files));
  EXPECT_EQ(m.exit_code, 0) << m.out;
}

// Every real SUMMARY of the corpus gets a verdict from the real binary in structural mode.
TEST(VerifySummaryE2E, CorpusSampleThroughTheBinary) {
  stdfs::path corpus = corpus_dir();
  std::error_code ec;
  if (!stdfs::is_directory(corpus, ec)) GTEST_SKIP() << "corpus not present";
  int n = 0;
  for (auto it = stdfs::recursive_directory_iterator(corpus, ec); !ec && it != stdfs::recursive_directory_iterator() && n < 12;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || !name.ends_with("SUMMARY.md")) continue;
    ++n;
    auto r = run_yolo({"verify-summary", it->path().string(), "--mode", "structural", "--json"}, corpus);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << it->path() << r.err;
    json j = r.json_out();
    EXPECT_EQ(j["cmd"], "verify-summary");
  }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace yolo::test
