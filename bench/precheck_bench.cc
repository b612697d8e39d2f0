// Google Benchmark of the hot Stage 1 parsers, in process, over the shared corpus:
// parse_frontmatter, parse_plan and stage1_phase.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "protocol/plan/frontmatter.h"
#include "protocol/ports/fs.h"
#include "protocol/plan/plan.h"
#include "protocol/review/stage1.h"
#include "runner/world.h"

namespace {

namespace stdfs = std::filesystem;

struct Corpus {
  std::vector<std::string> markdown;  // every *.md, contents
  std::vector<std::string> plans;     // every PLAN, contents
  std::vector<stdfs::path> phase_dirs;
  size_t plan_bytes = 0, markdown_bytes = 0;
};

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus k;
    stdfs::path root = YOLO_CORPUS_DIR;
    std::error_code ec;
    if (!stdfs::is_directory(root, ec)) return k;
    std::set<stdfs::path> dirs;
    std::vector<stdfs::path> files;
    for (auto it = stdfs::recursive_directory_iterator(root, ec); !ec && it != stdfs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".md") files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto r = yolo::fs::read_text(f);
      if (!r.ok()) continue;
      k.markdown_bytes += r.content.size();
      if (yolo::is_plan_filename(f.filename().string())) {
        k.plan_bytes += r.content.size();
        k.plans.push_back(r.content);
        dirs.insert(f.parent_path());
      }
      k.markdown.push_back(std::move(r.content));
    }
    k.phase_dirs.assign(dirs.begin(), dirs.end());
    return k;
  }();
  return c;
}

bool need_corpus(benchmark::State& state) {
  if (corpus().plans.empty()) {
    state.SkipWithError("corpus not found at YOLO_CORPUS_DIR");
    return false;
  }
  return true;
}

void BM_ParseFrontmatter_AllMarkdown(benchmark::State& state) {
  if (!need_corpus(state)) return;
  const auto& c = corpus();
  for (auto _ : state)
    for (const auto& s : c.markdown) benchmark::DoNotOptimize(yolo::parse_frontmatter(s));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.markdown.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.markdown_bytes));
}
BENCHMARK(BM_ParseFrontmatter_AllMarkdown)->Unit(benchmark::kMillisecond);

void BM_ParsePlan_AllPlans(benchmark::State& state) {
  if (!need_corpus(state)) return;
  const auto& c = corpus();
  for (auto _ : state)
    for (const auto& s : c.plans) benchmark::DoNotOptimize(yolo::parse_plan(s, "PLAN.md"));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.plans.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.plan_bytes));
}
BENCHMARK(BM_ParsePlan_AllPlans)->Unit(benchmark::kMillisecond);

// One typical plan: the median-sized plan of the corpus.
void BM_ParsePlan_MedianPlan(benchmark::State& state) {
  if (!need_corpus(state)) return;
  std::vector<const std::string*> by_size;
  for (const auto& s : corpus().plans) by_size.push_back(&s);
  std::sort(by_size.begin(), by_size.end(), [](auto* a, auto* b) { return a->size() < b->size(); });
  const std::string& plan = *by_size[by_size.size() / 2];
  for (auto _ : state) benchmark::DoNotOptimize(yolo::parse_plan(plan, "PLAN.md"));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plan.size()));
  state.counters["plan_bytes"] = static_cast<double>(plan.size());
}
BENCHMARK(BM_ParsePlan_MedianPlan)->Unit(benchmark::kMicrosecond);

// Precheck on already parsed plans (no I/O, no file_paths).
void BM_PrecheckPlan_AllPlans(benchmark::State& state) {
  if (!need_corpus(state)) return;
  std::vector<yolo::Plan> parsed;
  for (const auto& s : corpus().plans) parsed.push_back(yolo::parse_plan(s, "PLAN.md"));
  yolo::Stage1Options o;
  for (auto _ : state)
    for (const auto& p : parsed) benchmark::DoNotOptimize(yolo::stage1_plan(yolo::runner::world(), p, o));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * parsed.size()));
}
BENCHMARK(BM_PrecheckPlan_AllPlans)->Unit(benchmark::kMillisecond);

// The whole corpus through stage1_phase: reads files, parses, checks files on disk, cross-plan.
void BM_ReviewPhase_WholeCorpus(benchmark::State& state) {
  if (!need_corpus(state)) return;
  const auto& c = corpus();
  size_t reviews = 0;
  for (auto _ : state) {
    for (const auto& d : c.phase_dirs) {
      auto rs = yolo::stage1_phase(yolo::runner::world(), d, {});
      reviews += rs.size();
      benchmark::DoNotOptimize(rs);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(reviews));
  state.counters["phases"] = static_cast<double>(c.phase_dirs.size());
  state.counters["plans"] = static_cast<double>(c.plans.size());
}
BENCHMARK(BM_ReviewPhase_WholeCorpus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
