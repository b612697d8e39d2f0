// A SUMMARY.md file (PROTOCOL.md section 7): parsing it, and naming and locating
// it beside its plan. The gate on it is protocol/summary/summary_gate.h (structural checks, verdict);
// the checks of its claims against the repository are protocol/summary/summary_claims.h.
// Nothing here throws or prints; bad files become errors naming the file.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/plan/frontmatter.h"
#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo {

// Keys that carry claims: missing is a failure (high).
inline const char* const kSummaryRequiredKeys[] = {"phase",           "plan",        "title",        "status",
                                                   "tasks_completed", "tasks_total", "commit_hashes"};
// Keys that only describe the work (the reference's own completion check accepts a SUMMARY
// without them): missing is a warning (low), a wrong value still a failure.
inline const char* const kSummaryDescriptiveKeys[] = {"completed", "deviations"};

// One entry of `## Files Modified`.
struct SummaryFileEntry {
  std::string path;      // as written, backticks stripped
  std::string action;    // the text after the path ("(new, 116 lines)", "— deleted: ...")
  bool deleted = false;  // the action (or a "Deleted" sub-heading / label) says it is gone
  int line = 0;          // 1-based line in the SUMMARY
};

struct SummarySection {
  std::string title;  // heading text after "## "
  int line = 0;       // 1-based line of the heading
  std::string text;   // the section's lines, up to the next level-1/2 heading
};

struct Summary {
  std::string path;
  bool has_frontmatter = false;
  json frontmatter = json::object();
  std::optional<FrontmatterError> frontmatter_error;
  int body_first_line = 1;

  // Text as written; empty when absent.
  std::string phase, plan, title, status, completed;
  std::optional<long long> tasks_completed, tasks_total;  // set for a non-negative integer
  std::vector<std::string> commit_hashes;                 // entries as text (a scalar counts as one entry)
  std::vector<SummarySection> sections;                   // level-2 sections, in order
  std::vector<SummaryFileEntry> files_modified;
  int files_modified_ignored = 0;  // list items of Files Modified that are not a path

  std::string id() const { return phase + "-" + plan; }
  std::vector<std::string> missing_keys() const;              // required keys absent
  std::vector<std::string> missing_descriptive_keys() const;  // completed/deviations absent
  // The section whose title is `name` (case-insensitive, may be followed by more words or
  // punctuation: "Deviations from Plan", "Files Modified (5)"); nullptr when absent.
  const SummarySection* section(std::string_view name) const;
};

// Parses SUMMARY content (already read). Never throws; YAML problems land in
// frontmatter_error (the body is still scanned for sections).
Summary parse_summary(std::string_view content, std::string path);

struct SummaryLoad {
  std::optional<Summary> summary;
  std::string error;  // names the file; set when it could not be read
  bool not_found = false;
};
SummaryLoad load_summary(const World& w, const std::filesystem::path& path, size_t max_bytes = 1 << 20);

// `NN-MM-SUMMARY.md` -> `NN-MM-PLAN.md`, `MM-SUMMARY.md` -> `MM-PLAN.md`,
// `SUMMARY.md` -> `PLAN.md`, in the same folder; nullopt for a name that is not a summary.
std::optional<std::filesystem::path> sibling_plan_path(const std::filesystem::path& summary_path);

// The plan a SUMMARY belongs to: the sibling name when that file exists, else the plan of
// the same folder whose phase/plan match the SUMMARY's frontmatter; nullopt when none.
std::optional<std::filesystem::path> find_plan_for_summary(const World& w, const std::filesystem::path& summary_path,
                                                           const Summary* summary = nullptr);

// The names a SUMMARY of the plan file `plan_filename` may have in the phase folder
// `phase_folder` (its name, e.g. "02-cli" or "03b-cleanup"), the plan's own naming first:
// `NN-MM-PLAN.md` -> `NN-MM-SUMMARY.md`; `MM-PLAN.md` -> `MM-SUMMARY.md`, then
// `NN-MM-SUMMARY.md` with NN the folder's prefix up to its first '-' (both occur beside
// `MM-PLAN.md` in the corpus); `PLAN.md` -> `SUMMARY.md`. Empty for a name that is not a plan.
std::vector<std::string> summary_names_for_plan(const std::string& plan_filename, const std::string& phase_folder);

// Which of those names `{summary_path}` asks an executor to write when none exists yet: the
// naming the phase's other SUMMARY files already use (`NN-MM-SUMMARY.md` beside `MM-PLAN.md`
// when every existing SUMMARY of the folder is spelled that way), else the plan's own.
// existing_summaries: the file names of the SUMMARY files in the folder.
std::string preferred_summary_name(const std::string& plan_filename, const std::string& phase_folder,
                                   const std::vector<std::string>& existing_summaries);

// The SUMMARY of a plan file: the first of summary_names_for_plan that exists beside it, else
// (exists = false) the preferred_summary_name beside it.
struct SummaryLocation {
  std::filesystem::path path;
  bool exists = false;
};
SummaryLocation locate_summary(const World& w, const std::filesystem::path& plan_path);

// The file name of that SUMMARY, for the plan file `plan_filename` in the folder `dir`: the
// one name the plan's own name allows (`NN-MM-PLAN.md` -> `NN-MM-SUMMARY.md`) without asking
// the disk, else locate_summary's (execute asks twice a plan).
std::string summary_name_for(const World& w, const std::filesystem::path& dir, const std::string& plan_filename);

}  // namespace yolo
