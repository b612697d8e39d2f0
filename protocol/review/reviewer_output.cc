#include "protocol/review/reviewer_output.h"

#include <cctype>

#include "protocol/base/numbers.h"
#include "protocol/base/sha256.h"
#include "protocol/base/text.h"

namespace yolo::review {

namespace {

bool is_decor(char c) { return c == '*' || c == '_' || c == '`'; }

std::string_view strip_decor(std::string_view s) {
  s = text::trim(s);
  while (!s.empty() && is_decor(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_decor(s.back())) s.remove_suffix(1);
  return text::trim(s);
}

// Removes what may stand before a header: blockquote '>', heading '#', emphasis.
std::string_view header_text(std::string_view s) {
  s = text::trim(s);
  while (!s.empty() &&
         (s.front() == '>' || s.front() == '#' || is_decor(s.front()) || s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

// When s starts with KEY (exact upper case), optional emphasis, then ':', returns the
// text after the colon.
std::optional<std::string_view> after_key(std::string_view s, std::string_view key) {
  if (s.substr(0, key.size()) != key) return std::nullopt;
  s.remove_prefix(key.size());
  while (!s.empty() && is_decor(s.front())) s.remove_prefix(1);
  if (s.empty() || s.front() != ':') return std::nullopt;
  s.remove_prefix(1);
  return s;
}

std::optional<int> leading_int(std::string_view s) {
  auto v = text::leading_number(strip_decor(s));
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

// Finds "KEY:" (upper case, at a word start) anywhere in s and reads the integer after it.
std::optional<int> count_after(std::string_view s, std::string_view key) {
  size_t pos = 0;
  while ((pos = s.find(key, pos)) != std::string_view::npos) {
    bool word_start = pos == 0 || !std::isalnum(static_cast<unsigned char>(s[pos - 1]));
    if (word_start)
      if (auto rest = after_key(s.substr(pos), key)) return leading_int(*rest);
    pos += key.size();
  }
  return std::nullopt;
}

// "- x", "* x", "+ x", "1. x", "1) x" -> "x"; nullopt when s is not a list item.
std::optional<std::string_view> list_item(std::string_view s) {
  s = text::trim(s);
  if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t'))
    return text::trim(s.substr(2));
  size_t i = 0;
  while (i < s.size() && i < 4 && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i > 0 && i + 1 < s.size() && (s[i] == '.' || s[i] == ')') && (s[i + 1] == ' ' || s[i + 1] == '\t'))
    return text::trim(s.substr(i + 2));
  return std::nullopt;
}

bool is_fence(std::string_view s) {
  s = text::trim(s);
  return s.substr(0, 3) == "```" || s.substr(0, 3) == "~~~";
}

size_t find_ci(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (needle.empty() || hay.size() < needle.size()) return std::string_view::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    bool eq = true;
    for (size_t k = 0; k < needle.size() && eq; ++k)
      eq = std::tolower(static_cast<unsigned char>(hay[i + k])) == std::tolower(static_cast<unsigned char>(needle[k]));
    if (eq) return i;
  }
  return std::string_view::npos;
}

std::string first_sentence(std::string_view s, size_t max = 120) {
  size_t end = s.size();
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if ((s[i] == '.' || s[i] == '!' || s[i] == '?') && (s[i + 1] == ' ' || s[i + 1] == '\t')) {
      end = i + 1;
      break;
    }
  std::string t(text::trim(s.substr(0, end)));
  return text::cut(t, max);
}

bool is_none_item(std::string_view s) {
  std::string l = text::to_lower(strip_decor(s));
  while (!l.empty() && (l.back() == '.' || l.back() == ' ')) l.pop_back();
  return l == "none" || l == "no findings" || l == "n/a" || l == "[]";
}

}  // namespace

json ReviewerFinding::to_json() const {
  json j = {{"id", id},
            {"severity", yolo::to_string(severity)},
            {"file", file},
            {"title", title},
            {"description", description},
            {"suggestion", suggestion}};
  if (!status.empty()) j["status"] = status;
  return j;
}

std::optional<ReviewerFinding> ReviewerFinding::from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto str = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto sev = parse_severity(str("severity"));
  if (!sev) return std::nullopt;
  ReviewerFinding f;
  f.id = str("id");
  f.severity = *sev;
  f.file = str("file");
  f.title = str("title");
  f.description = str("description");
  f.suggestion = str("suggestion");
  f.status = str("status");
  if (f.id.empty()) f.id = synthetic_finding_id("f", f.description);
  return f;
}

std::string synthetic_finding_id(std::string_view prefix, std::string_view t) {
  return std::string(prefix) + "-" + sha256_hex(t).substr(0, 8);
}

ReviewerFinding from_stage1(const Finding& f) {
  ReviewerFinding r;
  r.id = synthetic_finding_id("s1-" + f.check, f.issue);
  r.severity = f.severity;
  if (auto it = f.extra.find("path"); it != f.extra.end() && it->is_string()) r.file = it->get<std::string>();
  r.title = first_sentence(f.issue);
  r.description = f.issue;
  r.suggestion = f.suggested_fix;
  return r;
}

Result<ReviewerFinding> parse_finding_line(std::string_view line) {
  std::string_view s = text::trim(line);
  if (auto item = list_item(s)) s = *item;
  ReviewerFinding f;
  bool have_severity = false;
  std::string bad_severity;
  // Leading [key:value] tags.
  while (true) {
    s = text::trim(s);
    if (s.empty() || s.front() != '[') break;
    size_t close = s.find(']');
    if (close == std::string_view::npos) break;
    std::string_view tag = s.substr(1, close - 1);
    size_t colon = tag.find(':');
    if (colon == std::string_view::npos) {
      // A bare "[high]" is read as a severity; anything else ends the tags.
      if (auto sev = parse_severity(tag)) {
        f.severity = *sev;
        have_severity = true;
        s.remove_prefix(close + 1);
        continue;
      }
      break;
    }
    std::string key = text::to_lower(text::trim(tag.substr(0, colon)));
    std::string value(strip_decor(tag.substr(colon + 1)));
    if (key == "id")
      f.id = value;
    else if (key == "severity" || key == "sev") {
      if (auto sev = parse_severity(value)) {
        f.severity = *sev;
        have_severity = true;
      } else {
        bad_severity = value;
      }
    } else if (key == "file" || key == "path")
      f.file = value;
    else if (key == "status")
      f.status = text::to_lower(value);
    s.remove_prefix(close + 1);
  }
  s = text::trim(s);
  if (auto p = find_ci(s, "issue:"); p != std::string_view::npos && text::trim(s.substr(0, p)).empty())
    s.remove_prefix(p + 6);
  std::string_view desc = s, sugg;
  for (size_t bar = s.find('|'); bar != std::string_view::npos; bar = s.find('|', bar + 1)) {
    std::string_view after = text::trim(s.substr(bar + 1));
    if (find_ci(after, "suggestion:") == 0 || find_ci(after, "fix:") == 0) {
      desc = s.substr(0, bar);
      sugg = after.substr(after.find(':') + 1);
      break;
    }
  }
  f.description = std::string(text::trim(desc));
  f.suggestion = std::string(text::trim(sugg));
  if (!have_severity) {
    return Status::fail(bad_severity.empty() ? "no [severity:high|medium|low] tag"
                                             : "unknown severity '" + bad_severity + "'");
  }
  if (f.description.empty()) {
    return Status::fail("no issue text");
  }
  if (f.id.empty()) f.id = synthetic_finding_id("f", f.description);
  f.title = first_sentence(f.description);
  return f;
}

std::string ReviewerOutput::why_no_verdict() const {
  if (verdict) return {};
  if (!rejected_verdicts.empty())
    return "no well-formed VERDICT line (expected approve, reject or conditional; got " + rejected_verdicts.front() +
           ")";
  return "no VERDICT: line in the reviewer's output";
}

ReviewerOutput parse_reviewer_output(std::string_view input) {
  ReviewerOutput r;
  auto ls = text::lines(input);
  bool in_block = false;
  std::string pending;  // a finding item being collected (with continuation lines)
  int pending_line = 0;

  auto flush = [&] {
    if (pending_line == 0) return;
    if (auto f = parse_finding_line(pending); f.ok())
      r.findings.push_back(std::move(*f));
    else
      r.unparsed.push_back(UnparsedLine{pending_line, pending, f.error});
    pending.clear();
    pending_line = 0;
  };

  // Verdict lines: outside fenced blocks, and inside them (the reviewer's own answer may be
  // fenced; a fence may also be a plan it echoes). Quoted lines ('>') never give a verdict.
  struct Candidate {
    Verdict verdict;
    int line;
    std::string word;
  };
  std::vector<Candidate> outside, fenced;
  bool in_fence = false;

  for (size_t i = 0; i < ls.size(); ++i) {
    int lineno = static_cast<int>(i) + 1;
    std::string_view raw = ls[i];
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view s = text::trim(raw);
    if (is_fence(s)) {
      in_fence = !in_fence;
      continue;
    }
    if (s.empty()) continue;

    std::string_view h = header_text(s);
    if (auto v = after_key(h, "VERDICT")) {
      flush();
      in_block = false;
      if (s.front() == '>') continue;  // a quote (of the plan, say) is not the reviewer's verdict
      std::string word = text::to_lower(strip_decor(*v));
      if (auto verdict = parse_verdict(word)) {
        (in_fence ? fenced : outside).push_back(Candidate{*verdict, lineno, word});
      } else {
        std::string shown(text::trim(*v).substr(0, 60));
        r.rejected_verdicts.push_back("line " + std::to_string(lineno) + ": '" + shown + "'");
      }
      continue;
    }
    if (auto v = after_key(h, "FINDINGS")) {
      flush();
      in_block = true;
      r.findings_block = true;
      // "FINDINGS: none" or a first finding on the same line.
      std::string_view rest = text::trim(*v);
      if (!rest.empty() && !is_none_item(rest)) {
        pending = std::string(rest);
        pending_line = lineno;
      }
      continue;
    }
    bool counts = false;
    for (std::string_view key : {"CYCLE", "RESOLVED", "PERSISTENT", "NEW"})
      if (after_key(h, key)) counts = true;
    if (counts) {
      flush();
      in_block = false;
      if (auto c = after_key(h, "CYCLE")) {
        std::string_view cv = strip_decor(*c);
        r.cycle = leading_int(cv);
        if (auto slash = cv.find('/'); slash != std::string_view::npos) r.cycle_max = leading_int(cv.substr(slash + 1));
      }
      if (auto n = count_after(h, "RESOLVED")) r.resolved = n;
      if (auto n = count_after(h, "PERSISTENT")) r.persistent = n;
      if (auto n = count_after(h, "NEW")) r.new_count = n;
      continue;
    }

    auto item = list_item(s);
    auto tagged = [](std::string_view t) { return find_ci(t, "[id:") == 0 || find_ci(t, "[severity:") == 0; };
    bool looks_like_finding = false;
    if (item) {
      looks_like_finding = tagged(*item);
    } else if (tagged(s)) {
      looks_like_finding = true;
      item = s;
    }
    if (in_block) {
      if (item) {
        flush();
        if (is_none_item(*item)) continue;
        pending = std::string(*item);
        pending_line = lineno;
        continue;
      }
      bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
      if (indented && pending_line != 0) {
        pending += " ";
        pending += s;
        continue;
      }
      // Prose after the block ends it.
      flush();
      in_block = false;
      continue;
    }
    if (looks_like_finding) {
      // A finding written outside a FINDINGS block still counts.
      flush();
      pending = std::string(*item);
      pending_line = lineno;
      flush();
    }
  }
  flush();
  // Verdicts outside fences are the reviewer's; fenced ones count only when there are none
  // outside. Two different verdicts fail closed: reject, with a finding that says why.
  const std::vector<Candidate>& use = outside.empty() ? fenced : outside;
  if (!use.empty()) {
    r.verdict = use.front().verdict;
    r.verdict_line = use.front().line;
    std::string seen;
    bool conflict = false;
    for (const auto& c : use) {
      if (c.verdict != use.front().verdict) conflict = true;
      seen += (seen.empty() ? "" : ", ") + std::string("line ") + std::to_string(c.line) + ": " + c.word;
    }
    if (conflict) {
      r.verdict = Verdict::Reject;
      r.conflict = "the reviewer's output holds conflicting verdicts (" + seen + ")";
      ReviewerFinding f;
      f.severity = Severity::High;
      f.description = r.conflict + ": failed closed (reject); the reviewer must give one verdict";
      f.id = synthetic_finding_id("f-conflict", f.description);
      f.title = "Conflicting verdicts in the reviewer's output";
      r.findings.push_back(std::move(f));
    }
  }
  return r;
}

}  // namespace yolo::review
