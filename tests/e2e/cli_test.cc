// End-to-end: the real `yolo` binary on real files. review-plan, parse-frontmatter,
// log-event, resolve-model, resolve-turns, --version, --help; hostile input.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using test::run_yolo;
using test::RunResult;

std::string dump(const RunResult& r) {
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

void expect_review_shape(const json& j) {
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["cmd"], "review-plan");
  ASSERT_TRUE(j["ok"].is_boolean());
  ASSERT_TRUE(j["verdict"].is_string());
  EXPECT_EQ(j["ok"].get<bool>(), j["verdict"] != "reject") << "ok is false exactly on reject";
  ASSERT_TRUE(j["checks"].is_array());
  for (const auto& c : j["checks"]) {
    EXPECT_TRUE(c["name"].is_string());
    EXPECT_TRUE(c["status"] == "pass" || c["status"] == "warn" || c["status"] == "fail") << c.dump();
  }
  ASSERT_TRUE(j["findings"].is_array());
  for (const auto& f : j["findings"]) {
    EXPECT_TRUE(f["severity"] == "high" || f["severity"] == "medium" || f["severity"] == "low") << f.dump();
    EXPECT_TRUE(f["check"].is_string());
    EXPECT_TRUE(f["issue"].is_string());
    EXPECT_TRUE(f["suggested_fix"].is_string());
    EXPECT_TRUE(f["auto_fixable"].is_boolean());
  }
}

bool has_finding(const json& j, const std::string& check, const std::string& severity) {
  for (const auto& f : j["findings"])
    if (f["check"] == check && f["severity"] == severity) return true;
  return false;
}

// --- review-plan -------------------------------------------------------------------

TEST_F(PrecheckFixture, ReviewPlanApprove) {
  auto r = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string(), phase("01-approve").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  expect_review_shape(j);
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["plan_id"], "01-01");
  EXPECT_TRUE(j["findings"].empty());
  std::set<std::string> names;
  for (const auto& c : j["checks"]) names.insert(c["name"].get<std::string>());
  for (const char* c : {"frontmatter", "task_count", "must_haves", "wave_valid", "file_paths", "dependencies",
                        "dependency_cycle", "wave_order", "file_overlap", "duplicate_id"})
    EXPECT_TRUE(names.count(c)) << c;
}

TEST_F(PrecheckFixture, ReviewPlanConditional) {
  auto r = run_yolo({"review-plan", phase("02-conditional/02-01-PLAN.md").string(), phase("02-conditional").string()});
  ASSERT_EQ(r.exit_code, 2) << dump(r);
  json j = r.json_out();
  expect_review_shape(j);
  EXPECT_EQ(j["verdict"], "conditional");
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(has_finding(j, "task_count", "medium")) << j.dump(2);

  auto low = run_yolo({"review-plan", phase("02-conditional/02-02-PLAN.md").string(), phase("02-conditional").string()});
  ASSERT_EQ(low.exit_code, 2) << dump(low);
  json lj = low.json_out();
  EXPECT_TRUE(has_finding(lj, "file_paths", "low")) << lj.dump(2);
}

TEST_F(PrecheckFixture, ReviewPlanReject) {
  struct Case {
    const char* file;
    const char* check;
  } cases[] = {{"03-01-PLAN.md", "dependencies"}, {"03-02-PLAN.md", "file_paths"}, {"03-02-PLAN.md", "must_haves"},
               {"03-03-PLAN.md", "frontmatter"}};
  for (const auto& c : cases) {
    auto r = run_yolo({"review-plan", phase("03-reject/" + std::string(c.file)).string(), phase("03-reject").string()});
    ASSERT_EQ(r.exit_code, 1) << c.file << dump(r);
    json j = r.json_out();
    expect_review_shape(j);
    EXPECT_EQ(j["verdict"], "reject");
    EXPECT_EQ(j["ok"], false);
    EXPECT_TRUE(has_finding(j, c.check, "high")) << c.file << " " << c.check << "\n" << j.dump(2);
  }
}

TEST_F(PrecheckFixture, YamlErrorFindingHasLineAndColumn) {
  auto r = run_yolo({"review-plan", phase("03-reject/03-03-PLAN.md").string()});
  ASSERT_EQ(r.exit_code, 1) << dump(r);
  json f = r.json_out()["findings"].at(0);
  EXPECT_EQ(f["check"], "frontmatter");
  EXPECT_TRUE(f["line"].is_number_integer()) << f.dump();
  EXPECT_TRUE(f["column"].is_number_integer()) << f.dump();
}

