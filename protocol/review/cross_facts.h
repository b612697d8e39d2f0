// What the cross-plan checks read of each plan of a phase, remembered on disk.
// The Stage 1 review of one plan runs the cross-plan checks of its phase (stage1.h,
// cross_plan_findings), which read every sibling: at 1,000 plans in a phase that is 1,000
// YAML parses for a process that has not parsed them yet (`yolo review-plan`,
// the watcher's first save in a phase its background pass has not read). The store keeps,
// per phase folder, each plan's facts for those checks (content hash, frontmatter error,
// phase, plan, wave, depends_on, the files it touches and whether each is a glob) with the
// identity of the file they were parsed from (fs::FileId: device, inode, size, mtime and
// ctime in ns), in one sealed file per phase: `.yolo-planning/.cache/stage1/<folder>.facts`.
// Loading one costs a read, an HMAC and a stat per plan, whatever the phase's size.
//
// The same rules as protocol/review/verified_cache.h (their one home), so a store can never make a
// plan's cross-plan findings differ from a full parse's:
// - A plan is taken from the store only while its file has the identity it was parsed with:
//   any write, rename or copy over it changes its ctime or inode (the ctime cannot be set by
//   a process of the user): it is parsed again.
// - Racy writes: facts are remembered only when the file's identity was the same before and
//   after it was read, and its ctime is kRacySeconds older than the World's clock.
// - The file is sealed as a whole with the user's key (World::checking_key; never created
//   here) over its bytes, which name the project (canonical path), the phase folder, the
//   store's format and the read limit (max_bytes): a store edited by hand, copied from
//   another project or phase, or made with another key fails and is ignored (every plan is
//   parsed, then the file is written again). Without a key, or on a disk that cannot tell
//   identities (the memory disk), nothing is remembered. A failed write is not an error.
// - What parse_plan takes from a plan for these fields is part of the format (kFormat):
//   change one, bump the other, so a store written by another yolo is not believed.
// A hit gives a Plan like PlanCache's slim siblings: the facts above and its path, without
// the frontmatter document, title, tasks or must_haves (the plan's own checks read the plan
// itself, never a sibling). Not thread-safe (one per thread; two writers of one folder's
// store each write a whole, sealed file: the last one stays).
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/plan/plan.h"
#include "protocol/plan/plan_cache.h"
#include "protocol/ports/world.h"

namespace yolo::cross_facts {

// The store's format: bump it when parse_plan changes what it takes for the facts kept.
constexpr const char* kFormat = "yolo-cross-facts-v1";

// The facts of a plan as one line of the store (no newline; fields escaped) and back:
// decode(encode(p), path) has every field the cross-plan checks read equal to p's.
std::string encode(const Plan& p);
std::optional<Plan> decode(std::string_view fields, const std::string& path);

// Whether stores are kept in this project at all: a key, and a disk that tells identities.
bool usable(const World& w, const std::filesystem::path& root);

class Store {
 public:
  // The store of phase_dir (a folder `.yolo-planning/phases/<name>` of a project; any other
  // folder gets none), for plans read with max_bytes; loaded when its seal verifies.
  Store(const World& w, const std::filesystem::path& phase_dir, size_t max_bytes);

  // False without a key, outside a project's phases, or on a disk that cannot tell file
  // identities: load() always reads the plan, save() writes nothing.
  bool enabled() const { return enabled_; }
  // Whether the file on disk was loaded (its seal and binding verified).
  bool loaded() const { return loaded_; }

  // The plan file `file` of the folder for the cross-plan checks: its facts from the store
  // when the file is the one they were parsed from, else read (through `cache` when given:
  // PlanCache::load_sibling, else load_plan) and remembered when not racy.
  PlanLoad load(const std::filesystem::path& file, PlanCache* cache = nullptr);
  // The facts remembered for `file` when it is still the file they were parsed from.
  std::optional<Plan> find(const std::filesystem::path& file);
  // The plan files of the folder, as list_plan_files gives them (the same files, in the same
  // order), each with load(file, cache): one listing, and one stat for a plan the store knows.
  std::vector<std::pair<std::filesystem::path, PlanLoad>> load_folder(PlanCache* cache = nullptr);

  // Writes the store when something was remembered or dropped; prune: plans neither found nor
  // loaded since it was loaded are dropped (plans removed). Callers may ignore a failure (a
  // read-only checkout gets no store).
  Status save(bool prune);

  std::filesystem::path file() const { return file_; }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  struct Entry {
    std::string id;      // verified_cache::identity_string of the file
    std::string fields;  // encode()
  };
  std::string header() const;
  std::optional<Plan> find_with(const std::filesystem::path& file, const std::string& id);
  // Reads the plan (its identity `before` taken first) and remembers its facts when not racy.
  PlanLoad read(const std::filesystem::path& file, const std::optional<fs::FileId>& before, const std::string& id);

  const World& w_;
  std::filesystem::path dir_, file_;  // the folder as the caller named it; the store
  std::string project_, folder_;
  size_t max_bytes_;
  bool enabled_ = false, loaded_ = false, changed_ = false;
  std::map<std::string, Entry> entries_;  // plan file name -> entry
  std::set<std::string> used_;
  size_t hits_ = 0, misses_ = 0;
};

}  // namespace yolo::cross_facts
