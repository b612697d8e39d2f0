#include "protocol/plan/frontmatter.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <string_view>

#include "protocol/base/text.h"

namespace yolo {
namespace {

constexpr int kMaxDepth = 64;
// Aliases share nodes in yaml-cpp but expand in JSON: cap the expansion (billion laughs).
// Real frontmatter holds tens of values (the largest in the shared corpus: 26), so 20000
// leaves a wide margin while keeping a refused bomb cheap (it was slow under ASan at 200000).
constexpr size_t kMaxNodes = 20000;

bool is_canonical_int(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = (s[0] == '-') ? 1 : 0;
  if (i >= s.size()) return false;
  if (s[i] == '0' && s.size() > i + 1) return false;  // leading zero keeps its text
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// -?(0|[1-9][0-9]*)\.[0-9]*[1-9]: a sign, an integer part without a leading zero, a point and
// digits that do not end in 0. Checked by hand: compiling a std::regex at the first float is a
// visible share of a one-plan Stage 1 process.
bool decimal_shape(std::string_view s) {
  size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i >= s.size() || s[i] != '.') return false;
  ++i;
  if (i >= s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!digit(k)) return false;
  return s.back() != '0';
}

// A float whose shortest printing is the same text (so "1.5" converts, "1.10" does not).
std::optional<double> canonical_float(const std::string& s) {
  if (s.size() > 24 || !decimal_shape(s)) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  if (json(v).dump() != s) return std::nullopt;
  return v;
}

// A plain scalar's text as JSON (quoted or tagged scalars are text as written).
json plain_to_json(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (is_canonical_int(s)) return std::stoll(s);
  if (auto f = canonical_float(s)) return *f;
  return s;
}

json scalar_to_json(const YAML::Node& n) {
  if (n.Tag() != "?") return n.Scalar();  // quoted or explicitly tagged: text as written
  return plain_to_json(n.Scalar());
}

json node_to_json(const YAML::Node& n, int depth, size_t& budget) {
  if (budget == 0)
    throw std::runtime_error("document expands to more than " + std::to_string(kMaxNodes) + " values (alias bomb?)");
  --budget;
  if (depth > kMaxDepth) throw std::runtime_error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : n) arr.push_back(node_to_json(item, depth + 1, budget));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : n) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
        // `wave: 1` then `wave: 3`: YAML forbids it, and "the last one wins" would hide
        // which value the author meant.
        if (obj.contains(key)) throw YAML::ParserException(kv.first.Mark(), "duplicate key '" + key + "'");
        obj[key] = node_to_json(kv.second, depth + 1, budget);
      }
      return obj;
    }
  }
  return nullptr;
}

