#include "protocol/summary/summary.h"

#include <algorithm>
#include <cctype>

#include "protocol/ports/fs.h"
#include "protocol/base/numbers.h"
#include "protocol/plan/plan.h"
#include "protocol/summary/summary_internal.h"
#include "protocol/base/text.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

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
    if (auto e = parse_file_item(*item, under_deleted, line))
      s.files_modified.push_back(std::move(*e));
    else
      ++s.files_modified_ignored;
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

}  // namespace

namespace summary_detail {

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

}  // namespace summary_detail

using summary_detail::non_negative;

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

SummaryLoad load_summary(const World& w, const std::filesystem::path& path, size_t max_bytes) {
  SummaryLoad r;
  auto read = w.files().read(path, max_bytes, /*text=*/true);
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

std::optional<std::filesystem::path> find_plan_for_summary(const World& w, const std::filesystem::path& summary_path,
                                                           const Summary* summary) {
  fs::Disk& disk = w.files();
  if (auto sib = sibling_plan_path(summary_path); sib && disk.is_file(*sib)) return sib;
  // `NN-MM-SUMMARY.md` beside `MM-PLAN.md` (NN the phase folder's prefix).
  if (auto sib = sibling_plan_path(summary_path)) {
    std::string name = sib->filename().string();
    stdfs::path dir = summary_path.parent_path();
    std::string folder = (dir.empty() ? stdfs::current_path() : dir).filename().string();
    std::string pre = phase_prefix(folder) + "-";
    if (pre.size() > 1 && name.starts_with(pre)) {
      stdfs::path shorter = sib->parent_path() / name.substr(pre.size());
      auto names = summary_names_for_plan(shorter.filename().string(), folder);
      if (names.size() > 1 && names[1] == summary_path.filename().string() && disk.is_file(shorter)) return shorter;
    }
  }
  if (!summary || summary->plan.empty()) return std::nullopt;
  stdfs::path dir = summary_path.parent_path();
  if (dir.empty()) dir = ".";
  std::string want_plan = normalize_ref(summary->plan);
  bool full = want_plan.find('-') != std::string::npos;
  for (const auto& candidate : list_plan_files(w, dir)) {
    auto pl = load_plan(w, candidate);
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

SummaryLocation locate_summary(const World& w, const std::filesystem::path& plan_path) {
  stdfs::path dir = plan_path.parent_path();
  std::string folder = (dir.empty() ? stdfs::current_path() : dir).filename().string();
  auto names = summary_names_for_plan(plan_path.filename().string(), folder);
  if (names.empty()) return {stdfs::path(plan_path.string() + ".SUMMARY.md"), false};
  fs::Disk& disk = w.files();
  for (const auto& n : names)
    if (disk.is_file(dir / n)) return {dir / n, true};
  std::vector<std::string> existing;
  if (names.size() > 1)
    for (const auto& n : disk.list(dir.empty() ? stdfs::path(".") : dir))
      if (is_summary_filename(n)) existing.push_back(n);
  return {dir / preferred_summary_name(plan_path.filename().string(), folder, existing), false};
}

std::string summary_name_for(const World& w, const std::filesystem::path& dir, const std::string& plan_filename) {
  auto names = summary_names_for_plan(plan_filename, dir.filename().string());
  if (names.size() == 1) return names[0];  // whatever exists: locate_summary could answer nothing else
  return locate_summary(w, dir / plan_filename).path.filename().string();
}

}  // namespace yolo
