#include "protocol/base/json.h"

#include <algorithm>
#include <cstring>

namespace yolo {

int json_too_deep_at(std::string_view text, int max_depth) {
  // Strings are skipped with memchr to their closing quote (most of a ledger or a state is
  // strings); the line is counted only when the limit is passed.
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  int depth = 0;
  for (const char* p = begin; p < end; ++p) {
    const char c = *p;
    if (c == '"') {
      const char* from = p + 1;  // the string's first byte
      for (;;) {
        const auto* q = static_cast<const char*>(std::memchr(from, '"', static_cast<size_t>(end - from)));
        if (!q) return 0;  // unterminated: nothing after it nests
        size_t backslashes = 0;
        for (const char* b = q; b > from && b[-1] == '\\'; --b) ++backslashes;
        from = q + 1;
        if (backslashes % 2 == 0) break;  // not escaped: the string ends here
      }
      p = from - 1;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return 1 + static_cast<int>(std::count(begin, p, '\n'));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

JsonParse parse_json_bounded(std::string_view text, int max_depth) {
  JsonParse r;
  r.doc = json(json::value_t::discarded);
  if (int line = json_too_deep_at(text, max_depth)) {
    r.problem = JsonParse::Problem::TooDeep;
    r.line = static_cast<size_t>(line);
    r.message = "JSON nested deeper than " + std::to_string(max_depth) + " levels (line " + std::to_string(line) + ")";
    return r;
  }
  try {
    r.doc = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> drop the tag
    if (auto p = what.find("] "); p != std::string::npos && what.front() == '[') what = what.substr(p + 2);
    r.problem = JsonParse::Problem::Invalid;
    r.byte = e.byte;
    r.line = 1;
    for (size_t i = 0; i < text.size() && i + 1 < e.byte; ++i)
      if (text[i] == '\n') ++r.line;
    r.message = "not valid JSON: " + what;
    r.doc = json(json::value_t::discarded);
  } catch (const json::exception& e) {
    r.problem = JsonParse::Problem::Invalid;
    r.message = std::string("not valid JSON: ") + e.what();
    r.doc = json(json::value_t::discarded);
  }
  return r;
}

}  // namespace yolo
