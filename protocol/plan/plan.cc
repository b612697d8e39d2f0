#include "protocol/plan/plan.h"

#include <algorithm>
#include <regex>

#include "protocol/ports/fs.h"
#include "protocol/base/sha256.h"
#include "protocol/base/text.h"

namespace yolo {
namespace {

bool is_glob(std::string_view p) { return p.find_first_of("*?[") != std::string_view::npos; }

bool looks_like_path(std::string_view t) {
  if (t.empty() || t.find(' ') != std::string_view::npos) return false;
  return t.find('/') != std::string_view::npos || t.find('.') != std::string_view::npos;
}

bool is_new_marker(std::string_view after) {
  after = text::trim(after);
  return text::starts_with_ci(after, "(new");
}

// `**Files:** `a`, `b` (new)` -> FileRefs. Without backticks: comma separated tokens.
void parse_files_line(std::string_view rest, int line, std::vector<FileRef>& out) {
  if (rest.find('`') != std::string_view::npos) {
    size_t pos = 0;
    while (true) {
      size_t open = rest.find('`', pos);
      if (open == std::string_view::npos) break;
      size_t close = rest.find('`', open + 1);
      if (close == std::string_view::npos) break;
      std::string_view p = text::trim(rest.substr(open + 1, close - open - 1));
      size_t next = rest.find_first_of("`,", close + 1);
      std::string_view after =
          rest.substr(close + 1, next == std::string_view::npos ? std::string_view::npos : next - close - 1);
      if (looks_like_path(p)) out.push_back({std::string(p), is_new_marker(after), is_glob(p), "files_line", line});
      pos = close + 1;
    }
    return;
  }
  for (auto& tok : text::split_csv(rest)) {
    std::string_view t = tok;
    bool is_new = false;
    if (size_t paren = t.find('('); paren != std::string_view::npos) {
      is_new = is_new_marker(t.substr(paren));
      t = text::trim(t.substr(0, paren));
    }
    if (looks_like_path(t)) out.push_back({std::string(t), is_new, is_glob(t), "files_line", line});
  }
}

void add_block_entry(std::string_view l, int line, std::vector<FileRef>& out) {
  l = text::trim(l);
  if (l.starts_with("- ") || l.starts_with("* ")) l = text::trim(l.substr(2));
  for (auto& tok : text::split_csv(l)) {
    std::string t = tok;
    t.erase(std::remove(t.begin(), t.end(), '`'), t.end());
    std::string_view tv = t;
    bool is_new = false;
    if (size_t paren = tv.find('('); paren != std::string_view::npos) {
      is_new = is_new_marker(tv.substr(paren));
      tv = text::trim(tv.substr(0, paren));
    }
    if (looks_like_path(tv)) out.push_back({std::string(tv), is_new, is_glob(tv), "files_block", line});
  }
}

bool is_task_heading(std::string_view l) {
  size_t h = 0;
  while (h < l.size() && l[h] == '#') ++h;
  if (h < 2 || h > 3 || h >= l.size() || (l[h] != ' ' && l[h] != '\t')) return false;
  std::string_view rest = text::trim(l.substr(h));
  if (!text::starts_with_ci(rest, "task")) return false;
  rest = text::trim(rest.substr(4));
  return !rest.empty() && rest[0] >= '0' && rest[0] <= '9';
}

int count_task_tags(std::string_view l) {
  int n = 0;
  size_t pos = 0;
  while ((pos = l.find("<task", pos)) != std::string_view::npos) {
    size_t after = pos + 5;
    if (after < l.size() && (l[after] == '>' || l[after] == ' ' || l[after] == '\t'))
      ++n;
    else if (after == l.size())
      ++n;
    pos = after;
  }
  return n;
}

void scan_body(std::string_view body, int first_line, Plan& plan) {
  auto ls = text::lines(body);
  bool in_fence = false;
  std::string fence;
  bool in_files_block = false;
  for (size_t i = 0; i < ls.size(); ++i) {
    int line = first_line + static_cast<int>(i);
    std::string_view l = ls[i];
    std::string_view t = text::trim(l);
    if (t.starts_with("```") || t.starts_with("~~~")) {
      std::string_view mark = t.substr(0, 3);
      if (!in_fence) {
        in_fence = true;
        fence = std::string(mark);
      } else if (mark == fence)
        in_fence = false;
      continue;
    }
    if (in_fence) continue;
    if (in_files_block) {
      size_t close = t.find("</files>");
      add_block_entry(close == std::string_view::npos ? t : t.substr(0, close), line, plan.files);
      if (close != std::string_view::npos) in_files_block = false;
      continue;
    }
    if (is_task_heading(t)) ++plan.task_count;
    plan.task_count += count_task_tags(t);
    if (size_t open = t.find("<files>"); open != std::string_view::npos) {
      std::string_view rest = t.substr(open + 7);
      size_t close = rest.find("</files>");
      add_block_entry(close == std::string_view::npos ? rest : rest.substr(0, close), line, plan.files);
      if (close == std::string_view::npos) in_files_block = true;
      continue;
    }
    std::string_view s = t;
    if (s.starts_with("- ") || s.starts_with("* ")) s = text::trim(s.substr(2));
    for (std::string_view label : {"**Files:**", "**File:**", "**Files**:", "**File**:"}) {
      if (text::starts_with_ci(s, label)) {
        parse_files_line(s.substr(label.size()), line, plan.files);
        break;
      }
    }
  }
}

size_t count_must_haves(const json& mh) {
  if (mh.is_array()) return mh.size();
  if (mh.is_object()) {
    size_t n = 0;
    for (const char* k : {"truths", "artifacts", "key_links"})
      if (auto it = mh.find(k); it != mh.end() && it->is_array()) n += it->size();
    return n;
  }
  if (mh.is_string()) return mh.get<std::string>().empty() ? 0 : 1;
  return 0;
}

}  // namespace

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return {};
}

