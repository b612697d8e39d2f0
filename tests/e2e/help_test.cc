// End-to-end: the real `yolo` binary on real files. --version, --help, unknown subcommands.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using test::run_yolo;

// --- version and help ----------------------------------------------------------

TEST(Cli, Version) {
  auto r = run_yolo({"--version"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find(YOLO_VERSION), std::string::npos) << r.out;
}

TEST(Cli, HelpOfEverySubcommand) {
  auto top = run_yolo({"--help"});
  ASSERT_EQ(top.exit_code, 0) << dump(top);
  // Subcommand names: the first word of each indented line under "Commands:" and "Plumbing".
  std::vector<std::string> subs;
  std::istringstream in(top.out);
  std::string l;
  bool in_subs = false;
  while (std::getline(in, l)) {
    if (l.rfind("Commands:", 0) == 0 || l.rfind("Plumbing", 0) == 0) {
      in_subs = true;
      continue;
    }
    if (!in_subs || l.size() < 3 || l[0] != ' ') continue;
    std::istringstream w(l);
    std::string name;
    w >> name;
    if (!name.empty()) subs.push_back(name);
  }
  for (const char* required : {"review-plan", "parse-frontmatter", "log-event", "resolve-model", "resolve-turns"})
    EXPECT_NE(std::find(subs.begin(), subs.end(), required), subs.end()) << required << " missing from --help";
  for (const auto& s : subs) {
    auto r = run_yolo({s, "--help"});
    EXPECT_EQ(r.exit_code, 0) << s << dump(r);
    EXPECT_NE(r.out.find(s), std::string::npos) << s << ": " << r.out;
  }
}

TEST(Cli, UnknownSubcommandFails) {
  auto r = run_yolo({"no-such-command"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "an error, not a crash";
}

}  // namespace
}  // namespace yolo
