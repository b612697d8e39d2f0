// The review ledger: the last review of each plan, one small file per phase
// (.yolo-planning/.reviews/<phase folder>.json, schemas/review-ledger.json). Each record
// holds the content hash that was reviewed, the verdict, findings and the loop, and is what
// `yolo review --changed`, the watcher and `yolo status` reconcile against. Kept out of the
// execution state so that recording one review rewrites one phase's records, not every
// plan's (10,000 plans made the state ~3 MB). Written under .yolo-planning/.lock like the
// state, atomically; validated on every read and write.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/state.h"

namespace yolo::review_ledger {

// .yolo-planning/.reviews
std::filesystem::path dir(const std::filesystem::path& root);
// The ledger of the phase folder `phase_dir` (named after its last component).
std::filesystem::path path_for(const std::filesystem::path& root, const std::filesystem::path& phase_dir);

// Every record carries a seal (protocol/seal.h) over the project, the ledger file, the plan
// id and the record; a record without a valid one (edited by hand, copied from another
// project, written by another tool) is dropped when the ledger is read, so the plan is
// reviewed again.
bool trusted(const World& w, const std::filesystem::path& root, const std::filesystem::path& ledger_file,
             const std::string& plan_id, const json& record);
// Removes the untrusted records of a loaded ledger; one sentence per record removed.
std::vector<std::string> drop_untrusted(const World& w, const std::filesystem::path& root,
                                        const std::filesystem::path& ledger_file, json& ledger);

// {"reviews": {}} when there is no ledger yet; an error names the file (a copy of a broken
// one is kept, as for the state).
state::LoadResult load(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir);

// One ledger file by its path (as the watcher sees it change).
state::LoadResult load_file(const World& w, const std::filesystem::path& file);

// The record of plan `plan_id` in `ledger` (a loaded document), or nullptr.
const json* find(const json& ledger, const std::string& plan_id);

// Sets reviews[plan_id] = record in the phase's ledger, under the lock.
std::string record(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir,
                   const std::string& plan_id, json record);

// Sets reviews[id] = record for each (id, record) in order (a later one for the same id
// wins), in one update of the phase's ledger under the lock: one read, one atomic write.
std::string record_many(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir,
                        std::vector<std::pair<std::string, json>> records);

struct All {
  json reviews = json::object();  // plan id -> record, over every ledger
  std::vector<std::string> errors;
};
// Every ledger in .yolo-planning/.reviews; broken ones are reported and skipped. Ledgers
// are read in name order, so with the same plan id in two phases the later phase wins.
All load_all(const World& w, const std::filesystem::path& root);

}  // namespace yolo::review_ledger
