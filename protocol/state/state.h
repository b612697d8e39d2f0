// .yolo-planning/.execution-state.json (PROTOCOL.md section 5): schema-validated on every
// read and write, written atomically (temp + fsync + rename + fsync dir) and serialised by
// an exclusive flock on .yolo-planning/.lock held only around read-modify-write.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/base/result.h"
#include "protocol/ports/world.h"

namespace yolo::state {

// What an update's fn gives: true to write its change, false to write nothing (the update
// is still ok), or a failure that refuses the update with its sentence.
using Change = Result<bool>;

std::filesystem::path state_path(const std::filesystem::path& root);
std::filesystem::path lock_path(const std::filesystem::path& root);

struct LoadResult {
  json doc = json::object();  // {} when the file does not exist
  bool exists = false;
  std::string error;      // names the file and the problem; doc untouched then
  std::string kept_copy;  // where the broken file was copied, when error is set
  bool ok() const { return error.empty(); }
};

// A snapshot, read without the lock (the file is only ever replaced by rename, so a
// reader sees the old or the new version). A file that does not parse or validate gives
// an error and a copy of it is kept beside it (`.execution-state.json.corrupt-<time>`).
LoadResult load(const World& w, const std::filesystem::path& root);

struct UpdateResult {
  json doc;           // the state after the update (or as it was, when aborted)
  std::string error;  // I/O, lock, schema (before or after fn), or fn's own error
  bool written = false;
  // The file's identity (fs::Disk::stamp) right after the update, taken under the lock: a
  // caller that keeps `doc` can tell later whether the file is still the one it wrote.
  // Empty on an error.
  std::string stamp;
  bool ok() const { return error.empty(); }
};

// Read-modify-write under the lock. fn receives the current state ({} when absent) and
// mutates it; it returns true to write, false to leave the file as it is (r.ok(), nothing
// written), or a failure (r.error, nothing written): a Change. The
// result is validated against schemas/execution-state.json before it is written: an
// invalid result is never written. A broken existing file is never overwritten. A result
// equal to the file's document is not written (written stays false).
UpdateResult update(const World& w, const std::filesystem::path& root,
                    const std::function<Change(json& doc)>& fn,
                    const std::function<Status(const json& doc)>& check = nullptr);
// `check`, when set, replaces the whole-document check of the result (as update_document's):
// for an update that changes a few plans of a large state, validate_changed_plans checks what
// changed in time proportional to the change.

// As update(), for execute's batched writes: a change to the plans' records (none added or
// removed) and to the fields beside them. fn changes the document where it lies and appends to
// `changed` the index of every record it changed; it returns false or a failure to write
// nothing. The change is always written. The document is not copied before nor compared
// after; the check covers every field but the records fn did not name (validate_changed_plans);
// and only the named records are serialised again: the others' text is the one this process
// wrote last, kept with the document (at 4,000 plans, copying, comparing and serialising the
// whole state at each batched write was most of its cost). A debug build checks the
// text against the whole document's. On success r.doc is the document without its "plans"
// (the whole of it stays with this process for its next write; load() gives all of it). A
// refused change (fn's error, the check, a read-only file, a failed write) leaves the file as
// it was, and r.doc is the file's document.
UpdateResult update_plan_records(
    const World& w, const std::filesystem::path& root,
    const std::function<Change(json& doc, std::vector<size_t>& changed)>& fn);

// The same discipline for another runner-owned JSON file under .yolo-planning (the review
// ledgers): parsed and validated against schemas/<schema_name>.json on every read and
// write, a broken file kept and never overwritten, updates under the same .lock (so one
// lock orders every runner write), written atomically. The folder of `file` is created
// when missing. `check`, when set, replaces the whole-document check of the result: for a
// document whose schema constrains each entry on its own (a ledger's records), checking
// the entries fn changed is the same check in time proportional to the change (the rest
// was checked when it was read). A check gives ok or "pointer: message; ...".
// Bytes this process has already validated (read or written) are not checked again on a
// later read of the same bytes; the parse always runs.
LoadResult load_document(const World& w, const std::filesystem::path& file, const std::string& schema_name);
// `after_write`, when set, runs after the file was replaced, still under the lock (a ledger
// empties its journal there: protocol/review/review_ledger.h).
UpdateResult update_document(const World& w, const std::filesystem::path& root, const std::filesystem::path& file,
                             const std::string& schema_name, const std::function<Change(json& doc)>& fn,
                             const std::function<Status(const json& doc)>& check = nullptr,
                             const std::function<void()>& after_write = nullptr);

// Validates a state document: ok, or "pointer: message; ...".
Status validate(const json& doc);
// Validates what an update of some plans' records changed: every field of the document but
// "plans" (the wave, the status, the steps, the gates: small) and the plans at `plan_indexes`
// of doc["plans"], against the same schema, and the gate ids' uniqueness. The other plans are
// not looked at: they were validated when the document was read or last written, and the
// update did not touch them. Ok, or "pointer: message; ...".
Status validate_changed_plans(const json& doc, const std::vector<size_t>& plan_indexes);

}  // namespace yolo::state