// yaml-cpp recurses per nesting level while parsing; refuse absurd nesting before it does.
// Brackets inside quoted scalars (`title: "[[[..."`) and comments do not count; any other
// does (a plain scalar's too: never less than yaml-cpp's real nesting).
bool nesting_too_deep(std::string_view yaml) {
  int depth = 0;
  char quote = 0;    // inside a quoted scalar: ' or "
  char prev = '\n';  // the last significant character (line start counts as '\n')
  auto starts_value = [&] {
    return prev == '\n' || prev == ':' || prev == '-' || prev == '[' || prev == '{' || prev == ',' || prev == '?';
  };
  for (size_t i = 0; i < yaml.size(); ++i) {
    char c = yaml[i];
    if (quote) {
      // A quote is taken to end with its line: a plain scalar's continuation line may start
      // with a quote character, and the guard must never skip brackets yaml-cpp nests.
      if (c == '\n') {
        quote = 0;
        prev = '\n';
        continue;
      }
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        if (quote == '\'' && i + 1 < yaml.size() && yaml[i + 1] == '\'')
          ++i;  // '' inside '...'
        else {
          quote = 0;
          prev = 'q';
        }
      }
      continue;
    }
    if (c == '\n') {
      if (depth == 0) prev = '\n';
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '#' && (i == 0 || yaml[i - 1] == ' ' || yaml[i - 1] == '\t' || yaml[i - 1] == '\n')) {
      while (i + 1 < yaml.size() && yaml[i + 1] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') && starts_value()) {
      quote = c;
      continue;
    }
    if (c == '[' || c == '{') {  // counted even in plain text: erring on the safe side
      if (++depth > kMaxDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    // `-` and `:` start a value only before a space (`a-[b`, `http://x[` are plain text).
    bool indicator_like = (c == '-' || c == ':') && depth == 0;
    prev = indicator_like && i + 1 < yaml.size() && yaml[i + 1] != ' ' && yaml[i + 1] != '\t' && yaml[i + 1] != '\n' &&
                   yaml[i + 1] != '\r'
               ? 'x'
               : c;
  }
  return false;
}

// ---- the simple frontmatter, without yaml-cpp -------------------------------------------
// Nearly every PLAN and SUMMARY frontmatter is a flat mapping of `key: value` lines: a plain
// word or phrase, a quoted string without escapes, a flow list of those, or a block list of
// them under `key:`. yaml-cpp's parse of one was a large share of `yolo execute`'s own time
// per plan; this reads that subset directly and gives up (nullopt) on anything else,
// which yaml-cpp then parses as before. Within the subset the result is yaml-cpp's (the same
// scalar rules, plain_to_json); tests/protocol/frontmatter_test.cc compares the two.

bool plain_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '/';
}
bool plain_inner(char c) { return plain_start(c) || c == ' ' || c == '-' || c == '+' || c == '.'; }
bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// One scalar of the subset at the start of v (a plain one in a flow list ends at ',' or ']',
// else at the end): its JSON and how many characters it took; nullopt outside the subset.
std::optional<json> simple_scalar(std::string_view v, size_t& used, bool in_flow) {
  if (v.empty()) return std::nullopt;
  if (v[0] == '"' || v[0] == '\'') {
    const char q = v[0];
    size_t end = 1;
    for (; end < v.size() && v[end] != q; ++end) {
      unsigned char c = static_cast<unsigned char>(v[end]);
      if (c < 0x20 || c >= 0x7f || c == '\\') return std::nullopt;  // escapes, controls, non-ASCII
    }
    if (end >= v.size()) return std::nullopt;
    used = end + 1;
    return json(std::string(v.substr(1, end - 1)));
  }
  if (!plain_start(v[0])) return std::nullopt;
  size_t end = 0;
  while (end < v.size() && plain_inner(v[end])) ++end;
  if (end < v.size() && !(in_flow && (v[end] == ',' || v[end] == ']'))) return std::nullopt;
  used = end;
  std::string_view text = v.substr(0, end);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return plain_to_json(std::string(text));
}

// A whole value of the subset (the rest of a line after `key: ` or `- `).
std::optional<json> simple_value(std::string_view v) {
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty()) return std::nullopt;
  size_t used = 0;
  if (v[0] == '[') {
    json arr = json::array();
    size_t i = 1;
    while (i < v.size() && v[i] == ' ') ++i;
    if (i < v.size() && v[i] == ']') {
      if (i + 1 != v.size()) return std::nullopt;
      return arr;
    }
    for (;;) {
      auto item = simple_scalar(v.substr(i), used, true);
      if (!item) return std::nullopt;
      arr.push_back(std::move(*item));
      i += used;
      while (i < v.size() && v[i] == ' ') ++i;
      if (i >= v.size()) return std::nullopt;
      if (v[i] == ']') return i + 1 == v.size() ? std::optional<json>(std::move(arr)) : std::nullopt;
      if (v[i] != ',') return std::nullopt;
      ++i;
      while (i < v.size() && v[i] == ' ') ++i;
    }
  }
  auto s = simple_scalar(v, used, false);
  if (!s) return std::nullopt;
  if (used != v.size()) return std::nullopt;
  return s;
}

}  // namespace

std::optional<json> simple_yaml_to_json(std::string_view yaml) {
  json obj = json::object();
  size_t pos = 0;
  std::string key;         // the last key (its block list is read while open_list)
  size_t item_indent = 0;  // the block list's indentation
  bool open_list = false;  // `key:` seen: a block list may follow (else its value stays null)
  size_t nodes = 1;        // values made, as node_to_json counts them (its budget: kMaxNodes)
  if (yaml.size() > 64 * 1024) return std::nullopt;
  while (pos < yaml.size()) {
    size_t nl = yaml.find('\n', pos);
    std::string_view line = yaml.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? yaml.size() : nl + 1;
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return std::nullopt;
    if (line.empty()) continue;
    if (line[0] == ' ') {  // an item of the open key's block list
      if (!open_list) return std::nullopt;
      size_t ind = 0;
      while (ind < line.size() && line[ind] == ' ') ++ind;
      if (ind == line.size() || line.compare(ind, 2, "- ") != 0) return std::nullopt;
      json& list = obj[key];
      if (list.is_null()) {
        list = json::array();
        item_indent = ind;
      } else if (ind != item_indent) {
        return std::nullopt;
      }
      auto v = simple_value(line.substr(ind + 2));
      if (!v || v->is_array() || ++nodes >= kMaxNodes) return std::nullopt;
      list.push_back(std::move(*v));
      continue;
    }
    open_list = false;
    size_t k = 0;
    while (k < line.size() && key_char(line[k])) ++k;
    if (k == 0 || k > 128 || k >= line.size() || line[k] != ':' || ++nodes >= kMaxNodes) return std::nullopt;
    key = std::string(line.substr(0, k));
    if (key[0] == '-' || obj.contains(key)) return std::nullopt;  // a duplicate key is yaml_to_json's error to report
    std::string_view rest = line.substr(k + 1);
    size_t sp = 0;
    while (sp < rest.size() && rest[sp] == ' ') ++sp;
    if (sp == rest.size()) {  // `key:`: a block list may follow
      obj[key] = nullptr;
      open_list = true;
      continue;
    }
    if (sp == 0) return std::nullopt;
    auto v = simple_value(rest.substr(sp));
    if (!v) return std::nullopt;
    nodes += v->is_array() ? v->size() : 0;
    if (nodes >= kMaxNodes) return std::nullopt;
    obj[key] = std::move(*v);
  }
  if (obj.empty()) return std::nullopt;
  return obj;
}