std::string normalize_ref(const std::string& ref) {
  std::string out;
  size_t start = 0;
  while (start <= ref.size()) {
    size_t dash = ref.find('-', start);
    std::string part = ref.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numeric) {
      size_t nz = part.find_first_not_of('0');
      part = nz == std::string::npos ? "0" : part.substr(nz);
    }
    if (!out.empty() || start > 0) out += '-';
    out += part;
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  return out;
}

std::vector<std::string> Plan::missing_keys() const {
  std::vector<std::string> out;
  for (const char* k : kPlanRequiredKeys)
    if (!frontmatter.contains(k)) out.emplace_back(k);
  return out;
}

Plan parse_plan(std::string_view content, std::string path) {
  Plan p;
  p.path = std::move(path);
  p.content_hash = sha256_hex(content);
  Frontmatter fm = parse_frontmatter(content);
  p.has_frontmatter = fm.has_frontmatter;
  p.frontmatter_error = fm.error;
  p.frontmatter = fm.data;
  const json& d = p.frontmatter;
  if (auto it = d.find("phase"); it != d.end()) p.phase = scalar_text(*it);
  if (auto it = d.find("plan"); it != d.end()) p.plan = scalar_text(*it);
  if (auto it = d.find("title"); it != d.end()) p.title = scalar_text(*it);
  if (auto it = d.find("wave"); it != d.end()) {
    if (it->is_number_integer() && it->get<long long>() >= 1) p.wave = it->get<long long>();
  }
  if (auto it = d.find("depends_on"); it != d.end()) {
    if (it->is_array()) {
      for (const auto& dep : *it)
        if (auto s = scalar_text(dep); !s.empty()) p.depends_on.push_back(s);
    } else if (auto s = scalar_text(*it); !s.empty()) {
      p.depends_on.push_back(s);
    }
  }
  if (auto it = d.find("must_haves"); it != d.end()) p.must_have_count = count_must_haves(*it);
  if (auto it = d.find("files_modified"); it != d.end()) {
    auto add = [&](const json& v) {
      std::string s = scalar_text(v);
      if (!s.empty()) p.files.push_back({s, false, is_glob(s), "files_modified", 0});
    };
    if (it->is_array())
      for (const auto& v : *it) add(v);
    else
      add(*it);
  }
  if (!fm.error) scan_body(fm.body, fm.body_first_line, p);
  return p;
}

PlanLoad load_plan(const World& w, const std::filesystem::path& path, size_t max_bytes) {
  PlanLoad r;
  auto read = w.files().read(path, max_bytes, /*text=*/true);
  if (!read.ok()) {
    r.error = read.error->message;
    r.not_found = read.error->kind == fs::FileError::Kind::NotFound;
    return r;
  }
  r.plan = parse_plan(read.content, path.string());
  return r;
}

namespace {
// A name with a newline or another control character is nobody's plan (and would break
// every line-based listing of it).
bool has_control(const std::string& name) {
  for (unsigned char ch : name)
    if (ch < 0x20 || ch == 0x7f) return true;
  return false;
}
}  // namespace

bool is_plan_filename(const std::string& name) {
  if (has_control(name)) return false;
  return name == "PLAN.md" || (name.size() > 8 && name.ends_with("-PLAN.md"));
}
bool is_summary_filename(const std::string& name) {
  if (has_control(name)) return false;
  return name == "SUMMARY.md" || (name.size() > 11 && name.ends_with("-SUMMARY.md"));
}

std::vector<std::filesystem::path> list_plan_files(const World& w, const std::filesystem::path& phase_dir) {
  std::vector<std::filesystem::path> out;
  fs::Disk& disk = w.files();
  // An entry that cannot be looked at (ELOOP, EACCES) is no regular file: skipped, the walk goes on.
  // The folder's own listing says which entries are regular files (no stat for each of them);
  // a link or an entry of unknown kind is looked at through its links.
  for (const auto& e : disk.list_entries(phase_dir))
    if (e.kind != fs::DirEntry::Kind::Directory && is_plan_filename(e.name) &&
        (e.kind == fs::DirEntry::Kind::File || disk.is_file(phase_dir / e.name)))
      out.push_back(phase_dir / e.name);
  return out;  // in name order (list_entries'), which is path order in one folder
}

}  // namespace yolo
