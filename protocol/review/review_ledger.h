// The review ledger: the last review of each plan, one small file per phase
// (.yolo-planning/.reviews/<phase folder>.json, schemas/review-ledger.json). Each record
// holds the content hash that was reviewed, the verdict, findings and the loop, and is what
// `yolo review --changed`, the watcher and `yolo status` reconcile against. Kept out of the
// execution state so that recording one review rewrites one phase's records, not every
// plan's (the state would grow with every plan ever reviewed). Written under .yolo-planning/.lock like the
// state, atomically; validated on every read and write.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/result.h"
#include "protocol/base/json.h"
#include "protocol/state/state.h"

namespace yolo::review_ledger {

// .yolo-planning/.reviews
std::filesystem::path dir(const std::filesystem::path& root);
// The ledger of the phase folder `phase_dir` (named after its last component).
std::filesystem::path path_for(const std::filesystem::path& root, const std::filesystem::path& phase_dir);

// Every record carries a seal (protocol/base/seal.h) over the project, the ledger file, the plan
// id and the record; a record without a valid one (edited by hand, copied from another
// project, written by another tool) is dropped when the ledger is read, so the plan is
// reviewed again.
bool trusted(const World& w, const std::filesystem::path& root, const std::filesystem::path& ledger_file,
             const std::string& plan_id, const json& record);
// Removes the untrusted records of a loaded ledger; one sentence per record removed.
std::vector<std::string> drop_untrusted(const World& w, const std::filesystem::path& root,
                                        const std::filesystem::path& ledger_file, json& ledger);

// The ledger's journal, `<phase folder>.jsonl` beside it. Recording one review in a phase of
// 1,000 plans would parse, validate and rewrite (and fsync) the whole ledger.
// Now a ledger of kJournalFromRecords records or more, that this process has read or
// written as it is now (same file identity: fs::Disk::stamp), takes new records as lines
// appended to its journal, under the same lock, fsynced: one `{"plan_id", "record"}` a
// line, sealed exactly as in the ledger. When the journal would pass kJournalMaxBytes the
// next record folds it: the new records are appended first, then the ledger is rewritten
// with every line applied, then the journal is emptied (a crash between the two leaves
// lines the ledger holds already: applying them again changes nothing). Readers (load,
// load_file, load_all) read the journal, then the ledger, and apply the lines in order; a
// torn last line (a writer killed part way), and a line that does not parse or breaks the
// schema, is skipped; seals are checked after, as for the ledger's own records.
std::filesystem::path journal_for(const std::filesystem::path& ledger_file);
inline constexpr size_t kJournalFromRecords = 128;
inline constexpr size_t kJournalMaxBytes = 256 * 1024;
// Applies a journal's complete lines over a loaded ledger document; how many were applied.
size_t apply_journal(json& ledger, std::string_view journal_text);

// {"reviews": {}} when there is no ledger yet; an error names the file (a copy of a broken
// one is kept, as for the state).
state::LoadResult load(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir);

// One ledger file by its path (as the watcher sees it change).
state::LoadResult load_file(const World& w, const std::filesystem::path& file);

// The record of plan `plan_id` in `ledger` (a loaded document), or nullptr.
const json* find(const json& ledger, const std::string& plan_id);

// Sets reviews[plan_id] = record in the phase's ledger, under the lock.
Status record(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir,
              const std::string& plan_id, json record);

// Sets reviews[id] = record for each (id, record) in order (a later one for the same id
// wins), in one update of the phase's ledger under the lock: one read, one atomic write.
Status record_many(const World& w, const std::filesystem::path& root, const std::filesystem::path& phase_dir,
                   std::vector<std::pair<std::string, json>> records);

struct All {
  json reviews = json::object();  // plan id -> record, over every ledger
  std::vector<std::string> errors;
};
// Every ledger in .yolo-planning/.reviews; broken ones are reported and skipped. Ledgers
// are read in name order, so with the same plan id in two phases the later phase wins.
All load_all(const World& w, const std::filesystem::path& root);

}  // namespace yolo::review_ledger
