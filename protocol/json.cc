#include "protocol/json.h"

namespace yolo {

int json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0, line = 1;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return line;
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
