// `yolo execute`'s steps before the waves (runner/run_prelude.h): which phase runs (the one
// asked for, else the first not complete), its plans read from disk, and step 2: their
// SUMMARY files checked and the state prepared for the run.
#include "protocol/gates/gate_coverage.h"
#include "runner/run_prelude.h"

namespace yolo::runner::phase {

static std::string plan_rel_path(const PhaseDir& p, const stdfs::path& f, const stdfs::path& root) {
  if (f.parent_path() == p.abs && f.has_filename()) return p.rel + "/" + f.filename().string();
  return stdfs::relative(f, root).generic_string();
}

// Every plan of the phase has a SUMMARY that passes the SUMMARY gate (none: complete).
bool RunPrelude::phase_complete_on_disk(const PhaseDir& p) {
  auto files = list_plan_files(world_, p.abs);
  if (files.empty()) return true;
  for (const auto& f : files) {
    PlanEntry e;
    e.path = plan_rel_path(p, f, root_);
    json ignored;
    if (check_summary(e, ignored) != SummaryState::Passed) return false;
  }
  return true;
}

// The plan files of a phase that the run in `doc` does not know: added after it completed.
static std::vector<std::string> plans_not_in_run(const World& w, const json& doc, const PhaseDir& p,
                                                 const stdfs::path& root_) {
  std::set<std::string> known;
  if (doc.contains("plans") && doc["plans"].is_array())
    for (const auto& q : doc["plans"]) known.insert(str(q, "path"));
  std::vector<std::string> out;
  for (const auto& f : list_plan_files(w, p.abs)) {
    std::string rel = plan_rel_path(p, f, root_);
    if (!known.count(rel)) out.push_back(rel);
  }
  return out;
}

int RunPrelude::choose_phase(const state::LoadResult& snap, PhaseDir& phase) {
  const auto phases = list_phases(root_);
  std::vector<execution::PhaseName> names;
  for (const auto& p : phases) names.push_back({p.folder, p.number, p.rel});
  const auto choice = execution::choose_phase(
      names, o_.phase, snap.ok() ? &snap.doc : nullptr,
      [&](size_t i) { return !plans_not_in_run(world_, snap.doc, phases[i], root_).empty(); },
      [&](size_t i) { return phase_complete_on_disk(phases[i]); });
  using Kind = execution::PhaseChoice::Kind;
  switch (choice.kind) {
    case Kind::NoPhases:
      return host_.finish(kExecHalted, Result::Error,
                          "no phase folders under " + (root_ / ".yolo-planning" / "phases").string());
    case Kind::NotFound:
      return host_.finish(kExecUsage, Result::Error,
                          "no phase '" + o_.phase + "' under .yolo-planning/phases (give a number or a folder name)");
    case Kind::Run:
      phase = phases[choice.index];
      return -1;
    case Kind::AllComplete:
      break;
  }
  phase = phases[choice.index];
  return host_.finish(kExecComplete, Result::Complete,
                      "every phase is complete (" + std::to_string(phases.size()) + " phases)");
}

// Each plan is read, parsed and hashed once per execute, here: the entries (ids, waves,
// dependencies), the checks and Stage 1 (precheck, from loaded_) all come from that one read.
// The plans are read first and the entries made after: what the run keeps is not scattered
// among the parsed documents that precheck frees. The reading and parsing is spread over two
// threads (the second core idles before the first executor starts): each plan's
// read is its own, the results land in file order.
RunPrelude::Plans RunPrelude::load_plans(const PhaseDir& phase) {
  Plans out;
  const std::vector<stdfs::path> files = list_plan_files(world_, phase.abs);
  std::vector<std::string> stamps(files.size());
  std::vector<plan_checks::Parsed> checks(files.size());
  loaded_.resize(files.size());
  out.runs.resize(files.size());  // once: the run keeps references into it
  auto read_some = [&](size_t first, size_t step) {
    for (size_t i = first; i < files.size(); i += step) {
      const stdfs::path& f = files[i];
      std::string stamp = world_.files().stamp(f);
      auto l = load_plan(world_, f);
      stamps[i] = l.plan && !stamp.empty() && world_.files().stamp(f) == stamp ? stamp : std::string();
      if (!stamps[i].empty()) checks[i] = plan_checks::parse(*l.plan);
      loaded_[i] = {f, std::move(l)};
    }
  };
  if (files.size() >= 64) {
    std::exception_ptr failed;
    std::thread other([&] {
      try {
        read_some(1, 2);
      } catch (...) {  // never escapes the thread (that would end the process): rethrown below
        failed = std::current_exception();
      }
    });
    try {
      read_some(0, 2);
    } catch (...) {
      other.join();
      throw;
    }
    other.join();
    if (failed) std::rethrow_exception(failed);
  } else {
    read_some(0, 1);
  }
  out.entries.reserve(loaded_.size());
  for (size_t i = 0; i < loaded_.size(); ++i) {
    const stdfs::path& f = loaded_[i].file;
    const auto& l = loaded_[i].load;
    PlanEntry e;
    e.path = plan_rel_path(phase, f, root_);
    for (const auto& c : checks[i].checks)  // the files the wave's approval covers by content
      for (const auto& rel : gates::named_project_files(world_, root_, json(c.argv)))
        out.check_programs.push_back((root_ / rel).string());
    if (!stamps[i].empty()) out.runs[i].checks_read.emplace(stamps[i], std::move(checks[i]));
    if (l.plan) {
      const Plan& p = *l.plan;
      e.plan = p.plan;
      e.id = p.phase.empty() && p.plan.empty() ? f.filename().string() : p.id();
      e.title = p.title;
      e.wave = p.wave.value_or(0);
      e.depends_on = p.depends_on;
      out.runs[i].load_hash = p.content_hash;
    } else {
      e.id = f.filename().string();
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

SummaryState RunPrelude::check_summary(const PlanEntry& e, json& findings, const std::string* sp_rel) {
  stdfs::path sp = root_ / (sp_rel ? *sp_rel : summary_rel_for(world_, root_, e.path));
  std::error_code ec;
  if (!stdfs::exists(sp, ec)) return SummaryState::Missing;
  SummaryVerdict v = verify_summary(world_, sp, root_ / e.path, root_, mode_from_config(cfg_.summary_checks), &git_);
  if (v.passed()) return SummaryState::Passed;
  findings = v.to_json().value("findings", json::array());
  return SummaryState::Failed;
}

int RunPrelude::step2(const PhaseDir& phase, std::vector<PlanEntry>& entries, const std::string& fresh_cid,
                      std::string& cid) {
  const bool executor = executor_configured(cfg_);
  for (auto& e : entries) e.summary = check_summary(e, e.summary_findings);
  execution::PhaseInfo info{phase.number, phase.slug, phase.rel};
  execution::PrepareOptions po{world_.now(), fresh_cid, executor};
  execution::Prepared prepared;
  auto up = state::update(world_, root_, [&](json& doc) {
    prepared = execution::prepare(doc, info, entries, po);
    return true;
  });
  if (!up.ok()) return host_.finish(kExecHalted, Result::Error, up.error);
  cid = str(up.doc, "correlation_id");
  host_.state_written(std::move(up.doc), up.stamp);
  size_t done = 0;
  for (const auto& e : entries) done += e.summary == SummaryState::Passed;
  host_.phase_start(entries.size(), prepared.total_waves, !prepared.new_run, done, prepared.was_running);
  for (const auto& id : prepared.summary_not_counted) {
    for (auto& e : entries)
      if (e.id == id) e.summary = SummaryState::Missing;
    host_.summary_not_counted(id);
  }
  for (const auto& e : entries)
    if (e.summary == SummaryState::Failed && !executor) host_.summary_failed(e.id, e.summary_findings);
  if (entries.empty()) return host_.finish(kExecHalted, Result::Halted, "no plans in " + phase.rel);
  return -1;
}

}  // namespace yolo::runner::phase
