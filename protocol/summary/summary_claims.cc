#include "protocol/summary/summary_claims.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "protocol/ports/contain.h"
#include "protocol/ports/fs.h"
#include "protocol/findings/make_finding.h"
#include "protocol/plan/must_haves.h"
#include "protocol/base/text.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

constexpr size_t kMaxCommitsChecked = 200;
constexpr size_t kMaxSearchBytes = 8u << 20;  // artifacts / key_links files searched

// ---------------------------------------------------------------- path safety

std::string norm_rel(std::string p) {
  while (p.starts_with("./")) p.erase(0, 2);
  bool dir = p.ends_with("/");
  std::string n = stdfs::path(p).lexically_normal().generic_string();
  if (dir && !n.ends_with("/")) n += "/";
  return n;
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
    r.add(make_finding(
        Severity::High, "plan",
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
                               "commit_hashes entry '" + h +
                                   "' is not a commit hash (expected 4 to 40 hex digits); it was not "
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
    // No commit was looked up: a passed `commits_exist` beside the failed `git` said both.
    if (refused == 0)
      r.checks.erase(
          std::remove_if(r.checks.begin(), r.checks.end(), [](const Check& k) { return k.name == "commits_exist"; }),
          r.checks.end());
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
                               "git could not tell whether commit " + h +
                                   " exists: " + (git->last_error().empty() ? "no answer" : git->last_error()),
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
    r.add(make_finding(
        Severity::Low, "commits_touch_plan_files",
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
    Finding f = make_finding(
        Severity::High, "commits_touch_plan_files",
        "the commits (" + list + ") touch none of the " + std::to_string(planned.size()) + " files the plan names",
        "List the commits that implement this plan, or commit the plan's work");
    f.extra["commits"] = valid;
    r.add(std::move(f));
  }
}

void check_files_exist(const Summary& s, fs::Disk& disk, const fs::Root& root, StructuralReview& r) {
  Check& c = r.check("files_exist");
  int checked = 0, missing = 0, refused = 0, deleted = 0;
  std::set<std::string> seen;
  for (const auto& e : s.files_modified) {
    if (!seen.insert(e.path).second) continue;
    auto res = root.contain(e.path);
    if (!res.ok()) {
      ++refused;
      Finding f = make_finding(Severity::High, "files_exist",
                               "listed file '" + e.path + "' " + res.why() + "; it was not checked",
                               "List paths relative to the project root, inside it");
      f.extra["path"] = e.path;
      f.extra["line"] = e.line;
      r.add(std::move(f));
      continue;
    }
    if (e.path.find_first_of("*?[") != std::string::npos) continue;
    ++checked;
    bool exists = disk.exists(res.path);
    if (e.deleted) {
      ++deleted;
      if (exists) {
        Finding f =
            make_finding(Severity::Medium, "files_exist", "'" + e.path + "' is listed as deleted but still exists",
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
Result<std::string> read_for_search(fs::Disk& disk, const stdfs::path& p) {
  auto rd = disk.read(p, kMaxSearchBytes, /*text=*/true);
  if (!rd.ok()) return Status::fail(rd.error->message);
  return std::move(rd.content);
}

void check_artifacts(const Plan& p, fs::Disk& disk, const fs::Root& root, StructuralReview& r) {
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
      Finding f =
          make_finding(Severity::High, "artifacts", "artifact path '" + path + "' " + res.why() + "; it was not read",
                       "Use a path relative to the project root, inside it");
      f.extra["path"] = path;
      r.add(std::move(f));
      continue;
    }
    if (!disk.exists(res.path)) {
      ++missing;
      Finding f = make_finding(
          Severity::High, "artifacts", "artifact '" + path + "' named by the plan's must_haves does not exist",
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
    if (disk.is_directory(res.path)) continue;  // a folder artifact: existence is the claim
    auto content = read_for_search(disk, res.path);
    if (!content.ok()) {
      Finding f = make_finding(Severity::High, "artifacts", "artifact '" + path + "' could not be searched: " + content.error,
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

void check_key_links(const Plan& p, fs::Disk& disk, const fs::Root& root, StructuralReview& r) {
  Check& c = r.check("key_links");
  auto entries = key_link_entries(p);
  int broken = 0;
  for (const auto& e : entries) {
    if (!e.is_object()) continue;
    std::string from = e.contains("from") ? scalar_text(e["from"]) : std::string();
    std::string to = e.contains("to") ? scalar_text(e["to"]) : std::string();
    if (from.empty() || to.empty()) {
      r.add(make_finding(Severity::Low, "key_links", "a key_link lacks 'from' or 'to'",
                         "Write key links as {from, to, via}"));
      continue;
    }
    auto res = root.contain(from);
    if (!res.ok()) {
      ++broken;
      Finding f = make_finding(Severity::Medium, "key_links",
                               "key_link 'from' path '" + from + "' " + res.why() + "; it was not read",
                               "Use a path relative to the project root, inside it");
      f.extra["from"] = from;
      r.add(std::move(f));
      continue;
    }
    auto content = read_for_search(disk, res.path);
    if (!content.ok()) {
      ++broken;
      Finding f = make_finding(Severity::Medium, "key_links", "key_link from '" + from + "' to '" + to + "': " + content.error,
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
      if (to.find('/') != std::string::npos && !name.empty() && content->find(name) != std::string::npos)
        found = true;
      else if (to.find('/') != std::string::npos && stem.size() >= 3 && content->find(stem) != std::string::npos)
        found = true;
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

}  // namespace

// ---------------------------------------------------------------- public

void check_summary_claims(const World& w, const Summary& s, const Plan* plan, const std::filesystem::path& root,
                          GitPort* git, StructuralReview& r) {
  fs::Disk& disk = w.files();
  fs::Root guard = disk.root(root);
  if (plan) {
    check_plan_match(s, *plan, r);
    if (plan->frontmatter_error)
      r.add(make_finding(Severity::Medium, "plan",
                         plan->path + ": the plan's frontmatter does not parse; its artifacts and files "
                                      "could not be read",
                         "Fix the plan's YAML frontmatter"));
    check_plan_task_count(s, *plan, r);
  } else {
    r.add(make_finding(Severity::High, "plan",
                       "no plan found for " + s.path + ": the claims cannot be compared with it",
                       "Put the SUMMARY beside its PLAN (NN-MM-SUMMARY.md next to NN-MM-PLAN.md) or give the plan"));
  }
  check_commits(s, plan, git, r);
  check_files_exist(s, disk, guard, r);
  if (plan) {
    check_artifacts(*plan, disk, guard, r);
    check_key_links(*plan, disk, guard, r);
  }
}

}  // namespace yolo
