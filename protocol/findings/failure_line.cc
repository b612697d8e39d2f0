#include "protocol/findings/failure_line.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "protocol/base/text.h"

namespace yolo::failure {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Colour codes (ESC [ ... letter) are dropped before a line is judged or shown.
std::string strip_ansi(std::string_view s) {
  std::string r;
  r.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    r += s[i];
  }
  return r;
}

bool reads_as_error(std::string_view line) {
  std::string l = lower(line);
  for (std::string_view p : {"error", "fatal", "panic", "exception", "✗", "[error]"})
    if (starts_with(l, p)) return true;
  // "codex: error: ...", "node:internal ... Error: ...", "2026-01-01T00:00:00Z ERROR codex_exec: ..."
  return l.find("error:") != std::string::npos || line.find(" ERROR ") != std::string_view::npos;
}

std::string cut(std::string_view s) { return text::cut(s, 300); }

std::string pick(std::string_view text) {
  std::vector<std::string> ls;
  for (auto l : text::lines(text)) {
    std::string s(text::trim(strip_ansi(l)));
    if (!s.empty() && text::valid_utf8(s)) ls.push_back(std::move(s));
  }
  if (ls.empty()) return {};
  for (auto it = ls.rbegin(); it != ls.rend(); ++it)
    if (reads_as_error(*it) && !is_usage_tail(*it)) return cut(*it);
  // No error line: the last line before the usage tail (a "Usage:" line starts it: the option
  // lines after it belong to it too).
  size_t end = ls.size();
  for (size_t k = 0; k < ls.size(); ++k)
    if (starts_with(lower(ls[k]), "usage:")) {
      end = k;
      break;
    }
  for (size_t k = end; k-- > 0;)
    if (!is_usage_tail(ls[k])) return cut(ls[k]);
  return cut(ls.back());
}

}  // namespace

bool is_usage_tail(std::string_view line) {
  std::string l = lower(text::trim(line));
  for (std::string_view p :
       {"usage:", "for more information", "tip:", "try '", "try \"", "try `", "run '", "run `", "see '", "see `"})
    if (starts_with(l, p)) return true;
  return l.find("--help") != std::string::npos && l.size() < 120 && l.find("error") == std::string::npos;
}

std::string explaining_line(std::string_view err, std::string_view out) {
  std::string e = pick(err);
  return e.empty() ? pick(out) : e;
}

}  // namespace yolo::failure