TEST_F(PrecheckFixture, WithoutPhaseDirNoCrossPlanChecks) {
  // 03-01 is only wrong because of its phase (missing dependency).
  auto r = run_yolo({"review-plan", phase("03-reject/03-01-PLAN.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.json_out()["verdict"], "approve");
}

TEST_F(PrecheckFixture, MissingPlanIsRejectWithFileFinding) {
  std::string missing = (tmp / "nowhere/99-PLAN.md").string();
  auto r = run_yolo({"review-plan", missing});
  ASSERT_EQ(r.exit_code, 1) << dump(r);
  json j = r.json_out();
  expect_review_shape(j);
  EXPECT_EQ(j["verdict"], "reject");
  ASSERT_TRUE(has_finding(j, "file", "high")) << j.dump(2);
  EXPECT_NE(j["findings"][0]["issue"].get<std::string>().find("99-PLAN.md"), std::string::npos);
}

TEST_F(PrecheckFixture, NoPlanArgumentIsUsageError) {
  auto r = run_yolo({"review-plan"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(PrecheckFixture, ConfigMaxTasksRaisesTheLimit) {
  test::write_file(tmp / ".yolo-planning/config.json", R"({"max_tasks_per_plan": 10})");
  auto r = run_yolo({"review-plan", phase("02-conditional/02-01-PLAN.md").string()});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  auto p = run_yolo({"review-plan", "--phase", phase("02-conditional").string()});
  auto lines = p.json_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["verdict"], "approve") << lines[0].dump(2);
  test::write_file(tmp / ".yolo-planning/config.json", R"({"max_tasks_per_plan": 2})");
  auto strict = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string()});
  EXPECT_EQ(strict.exit_code, 0) << "2 tasks, limit 2: " << dump(strict);
  test::write_file(tmp / ".yolo-planning/config.json", R"({"max_tasks_per_plan": 1})");
  strict = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string()});
  EXPECT_EQ(strict.exit_code, 2) << dump(strict);
}

TEST_F(PrecheckFixture, PhaseModeJsonLinesAndWorstExitCode) {
  auto approve = run_yolo({"review-plan", "--phase", phase("01-approve").string()});
  EXPECT_EQ(approve.exit_code, 0) << dump(approve);
  auto a_lines = approve.json_lines();
  ASSERT_EQ(a_lines.size(), 2u);
  for (const auto& j : a_lines) {
    expect_review_shape(j);
    EXPECT_EQ(j["verdict"], "approve");
  }

  auto cond = run_yolo({"review-plan", "--phase", phase("01-approve").string(), phase("02-conditional").string()});
  EXPECT_EQ(cond.exit_code, 2) << dump(cond);
  EXPECT_EQ(cond.json_lines().size(), 4u);

  auto all = run_yolo({"review-plan", "--phase", phase("01-approve").string(), phase("02-conditional").string(),
                       phase("03-reject").string()});
  EXPECT_EQ(all.exit_code, 1) << dump(all);
  auto lines = all.json_lines();
  ASSERT_EQ(lines.size(), 7u);
  std::map<std::string, int> counts;
  for (const auto& j : lines) {
    expect_review_shape(j);
    ++counts[j["verdict"].get<std::string>()];
  }
  EXPECT_EQ(counts["approve"], 2);
  EXPECT_EQ(counts["conditional"], 2);
  EXPECT_EQ(counts["reject"], 3);
  // Order: the phases as given, plans in file order.
  EXPECT_NE(lines[0]["plan"].get<std::string>().find("01-01-PLAN.md"), std::string::npos);
  EXPECT_NE(lines[6]["plan"].get<std::string>().find("03-03-PLAN.md"), std::string::npos);
}

TEST_F(PrecheckFixture, PhaseModeMissingFolder) {
  auto r = run_yolo({"review-plan", "--phase", phase("01-approve").string(), (tmp / "no-such-phase").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  auto lines = r.json_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["ok"], false);
  EXPECT_NE(lines[2].dump().find("no-such-phase"), std::string::npos);
}

TEST_F(PrecheckFixture, HumanOutput) {
  auto all = run_yolo({"review-plan", "--human", "--phase", phase("01-approve").string(), phase("02-conditional").string(),
                       phase("03-reject").string()});
  EXPECT_EQ(all.exit_code, 1) << dump(all);
  EXPECT_NE(all.out.find("✓"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("⚠"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("✗"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("01-01"), std::string::npos);
  EXPECT_NE(all.out.find("more than the limit"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("\"verdict\":"), std::string::npos) << "no JSON in --human output";
  EXPECT_EQ(all.out.find("\x1b["), std::string::npos) << "no colour on a pipe";

  auto one = run_yolo({"review-plan", "--human", phase("01-approve/01-01-PLAN.md").string()});
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_NE(one.out.find("✓"), std::string::npos);
  EXPECT_EQ(one.out.find("✗"), std::string::npos) << one.out;
}

TEST_F(PrecheckFixture, JsonIsTheDefaultOnAPipe) {
  auto r = run_yolo({"review-plan", "--json", phase("01-approve/01-01-PLAN.md").string()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NO_THROW(r.json_out());
  auto d = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string()});
  EXPECT_NO_THROW(d.json_out()) << d.out;
}

// On a terminal (a pty from util-linux `script`), people get colour unless NO_COLOR is set to
// something non-empty (no-color.org: an empty NO_COLOR counts as unset).
TEST_F(PrecheckFixture, ColourOnlyOnATerminalAndNotWithNoColor) {
  if (test::run_program({"sh", "-c", "command -v script"}).exit_code != 0) GTEST_SKIP() << "util-linux script is not installed";
  std::string plan = phase("01-approve/01-01-PLAN.md").string();
  auto on_tty = [&](const std::string& no_color) {
    // The command line is fixed text and a temp path in single quotes: no plan content.
    std::string cmd = "'" + test::yolo_bin() + "' review-plan '" + plan + "'";
    std::vector<std::string> argv = {"env", "-u", "NO_COLOR", "TERM=xterm"};
    if (no_color != "<unset>") argv.push_back("NO_COLOR=" + no_color);
    for (const char* a : {"script", "-qec"}) argv.push_back(a);
    argv.push_back(cmd);
    argv.push_back("/dev/null");
    return test::run_program(argv);
  };
  auto plain = on_tty("<unset>");
  EXPECT_EQ(plain.exit_code, 0) << dump(plain);
  EXPECT_NE(plain.out.find("✓"), std::string::npos) << "human output on a terminal: " << plain.out;
  EXPECT_NE(plain.out.find("\x1b["), std::string::npos) << "colour on a terminal: " << plain.out;
  EXPECT_NE(on_tty("").out.find("\x1b["), std::string::npos) << "an empty NO_COLOR counts as unset";
  auto nc = on_tty("1");
  EXPECT_NE(nc.out.find("✓"), std::string::npos) << nc.out;
  EXPECT_EQ(nc.out.find("\x1b["), std::string::npos) << "NO_COLOR=1 on a terminal: " << nc.out;
}

TEST(ReviewPlanCorpus, PhaseOverTheWholeCorpus) {
  stdfs::path root = test::corpus_dir();
  if (!stdfs::is_directory(root)) GTEST_SKIP() << "corpus not present";
  std::set<std::string> dirs;
  size_t plans = 0;
  for (auto& e : stdfs::recursive_directory_iterator(root)) {
    std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.size() > 8 && n.ends_with("-PLAN.md")) {
      dirs.insert(e.path().parent_path().string());
      ++plans;
    }
  }
  ASSERT_GT(plans, 0u);
  std::vector<std::string> args{"review-plan", "--phase"};
  args.insert(args.end(), dirs.begin(), dirs.end());
  auto r = run_yolo(args);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << dump(r);
  auto lines = r.json_lines();
  EXPECT_EQ(lines.size(), plans);
  int worst = 0;
  for (const auto& j : lines) {
    expect_review_shape(j);
    int code = j["verdict"] == "reject" ? 2 : j["verdict"] == "conditional" ? 1 : 0;
    worst = std::max(worst, code);
  }
  EXPECT_EQ(r.exit_code, worst == 2 ? 1 : worst == 1 ? 2 : 0);
}

// --- parse-frontmatter ---------------------------------------------------------------

TEST(ParseFrontmatterCli, MissingFileExactContract) {
  test::TempDir t;
  std::string path = (t / "absent.md").string();
  auto r = run_yolo({"parse-frontmatter", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.json_out(), json({{"error", "file not found: " + path}})) << r.out;
  auto rel = run_yolo({"parse-frontmatter", "absent.md"}, t.path());
  EXPECT_EQ(rel.exit_code, 1);
  EXPECT_EQ(rel.json_out(), json({{"error", "file not found: absent.md"}})) << rel.out;
}

TEST(ParseFrontmatterCli, NoFrontmatter) {
  test::TempDir t;
  test::write_file(t / "a.md", "# Title\n\nno frontmatter here\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cmd"], "parse-frontmatter");
  EXPECT_EQ(j["has_frontmatter"], false);
  EXPECT_EQ(j["frontmatter"], json::object());
  EXPECT_TRUE(j["frontmatter"].is_object());
}

TEST(ParseFrontmatterCli, EmptyBlock) {
  test::TempDir t;
  test::write_file(t / "a.md", "---\n---\nbody\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["has_frontmatter"], true);
  EXPECT_EQ(j["frontmatter"], json::object());
  EXPECT_TRUE(j["frontmatter"].is_object()) << "an empty block is {}, not null";
}

TEST(ParseFrontmatterCli, ValuesKeepTheirText) {
  test::TempDir t;
  test::write_file(t / "a.md",
                   "---\nphase: 01\nplan: 3\ndepends_on: [01, 02]\ntitle: \"Quoted: yes\"\nwave: 1\nflag: true\n"
                   "must_haves:\n  truths: [a]\n  artifacts:\n    - {path: x.cc, provides: X, contains: y}\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "a.md").string()});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json fm = r.json_out()["frontmatter"];
  EXPECT_EQ(fm["phase"], "01");
  EXPECT_EQ(fm["plan"], 3);
  EXPECT_EQ(fm["depends_on"], json::parse(R"(["01","02"])"));
  EXPECT_EQ(fm["title"], "Quoted: yes");
  EXPECT_EQ(fm["wave"], 1);
  EXPECT_EQ(fm["flag"], true);
  EXPECT_EQ(fm["must_haves"]["artifacts"][0]["path"], "x.cc");
}

TEST(ParseFrontmatterCli, YamlErrorNamesLineAndColumn) {
  test::TempDir t;
  test::write_file(t / "bad.md", "---\nphase: 1\ntitle: [unclosed\nwave: 1\n---\n");
  auto r = run_yolo({"parse-frontmatter", (t / "bad.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["ok"], false);
  ASSERT_TRUE(j["line"].is_number_integer()) << j.dump();
  ASSERT_TRUE(j["column"].is_number_integer()) << j.dump();
  EXPECT_GE(j["line"].get<int>(), 3);
  std::string err = j["error"].get<std::string>();
  EXPECT_NE(err.find("bad.md:" + std::to_string(j["line"].get<int>()) + ":" + std::to_string(j["column"].get<int>())),
            std::string::npos)
      << err;
}

TEST(ParseFrontmatterCli, UnterminatedBlock) {
  test::TempDir t;
  test::write_file(t / "open.md", "---\nphase: 1\nbody without a closing line\n");
  auto r = run_yolo({"parse-frontmatter", (t / "open.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.json_out()["error"].get<std::string>().find("unterminated"), std::string::npos) << r.out;
}

TEST(ParseFrontmatterCli, BinaryAndHugeFilesAreRefused) {
  test::TempDir t;
  std::string bin = "---\nphase: 1\n---\n";
  for (int i = 0; i < 256; ++i) bin.push_back(static_cast<char>(i));
  test::write_file(t / "bin.md", bin);
  auto b = run_yolo({"parse-frontmatter", (t / "bin.md").string()});
  EXPECT_EQ(b.exit_code, 1) << dump(b);
  EXPECT_NE(b.json_out()["error"].get<std::string>().find("bin.md"), std::string::npos) << b.out;
  EXPECT_NE(b.json_out()["error"].get<std::string>().find("binary"), std::string::npos) << b.out;

  test::write_file(t / "huge.md", "---\nphase: 1\n---\n" + std::string(2u << 20, 'x'));
  auto h = run_yolo({"parse-frontmatter", (t / "huge.md").string()});
  EXPECT_EQ(h.exit_code, 1) << dump(h);
  EXPECT_NE(h.json_out()["error"].get<std::string>().find("huge.md"), std::string::npos) << h.out;

  auto dir = run_yolo({"parse-frontmatter", t.path().string()});
  EXPECT_EQ(dir.exit_code, 1) << dump(dir);
  EXPECT_FALSE(dir.json_out()["error"].get<std::string>().empty());
}

TEST(ParseFrontmatterCli, AliasBombIsRefused) {
  test::TempDir t;
  std::string y = "---\na: &a [x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'g'; ++c) {  // 9^7 values once expanded
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) y += std::string(i ? ", " : "") + "*" + prev;
    y += "]\n";
    prev = c;
  }
  y += "---\n";
  test::write_file(t / "bomb.md", y);
  auto r = run_yolo({"parse-frontmatter", (t / "bomb.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_LT(r.out.size(), 10000u) << "refused, not expanded";
}

TEST(ParseFrontmatterCli, DeepNestingIsRefusedNotACrash) {
  test::TempDir t;
  test::write_file(t / "flow.md", "---\nx: " + std::string(100000, '[') + "\n---\n");
  auto f = run_yolo({"parse-frontmatter", (t / "flow.md").string()});
  EXPECT_EQ(f.exit_code, 1) << dump(f);
  std::string block = "---\nx:\n";
  for (int i = 0; i < 3000; ++i) block += "  - ";
  block += "y\n---\n";
  test::write_file(t / "block.md", block);
  auto b = run_yolo({"parse-frontmatter", (t / "block.md").string()});
  EXPECT_TRUE(b.exit_code == 0 || b.exit_code == 1) << dump(b);
  EXPECT_NO_THROW(b.json_out());
  std::string seq = "---\nx: ";
  for (int i = 0; i < 200000; ++i) seq += "- ";
  seq += "y\n---\n";
  test::write_file(t / "seq.md", seq);
  auto s = run_yolo({"parse-frontmatter", (t / "seq.md").string()});
  EXPECT_TRUE(s.exit_code == 0 || s.exit_code == 1) << dump(s);
}

// --- hostile plans through review-plan ----------------------------------------------

TEST(ReviewPlanHostile, BinaryPlan) {
  test::TempDir t;
  std::string bin = "---\nphase: 1\n";
  bin.push_back('\0');
  bin += "\xff\xfe";
  test::write_file(t / "01-PLAN.md", bin);
  auto r = run_yolo({"review-plan", (t / "01-PLAN.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  json j = r.json_out();
  EXPECT_EQ(j["verdict"], "reject");
  ASSERT_TRUE(has_finding(j, "file", "high")) << j.dump();
  EXPECT_NE(j["findings"][0]["issue"].get<std::string>().find("01-PLAN.md"), std::string::npos);
}

TEST(ReviewPlanHostile, TwoMebibytePlan) {
  test::TempDir t;
  std::string big = "---\nphase: 01\nplan: 01\ntitle: big\nwave: 1\ndepends_on: []\nmust_haves: [x]\n---\n";
  while (big.size() < (2u << 20)) big += "### Task 1: padding padding padding padding padding padding\n";
  test::write_file(t / "01-PLAN.md", big);
  auto r = run_yolo({"review-plan", (t / "01-PLAN.md").string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  json j = r.json_out();
  ASSERT_TRUE(has_finding(j, "file", "high")) << j.dump();
  EXPECT_NE(j["findings"][0]["issue"].get<std::string>().find("limit"), std::string::npos) << j.dump();
  auto p = run_yolo({"review-plan", "--phase", t.path().string()});
  EXPECT_EQ(p.exit_code, 1) << dump(p);
  EXPECT_EQ(p.json_lines().size(), 1u);
}

TEST(ReviewPlanHostile, HostileTitleAndShellMetacharacters) {
  test::TempDir t;
  stdfs::path ph = t / ".yolo-planning/phases/01-x";
  std::string title = "\"$(touch PWNED) `touch PWNED2` ; rm -rf / \\\" ' <script> " + std::string(200000, 'A') + "\"";
  test::write_file(ph / "01-PLAN.md", "---\nphase: 01\nplan: 01\ntitle: " + title +
                                          "\nwave: 1\ndepends_on: []\nmust_haves: [\"$(id)\"]\n---\n"
                                          "**Files:** `$(touch PWNED3).cc` (new)\n");
  auto r = run_yolo({"review-plan", (ph / "01-PLAN.md").string(), ph.string()}, t.path());
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << dump(r);
  EXPECT_NO_THROW(r.json_out()) << r.out.substr(0, 300);
  auto h = run_yolo({"review-plan", "--human", (ph / "01-PLAN.md").string(), ph.string()}, t.path());
  EXPECT_LT(h.exit_code, 3) << dump(h);
  auto pf = run_yolo({"parse-frontmatter", (ph / "01-PLAN.md").string()}, t.path());
  EXPECT_EQ(pf.exit_code, 0) << dump(pf);
  EXPECT_EQ(pf.json_out()["frontmatter"]["title"].get<std::string>().size(), title.size() - 3) << "quotes and one escape";
  for (const char* f : {"PWNED", "PWNED2", "PWNED3"}) EXPECT_FALSE(stdfs::exists(t / f)) << f;
}

TEST(ReviewPlanHostile, HumanOutputDoesNotPassTerminalEscapes) {
  test::TempDir t;
  stdfs::path ph = t / ".yolo-planning/phases/01-x";
  test::write_file(ph / "01-PLAN.md",
                   "---\nphase: \"1\\e[31m\"\nplan: \"01\\e]0;title\\a\"\ntitle: t\nwave: 1\ndepends_on: [\"\\e[2J\"]\n"
                   "must_haves: [a]\n---\n");
  auto r = run_yolo({"review-plan", "--human", (ph / "01-PLAN.md").string(), ph.string()});
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw ESC in human output";
  EXPECT_EQ(r.out.find('\a'), std::string::npos) << "raw BEL in human output";
  EXPECT_NE(r.out.find("^["), std::string::npos) << "the ESC is shown, as ^[\n" << r.out;
  // The same plan through --phase: every human line is sanitised.
  auto p = run_yolo({"review-plan", "--human", "--phase", ph.string()});
  EXPECT_EQ(p.exit_code, 1) << dump(p);
  EXPECT_EQ(p.out.find('\x1b'), std::string::npos) << "raw ESC in human output";
  EXPECT_EQ(p.out.find('\a'), std::string::npos) << "raw BEL in human output";
  // JSON output keeps the text exactly (escaped by the JSON encoder).
  auto j = run_yolo({"review-plan", "--json", (ph / "01-PLAN.md").string(), ph.string()});
  EXPECT_EQ(j.out.find('\x1b'), std::string::npos);
  EXPECT_NE(j.json_out()["plan_id"].get<std::string>().find('\x1b'), std::string::npos) << j.out;
}

TEST(ReviewPlanHostile, HumanOutputDoesNotPassC1Controls) {
  test::TempDir t;
  stdfs::path ph = t / ".yolo-planning/phases/01-x";
  // U+009B is CSI for terminals that honour C1 controls; a raw CR could overwrite the line.
  test::write_file(ph / "01-PLAN.md", "---\nphase: \"1\xc2\x9b" "2J\"\nplan: \"01\\r\"\ntitle: t\nwave: 1\n"
                                      "depends_on: []\nmust_haves: [a]\n---\n");
  auto r = run_yolo({"review-plan", "--human", (ph / "01-PLAN.md").string(), ph.string()});
  EXPECT_LT(r.exit_code, 3) << dump(r);
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << "raw C1 CSI in human output";
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "raw CR in human output";
}

TEST(ReviewPlanHostile, FifoDoesNotHang) {
  test::TempDir t;
  stdfs::path fifo = t / "01-PLAN.md";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::atomic<bool> done{false};
  // Unblocks a reader stuck in open() after 3 s, so the test itself never hangs.
  std::thread rescuer([&] {
    auto start = std::chrono::steady_clock::now();
    while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(3))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (!done) {
      int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto start = std::chrono::steady_clock::now();
  auto r = run_yolo({"review-plan", fifo.string()});
  auto pf = run_yolo({"parse-frontmatter", fifo.string()});
  auto elapsed = std::chrono::steady_clock::now() - start;
  done = true;
  rescuer.join();
  EXPECT_LT(elapsed, std::chrono::seconds(2)) << "blocked on the FIFO";
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_EQ(pf.exit_code, 1) << dump(pf);
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << dump(r);
  EXPECT_NE(r.out.find(fifo.string()), std::string::npos) << dump(r);
}

TEST(ReviewPlanHostile, DevicesAreNotRead) {
  for (const char* dev : {"/dev/zero", "/dev/null"}) {
    auto r = run_yolo({"review-plan", dev});
    EXPECT_EQ(r.exit_code, 1) << dump(r);
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << dump(r);
  }
}

// --- deeply nested JSON from disk -------------------------------------------------------

std::string deep_json() { return "{\"x\":" + std::string(300000, '[') + std::string(300000, ']') + "}"; }

TEST_F(PrecheckFixture, DeepConfigIsAClearErrorNotACrash) {
  test::write_file(tmp / ".yolo-planning/config.json", deep_json());
  auto r = run_yolo({"review-plan", phase("01-approve/01-01-PLAN.md").string(), phase("01-approve").string()});
  EXPECT_EQ(r.exit_code, 0) << dump(r) << "\nthe plan is reviewed with the default config";
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << dump(r);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << dump(r);
  EXPECT_NO_THROW(r.json_out());
  auto p = run_yolo({"review-plan", "--phase", phase("01-approve").string()});
  EXPECT_LT(p.exit_code, 3) << dump(p);
  EXPECT_NE(p.err.find("nested deeper than 64 levels"), std::string::npos) << dump(p);
  // Other readers of config.json.
  auto v = run_yolo({"validate", (tmp / ".yolo-planning/config.json").string()});
  EXPECT_EQ(v.exit_code, 1) << dump(v);
  EXPECT_NE(v.out.find("nested deeper than 64 levels"), std::string::npos) << dump(v);
  auto l = run_yolo({"log-event", "plan_start", "1"}, tmp.path());
  EXPECT_LT(l.exit_code, 64) << dump(l);
  auto t = run_yolo({"resolve-turns", "dev", (tmp / ".yolo-planning/config.json").string()});
  EXPECT_LT(t.exit_code, 64) << dump(t);
  auto m = run_yolo({"resolve-model", "dev", (tmp / ".yolo-planning/config.json").string(),
                     (tmp / ".yolo-planning/config.json").string()});
  EXPECT_EQ(m.exit_code, 1) << dump(m);
  EXPECT_NE(m.err.find("nested deeper than 64 levels"), std::string::npos) << dump(m);
}

TEST(DeepJson, DeepExecutionStateIsAClearErrorForStatus) {
  test::TempDir t;
  test::write_file(t / ".yolo-planning/.execution-state.json", deep_json());
  auto r = run_yolo({"status"}, t.path());
  EXPECT_EQ(r.exit_code, 1) << dump(r);
  EXPECT_NE(r.err.find(".execution-state.json"), std::string::npos) << dump(r);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << dump(r);
  auto j = run_yolo({"status", "--json"}, t.path());
  EXPECT_EQ(j.exit_code, 1) << dump(j);
  json doc = j.json_out();
  EXPECT_EQ(doc["ok"], false);
  EXPECT_NE(doc["error"].get<std::string>().find("nested deeper than 64 levels"), std::string::npos) << doc.dump();
  auto g = run_yolo({"gates"}, t.path());
  EXPECT_EQ(g.exit_code, 1) << dump(g);
  EXPECT_NE(g.err.find("nested deeper than 64 levels"), std::string::npos) << dump(g);
  auto l = run_yolo({"log-event", "plan_start", "1"}, t.path());
  EXPECT_LT(l.exit_code, 64) << dump(l);
}

// --- log-event ------------------------------------------------------------------

class LogEvent : public ::testing::Test {
 protected:
  void SetUp() override { config(R"({"v3_event_log": true})"); }
  void config(const std::string& c) { test::write_file(tmp / ".yolo-planning/config.json", c); }
  stdfs::path log() const { return tmp / ".yolo-planning/.events/event-log.jsonl"; }
  std::vector<json> log_lines() const {
    std::vector<json> v;
    if (!stdfs::exists(log())) return v;
    std::istringstream in(test::read_file(log()));
    std::string l;
    while (std::getline(in, l)) v.push_back(json::parse(l));
    return v;
  }
  test::TempDir tmp;
};

TEST_F(LogEvent, WrittenWithTheLineShape) {
  auto r = run_yolo({"log-event", "plan_start", "2", "3", "k=v", "expr=a=b", "empty="}, tmp.path(),
                    {"YOLO_CORRELATION_ID=corr-env"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json out = r.json_out();
  EXPECT_EQ(out["ok"], true);
  EXPECT_EQ(out["cmd"], "log-event");
  EXPECT_EQ(out["delta"]["written"], true);
  EXPECT_EQ(out["delta"]["event_type"], "plan_start");
  EXPECT_EQ(out["delta"]["phase"], 2);
  ASSERT_TRUE(out["delta"]["event_id"].is_string());
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  const json& e = lines[0];
  EXPECT_EQ(e["event"], "plan_start");
  EXPECT_EQ(e["phase"], 2);
  EXPECT_EQ(e["plan"], 3);
  EXPECT_TRUE(e["plan"].is_number_integer());
  EXPECT_EQ(e["data"], json({{"k", "v"}, {"expr", "a=b"}, {"empty", ""}}));
  EXPECT_EQ(e["correlation_id"], "corr-env");
  EXPECT_EQ(e["event_id"], out["delta"]["event_id"]);
  EXPECT_TRUE(e["ts"].is_string());
}

TEST_F(LogEvent, PlanIsOptional) {
  auto r = run_yolo({"log-event", "phase_start", "1", "k=v"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  auto r2 = run_yolo({"log-event", "phase_end", "1"}, tmp.path());
  ASSERT_EQ(r2.exit_code, 0) << dump(r2);
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_FALSE(lines[0].contains("plan"));
  EXPECT_EQ(lines[0]["data"], json({{"k", "v"}}));
  EXPECT_EQ(lines[1]["data"], json::object());
}

TEST_F(LogEvent, WorksFromASubfolder) {
  stdfs::create_directories(tmp / "src/deep");
  auto r = run_yolo({"log-event", "phase_start", "1"}, tmp / "src/deep");
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(log_lines().size(), 1u);
}

TEST_F(LogEvent, DisabledExits3) {
  for (const char* c : {R"({"v3_event_log": false})", "{}", "not json"}) {
    config(c);
    auto r = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
    EXPECT_EQ(r.exit_code, 3) << c << dump(r);
    json out = r.json_out();
    EXPECT_EQ(out["delta"]["written"], false);
    EXPECT_EQ(out["cmd"], "log-event");
  }
  stdfs::remove(tmp / ".yolo-planning/config.json");
  EXPECT_EQ(run_yolo({"log-event", "phase_start", "1"}, tmp.path()).exit_code, 3);
  EXPECT_FALSE(stdfs::exists(log()));
}

TEST_F(LogEvent, TypedProtocolRefusesUnknownTypes) {
  config(R"({"v3_event_log": true, "v2_typed_protocol": true})");
  auto bad = run_yolo({"log-event", "not_a_real_event", "1"}, tmp.path());
  EXPECT_NE(bad.exit_code, 0) << dump(bad);
  EXPECT_EQ(bad.json_out()["delta"]["written"], false);
  EXPECT_FALSE(stdfs::exists(log()));
  auto good = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  EXPECT_EQ(good.exit_code, 0) << dump(good);
  EXPECT_EQ(log_lines().size(), 1u);
}

TEST_F(LogEvent, CorrelationIdFromStateFileElseEnv) {
  test::write_file(tmp / ".yolo-planning/.execution-state.json", R"({"phase": 1, "correlation_id": "corr-state"})");
  auto s = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  ASSERT_EQ(s.exit_code, 0) << dump(s);
  auto e = run_yolo({"log-event", "phase_start", "1"}, tmp.path(), {"YOLO_CORRELATION_ID=corr-env"});
  ASSERT_EQ(e.exit_code, 0) << dump(e);
  stdfs::remove(tmp / ".yolo-planning/.execution-state.json");
  auto none = run_yolo({"log-event", "phase_start", "1"}, tmp.path());
  ASSERT_EQ(none.exit_code, 0) << dump(none);
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["correlation_id"], "corr-state");
  EXPECT_EQ(lines[1]["correlation_id"], "corr-env") << "the environment wins over the state file";
  EXPECT_TRUE(lines[2]["correlation_id"].is_null() || lines[2]["correlation_id"] == "") << lines[2].dump();
}

TEST_F(LogEvent, BadArguments) {
  EXPECT_NE(run_yolo({"log-event", "phase_start", "one"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "two"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "2", "novalue"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event", "phase_start", "1", "2", "=v"}, tmp.path()).exit_code, 0);
  EXPECT_NE(run_yolo({"log-event"}, tmp.path()).exit_code, 0);
  EXPECT_FALSE(stdfs::exists(log()));
}

TEST_F(LogEvent, ConcurrentInvocationsWriteWholeLines) {
  constexpr int kThreads = 6, kEach = 8;
  const std::string pad(2000, 'p');
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < kEach; ++i) {
        auto r = run_yolo({"log-event", "task_end", std::to_string(th), std::to_string(i), "pad=" + pad}, tmp.path());
        if (r.exit_code != 0) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::istringstream in(test::read_file(log()));
  std::string l;
  std::set<std::pair<int, int>> seen;
  size_t n = 0;
  while (std::getline(in, l)) {
    ++n;
    json j = json::parse(l, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "torn line: " << l.substr(0, 100);
    EXPECT_EQ(j["data"]["pad"], pad);
    seen.insert({j["phase"].get<int>(), j["plan"].get<int>()});
  }
  EXPECT_EQ(n, static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
}

// --- resolve-model / resolve-turns -----------------------------------------------

class Resolve : public ::testing::Test {
 protected:
  void SetUp() override {
    profiles = (test::source_dir() / "fixtures/profiles/model-profiles.json").string();
    cfg("{}");
  }
  void cfg(const std::string& c) { test::write_file(tmp / "config.json", c); }
  std::string config() const { return (tmp / "config.json").string(); }
  test::TempDir tmp;
  std::string profiles;
};

TEST_F(Resolve, ModelPlainOutput) {
  auto r = run_yolo({"resolve-model", "dev", config(), profiles});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.out, "opus\n");
  cfg(R"({"model_profile": "budget"})");
  EXPECT_EQ(run_yolo({"resolve-model", "reviewer", config(), profiles}).out, "haiku\n");
  cfg(R"({"model_profile": "balanced", "model_overrides": {"scout": "opus"}})");
  EXPECT_EQ(run_yolo({"resolve-model", "scout", config(), profiles}).out, "opus\n");
  EXPECT_EQ(run_yolo({"resolve-model", "dev", config(), profiles}).out, "sonnet\n");
}

TEST_F(Resolve, ModelWithCost) {
  cfg(R"({"model_profile": "balanced"})");
  auto r = run_yolo({"resolve-model", "architect", config(), profiles, "--with-cost"});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.json_out(), json({{"model", "opus"}, {"cost_weight", 100}}));
  EXPECT_EQ(run_yolo({"resolve-model", "dev", config(), profiles, "--with-cost"}).json_out(),
            json({{"model", "sonnet"}, {"cost_weight", 20}}));
  EXPECT_EQ(run_yolo({"resolve-model", "scout", config(), profiles, "--with-cost"}).json_out(),
            json({{"model", "haiku"}, {"cost_weight", 2}}));
}

TEST_F(Resolve, ModelAll) {
  json p = json::parse(test::read_file(profiles));
  auto r = run_yolo({"resolve-model", "--all", config(), profiles});
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  json all = r.json_out();
  ASSERT_EQ(all.size(), 9u);
  for (const char* a : {"lead", "dev", "qa", "scout", "debugger", "architect", "docs", "researcher", "reviewer"})
    EXPECT_EQ(all[a], p["quality"][a]) << a;
  auto c = run_yolo({"resolve-model", "--all", config(), profiles, "--with-cost"});
  ASSERT_EQ(c.exit_code, 0) << dump(c);
  json costs = c.json_out();
  ASSERT_EQ(costs.size(), 9u);
  EXPECT_EQ(costs["dev"], json({{"model", "opus"}, {"cost_weight", 100}}));
  EXPECT_EQ(costs["scout"], json({{"model", "haiku"}, {"cost_weight", 2}}));
}

TEST_F(Resolve, JsonFlag) {
  auto m = run_yolo({"resolve-model", "dev", config(), profiles, "--json"});
  ASSERT_EQ(m.exit_code, 0) << dump(m);
  EXPECT_EQ(m.json_out(), json({{"model", "opus"}}));
  auto t = run_yolo({"resolve-turns", "dev", config(), "turbo", "--json"});
  ASSERT_EQ(t.exit_code, 0) << dump(t);
  EXPECT_EQ(t.json_out(), json({{"agent", "dev"}, {"turns", 45}}));  // 75 x 0.6
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config(), "turbo"}).out, "45\n");
}

TEST_F(Resolve, ModelFailures) {
  auto unknown_agent = run_yolo({"resolve-model", "intern", config(), profiles});
  EXPECT_EQ(unknown_agent.exit_code, 1) << dump(unknown_agent);
  EXPECT_NE(unknown_agent.err.find("intern"), std::string::npos) << unknown_agent.err;
  EXPECT_TRUE(unknown_agent.out.empty()) << "nothing on stdout that a caller could take for a model";

  auto missing_cfg = run_yolo({"resolve-model", "dev", (tmp / "none.json").string(), profiles});
  EXPECT_EQ(missing_cfg.exit_code, 1) << dump(missing_cfg);
  EXPECT_NE(missing_cfg.err.find("none.json"), std::string::npos) << missing_cfg.err;

  auto missing_profiles = run_yolo({"resolve-model", "dev", config(), (tmp / "p.json").string()});
  EXPECT_EQ(missing_profiles.exit_code, 1) << dump(missing_profiles);

  test::write_file(tmp / "broken.json", "{oops");
  EXPECT_EQ(run_yolo({"resolve-model", "dev", (tmp / "broken.json").string(), profiles}).exit_code, 1);

  cfg(R"({"model_profile": "luxury"})");
  auto bad_profile = run_yolo({"resolve-model", "dev", config(), profiles});
  EXPECT_EQ(bad_profile.exit_code, 1) << dump(bad_profile);
  EXPECT_NE(bad_profile.err.find("luxury"), std::string::npos);

  cfg(R"({"model_overrides": {"dev": "gpt-9"}})");
  auto bad_model = run_yolo({"resolve-model", "dev", config(), profiles});
  EXPECT_EQ(bad_model.exit_code, 1) << dump(bad_model);
  EXPECT_NE(bad_model.err.find("gpt-9"), std::string::npos);
  EXPECT_EQ(run_yolo({"resolve-model", "--all", config(), profiles}).exit_code, 1) << "--all fails on any agent";
}

TEST_F(Resolve, Turns) {
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config()}).out, "75\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config(), "thorough"}).out, "113\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "scout", config(), "high"}).out, "23\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "qa", config(), "fast"}).out, "20\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "low"}).out, "30\n");
  cfg(R"({"effort": "turbo", "agent_max_turns": {"dev": 40, "qa": false, "lead": {"high": 99, "medium": 55}}})");
  EXPECT_EQ(run_yolo({"resolve-turns", "dev", config()}).out, "24\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "qa", config(), "thorough"}).out, "0\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "thorough"}).out, "99\n");
  EXPECT_EQ(run_yolo({"resolve-turns", "lead", config(), "balanced"}).out, "55\n");
}

TEST_F(Resolve, TurnsDefaultsOnMissingOrMalformedConfig) {
  auto missing = run_yolo({"resolve-turns", "debugger", (tmp / "none.json").string()});
  EXPECT_EQ(missing.exit_code, 0) << dump(missing);
  EXPECT_EQ(missing.out, "80\n");
  cfg("{broken");
  EXPECT_EQ(run_yolo({"resolve-turns", "reviewer", config()}).out, "15\n");
  cfg("[1, 2, 3]");
  EXPECT_EQ(run_yolo({"resolve-turns", "architect", config(), "thorough"}).out, "45\n");
  auto unknown = run_yolo({"resolve-turns", "intern", config()});
  EXPECT_EQ(unknown.exit_code, 1) << dump(unknown);
  EXPECT_TRUE(unknown.out.empty());
}

// --- version and help ----------------------------------------------------------

TEST(Cli, Version) {
  auto r = run_yolo({"--version"});
  EXPECT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_NE(r.out.find(YOLO_VERSION), std::string::npos) << r.out;
}

TEST(Cli, HelpOfEverySubcommand) {
  auto top = run_yolo({"--help"});
  ASSERT_EQ(top.exit_code, 0) << dump(top);
  // Subcommand names: the first word of each indented line after "Subcommands:".
  std::vector<std::string> subs;
  std::istringstream in(top.out);
  std::string l;
  bool in_subs = false;
  while (std::getline(in, l)) {
    if (l.rfind("Subcommands:", 0) == 0) {
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
