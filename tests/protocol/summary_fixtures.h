// Shared by the SUMMARY unit tests (summary_test.cc, summary_gate_test.cc,
// summary_claims_test.cc): a fake GitPort, a plan, a SUMMARY text and a phase folder.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "protocol/summary/summary.h"
#include "protocol/summary/summary_gate.h"
#include "test_support.h"

namespace yolo::summary_fixtures {

namespace stdfs = std::filesystem;
using test::TempDir;
using test::write_file;

// A GitPort that answers from a table and records every question.
class FakeGit : public GitPort {
 public:
  bool repo = true;
  std::map<std::string, std::vector<std::string>> commits;  // hash -> files touched
  std::vector<std::string> asked;
  bool fail_all = false;

  bool is_repo() override { return repo; }
  std::optional<bool> commit_exists(const std::string& hash) override {
    asked.push_back("exists " + hash);
    if (fail_all) return std::nullopt;
    return commits.count(hash) > 0;
  }
  std::optional<std::vector<std::string>> files_touched(const std::string& hash) override {
    asked.push_back("files " + hash);
    if (fail_all) return std::nullopt;
    auto it = commits.find(hash);
    if (it == commits.end()) return std::nullopt;
    return it->second;
  }
  std::string last_error() const override { return fail_all ? "git timed out" : ""; }
};

inline const char* const kPlan = R"(---
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

inline std::string summary_text(const std::string& fm_extra = "",
                                const std::string& files = "- `src/parser.cc` (new)\n- `src/main.cc` (wired)\n",
                                const std::string& hashes = "[abc1234]",
                                const std::string& counts = "tasks_completed: 2\ntasks_total: 2\n") {
  return "---\nphase: 01\nplan: 02\ntitle: Parser\nstatus: complete\ncompleted: 2026-02-24\n" + counts +
         "commit_hashes: " + hashes + "\ndeviations: []\n" + fm_extra +
         "---\n\n## What Was Built\nA parser.\n\n## Files Modified\n" + files + "\n## Deviations\nNone\n";
}

struct Repo {
  TempDir dir;
  stdfs::path phase;
  FakeGit git;
  Repo() {
    phase = dir / ".yolo-planning/phases/01-parser";
    write_file(phase / "01-02-PLAN.md", kPlan);
    write_file(dir / "src/parser.cc", "int parse_all() { return 0; }\n");
    write_file(dir / "src/parser.h", "int parse_all();\n");
    write_file(dir / "src/main.cc", "#include \"src/parser.h\"\nint main() { return parse_all(); }\n");
    git.commits["abc1234"] = {"src/parser.cc", "src/parser.h"};
    git.commits["def5678"] = {"README.md"};
  }
  SummaryVerdict verify(const std::string& summary, SummaryMode mode = SummaryMode::Strict) {
    write_file(phase / "01-02-SUMMARY.md", summary);
    return verify_summary(test::real_world(), phase / "01-02-SUMMARY.md", std::nullopt, dir.path(), mode, &git);
  }
};

inline std::vector<const Finding*> findings_of(const SummaryVerdict& v, const std::string& check) {
  std::vector<const Finding*> out;
  for (const auto& f : v.findings())
    if (f.check == check) out.push_back(&f);
  return out;
}

inline std::string dump(const SummaryVerdict& v) { return v.to_json().dump(2); }

}  // namespace yolo::summary_fixtures
