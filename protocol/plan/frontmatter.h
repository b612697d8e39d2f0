// YAML frontmatter of a Markdown file: the block between a first line `---` and the next
// `---` line. Parsed with yaml-cpp into JSON. Scalars never lose text: a plain scalar
// becomes a number/bool/null only when that type prints back as the same text
// (`wave: 1` -> 1, `plan: 01` -> "01", `version: 1.10` -> "1.10"); quoted scalars are
// always strings.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json.h"

namespace yolo {

struct FrontmatterError {
  int line = 0;    // 1-based line in the file, 0 when not tied to a line
  int column = 0;  // 1-based column, 0 when unknown
  std::string message;
};

struct Frontmatter {
  bool has_frontmatter = false;
  json data = json::object();
  std::string_view body;    // the Markdown after the closing `---` (view into the source)
  int body_first_line = 1;  // 1-based line number where body starts
  std::optional<FrontmatterError> error;
  bool ok() const { return !error; }
};

// Parses the frontmatter of `source` (already known to be text). Never throws.
Frontmatter parse_frontmatter(std::string_view source);

// Converts a YAML document (text) into JSON with the scalar rules above. Never throws:
// a problem is reported through `error` (lines shifted by line_offset).
json yaml_to_json(std::string_view yaml, std::optional<FrontmatterError>& error, int line_offset = 0);

// The two ways yaml_to_json goes, for tests that compare them: a flat mapping of simple
// `key: value` lines read directly (nullopt for any document outside that subset), and
// yaml-cpp for everything.
std::optional<json> simple_yaml_to_json(std::string_view yaml);
json yaml_cpp_to_json(std::string_view yaml, std::optional<FrontmatterError>& error, int line_offset = 0);

}  // namespace yolo
