// A PLAN.md file: its frontmatter, the tasks its body declares and the files it touches.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/plan/frontmatter.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo {

struct FileRef {
  std::string path;
  bool is_new = false;   // "(new)": created by the plan, need not exist
  bool is_glob = false;  // contains * ? [ : not checked for existence
  std::string source;    // "files_line" | "files_block" | "files_modified"
  int line = 0;          // 1-based line in the plan (0 for files_modified)
};

inline const char* const kPlanRequiredKeys[] = {"phase", "plan", "title", "wave", "depends_on", "must_haves"};

struct Plan {
  std::string path;
  std::string content_hash;  // sha256 hex of the file's bytes
  bool has_frontmatter = false;
  json frontmatter = json::object();
  std::optional<FrontmatterError> frontmatter_error;

  // Text as written ("01" stays "01"); empty when absent.
  std::string phase, plan, title;
  std::string id() const { return phase + "-" + plan; }
  std::optional<long long> wave;  // set only for a positive integer
  std::vector<std::string> depends_on;
  size_t must_have_count = 0;  // strings, or truths+artifacts+key_links entries
  int task_count = 0;
  std::vector<FileRef> files;

  std::vector<std::string> missing_keys() const;
};

// Text of a scalar as written: strings as they are, numbers and bools printed.
std::string scalar_text(const json& v);
// "01-02" -> "1-2", "03" -> "3": for comparing plan references written differently.
std::string normalize_ref(const std::string& ref);

// Parses plan content (already read). Never throws; YAML problems land in frontmatter_error.
Plan parse_plan(std::string_view content, std::string path);

struct PlanLoad {
  std::optional<Plan> plan;
  std::string error;  // names the file; set when the file could not be read
  bool not_found = false;
};
PlanLoad load_plan(const World& w, const std::filesystem::path& path, size_t max_bytes = 1 << 20);

// Plan files of a phase folder (`MM-PLAN.md`, `NN-MM-PLAN.md`, `PLAN.md`), sorted by name.
std::vector<std::filesystem::path> list_plan_files(const World& w, const std::filesystem::path& phase_dir);
bool is_plan_filename(const std::string& name);
bool is_summary_filename(const std::string& name);

}  // namespace yolo
