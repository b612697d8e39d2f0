#include "protocol/summary.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "protocol/contain.h"
#include "protocol/fs.h"
#include "protocol/make_finding.h"
#include "protocol/must_haves.h"
#include "protocol/numbers.h"
#include "protocol/text.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

constexpr size_t kMaxCommitsChecked = 200;
constexpr size_t kMaxSearchBytes = 8u << 20;  // artifacts / key_links files searched


std::string quoted(const json& v) {
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  return v.dump();
}

// ---------------------------------------------------------------- parsing

// "## Title" -> 2; "# T" -> 1; "### T" -> 3; 0 when not an ATX heading.
int heading_level(std::string_view t) {
  size_t h = 0;
  while (h < t.size() && t[h] == '#') ++h;
  if (h == 0 || h > 6) return 0;
  if (h < t.size() && t[h] != ' ' && t[h] != '\t') return 0;
  return static_cast<int>(h);
}

std::string heading_text(std::string_view t, int level) {
  std::string_view s = text::trim(t.substr(static_cast<size_t>(level)));
  while (!s.empty() && s.back() == '#') s.remove_suffix(1);  // closing hashes
  return std::string(text::trim(s));
}

bool title_matches(std::string_view title, std::string_view name) {
  std::string t = text::to_lower(text::trim(title));
  std::string n = text::to_lower(name);
  // Tolerate decoration: "**Deviations**", "Files Modified (5)", "Deviations from Plan".
  t.erase(std::remove(t.begin(), t.end(), '*'), t.end());
  if (!t.starts_with(n)) return false;
  if (t.size() == n.size()) return true;
  char c = t[n.size()];
  return !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
}

bool looks_like_path(std::string_view t) {
  if (t.empty() || t.find_first_of(" \t") != std::string_view::npos) return false;
  if (t.starts_with("http://") || t.starts_with("https://")) return false;
  return t.find('/') != std::string_view::npos || t.find('.') != std::string_view::npos;
}

// "a.rs:12" / "a.rs:12-30" / "a.rs:" -> "a.rs"
std::string_view strip_line_suffix(std::string_view p) {
  size_t colon = p.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return p;
  std::string_view tail = p.substr(colon + 1);
  if (std::all_of(tail.begin(), tail.end(), [](char c) { return (c >= '0' && c <= '9') || c == '-'; }))
    return p.substr(0, colon);
  return p;
}

// Words of a label or heading that mark its entries as gone.
bool is_deletion_word(std::string_view w) {
  std::string l = text::to_lower(w);
  return l == "deleted" || l == "delete" || l == "removed" || l == "remove";
}

