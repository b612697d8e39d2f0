// Walks every file of the shared corpus (real planning files): each Markdown file parses
// or is refused with a precise message, and every PLAN gets a Stage 1 verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "protocol/plan/frontmatter.h"
#include "protocol/ports/fs.h"
#include "protocol/plan/plan.h"
#include "protocol/review/stage1.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

constexpr size_t kExpectedPlans = 142;

std::optional<stdfs::path> corpus() {
#ifdef YOLO_CORPUS_DIR
  stdfs::path p = YOLO_CORPUS_DIR;
  std::error_code ec;
  if (stdfs::is_directory(p, ec)) return p;
#endif
  return std::nullopt;
}

// Values in a JSON document (every object, array and scalar), as the alias-bomb guard of
// protocol/plan/frontmatter.cc counts them.
size_t count_values(const json& j) {
  size_t n = 1;
  if (j.is_structured())
    for (const auto& v : j) n += count_values(v);
  return n;
}

std::vector<stdfs::path> all_files(const stdfs::path& root) {
  std::vector<stdfs::path> v;
  for (auto it = stdfs::recursive_directory_iterator(root); it != stdfs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file()) v.push_back(it->path());
  std::sort(v.begin(), v.end());
  return v;
}

// The simple frontmatter reader (protocol/plan/frontmatter.cc, without yaml-cpp) on real files:
// where it answers, it answers as yaml-cpp does.
TEST(Corpus, SimpleFrontmatterReaderAgreesWithYamlCpp) {
  auto root = corpus();
  if (!root) GTEST_SKIP() << "corpus not found at YOLO_CORPUS_DIR";
  size_t blocks = 0, simple = 0;
  for (const auto& f : all_files(*root)) {
    if (f.extension() != ".md") continue;
    auto read = fs::read_text(f);
    if (!read.ok() || read.content.rfind("---\n", 0) != 0) continue;
    size_t end = read.content.find("\n---\n", 3);
    if (end == std::string::npos) continue;
    std::string yaml = read.content.substr(4, end - 3);
    ++blocks;
    auto fast = simple_yaml_to_json(yaml);
    if (!fast) continue;
    ++simple;
    std::optional<FrontmatterError> err;
    json full = yaml_cpp_to_json(yaml, err);
    EXPECT_FALSE(err) << f;
    EXPECT_EQ(*fast, full) << f;
  }
  std::cout << "[corpus] " << blocks << " frontmatter blocks, " << simple << " read without yaml-cpp\n";
  EXPECT_GT(blocks, 0u);
}

TEST(Corpus, EveryMarkdownFileParsesOrIsRefusedPrecisely) {
  auto root = corpus();
  if (!root) GTEST_SKIP() << "corpus not found at YOLO_CORPUS_DIR";
  size_t md = 0, with_fm = 0, without_fm = 0, refused = 0, other = 0, most_values = 0;
  for (const auto& f : all_files(*root)) {
    if (f.extension() != ".md") {
      ++other;
      continue;
    }
    ++md;
    auto read = fs::read_text(f);
    if (!read.ok()) {
      // Refused at read time: the message must name the file.
      ++refused;
      EXPECT_NE(read.error->message.find(f.filename().string()), std::string::npos) << read.error->message;
      continue;
    }
    Frontmatter fm = parse_frontmatter(read.content);
    if (fm.error) {
      ++refused;
      EXPECT_GT(fm.error->line, 0) << f << ": refusal without a line number: " << fm.error->message;
      EXPECT_FALSE(fm.error->message.empty()) << f;
      // The alias-bomb guard (20000 values) never refuses real planning files.
      EXPECT_EQ(fm.error->message.find("alias bomb"), std::string::npos) << f << ": " << fm.error->message;
      EXPECT_EQ(fm.error->message.find("expands to more than"), std::string::npos) << f << ": " << fm.error->message;
      continue;
    }
    EXPECT_TRUE(fm.data.is_object()) << f;
    most_values = std::max(most_values, count_values(fm.data));
    (fm.has_frontmatter ? with_fm : without_fm)++;
  }
  std::cout << "[corpus] " << md << " markdown files: " << with_fm << " with frontmatter, " << without_fm
            << " without, " << refused << " refused; " << other << " other files; at most " << most_values
            << " values in one frontmatter\n";
  // A wide margin under the guard's 20000, so real files stay far from it.
  EXPECT_LT(most_values, 2000u);
  EXPECT_GT(md, 0u);
  EXPECT_EQ(md, with_fm + without_fm + refused);
}

