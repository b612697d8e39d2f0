// One JSON type for the whole project, and the one way to parse JSON read from disk or input.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace yolo {
using json = nlohmann::json;

// Nesting limit for JSON read from files, children and clients. nlohmann's parser itself is
// iterative, but copying, printing, comparing or schema-validating a document nested
// hundreds of thousands deep recurses that deep and overflows the stack.
inline constexpr int kMaxJsonDepth = 64;

// The 1-based line where text first nests (arrays and objects) deeper than max_depth, or 0
// when it never does. Brackets inside strings (escapes included) do not count. Linear,
// allocation free; text need not be valid JSON.
int json_too_deep_at(std::string_view text, int max_depth = kMaxJsonDepth);

struct JsonParse {
  enum class Problem { None, TooDeep, Invalid };
  json doc;  // value_t::discarded unless ok()
  Problem problem = Problem::None;
  size_t line = 0;      // TooDeep: where the limit is passed; Invalid: where parsing failed
  size_t byte = 0;      // Invalid: nlohmann's byte position of the error
  std::string message;  // "JSON nested deeper than 64 levels (line 3)" or
                        // "not valid JSON: parse error at line 1, column 2: ..."
  bool ok() const { return problem == Problem::None; }
};

// Parses text as one JSON document after checking that it nests at most max_depth deep;
// never throws for bad input. message does not name a file: callers prefix their path.
JsonParse parse_json_bounded(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace yolo
