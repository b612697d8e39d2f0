// Shared by the end-to-end tests of the single commands (review_plan_test.cc,
// parse_frontmatter_test.cc, deep_json_test.cc, log_event_test.cc, resolve_test.cc,
// help_test.cc): a readable dump of a run and the fixtures/precheck copy.
#pragma once
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace yolo::e2e {

namespace stdfs = std::filesystem;

inline std::string dump(const test::RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out.substr(0, 2000) + "\nstderr: " + r.err.substr(0, 2000);
}

// A copy of fixtures/precheck in a temp folder.
class PrecheckFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    test::copy_fixture("precheck", tmp.path());
    phases = tmp.path() / ".yolo-planning" / "phases";
  }
  stdfs::path phase(const std::string& name) const { return phases / name; }
  test::TempDir tmp;
  stdfs::path phases;
};

}  // namespace yolo::e2e