TEST(Corpus, EveryPlanGetsAStage1Verdict) {
  auto root = corpus();
  if (!root) GTEST_SKIP() << "corpus not found at YOLO_CORPUS_DIR";
  std::set<stdfs::path> phase_dirs;
  size_t plan_files = 0;
  for (const auto& f : all_files(*root))
    if (is_plan_filename(f.filename().string())) {
      ++plan_files;
      phase_dirs.insert(f.parent_path());
    }
  ASSERT_NE(plan_files, 0u) << "no PLAN files found under " << *root;
  EXPECT_EQ(plan_files, kExpectedPlans);

  std::map<std::string, size_t> verdicts;
  std::map<std::string, size_t> high_by_check;
  size_t reviewed = 0;
  for (const auto& dir : phase_dirs) {
    auto reviews = stage1_phase(test::real_world(), dir, {});
    EXPECT_EQ(reviews.size(), list_plan_files(test::real_world(), dir).size()) << dir;
    for (const auto& r : reviews) {
      ++reviewed;
      Verdict v = r.verdict();
      ++verdicts[to_string(v)];
      json j = r.to_json();
      EXPECT_EQ(j["ok"].get<bool>(), v != Verdict::Reject) << r.plan_path;
      EXPECT_EQ(j["verdict"], to_string(v));
      EXPECT_FALSE(r.checks.empty()) << r.plan_path;
      for (const auto& f : r.findings) {
        EXPECT_FALSE(f.issue.empty()) << r.plan_path;
        EXPECT_FALSE(f.check.empty()) << r.plan_path;
        if (f.severity == Severity::High) ++high_by_check[f.check];
      }
      // Never read outside the root: every escaping path is reported high, never as missing.
      for (const auto& f : r.findings)
        if (f.check == "file_paths" && f.severity == Severity::Low) {
          EXPECT_TRUE(fs::MemoryDisk().contain("/r", f.extra.value("path", std::string("x"))).ok())
              << r.plan_path << ": " << f.issue;
        }
    }
  }
  EXPECT_EQ(reviewed, plan_files);
  std::cout << "[corpus] " << reviewed << " plans in " << phase_dirs.size() << " folders:";
  for (const auto& [v, n] : verdicts) std::cout << " " << v << "=" << n;
  std::cout << "\n[corpus] high findings by check:";
  for (const auto& [c, n] : high_by_check) std::cout << " " << c << "=" << n;
  std::cout << "\n";
  // The corpus is real, messy planning: it must exercise more than one verdict.
  EXPECT_GE(verdicts.size(), 2u);
}

TEST(Corpus, PlansParseWithTasksAndMustHaves) {
  auto root = corpus();
  if (!root) GTEST_SKIP() << "corpus not found at YOLO_CORPUS_DIR";
  size_t plans = 0, with_tasks = 0, with_must_haves = 0, with_files = 0;
  for (const auto& f : all_files(*root)) {
    if (!is_plan_filename(f.filename().string())) continue;
    auto loaded = load_plan(test::real_world(), f);
    ASSERT_TRUE(loaded.plan) << loaded.error;
    ++plans;
    const Plan& p = *loaded.plan;
    if (p.task_count > 0) ++with_tasks;
    if (p.must_have_count > 0) ++with_must_haves;
    if (!p.files.empty()) ++with_files;
    for (const auto& ref : p.files) {
      EXPECT_FALSE(ref.path.empty()) << f;
      EXPECT_EQ(ref.path.find('`'), std::string::npos) << f << ": backtick kept in " << ref.path;
    }
  }
  std::cout << "[corpus] " << plans << " plans: " << with_tasks << " with tasks, " << with_must_haves
            << " with must_haves, " << with_files << " with file references\n";
  // Real plans nearly all declare tasks and files; a parser that finds none is broken.
  EXPECT_GT(with_tasks * 10, plans * 9);
  EXPECT_GT(with_must_haves * 10, plans * 9);
  EXPECT_GT(with_files * 2, plans);
}

}  // namespace
}  // namespace yolo
