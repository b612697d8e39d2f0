// Stage 1: the structural pre-check of PROTOCOL.md section 3. Deterministic, no model.
#pragma once
#include <filesystem>
#include <optional>
#include <vector>

#include "protocol/ports/contain.h"
#include "protocol/plan/cross_plan.h"
#include "protocol/findings/findings.h"
#include "protocol/plan/plan.h"
#include "protocol/plan/plan_cache.h"

namespace yolo {

class PhaseSnapshots;

struct Stage1Options {
  int max_tasks = 5;                          // config max_tasks_per_plan
  std::optional<std::filesystem::path> root;  // project root: enables file_paths
  size_t max_file_bytes = 1 << 20;
  PlanCache* cache = nullptr;  // siblings read through it when set (a long-running caller's)
  // A review pass's phases, loaded and cross-checked once (protocol/review/phase_snapshot.h): with
  // it, stage1_plan_file costs the same at any phase size.
  PhaseSnapshots* snapshots = nullptr;
  // The root's containment rule, resolved once for many plans: stage1_phase makes it from
  // `root` for its pass (fs::Root is read-only once made). Null: stage1_plan makes its own.
  const fs::Root* guard = nullptr;
};

// Checks of one plan on its own: frontmatter, task_count, must_haves, wave_valid and,
// with a root, file_paths (contained and present on the world's disk).
StructuralReview stage1_plan(const World& w, const Plan& plan, const Stage1Options& opts);


// The review of a plan file, read from the world's disk. A missing or unreadable file is a
// reject with a `file` finding. With phase_dir, the phase's plans are loaded for the
// cross-plan checks and the project root is found from it.
StructuralReview stage1_plan_file(const World& w, const std::filesystem::path& plan_path,
                                  const std::optional<std::filesystem::path>& phase_dir, Stage1Options opts);

// Every plan of a phase folder, reviewed with the cross-plan checks, in file order.
std::vector<StructuralReview> stage1_phase(const World& w, const std::filesystem::path& phase_dir, Stage1Options opts);

// A plan file of a phase folder as the caller read it (load_plan with the same max_bytes).
struct LoadedPlan {
  std::filesystem::path file;
  PlanLoad load;
};
// The same review over the phase's plans as the caller already read them (list_plan_files'
// files, in that order, each with its load_plan): `yolo execute` reads, parses and hashes
// each plan once and reviews exactly the content it schedules. Equal to the overload above
// when `plans` is what that one would read.
std::vector<StructuralReview> stage1_phase(const World& w, const std::filesystem::path& phase_dir,
                                           const std::vector<LoadedPlan>& plans, Stage1Options opts);

// The project root for a phase folder: the folder holding .yolo-planning, else the
// phase folder's grandparent's parent when it sits in `.../phases/`, else nullopt.
std::optional<std::filesystem::path> root_for_phase(const World& w, const std::filesystem::path& phase_dir);

}  // namespace yolo
