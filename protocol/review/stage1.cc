#include "protocol/review/stage1.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "protocol/ports/contain.h"
#include "protocol/plan/cross_plan.h"
#include "protocol/review/cross_facts.h"
#include "protocol/findings/make_finding.h"
#include "protocol/plan/must_haves.h"
#include "protocol/base/parallel.h"
#include "protocol/plan/plan_checks.h"
#include "protocol/review/phase_snapshot.h"

namespace yolo {
namespace {

void check_frontmatter(const Plan& p, StructuralReview& r) {
  Check& c = r.check("frontmatter");
  if (p.frontmatter_error) {
    const auto& e = *p.frontmatter_error;
    std::string where =
        e.line ? " at line " + std::to_string(e.line) + (e.column ? ", column " + std::to_string(e.column) : "") : "";
    Finding f = make_finding(Severity::High, "frontmatter", "frontmatter does not parse" + where + ": " + e.message,
                             "Fix the YAML between the '---' lines");
    if (e.line) f.extra["line"] = e.line;
    if (e.column) f.extra["column"] = e.column;
    r.add(std::move(f));
    return;
  }
  if (!p.has_frontmatter) {
    r.add(make_finding(Severity::High, "frontmatter", "no YAML frontmatter block (the first line must be '---')",
                       "Add a frontmatter block with phase, plan, title, wave, depends_on and must_haves"));
    return;
  }
  auto missing = p.missing_keys();
  c.counts["missing_keys"] = missing;
  for (const auto& k : missing)
    r.add(make_finding(Severity::High, "frontmatter", "missing required key '" + k + "'",
                       "Add '" + k + ":' to the frontmatter"));
  // The id names records, ledger entries and state entries: no path parts, no control bytes.
  for (const auto& [key, v] : {std::pair<const char*, const std::string&>{"phase", p.phase}, {"plan", p.plan}}) {
    bool bad =
        v.find("..") != std::string::npos || v.find('/') != std::string::npos || v.find('\\') != std::string::npos;
    for (unsigned char ch : v) bad = bad || ch < 0x20 || ch == 0x7f;
    if (bad)
      r.add(make_finding(
          Severity::High, "frontmatter",
          std::string("'") + key + "' is '" + v + "': an id may not hold '..', '/', '\\' or control characters",
          std::string("Use the plain number, e.g. ") + key + ": 01"));
  }
  // `phase: 02` in phases/01-core: the plan would be tracked (and executed) as another phase's.
  std::string folder = std::filesystem::path(p.path).parent_path().filename().string();
  auto lead = [](const std::string& t) {
    size_t i = 0;
    while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
    std::string n = t.substr(0, i);
    while (!n.empty() && n.back() == '.') n.pop_back();
    size_t z = 0;
    while (z + 1 < n.size() && n[z] == '0' && n[z + 1] != '.') ++z;
    return n.substr(z);
  };
  std::string fnum = lead(folder), pnum = lead(p.phase);
  if (!fnum.empty() && !pnum.empty() && fnum != pnum)
    r.add(make_finding(Severity::High, "frontmatter",
                       "'phase: " + p.phase + "' differs from its folder " + folder + " (phase " + fnum + ")",
                       "Set phase: to the folder's number, or move the plan to its phase's folder"));
}

void check_tasks(const Plan& p, const Stage1Options& o, StructuralReview& r) {
  Check& c = r.check("task_count");
  c.counts["count"] = p.task_count;
  c.counts["max"] = o.max_tasks;
  if (p.task_count > o.max_tasks)
    r.add(make_finding(Severity::Medium, "task_count",
                       std::to_string(p.task_count) + " tasks, more than the limit of " + std::to_string(o.max_tasks),
                       "Split the plan into smaller plans of at most " + std::to_string(o.max_tasks) + " tasks"));
}

void check_must_haves(const Plan& p, StructuralReview& r) {
  Check& c = r.check("must_haves");
  c.counts["count"] = p.must_have_count;
  if (p.must_have_count == 0) {
    bool present = p.frontmatter.contains("must_haves");
    r.add(make_finding(Severity::High, "must_haves", present ? "must_haves is empty" : "must_haves is absent",
                       "List the outcomes that prove the plan is done under must_haves"));
  }
  for (const auto& e : plan_checks::parse(p).errors)  // checks yolo runs itself
    r.add(make_finding(Severity::High, "must_haves", e, "Write each check as an argv list: [\"make\", \"test\"]"));
}

void check_wave(const Plan& p, StructuralReview& r) {
  r.check("wave_valid");
  if (p.wave) return;
  auto it = p.frontmatter.find("wave");
  std::string got =
      it == p.frontmatter.end() ? "absent" : "'" + (it->is_string() ? it->get<std::string>() : it->dump()) + "'";
  r.add(make_finding(Severity::High, "wave_valid", "wave is " + got + ", not a positive integer",
                     "Set 'wave:' to 1 or more"));
}

// A path that is absolute or leads out of the project root (through `..` or a symbolic
// link) is high and never read; one that does not exist is low. Besides the files the
// tasks name, the paths the SUMMARY gate reads later are checked here too: the plan's
// must_haves.artifacts[].path and key_links[].from.
void check_files(const World& w, const Plan& p, const fs::Root& guard, StructuralReview& r) {
  Check& c = r.check("file_paths");
  std::set<std::string> seen;
  int checked = 0, missing = 0, escaping = 0;
  fs::Disk& disk = w.files();
  auto refuse = [&](const std::string& path, const fs::Contained& res, const std::string& what, int line,
                    Severity sev = Severity::High) {
    ++escaping;
    Finding fd = make_finding(sev, "file_paths", what + "'" + path + "' " + res.why(),
                              "Use a path relative to the project root, inside it");
    fd.extra["path"] = path;
    if (line) fd.extra["line"] = line;
    r.add(std::move(fd));
  };
  for (const auto& f : p.files) {
    if (!seen.insert(f.path).second) continue;
    ++checked;
    auto res = guard.contain(f.path);
    if (!res.ok()) {
      refuse(f.path, res, "path ", f.line);
      continue;
    }
    if (f.is_new || f.is_glob) continue;
    if (!disk.exists(res.path)) {
      ++missing;
      Finding fd = make_finding(Severity::Low, "file_paths", "referenced file '" + f.path + "' does not exist",
                                "Mark it '(new)' if the plan creates it, or fix the path");
      fd.extra["path"] = f.path;
      if (f.line) fd.extra["line"] = f.line;
      r.add(std::move(fd));
    }
  }
  // Artifacts and key links may name files the plan creates: only where they lead counts,
  // with the severity the SUMMARY gate gives them (an artifact high, a key link medium).
  auto must_have_path = [&](const std::string& path, const char* what, Severity sev) {
    if (path.empty() || !seen.insert(path).second) return;
    if (auto res = guard.contain(path); !res.ok()) refuse(path, res, what, 0, sev);
  };
  for (const auto& a : artifact_entries(p))
    must_have_path(artifact_path(a), "must_haves artifact path ", Severity::High);
  for (const auto& k : key_link_entries(p))
    if (k.is_object())
      if (auto from = k.find("from"); from != k.end())
        must_have_path(scalar_text(*from), "must_haves key_link 'from' path ", Severity::Medium);
  c.counts["checked"] = checked;
  c.counts["missing"] = missing;
  c.counts["escaping"] = escaping;
}


}  // namespace

StructuralReview stage1_plan(const World& w, const Plan& p, const Stage1Options& o) {
  StructuralReview r;
  r.plan_path = p.path;
  if (!p.phase.empty() || !p.plan.empty()) r.plan_id = p.id();
  check_frontmatter(p, r);
  if (p.frontmatter_error) return r;
  check_tasks(p, o, r);
  check_must_haves(p, r);
  check_wave(p, r);
  if (o.guard)
    check_files(w, p, *o.guard, r);
  else if (o.root)
    check_files(w, p, w.files().root(*o.root), r);
  return r;
}

std::optional<std::filesystem::path> root_for_phase(const World& w, const std::filesystem::path& phase_dir) {
  return w.files().project_root(phase_dir);
}

namespace {
const char* const kCrossChecks[] = {"dependencies", "dependency_cycle", "wave_order", "file_overlap", "duplicate_id"};

void attach_cross(StructuralReview& r, std::vector<Finding> fs) {
  for (const char* c : kCrossChecks) r.check(c);
  for (auto& f : fs) r.add(std::move(f));
}

StructuralReview missing_file_review(const std::filesystem::path& plan_path, const std::string& error) {
  StructuralReview r;
  r.plan_path = plan_path.string();
  r.add(make_finding(Severity::High, "file", error, "Check the plan path"));
  return r;
}

// p with every link resolved on the world's disk.
std::filesystem::path resolved(const World& w, const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(p, ec).lexically_normal();
  return w.files().resolve(abs).value_or(abs);
}
}  // namespace

StructuralReview stage1_plan_file(const World& w, const std::filesystem::path& plan_path,
                                  const std::optional<std::filesystem::path>& phase_dir, Stage1Options opts) {
  auto loaded = load_plan(w, plan_path, opts.max_file_bytes);
  if (!loaded.plan) return missing_file_review(plan_path, loaded.error);
  if (phase_dir && !opts.root) opts.root = root_for_phase(w, *phase_dir);
  if (phase_dir && !opts.root) opts.root = std::filesystem::current_path();
  StructuralReview r = stage1_plan(w, *loaded.plan, opts);
  if (!phase_dir) return r;
  if (opts.snapshots)
    if (auto cross = opts.snapshots->cross_for(w, *phase_dir, plan_path, *loaded.plan, opts.max_file_bytes)) {
      attach_cross(r, std::move(*cross));
      return r;
    }
  // Load the phase; the plan under review takes its place (or is added) so it is
  // compared with its siblings even when it lives elsewhere.
  std::vector<Plan> phase;
  std::optional<std::filesystem::path> self;  // resolved only for a sibling of the same name
  size_t self_index = SIZE_MAX;
  cross_facts::Store store(w, *phase_dir, opts.max_file_bytes);  // the siblings' facts (cross_facts.h)
  for (const auto& f : list_plan_files(w, *phase_dir)) {
    if (f.filename() == plan_path.filename()) {
      if (!self) self = resolved(w, plan_path);
      if (resolved(w, f) == *self) {
        self_index = phase.size();
        phase.push_back(*loaded.plan);
        continue;
      }
    }
    auto other = store.load(f, opts.cache);
    if (other.plan && !other.plan->frontmatter_error) phase.push_back(std::move(*other.plan));
  }
  (void)store.save(/*prune=*/false);  // the plan under review was not looked up: nothing is dropped
  if (self_index == SIZE_MAX) {
    self_index = phase.size();
    phase.push_back(*loaded.plan);
  }
  attach_cross(r, std::move(cross_plan_findings(phase)[self_index]));
  return r;
}

std::vector<StructuralReview> stage1_phase(const World& w, const std::filesystem::path& phase_dir, Stage1Options opts) {
  std::vector<LoadedPlan> plans;
  for (const auto& f : list_plan_files(w, phase_dir)) plans.push_back({f, load_plan(w, f, opts.max_file_bytes)});
  return stage1_phase(w, phase_dir, plans, opts);
}

std::vector<StructuralReview> stage1_phase(const World& w, const std::filesystem::path& phase_dir,
                                           const std::vector<LoadedPlan>& plans, Stage1Options opts) {
  if (!opts.root) opts.root = root_for_phase(w, phase_dir);
  if (!opts.root) opts.root = std::filesystem::current_path();
  const fs::Root guard = w.files().root(*opts.root);  // the root resolved once for the pass
  opts.guard = &guard;                                // (a caller's would be for another root)
  // Each plan's own checks on every core (a plan's review reads only its plan and the files
  // it names); the cross-plan checks after, in plan order.
  std::vector<StructuralReview> out(plans.size());
  parallel_for(plans.size(), [&](size_t i) {
    const auto& lp = plans[i];
    out[i] = lp.load.plan ? stage1_plan(w, *lp.load.plan, opts) : missing_file_review(lp.file, lp.load.error);
  });
  std::vector<const Plan*> phase;
  std::vector<size_t> review_of;  // phase index -> out index
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].load.plan && !plans[i].load.plan->frontmatter_error) {
      review_of.push_back(i);
      phase.push_back(&*plans[i].load.plan);
    }
  auto cross = cross_plan_findings(phase);
  for (size_t i = 0; i < phase.size(); ++i) attach_cross(out[review_of[i]], std::move(cross[i]));
  return out;
}

}  // namespace yolo