json yaml_cpp_to_json(std::string_view yaml, std::optional<FrontmatterError>& error, int line_offset) {
  error.reset();
  if (nesting_too_deep(yaml)) {
    error = FrontmatterError{line_offset + 1, 0, "YAML nesting deeper than " + std::to_string(kMaxDepth) + " levels"};
    return json::object();
  }
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    size_t budget = kMaxNodes;
    return node_to_json(root, 0, budget);
  } catch (const YAML::Exception& e) {
    FrontmatterError err;
    err.line = e.mark.is_null() ? 0 : e.mark.line + 1 + line_offset;
    err.column = e.mark.is_null() ? 0 : e.mark.column + 1;
    err.message = "YAML error: " + e.msg;
    error = err;
  } catch (const std::exception& e) {
    error = FrontmatterError{line_offset + 1, 0, std::string("YAML error: ") + e.what()};
  }
  return json::object();
}

json yaml_to_json(std::string_view yaml, std::optional<FrontmatterError>& error, int line_offset) {
  error.reset();
  if (auto simple = simple_yaml_to_json(yaml)) return std::move(*simple);
  return yaml_cpp_to_json(yaml, error, line_offset);
}

Frontmatter parse_frontmatter(std::string_view src) {
  Frontmatter fm;
  if (src.size() >= 3 && static_cast<unsigned char>(src[0]) == 0xEF && static_cast<unsigned char>(src[1]) == 0xBB &&
      static_cast<unsigned char>(src[2]) == 0xBF)
    src.remove_prefix(3);  // UTF-8 BOM
  fm.body = src;
  // First line must be exactly `---` (trailing spaces / CR allowed).
  size_t first_nl = src.find('\n');
  std::string_view first = text::rtrim(src.substr(0, first_nl));
  if (first != "---") return fm;
  fm.has_frontmatter = true;
  if (first_nl == std::string_view::npos) {
    fm.error = FrontmatterError{1, 1, "unterminated frontmatter: no closing '---' line after line 1"};
    return fm;
  }
  size_t pos = first_nl + 1;
  int line = 2;
  size_t yaml_begin = pos;
  while (pos <= src.size()) {
    size_t nl = src.find('\n', pos);
    std::string_view l = src.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    std::string_view lt = text::rtrim(l);
    if (lt == "---" || lt == "...") {
      std::string_view yaml = src.substr(yaml_begin, pos - yaml_begin);
      size_t body_start = nl == std::string_view::npos ? src.size() : nl + 1;
      fm.body = src.substr(body_start);
      fm.body_first_line = line + 1;
      if (text::trim(yaml).empty()) return fm;  // empty block: has_frontmatter, {}
      std::optional<FrontmatterError> err;
      json data = yaml_to_json(yaml, err, /*line_offset=*/1);
      if (err) {
        fm.error = err;
        return fm;
      }
      if (data.is_null()) return fm;  // only comments
      if (!data.is_object()) {
        fm.error = FrontmatterError{2, 1,
                                    std::string("frontmatter is a YAML ") + (data.is_array() ? "list" : "scalar") +
                                        ", expected a mapping of keys"};
        return fm;
      }
      fm.data = std::move(data);
      return fm;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  fm.error = FrontmatterError{1, 1, "unterminated frontmatter: opened by '---' on line 1, never closed"};
  return fm;
}

}  // namespace yolo