// The action text says the file was deleted: it starts with "deleted"/"delete" (after
// punctuation such as "(", "—", "--", ":"), contains "(deleted", or is just "removed".
bool action_says_deleted(std::string_view action) {
  std::string a = text::to_lower(action);
  if (a.find("(deleted") != std::string::npos || a.find("(removed)") != std::string::npos) return true;
  size_t i = 0;
  auto is_punct = [](unsigned char c) {
    return c == '(' || c == ')' || c == '-' || c == ':' || c == ',' || c == ';' || c == ' ' || c == '\t' || c == '[' ||
           c == '*' || c == '_' || c >= 0x80;  // em/en dashes are multi-byte
  };
  while (i < a.size() && is_punct(static_cast<unsigned char>(a[i]))) ++i;
  size_t j = i;
  while (j < a.size() && a[j] >= 'a' && a[j] <= 'z') ++j;
  std::string_view first(a.data() + i, j - i);
  if (first == "deleted" || first == "delete") return true;
  if (first == "removed" || first == "remove") {
    // "removed" alone (or "removed file") means the file is gone; "removed unused import"
    // describes an edit.
    std::string_view rest = text::trim(std::string_view(a).substr(j));
    while (!rest.empty() && is_punct(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    return rest.empty() || rest == "file" || rest.starts_with("file)") || rest.starts_with(")");
  }
  return false;
}

// One list item (or table row) of Files Modified -> an entry, or nullopt when the item
// names no path.
std::optional<SummaryFileEntry> parse_file_item(std::string_view item, bool under_deleted, int line) {
  std::string_view s = text::trim(item);
  if (s.starts_with("[ ] ") || s.starts_with("[x] ") || s.starts_with("[X] ")) s = text::trim(s.substr(4));
  bool deleted = under_deleted;
  // A bold label: "**Deleted:** `a.rs`" or "**Created**: a.rs"; or a bold path "**a.rs**".
  if (s.starts_with("**")) {
    size_t close = s.find("**", 2);
    if (close != std::string_view::npos) {
      std::string_view inner = text::trim(s.substr(2, close - 2));
      std::string_view after = s.substr(close + 2);
      bool label = inner.ends_with(":") || after.starts_with(":");
      if (label) {
        std::string_view word = text::trim(inner.substr(0, inner.ends_with(":") ? inner.size() - 1 : inner.size()));
        if (is_deletion_word(word)) deleted = true;
        if (after.starts_with(":")) after.remove_prefix(1);
        s = text::trim(after);
      } else {
        std::string_view inner_p = inner;
        if (inner_p.size() >= 2 && inner_p.front() == '`' && inner_p.back() == '`')
          inner_p = inner_p.substr(1, inner_p.size() - 2);
        if (looks_like_path(inner_p)) {
          SummaryFileEntry e{std::string(strip_line_suffix(inner_p)), std::string(text::trim(after)), false, line};
          e.deleted = deleted || action_says_deleted(e.action);
          return e;
        }
      }
    }
  }
  // "Deleted: a.rs" without bold.
  if (size_t colon = s.find(':'); colon != std::string_view::npos && colon < 12) {
    std::string_view word = text::trim(s.substr(0, colon));
    if (is_deletion_word(word)) {
      deleted = true;
      s = text::trim(s.substr(colon + 1));
    }
  }
  std::string_view path, action;
  if (s.starts_with("`")) {
    size_t close = s.find('`', 1);
    if (close == std::string_view::npos) return std::nullopt;
    path = text::trim(s.substr(1, close - 1));
    action = s.substr(close + 1);
  } else {
    size_t end = s.find_first_of(" \t");
    path = s.substr(0, end);
    action = end == std::string_view::npos ? std::string_view{} : s.substr(end);
    while (!path.empty() && (path.back() == ',' || path.back() == ';' || path.back() == ':')) path.remove_suffix(1);
  }
  path = strip_line_suffix(path);
  if (!looks_like_path(path)) return std::nullopt;
  SummaryFileEntry e{std::string(path), std::string(text::trim(action)), false, line};
  e.deleted = deleted || action_says_deleted(e.action);
  return e;
}

// `| `a.rs` | modified |` -> the first cell as the item, the others as its action.
std::optional<std::string> table_row_item(std::string_view t) {
  if (!t.starts_with("|")) return std::nullopt;
  std::vector<std::string_view> cells;
  size_t pos = 1;
  while (pos < t.size()) {
    size_t bar = t.find('|', pos);
    cells.push_back(text::trim(t.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos)));
    if (bar == std::string_view::npos) break;
    pos = bar + 1;
  }
  while (!cells.empty() && cells.back().empty()) cells.pop_back();
  if (cells.empty()) return std::nullopt;
  if (std::all_of(cells[0].begin(), cells[0].end(), [](char c) { return c == '-' || c == ':' || c == ' '; }))
    return std::nullopt;  // separator row
  std::string item(cells[0]);
  for (size_t i = 1; i < cells.size(); ++i) item += " (" + std::string(cells[i]) + ")";
  return item;
}

void scan_files_modified(const SummarySection& sec, Summary& s) {
  auto ls = text::lines(sec.text);
  bool in_fence = false;
  bool under_deleted = false;
  for (size_t i = 0; i < ls.size(); ++i) {
    int line = sec.line + 1 + static_cast<int>(i);
    std::string_view t = text::trim(ls[i]);
    if (t.starts_with("```") || t.starts_with("~~~")) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || t.empty()) continue;
    if (int lvl = heading_level(t); lvl >= 3) {
      std::string h = text::to_lower(heading_text(t, lvl));
      under_deleted = h.find("delet") != std::string::npos || h.find("removed") != std::string::npos;
      continue;
    }
    // A bold sub-heading line on its own: "**Deleted:**"
    if (t.starts_with("**") && (t.ends_with(":**") || t.ends_with("**:") || t.ends_with("**"))) {
      std::string h = text::to_lower(t);
      if (h.find('`') == std::string::npos && h.find('/') == std::string::npos) {
        under_deleted = h.find("delet") != std::string::npos || h.find("removed") != std::string::npos;
        continue;
      }
    }
    std::optional<std::string> item;
    if (t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ")) {
      item = std::string(t.substr(2));
    } else if (!t.empty() && t[0] >= '0' && t[0] <= '9') {
      size_t d = t.find_first_not_of("0123456789");
      if (d != std::string_view::npos && d + 1 < t.size() && (t[d] == '.' || t[d] == ')') && t[d + 1] == ' ')
        item = std::string(t.substr(d + 2));
    } else {
      item = table_row_item(t);
      if (item && text::to_lower(*item).starts_with("file")) item.reset();  // header row
    }
    if (!item) continue;
    if (auto e = parse_file_item(*item, under_deleted, line)) s.files_modified.push_back(std::move(*e));
    else ++s.files_modified_ignored;
  }
}

void scan_sections(std::string_view body, int first_line, Summary& s) {
  auto ls = text::lines(body);
  bool in_fence = false;
  std::string fence;
  SummarySection* cur = nullptr;
  for (size_t i = 0; i < ls.size(); ++i) {
    std::string_view l = ls[i];
    std::string_view t = text::trim(l);
    if (t.starts_with("```") || t.starts_with("~~~")) {
      std::string_view mark = t.substr(0, 3);
      if (!in_fence) {
        in_fence = true;
        fence = std::string(mark);
      } else if (mark == fence) {
        in_fence = false;
      }
    } else if (!in_fence && !l.empty() && l[0] == '#') {
      int lvl = heading_level(t);
      if (lvl == 1 || lvl == 2) {
        cur = nullptr;
        if (lvl == 2) {
          s.sections.push_back(SummarySection{heading_text(t, 2), first_line + static_cast<int>(i), {}});
          cur = &s.sections.back();
        }
        continue;
      }
    }
    if (cur) {
      cur->text.append(l);
      cur->text.push_back('\n');
    }
  }
}

std::optional<long long> non_negative(const json& v) {
  if (v.is_number_integer()) {
    long long n = v.get<long long>();
    if (n >= 0) return n;
    return std::nullopt;
  }
  if (v.is_number_unsigned()) return static_cast<long long>(v.get<unsigned long long>() & 0x7fffffffffffffffULL);
  if (v.is_string()) {
    return text::parse_digits(text::trim(v.get<std::string>()));
  }
  return std::nullopt;
}

