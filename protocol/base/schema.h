// Validation against the embedded JSON Schemas with valijson.
#pragma once
#include <string>
#include <vector>

#include "protocol/base/json.h"

namespace yolo::schema {

struct Error {
  std::string pointer;  // JSON pointer of the failing value ("" = the document)
  std::string message;
};

// Names of all embedded schemas, sorted.
std::vector<std::string> names();
bool has(const std::string& name);
// The schema document itself (throws std::out_of_range for an unknown name).
const json& document(const std::string& name);
// Validates doc; an unknown schema name is reported as one error. Thread-safe. Each schema
// is compiled on its first use and cached for the process.
std::vector<Error> validate(const std::string& name, const json& doc);
// How many schemas have been compiled so far in this process (for tests and benchmarks).
size_t compiled_count();
// "pointer: message; pointer: message" for error lines.
std::string describe(const std::vector<Error>& errors, size_t max = 5);

}  // namespace yolo::schema
