// Google Benchmark of a state write at execute's size: one locked read-modify-write
// of an 800-plan state (state::update), and its parts: copy, compare, dump, schema checks.
// The state comes from a real run: STATE_JSON (default /tmp/sb/state800.json) when it exists,
// else 800 records built here.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "protocol/base/json.h"
#include "protocol/base/schema.h"
#include "protocol/state/state.h"
#include "runner/world.h"

namespace {

namespace stdfs = std::filesystem;
using yolo::json;

json state_of(int n) {
  const char* p = std::getenv("STATE_JSON");
  std::ifstream f(p ? p : "/tmp/sb/state800.json");
  if (f && n == 800) {
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
  }
  json d = {{"status", "running"}, {"wave", 1}, {"plans", json::array()}};
  for (int i = 1; i <= n; ++i)
    d["plans"].push_back({{"id", "1-" + std::to_string(i)},
                          {"path", ".yolo-planning/phases/01-bench-1/01-" + std::to_string(i) + "-PLAN.md"},
                          {"status", "pending"},
                          {"title", "Bench plan " + std::to_string(i)},
                          {"wave", 1 + i * 10 / (n + 1)}});
  return d;
}

json state800() { return state_of(800); }

struct Project {
  stdfs::path root;
  explicit Project(int n = 800) {
    root = stdfs::temp_directory_path() / ("yolo-state-bench-" + std::to_string(::getpid()));
    stdfs::create_directories(root / ".yolo-planning");
    std::ofstream(yolo::state::state_path(root)) << state_of(n).dump(2) << "\n";
  }
  ~Project() {
    std::error_code ec;
    stdfs::remove_all(root, ec);
  }
};

void BM_StateUpdate_OnePlanOf800(benchmark::State& st) {
  Project p;
  int k = 0;
  for (auto _ : st) {
    auto up = yolo::state::update(yolo::runner::world(), p.root, [&](json& d) {
      d["plans"][k % 800]["status"] = (k & 1) ? "running" : "pending";
      return true;
    });
    ++k;
    if (!up.ok()) st.SkipWithError(up.error.c_str());
  }
}
BENCHMARK(BM_StateUpdate_OnePlanOf800)->Unit(benchmark::kMillisecond);

// Execute's batched write: 100 plan records of N changed (about a quarter-second batch of a
// trivial executor), through the write that re-serialises only those (update_plan_records)
// against the whole-document update with the same change and the same check.
constexpr int kBatch = 100;
void BM_BatchedWrite_PlanRecords(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  Project p(n);
  int k = 0;
  for (auto _ : st) {
    auto up = yolo::state::update_plan_records(yolo::runner::world(), p.root,
                                               [&](json& d, std::vector<size_t>& changed) {
                                                 for (int b = 0; b < kBatch; ++b, ++k) {
                                                   size_t i = static_cast<size_t>(k % n);
                                                   d["plans"][i]["status"] = (k / n) & 1 ? "running" : "pending";
                                                   changed.push_back(i);
                                                 }
                                                 return true;
                                               });
    if (!up.ok()) st.SkipWithError(up.error.c_str());
  }
}
BENCHMARK(BM_BatchedWrite_PlanRecords)->Arg(800)->Arg(4000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_BatchedWrite_WholeDocument(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  Project p(n);
  int k = 0;
  for (auto _ : st) {
    std::vector<size_t> changed;
    auto up = yolo::state::update(
        yolo::runner::world(), p.root,
        [&](json& d) {
          for (int b = 0; b < kBatch; ++b, ++k) {
            size_t i = static_cast<size_t>(k % n);
            d["plans"][i]["status"] = (k / n) & 1 ? "running" : "pending";
            changed.push_back(i);
          }
          return true;
        },
        [&](const json& d) { return yolo::state::validate_changed_plans(d, changed); });
    if (!up.ok()) st.SkipWithError(up.error.c_str());
  }
}
BENCHMARK(BM_BatchedWrite_WholeDocument)->Arg(800)->Arg(4000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_Copy800(benchmark::State& st) {
  json d = state800();
  for (auto _ : st) {
    json c = d;
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_Copy800)->Unit(benchmark::kMicrosecond);

void BM_Compare800(benchmark::State& st) {
  json d = state800(), c = d;
  for (auto _ : st) benchmark::DoNotOptimize(d == c);
}
BENCHMARK(BM_Compare800)->Unit(benchmark::kMicrosecond);

void BM_Dump800(benchmark::State& st) {
  json d = state800();
  for (auto _ : st) benchmark::DoNotOptimize(d.dump(2));
}
BENCHMARK(BM_Dump800)->Unit(benchmark::kMicrosecond);

void BM_Parse800(benchmark::State& st) {
  std::string t = state800().dump(2);
  for (auto _ : st) benchmark::DoNotOptimize(json::parse(t));
}
BENCHMARK(BM_Parse800)->Unit(benchmark::kMicrosecond);

void BM_ValidateWhole800(benchmark::State& st) {
  json d = state800();
  for (auto _ : st) benchmark::DoNotOptimize(yolo::state::validate(d));
}
BENCHMARK(BM_ValidateWhole800)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