bool valid_date(std::string_view d) {
  if (d.size() != 10 || d[4] != '-' || d[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (d[i] < '0' || d[i] > '9') return false;
  int y = std::stoi(std::string(d.substr(0, 4)));
  int m = (d[5] - '0') * 10 + (d[6] - '0');
  int day = (d[8] - '0') * 10 + (d[9] - '0');
  if (m < 1 || m > 12 || day < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int max = kDays[m - 1];
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) max = 29;
  return day <= max;
}

// ---------------------------------------------------------------- path safety

bool path_exists(const stdfs::path& p) {
  std::error_code ec;
  return stdfs::exists(p, ec);
}

std::string norm_rel(std::string p) {
  while (p.starts_with("./")) p.erase(0, 2);
  bool dir = p.ends_with("/");
  std::string n = stdfs::path(p).lexically_normal().generic_string();
  if (dir && !n.ends_with("/")) n += "/";
  return n;
}

// ---------------------------------------------------------------- structural checks

void check_frontmatter(const Summary& s, StructuralReview& r) {
  Check& c = r.check("frontmatter");
  if (s.frontmatter_error) {
    const auto& e = *s.frontmatter_error;
    std::string where = e.line ? " at line " + std::to_string(e.line) + (e.column ? ", column " + std::to_string(e.column) : "") : "";
    Finding f = make_finding(Severity::High, "frontmatter", s.path + ": frontmatter does not parse" + where + ": " + e.message,
                     "Fix the YAML between the '---' lines");
    if (e.line) f.extra["line"] = e.line;
    r.add(std::move(f));
    return;
  }
  if (!s.has_frontmatter) {
    r.add(make_finding(Severity::High, "frontmatter", s.path + ": no YAML frontmatter block (the first line must be '---')",
               "Start the SUMMARY with a frontmatter block holding phase, plan, title, status, "
               "tasks_completed, tasks_total, commit_hashes (and completed, deviations)"));
    return;
  }
  auto missing = s.missing_keys();
  c.counts["missing_keys"] = missing;
  for (const auto& k : missing)
    r.add(make_finding(Severity::High, "frontmatter", "missing required key '" + k + "'", "Add '" + k + ":' to the frontmatter"));
  auto described = s.missing_descriptive_keys();
  if (!described.empty()) c.counts["missing_descriptive_keys"] = described;
  for (const auto& k : described)
    r.add(make_finding(Severity::Low, "frontmatter", "missing key '" + k + "' (it only describes the work: a warning)",
               "Add '" + k + ":' to the frontmatter" +
                   std::string(k == "completed" ? " (the day the plan was finished, YYYY-MM-DD)" : " (write 'none' when there were none)")));
}

void check_status(const Summary& s, StructuralReview& r) {
  r.check("status");
  auto it = s.frontmatter.find("status");
  if (it == s.frontmatter.end()) return;  // reported as a missing key
  if (s.status == "complete" || s.status == "partial" || s.status == "failed") return;
  std::string l = text::to_lower(text::trim(s.status));
  std::string fix = "Set 'status:' to complete, partial or failed";
  bool auto_fix = false;
  if (l == "completed" || l == "done" || l == "complete") {
    fix = "Set 'status: complete'";
    auto_fix = true;
  } else if (l == "fail" || l == "error" || l == "failed") {
    fix = "Set 'status: failed'";
    auto_fix = true;
  }
  r.add(make_finding(Severity::High, "status", "status is " + quoted(*it) + ", not complete, partial or failed", fix, auto_fix));
}

void check_completed(const Summary& s, StructuralReview& r) {
  r.check("completed");
  auto it = s.frontmatter.find("completed");
  if (it == s.frontmatter.end()) return;
  if (valid_date(s.completed)) return;
  r.add(make_finding(Severity::High, "completed", "completed is " + quoted(*it) + ", not a date written YYYY-MM-DD",
             "Set 'completed:' to the day the plan was finished, e.g. 2026-02-24"));
}

void check_commit_hashes(const Summary& s, StructuralReview& r) {
  Check& c = r.check("commit_hashes");
  auto it = s.frontmatter.find("commit_hashes");
  if (it == s.frontmatter.end()) return;
  c.counts["count"] = s.commit_hashes.size();
  if (s.commit_hashes.empty()) {
    r.add(make_finding(Severity::High, "commit_hashes", "commit_hashes is " + std::string(it->is_array() ? "an empty list" : "empty") +
                                                    ": at least one commit is required",
               "List the commits that implement the plan under commit_hashes"));
    return;
  }
  if (it->is_object()) {
    r.add(make_finding(Severity::High, "commit_hashes", "commit_hashes is a map, not a list of commit hashes",
               "Write commit_hashes as a list: [abc1234, def5678]"));
  }
}

void check_task_counts(const Summary& s, StructuralReview& r) {
  Check& c = r.check("task_counts");
  const json& fm = s.frontmatter;
  bool bad = false;
  for (const char* k : {"tasks_completed", "tasks_total"}) {
    auto it = fm.find(k);
    if (it == fm.end()) continue;
    if (!non_negative(*it)) {
      bad = true;
      r.add(make_finding(Severity::High, "task_counts", std::string(k) + " is " + quoted(*it) + ", not a whole number >= 0",
                 "Set '" + std::string(k) + ":' to a number"));
    }
  }
  if (bad || !s.tasks_completed || !s.tasks_total) return;
  c.counts["tasks_completed"] = *s.tasks_completed;
  c.counts["tasks_total"] = *s.tasks_total;
  if (*s.tasks_completed > *s.tasks_total) {
    r.add(make_finding(Severity::High, "task_counts",
               "tasks_completed (" + std::to_string(*s.tasks_completed) + ") is more than tasks_total (" +
                   std::to_string(*s.tasks_total) + ")",
               "Correct the task counts"));
  } else if (s.status == "complete" && *s.tasks_completed != *s.tasks_total) {
    r.add(make_finding(Severity::High, "task_counts",
               "status is complete but only " + std::to_string(*s.tasks_completed) + " of " +
                   std::to_string(*s.tasks_total) + " tasks are completed",
               "Finish the remaining tasks, or set 'status: partial'"));
  }
}

void check_sections(const Summary& s, StructuralReview& r) {
  Check& c = r.check("sections");
  json missing = json::array();
  for (const char* name : kSummarySections) {
    if (s.section(name)) continue;
    missing.push_back(name);
    bool descriptive = std::any_of(std::begin(kSummaryDescriptiveSections), std::end(kSummaryDescriptiveSections),
                                   [&](const char* d) { return std::string_view(d) == name; });
    r.add(make_finding(descriptive ? Severity::Low : Severity::High, "sections",
               "missing body section '## " + std::string(name) + "'" + (descriptive ? " (it only describes: a warning)" : ""),
               "Add a '## " + std::string(name) + "' section" +
                   (std::string_view(name) == "Deviations" ? " (write 'None' when there were none)" : "")));
  }
  c.counts["missing"] = std::move(missing);
}

// ---------------------------------------------------------------- claims checks

struct PlanFileSet {
  std::vector<std::string> exact;     // normalised relative paths
  std::vector<std::string> patterns;  // globs
  std::vector<std::string> dirs;      // "src/x/" prefixes
  bool empty() const { return exact.empty() && patterns.empty() && dirs.empty(); }
  size_t size() const { return exact.size() + patterns.size() + dirs.size(); }

  void add(const std::string& raw) {
    if (raw.empty()) return;
    std::string p = norm_rel(raw);
    auto& into = p.find_first_of("*?[") != std::string::npos ? patterns : p.ends_with("/") ? dirs : exact;
    if (std::find(into.begin(), into.end(), p) == into.end()) into.push_back(p);
  }
  bool matches(const std::string& touched) const {
    std::string t = norm_rel(touched);
    if (std::find(exact.begin(), exact.end(), t) != exact.end()) return true;
    for (const auto& d : dirs)
      if (t.starts_with(d)) return true;
    for (const auto& g : patterns)
      if (::fnmatch(g.c_str(), t.c_str(), 0) == 0) return true;
    return false;
  }
};

void check_plan_match(const Summary& s, const Plan& p, StructuralReview& r) {
  Check& c = r.check("plan");
  c.counts["plan_id"] = p.id();
  if (s.plan.empty() || p.plan.empty()) return;
  bool match;
  if (normalize_ref(s.plan).find('-') != std::string::npos) {
    match = normalize_ref(s.plan) == normalize_ref(p.id());
  } else {
    match = normalize_ref(s.plan) == normalize_ref(p.plan) &&
            (s.phase.empty() || p.phase.empty() || normalize_ref(s.phase) == normalize_ref(p.phase));
  }
  if (!match)
    r.add(make_finding(Severity::High, "plan",
               "the SUMMARY reports on plan " + s.id() + " but is checked against plan " + p.id() + " (" + p.path + ")",
               "Give the plan this SUMMARY belongs to, or correct its phase/plan keys"));
}

void check_plan_task_count(const Summary& s, const Plan& p, StructuralReview& r) {
  Check& c = r.check("plan_task_count");
  c.counts["plan_tasks"] = p.task_count;
  if (!s.tasks_total) return;  // reported by the structural checks
  if (p.task_count == 0) {
    r.add(make_finding(Severity::Low, "plan_task_count",
               "the plan declares no tasks the runner recognises ('### Task N:' headings or <task> elements); "
               "task counts were not compared",
               "Write the plan's tasks as '### Task N: name' headings"));
    return;
  }
  if (*s.tasks_total != p.task_count) {
    r.add(make_finding(Severity::High, "plan_task_count",
               "tasks_total is " + std::to_string(*s.tasks_total) + " but the plan " + p.path + " has " +
                   std::to_string(p.task_count) + " tasks",
               "Report every task of the plan: set tasks_total to " + std::to_string(p.task_count) +
                   " and tasks_completed to the number really done",
               false));
  }
  if (s.tasks_completed && *s.tasks_completed > p.task_count) {
    r.add(make_finding(Severity::High, "plan_task_count",
               "tasks_completed is " + std::to_string(*s.tasks_completed) + " but the plan has only " +
                   std::to_string(p.task_count) + " tasks",
               "Set tasks_completed to the number of the plan's tasks really done"));
  }
}

void check_commits(const Summary& s, const Plan* p, GitPort* git, StructuralReview& r) {
  // Format first: a value that is not a hash never reaches git, with or without a repo.
  Check& c = r.check("commits_exist");
  std::vector<std::string> hashes;
  int refused = 0, missing = 0, errors = 0;
  std::set<std::string> seen;
  for (const auto& h : s.commit_hashes) {
    if (!seen.insert(h).second) continue;
    if (!is_commit_hash(h)) {
      ++refused;
      Finding f = make_finding(Severity::High, "commits_exist",
                       "commit_hashes entry '" + h + "' is not a commit hash (expected 4 to 40 hex digits); it was not "
                       "passed to git",
                       "List commit ids only, e.g. 3f2a9c1");
      f.extra["hash"] = h;
      r.add(std::move(f));
      continue;
    }
    hashes.push_back(h);
  }
  c.counts["refused"] = refused;
  Check& g = r.check("git");
  if (!git || !git->is_repo()) {
    std::string why = git ? git->last_error() : "no git access was given";
    r.add(make_finding(Severity::High, "git",
               "the project root is not inside a git repository, so the commits cannot be checked" +
                   (why.empty() ? std::string() : " (" + why + ")"),
               "Run in the repository the plan was executed in, or set summary_checks: structural"));
    return;
  }
  g.counts["repo"] = true;
  if (hashes.size() > kMaxCommitsChecked) {
    r.add(make_finding(Severity::Medium, "commits_exist",
               "only the first " + std::to_string(kMaxCommitsChecked) + " of " + std::to_string(hashes.size()) +
                   " commits were checked",
               "List the plan's commits only"));
    hashes.resize(kMaxCommitsChecked);
  }
  git->prefetch(hashes);
  std::vector<std::string> valid;
  for (const auto& h : hashes) {
    auto e = git->commit_exists(h);
    if (!e) {
      ++errors;
      Finding f = make_finding(Severity::High, "commits_exist",
                       "git could not tell whether commit " + h + " exists: " +
                           (git->last_error().empty() ? "no answer" : git->last_error()),
                       "Check that git works in the project root, then verify again");
      f.extra["hash"] = h;
      r.add(std::move(f));
    } else if (!*e) {
      ++missing;
      Finding f = make_finding(Severity::High, "commits_exist", "commit " + h + " is not a commit of this repository",
                       "List the real commits of the plan's work (git log), or commit the work");
      f.extra["hash"] = h;
      r.add(std::move(f));
    } else {
      valid.push_back(h);
    }
  }
  c.counts["checked"] = hashes.size();
  c.counts["found"] = valid.size();
  c.counts["missing"] = missing;
  c.counts["errors"] = errors;

  if (!p) return;
  Check& t = r.check("commits_touch_plan_files");
  PlanFileSet planned;
  for (const auto& f : p->files) planned.add(f.path);
  for (const auto& a : artifact_entries(*p)) planned.add(artifact_path(a));
  t.counts["plan_files"] = planned.size();
  if (planned.empty()) {
    r.add(make_finding(Severity::Low, "commits_touch_plan_files",
               "the plan names no files ('**Files:**' lines, <files> blocks, files_modified or artifacts), so the "
               "commits could not be matched to it",
               "Name the files each task touches in the plan"));
    return;
  }
  if (valid.empty()) return;  // nothing to match; the failures are already reported
  std::set<std::string> matched;
  size_t touched_total = 0;
  for (const auto& h : valid) {
    auto files = git->files_touched(h);
    if (!files) {
      Finding f = make_finding(Severity::High, "commits_touch_plan_files",
                       "git could not list the files of commit " + h + ": " +
                           (git->last_error().empty() ? "no answer" : git->last_error()),
                       "Check that git works in the project root, then verify again");
      f.extra["hash"] = h;
      r.add(std::move(f));
      return;
    }
    touched_total += files->size();
    for (const auto& f : *files)
      if (planned.matches(f)) matched.insert(norm_rel(f));
  }
  t.counts["files_touched"] = touched_total;
  t.counts["plan_files_touched"] = matched.size();
  if (matched.empty()) {
    std::string list;
    for (size_t i = 0; i < valid.size(); ++i) list += (i ? ", " : "") + valid[i];
    Finding f = make_finding(Severity::High, "commits_touch_plan_files",
                     "the commits (" + list + ") touch none of the " + std::to_string(planned.size()) +
                         " files the plan names",
                     "List the commits that implement this plan, or commit the plan's work");
    f.extra["commits"] = valid;
    r.add(std::move(f));
  }
}

void check_files_exist(const Summary& s, const fs::Root& root, StructuralReview& r) {
  Check& c = r.check("files_exist");
  int checked = 0, missing = 0, refused = 0, deleted = 0;
  std::set<std::string> seen;
  for (const auto& e : s.files_modified) {
    if (!seen.insert(e.path).second) continue;
    auto res = root.contain(e.path);
    if (!res.ok()) {
      ++refused;
      Finding f = make_finding(Severity::High, "files_exist", "listed file '" + e.path + "' " + res.why() + "; it was not checked",
                       "List paths relative to the project root, inside it");
      f.extra["path"] = e.path;
      f.extra["line"] = e.line;
      r.add(std::move(f));
      continue;
    }
    if (e.path.find_first_of("*?[") != std::string::npos) continue;
    ++checked;
    bool exists = path_exists(res.path);
    if (e.deleted) {
      ++deleted;
      if (exists) {
        Finding f = make_finding(Severity::Medium, "files_exist", "'" + e.path + "' is listed as deleted but still exists",
                         "Delete the file, or correct its entry under '## Files Modified'");
        f.extra["path"] = e.path;
        f.extra["line"] = e.line;
        r.add(std::move(f));
      }
      continue;
    }
    if (!exists) {
      ++missing;
      Finding f = make_finding(Severity::High, "files_exist",
                       "'" + e.path + "' is listed under '## Files Modified' (line " + std::to_string(e.line) +
                           ") but does not exist",
                       "Create and commit the file, mark it '(deleted)' if it was removed, or drop the claim");
      f.extra["path"] = e.path;
      f.extra["line"] = e.line;
      r.add(std::move(f));
    }
  }
  c.counts["listed"] = s.files_modified.size();
  c.counts["checked"] = checked;
  c.counts["missing"] = missing;
  c.counts["deleted"] = deleted;
  c.counts["refused"] = refused;
  if (s.files_modified.empty() && s.section("Files Modified"))
    r.add(make_finding(Severity::Low, "files_exist", "'## Files Modified' lists no file paths",
               "List each file as '- `path/to/file` (what changed)'"));
}

// Reads a file inside the root for a text search; error text on failure.
std::optional<std::string> read_for_search(const stdfs::path& p, std::string& err) {
  auto rd = fs::read_text(p, kMaxSearchBytes);
  if (!rd.ok()) {
    err = rd.error->message;
    return std::nullopt;
  }
  return std::move(rd.content);
}

void check_artifacts(const Plan& p, const fs::Root& root, StructuralReview& r) {
  Check& c = r.check("artifacts");
  auto entries = artifact_entries(p);
  int checked = 0, missing = 0, lacking = 0;
  for (const auto& e : entries) {
    std::string path = artifact_path(e);
    if (path.empty()) {
      r.add(make_finding(Severity::Medium, "artifacts", "an artifact of must_haves has no 'path'",
                 "Give each artifact a path: {path, provides, contains}"));
      continue;
    }
    ++checked;
    auto res = root.contain(path);
    if (!res.ok()) {
      Finding f = make_finding(Severity::High, "artifacts", "artifact path '" + path + "' " + res.why() + "; it was not read",
                       "Use a path relative to the project root, inside it");
      f.extra["path"] = path;
      r.add(std::move(f));
      continue;
    }
    if (!path_exists(res.path)) {
      ++missing;
      Finding f = make_finding(Severity::High, "artifacts", "artifact '" + path + "' named by the plan's must_haves does not exist",
                       "Create the artifact the plan promises (" +
                           (e.is_object() && e.contains("provides") ? scalar_text(e["provides"]) : std::string("see the plan")) +
                           ")");
      f.extra["path"] = path;
      r.add(std::move(f));
      continue;
    }
    std::vector<std::string> wants;
    if (e.is_object()) {
      if (auto ct = e.find("contains"); ct != e.end()) {
        if (ct->is_array()) {
          for (const auto& w : *ct)
            if (auto t = scalar_text(w); !t.empty()) wants.push_back(t);
        } else if (auto t = scalar_text(*ct); !t.empty()) {
          wants.push_back(t);
        }
      }
    }
    if (wants.empty()) continue;
    std::error_code ec;
    if (stdfs::is_directory(res.path, ec)) continue;  // a folder artifact: existence is the claim
    std::string err;
    auto content = read_for_search(res.path, err);
    if (!content) {
      Finding f = make_finding(Severity::High, "artifacts", "artifact '" + path + "' could not be searched: " + err,
                       "Make the artifact a readable text file");
      f.extra["path"] = path;
      r.add(std::move(f));
      continue;
    }
    for (const auto& w : wants) {
      if (content->find(w) != std::string::npos) continue;
      ++lacking;
      Finding f = make_finding(Severity::High, "artifacts", "artifact '" + path + "' does not contain '" + w + "'",
                       "Implement what the plan promises in " + path + " (it must contain '" + w + "')");
      f.extra["path"] = path;
      f.extra["contains"] = w;
      r.add(std::move(f));
    }
  }
  c.counts["count"] = entries.size();
  c.counts["checked"] = checked;
  c.counts["missing"] = missing;
  c.counts["without_contains"] = lacking;
}

void check_key_links(const Plan& p, const fs::Root& root, StructuralReview& r) {
  Check& c = r.check("key_links");
  auto entries = key_link_entries(p);
  int broken = 0;
  for (const auto& e : entries) {
    if (!e.is_object()) continue;
    std::string from = e.contains("from") ? scalar_text(e["from"]) : std::string();
    std::string to = e.contains("to") ? scalar_text(e["to"]) : std::string();
    if (from.empty() || to.empty()) {
      r.add(make_finding(Severity::Low, "key_links", "a key_link lacks 'from' or 'to'", "Write key links as {from, to, via}"));
      continue;
    }
    auto res = root.contain(from);
    if (!res.ok()) {
      ++broken;
      Finding f = make_finding(Severity::Medium, "key_links", "key_link 'from' path '" + from + "' " + res.why() + "; it was not read",
                       "Use a path relative to the project root, inside it");
      f.extra["from"] = from;
      r.add(std::move(f));
      continue;
    }
    std::string err;
    auto content = read_for_search(res.path, err);
    if (!content) {
      ++broken;
      Finding f = make_finding(Severity::Medium, "key_links", "key_link from '" + from + "' to '" + to + "': " + err,
                       "Create " + from + " and link it to " + to);
      f.extra["from"] = from;
      f.extra["to"] = to;
      r.add(std::move(f));
      continue;
    }
    bool found = content->find(to) != std::string::npos;
    if (!found) {
      // `to` may be a path while `from` names the module: try its file name and stem.
      stdfs::path tp(to);
      std::string name = tp.filename().string(), stem = tp.stem().string();
      if (to.find('/') != std::string::npos && !name.empty() && content->find(name) != std::string::npos) found = true;
      else if (to.find('/') != std::string::npos && stem.size() >= 3 && content->find(stem) != std::string::npos) found = true;
    }
    if (!found) {
      ++broken;
      Finding f = make_finding(Severity::Low, "key_links",
                       "'" + from + "' does not mention '" + to + "'" +
                           (e.contains("via") ? " (via " + scalar_text(e["via"]) + ")" : std::string()) +
                           "; the link may be indirect",
                       "Check that " + from + " really uses " + to);
      f.extra["from"] = from;
      f.extra["to"] = to;
      r.add(std::move(f));
    }
  }
  c.counts["count"] = entries.size();
  c.counts["broken"] = broken;
}

SummaryVerdict file_failure(const std::string& summary_path, SummaryMode mode, const std::string& why) {
  SummaryVerdict v;
  v.summary_path = summary_path;
  v.mode = mode;
  v.review.plan_path = summary_path;
  v.review.add(make_finding(Severity::High, "file", why, "Write the SUMMARY file the plan's executor must produce"));
  return v;
}

}  // namespace

// ---------------------------------------------------------------- public

std::vector<std::string> Summary::missing_keys() const {
  std::vector<std::string> out;
  for (const char* k : kSummaryRequiredKeys)
    if (!frontmatter.contains(k)) out.emplace_back(k);
  return out;
}

std::vector<std::string> Summary::missing_descriptive_keys() const {
  std::vector<std::string> out;
  for (const char* k : kSummaryDescriptiveKeys)
    if (!frontmatter.contains(k)) out.emplace_back(k);
  return out;
}

const SummarySection* Summary::section(std::string_view name) const {
  for (const auto& s : sections)
    if (title_matches(s.title, name)) return &s;
  return nullptr;
}

Summary parse_summary(std::string_view content, std::string path) {
  Summary s;
  s.path = std::move(path);
  Frontmatter fm = parse_frontmatter(content);
  s.has_frontmatter = fm.has_frontmatter;
  s.frontmatter_error = fm.error;
  if (fm.data.is_object()) s.frontmatter = fm.data;
  s.body_first_line = fm.body_first_line;
  const json& d = s.frontmatter;
  auto text_of = [&](const char* k) {
    auto it = d.find(k);
    return it == d.end() ? std::string() : scalar_text(*it);
  };
  s.phase = text_of("phase");
  s.plan = text_of("plan");
  s.title = text_of("title");
  s.status = text_of("status");
  s.completed = text_of("completed");
  if (auto it = d.find("tasks_completed"); it != d.end()) s.tasks_completed = non_negative(*it);
  if (auto it = d.find("tasks_total"); it != d.end()) s.tasks_total = non_negative(*it);
  if (auto it = d.find("commit_hashes"); it != d.end()) {
    auto add = [&](const json& v) {
      std::string h(text::trim(scalar_text(v)));
      if (!h.empty()) s.commit_hashes.push_back(h);
    };
    if (it->is_array()) {
      for (const auto& v : *it) add(v);
    } else {
      add(*it);
    }
  }
  // With a broken frontmatter the body view is empty: scan the whole text for sections.
  std::string_view body = fm.error || !fm.has_frontmatter ? content : fm.body;
  int first = fm.error || !fm.has_frontmatter ? 1 : fm.body_first_line;
  scan_sections(body, first, s);
  if (const SummarySection* fmod = s.section("Files Modified")) scan_files_modified(*fmod, s);
  return s;
}

SummaryLoad load_summary(const std::filesystem::path& path, size_t max_bytes) {
  SummaryLoad r;
  auto read = fs::read_text(path, max_bytes);
  if (!read.ok()) {
    r.error = read.error->message;
    r.not_found = read.error->kind == fs::FileError::Kind::NotFound;
    return r;
  }
  r.summary = parse_summary(read.content, path.string());
  return r;
}

namespace {
// "02-cli" -> "02", "03b-cleanup" -> "03b", "07" -> "07"; empty when the folder has no prefix.
std::string phase_prefix(const std::string& folder) {
  size_t dash = folder.find('-');
  std::string p = folder.substr(0, dash);
  if (p.empty() || !std::isdigit(static_cast<unsigned char>(p[0]))) return "";
  return p;
}
}  // namespace

std::optional<std::filesystem::path> sibling_plan_path(const std::filesystem::path& summary_path) {
  std::string name = summary_path.filename().string();
  if (!is_summary_filename(name)) return std::nullopt;
  name.replace(name.size() - std::string_view("SUMMARY.md").size(), std::string::npos, "PLAN.md");
  return summary_path.parent_path() / name;
}

std::optional<std::filesystem::path> find_plan_for_summary(const std::filesystem::path& summary_path,
                                                           const Summary* summary) {
  std::error_code ec;
  if (auto sib = sibling_plan_path(summary_path); sib && stdfs::is_regular_file(*sib, ec)) return sib;
  // `NN-MM-SUMMARY.md` beside `MM-PLAN.md` (NN the phase folder's prefix).
  if (auto sib = sibling_plan_path(summary_path)) {
    std::string name = sib->filename().string();
    stdfs::path dir = summary_path.parent_path();
    std::string folder = (dir.empty() ? stdfs::current_path() : dir).filename().string();
    std::string pre = phase_prefix(folder) + "-";
    if (pre.size() > 1 && name.starts_with(pre)) {
      stdfs::path shorter = sib->parent_path() / name.substr(pre.size());
      auto names = summary_names_for_plan(shorter.filename().string(), folder);
      if (names.size() > 1 && names[1] == summary_path.filename().string() && stdfs::is_regular_file(shorter, ec))
        return shorter;
    }
  }
  if (!summary || summary->plan.empty()) return std::nullopt;
  stdfs::path dir = summary_path.parent_path();
  if (dir.empty()) dir = ".";
  std::string want_plan = normalize_ref(summary->plan);
  bool full = want_plan.find('-') != std::string::npos;
  for (const auto& candidate : list_plan_files(dir)) {
    auto pl = load_plan(candidate);
    if (!pl.plan) continue;
    const Plan& p = *pl.plan;
    if (full ? normalize_ref(p.id()) == want_plan
             : normalize_ref(p.plan) == want_plan &&
                   (summary->phase.empty() || normalize_ref(p.phase) == normalize_ref(summary->phase)))
      return candidate;
  }
  return std::nullopt;
}


std::vector<std::string> summary_names_for_plan(const std::string& plan_filename, const std::string& phase_folder) {
  if (!is_plan_filename(plan_filename)) return {};
  std::string stem = plan_filename.substr(0, plan_filename.size() - std::string_view("PLAN.md").size());
  std::vector<std::string> out{stem + "SUMMARY.md"};
  // `MM-` (one number, no phase in front): the phase's number may be put in front.
  std::string pre = phase_prefix(phase_folder);
  if (!pre.empty() && stem.size() > 1 && stem.find('-') == stem.size() - 1 &&
      std::all_of(stem.begin(), stem.end() - 1, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    out.push_back(pre + "-" + stem + "SUMMARY.md");
  return out;
}

std::string preferred_summary_name(const std::string& plan_filename, const std::string& phase_folder,
                                   const std::vector<std::string>& existing_summaries) {
  auto names = summary_names_for_plan(plan_filename, phase_folder);
  if (names.empty()) return "";
  if (names.size() == 1 || existing_summaries.empty()) return names[0];
  // The long form only when the phase already spells every SUMMARY that way.
  std::string pre = phase_prefix(phase_folder) + "-";
  for (const auto& e : existing_summaries) {
    if (!e.starts_with(pre)) return names[0];
    std::string rest = e.substr(pre.size());
    size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || rest.substr(dash) != "-SUMMARY.md") return names[0];
  }
  return names[1];
}

SummaryLocation locate_summary(const std::filesystem::path& plan_path) {
  stdfs::path dir = plan_path.parent_path();
  std::string folder = (dir.empty() ? stdfs::current_path() : dir).filename().string();
  auto names = summary_names_for_plan(plan_path.filename().string(), folder);
  if (names.empty()) return {stdfs::path(plan_path.string() + ".SUMMARY.md"), false};
  std::error_code ec;
  for (const auto& n : names)
    if (stdfs::is_regular_file(dir / n, ec)) return {dir / n, true};
  std::vector<std::string> existing;
  if (names.size() > 1) {
    for (auto it = stdfs::directory_iterator(dir.empty() ? stdfs::path(".") : dir, ec);
         !ec && it != stdfs::directory_iterator(); it.increment(ec)) {
      std::string n = it->path().filename().string();
      if (is_summary_filename(n)) existing.push_back(n);
    }
  }
  return {dir / preferred_summary_name(plan_path.filename().string(), folder, existing), false};
}

const char* to_string(SummaryMode m) {
  switch (m) {
    case SummaryMode::Strict: return "strict";
    case SummaryMode::Structural: return "structural";
    case SummaryMode::Off: return "off";
  }
  return "strict";
}

std::optional<SummaryMode> parse_summary_mode(std::string_view s) {
  if (s == "strict") return SummaryMode::Strict;
  if (s == "structural") return SummaryMode::Structural;
  if (s == "off") return SummaryMode::Off;
  return std::nullopt;
}

SummaryMode mode_from_config(std::string_view s) { return parse_summary_mode(s).value_or(SummaryMode::Strict); }

const char* to_string(VerifyVerdict v) {
  switch (v) {
    case VerifyVerdict::Pass: return "pass";
    case VerifyVerdict::Warn: return "warn";
    case VerifyVerdict::Fail: return "fail";
  }
  return "fail";
}

int exit_code(VerifyVerdict v) {
  switch (v) {
    case VerifyVerdict::Pass: return 0;
    case VerifyVerdict::Fail: return 1;
    case VerifyVerdict::Warn: return 2;
  }
  return 1;
}

VerifyVerdict SummaryVerdict::verdict() const {
  switch (review.verdict()) {
    case Verdict::Approve: return VerifyVerdict::Pass;
    case Verdict::Conditional: return VerifyVerdict::Warn;
    case Verdict::Reject: return VerifyVerdict::Fail;
  }
  return VerifyVerdict::Fail;
}

json SummaryVerdict::to_json() const {
  json j = review.to_json();
  VerifyVerdict v = verdict();
  json out = {{"ok", v != VerifyVerdict::Fail},
              {"cmd", "verify-summary"},
              {"verdict", to_string(v)},
              {"mode", to_string(mode)},
              {"summary", summary_path},
              {"plan", plan_path.empty() ? json(nullptr) : json(plan_path)}};
  if (!plan_id.empty()) out["plan_id"] = plan_id;
  out["checks"] = std::move(j["checks"]);
  out["findings"] = std::move(j["findings"]);
  return out;
}

SummaryVerdict verify_summary(const Summary& s, const Plan* plan, const std::filesystem::path& root, SummaryMode mode,
                              GitPort* git) {
  SummaryVerdict v;
  v.summary_path = s.path;
  v.mode = mode;
  v.review.plan_path = s.path;
  if (!s.phase.empty() || !s.plan.empty()) v.plan_id = s.id();
  else if (plan) v.plan_id = plan->id();
  v.review.plan_id = v.plan_id;
  v.review.check("file");
  if (mode == SummaryMode::Off) return v;

  StructuralReview& r = v.review;
  check_frontmatter(s, r);
  if (s.has_frontmatter && !s.frontmatter_error) {
    check_status(s, r);
    check_completed(s, r);
    check_commit_hashes(s, r);
    check_task_counts(s, r);
  }
  check_sections(s, r);
  if (mode == SummaryMode::Structural) return v;

  fs::Root guard(root);
  if (plan) {
    v.plan_path = plan->path;
    check_plan_match(s, *plan, r);
    if (plan->frontmatter_error)
      r.add(make_finding(Severity::Medium, "plan", plan->path + ": the plan's frontmatter does not parse; its artifacts and files "
                                                        "could not be read",
                 "Fix the plan's YAML frontmatter"));
    check_plan_task_count(s, *plan, r);
  } else {
    r.add(make_finding(Severity::High, "plan", "no plan found for " + s.path + ": the claims cannot be compared with it",
               "Put the SUMMARY beside its PLAN (NN-MM-SUMMARY.md next to NN-MM-PLAN.md) or give the plan"));
  }
  check_commits(s, plan, git, r);
  check_files_exist(s, guard, r);
  if (plan) {
    check_artifacts(*plan, guard, r);
    check_key_links(*plan, guard, r);
  }
  return v;
}

SummaryVerdict verify_summary(const std::filesystem::path& summary_path,
                              const std::optional<std::filesystem::path>& plan_path, const std::filesystem::path& root,
                              SummaryMode mode, GitPort* git) {
  auto load = load_summary(summary_path);
  if (!load.summary) {
    return file_failure(summary_path.string(), mode,
                        load.not_found ? "SUMMARY not found: " + summary_path.string() : load.error);
  }
  if (mode != SummaryMode::Strict) return verify_summary(*load.summary, nullptr, root, mode, git);

  std::optional<stdfs::path> pp = plan_path ? plan_path : find_plan_for_summary(summary_path, &*load.summary);
  std::optional<Plan> plan;
  std::string plan_error;
  if (pp) {
    auto pl = load_plan(*pp);
    if (pl.plan) plan = std::move(pl.plan);
    else plan_error = pl.not_found ? "plan not found: " + pp->string() : pl.error;
  }
  SummaryVerdict v = verify_summary(*load.summary, plan ? &*plan : nullptr, root, mode, git);
  if (!plan_error.empty()) {
    // Replace the generic "no plan found" with the reason this plan could not be read.
    for (auto& f : v.review.findings)
      if (f.check == "plan" && f.severity == Severity::High && !plan) f.issue = plan_error;
    v.plan_path = pp->string();
  }
  return v;
}

}  // namespace yolo
