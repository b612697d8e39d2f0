// The workflow records of seeds/004 (todo, evidence, review_gate, handoff, conflict, metrics,
// skill, startup, recovery): detecting a document's record kind, unwrapping
// {"evidence": {...}}, and the per-stage quality gates. Also the schema detection of
// `yolo validate`, which adds file-name rules (state, config, PLAN, SUMMARY) and the typed
// messages. Pure functions over parsed JSON: no I/O.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/base/schema.h"

namespace yolo::records {

// Record kinds in the seed's detection order (wrapper keys first, todo last).
const std::vector<std::string>& kinds();
bool is_kind(std::string_view kind);
// "review_gate" -> "review-gate" (schemas/ file stems use '-').
std::string schema_for_kind(std::string_view kind);
// "review-gate" -> "review_gate"; nullopt for a schema that is not a workflow record.
std::optional<std::string> kind_for_schema(std::string_view schema);

struct Detected {
  std::string kind;  // a record kind
  json record;       // the record itself (unwrapped when it was wrapped)
  bool wrapped = false;
};

// The record kind of a JSON document, or nullopt. Rules, in order:
//  1. an unwrapped record recognised by at least two of its own distinctive keys (so a
//     metrics record, which has an "evidence" counter group, is not taken for a wrapper);
//  2. the seed's rules: a top-level key evidence, handoff, review_gate, conflict, metrics,
//     skill, startup or recovery (unwrapped when its value is an object);
//  3. todo when metadata.objective is present.
std::optional<Detected> detect(const json& doc);

// doc[kind] when it is an object ({"evidence": {...}} -> {...}), else doc as it is.
json unwrap(std::string_view kind, const json& doc);

// --- quality gates (seeds/004 section 10) -----------------------------------
// PLAN REVIEW DISRUPT IMPLEMENT TEST VALIDATE LEARN, in workflow order.
const std::vector<std::string>& stages();
// Normalises a stage name ("plan" -> "PLAN"); nullopt for an unknown stage.
std::optional<std::string> stage_name(std::string_view stage);
// The record kinds a stage requires (empty for an unknown stage).
std::vector<std::string> gate_requirements(std::string_view stage);

struct GateOutput {
  std::string source;  // where the document came from (file, file#index), for messages
  json doc;
};

struct RecordCheck {
  std::string source;
  std::string kind;                   // empty: not a workflow record (ignored by the gate)
  std::vector<schema::Error> errors;  // against schema_for_kind(kind)
};

struct GateResult {
  std::string stage;
  std::vector<std::string> required;  // kinds the stage requires
  std::vector<std::string> checked;   // kinds found among the outputs (in input order, unique)
  std::vector<std::string> missing;   // required kinds not found
  std::vector<RecordCheck> records;   // one per output
  std::vector<std::string> errors;    // every problem as one line: "source: /ptr: message", "Missing required: kind"
  bool valid() const { return errors.empty(); }
  const char* action() const { return valid() ? "PROCEED" : "REVISE"; }
};

// Validates every output that is a workflow record and checks that each required kind is
// present. Outputs that are not records are listed with an empty kind and do not fail it.
GateResult gate_check(std::string_view stage, const std::vector<GateOutput>& outputs);

// --- schema detection for `yolo validate` ------------------------------------
struct SchemaChoice {
  std::string schema;  // schema name; empty when the kind could not be detected
  std::string kind;    // record kind when the document is a workflow record
  json document;       // what to validate (a record unwrapped)
  std::string prefix;  // JSON pointer of `document` inside the file ("/evidence" when unwrapped)
  std::string reason;  // how it was chosen ("file name", "record kind", ...) or why not
};

// Chooses the schema for a file by name (.execution-state.json, config.json, *-PLAN.md,
// *-SUMMARY.md), then by content (workflow records, typed messages). doc is the parsed
// JSON, or the frontmatter of a Markdown file.
SchemaChoice detect_schema(const std::filesystem::path& file, const json& doc);

// The document to validate against `schema`: a workflow record is unwrapped
// ({"evidence": {...}} validated as evidence), anything else is returned as it is.
struct Prepared {
  json document;
  std::string prefix;  // "/evidence" when unwrapped, else ""
};
Prepared prepare(std::string_view schema, const json& doc);

// Errors for people: drops valijson's "Failed to validate against schema associated with
// property name 'x'" / "Failed to validate item #n" lines when a more specific error under
// that child is also reported, and puts `prefix` in front of every pointer.
std::vector<schema::Error> tidy(std::vector<schema::Error> errors, const std::string& prefix = "");

}  // namespace yolo::records
