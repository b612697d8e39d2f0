// End-to-end: the real `yolo` binary on real files. review-plan: verdicts, phase mode,
// output forms, the whole corpus; hostile plans.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "cli_support.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;
using e2e::dump;
using e2e::PrecheckFixture;
using test::run_yolo;

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

}  // namespace
}  // namespace yolo
