#include "protocol/base/text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace yolo::text {

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string_view rtrim(std::string_view s) {
  size_t e = s.size();
  while (e > 0 && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(0, e);
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < s.size()) {
        std::string_view l = s.substr(start);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        out.push_back(l);
      }
      break;
    }
    std::string_view l = s.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    start = nl + 1;
  }
  return out;
}

std::vector<std::string> split_csv(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t c = s.find(',', start);
    std::string_view part = s.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start);
    part = trim(part);
    if (!part.empty()) out.emplace_back(part);
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  return out;
}

std::string tail_lines(std::string_view s, size_t n) {
  if (n == 0) return {};
  size_t pos = s.size();
  if (pos > 0 && s[pos - 1] == '\n') --pos;
  size_t count = 0;
  while (pos > 0) {
    size_t nl = s.rfind('\n', pos - 1);
    if (nl == std::string_view::npos) return std::string(s);
    if (++count == n) return std::string(s.substr(nl + 1));
    pos = nl;
  }
  return std::string(s);
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when it is not valid.
size_t utf8_seq_len(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len;
  unsigned cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else
    return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    // Eight ASCII bytes at a time (plans are mostly ASCII: this check was a tenth of reading one).
    if (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if ((w & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    size_t len = utf8_seq_len(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string sanitize_for_terminal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7F))
        out.push_back(static_cast<char>(c));
      else if (c == 0x7F)
        out += "^?";
      else {
        out.push_back('^');
        out.push_back(static_cast<char>(c + 0x40));  // 0x1B -> '[', 0x07 -> 'G', 0x00 -> '@'
      }
      ++i;
      continue;
    }
    size_t len = utf8_seq_len(s, i);
    if (len == 0) {
      out.push_back('?');
      ++i;
    } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      out.push_back('?');  // C1 control U+0080..U+009F
      i += 2;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance, two rows plus the one before for transpositions.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = static_cast<size_t>(-1);
  size_t limit = std::max<size_t>(1, word.size() / 3);
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best_d <= limit) return best;
  for (const auto& c : candidates)
    if (word.size() >= 3 && c.starts_with(word)) return c;
  return "";
}

std::string join_some(const std::vector<std::string>& items, size_t max) {
  std::string s;
  for (size_t k = 0; k < items.size(); ++k) {
    if (k == max) {
      s += ", ... (" + std::to_string(items.size() - max) + " more)";
      break;
    }
    s += (s.empty() ? "" : ", ") + items[k];
  }
  return s;
}

std::string cut(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  return std::string(s.substr(0, n)) + "…";
}

}  // namespace yolo::text
