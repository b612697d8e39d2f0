#include "protocol/base/text_diff.h"

#include <algorithm>
#include <vector>

namespace yolo::text {
namespace {

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> v;
  size_t i = 0;
  while (i < s.size()) {
    size_t nl = s.find('\n', i);
    if (nl == std::string_view::npos) nl = s.size();
    v.push_back(s.substr(i, nl - i));
    i = nl + 1;
  }
  return v;
}

struct Op {
  char kind;  // ' ', '-', '+'
  std::string_view line;
  size_t a, b;  // line numbers (0-based) in before / after at this op
};

// The edit script from a longest common subsequence of lines.
std::vector<Op> edit_script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                            size_t max_lines) {
  std::vector<Op> ops;
  size_t n = a.size(), m = b.size();
  if (n > max_lines || m > max_lines) {
    for (size_t i = 0; i < n; ++i) ops.push_back({'-', a[i], i, 0});
    for (size_t j = 0; j < m; ++j) ops.push_back({'+', b[j], n, j});
    return ops;
  }
  // lcs[i][j]: LCS length of a[i..] and b[j..].
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', a[i], i, j});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {  // removed lines first, as diff -u
      ops.push_back({'-', a[i], i, j});
      ++i;
    } else {
      ops.push_back({'+', b[j], i, j});
      ++j;
    }
  }
  return ops;
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after, std::string_view from_label,
                         std::string_view to_label, int context, size_t max_lines) {
  if (before == after) return {};
  auto a = split_lines(before), b = split_lines(after);
  auto ops = edit_script(a, b, max_lines);
  size_t ctx = static_cast<size_t>(std::max(0, context));
  std::string out = "--- " + std::string(from_label) + "\n+++ " + std::string(to_label) + "\n";
  size_t k = 0;
  while (k < ops.size()) {
    // The next change, and the hunk around it (changes closer than 2*ctx share a hunk).
    while (k < ops.size() && ops[k].kind == ' ') ++k;
    if (k == ops.size()) break;
    size_t start = k >= ctx ? k - ctx : 0;
    size_t end = k;
    while (true) {
      while (end < ops.size() && ops[end].kind != ' ') ++end;
      size_t next = end;
      while (next < ops.size() && ops[next].kind == ' ') ++next;
      if (next < ops.size() && next - end <= 2 * ctx) {
        end = next;
        continue;
      }
      end = std::min(ops.size(), end + ctx);
      break;
    }
    size_t a0 = ops[start].a, b0 = ops[start].b, na = 0, nb = 0;
    for (size_t x = start; x < end; ++x) {
      na += ops[x].kind != '+';
      nb += ops[x].kind != '-';
    }
    out += "@@ -" + std::to_string(na ? a0 + 1 : a0) + "," + std::to_string(na) + " +" +
           std::to_string(nb ? b0 + 1 : b0) + "," + std::to_string(nb) + " @@\n";
    for (size_t x = start; x < end; ++x) {
      out += ops[x].kind;
      out.append(ops[x].line);
      out += '\n';
    }
    k = end;
  }
  return out;
}

}  // namespace yolo::text
