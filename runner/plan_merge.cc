// `yolo execute` with `isolation: "worktree"`: each plan's worktree, its gates
// there (SUMMARY gate, scope fence), and the merge back in plan order, also after a kill -9
// (runner/phase_run_internal.h, runner/worktree.h).
//
// The plan's record in the state (schemas/execution-state.json, plans[].worktree):
//   {path, branch, base, head, merge: none|pending|merged|conflict, merge_commit, merged_at}
// `head` is the commit that passed the gates (the SUMMARY committed on top): the merge names
// it, never the branch, and a resumed run asks git whether it is already in HEAD before it
// merges, so no plan is merged twice and none that passed is lost.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "protocol/findings/make_finding.h"
#include "protocol/base/numbers.h"
#include "runner/phase_run_internal.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {
namespace {

std::string read_all(const stdfs::path& p, bool& ok) {
  std::ifstream f(p, std::ios::binary);
  ok = static_cast<bool>(f);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

bool Run::adopt_worktree(size_t i, const PlanWorktree& w, int slot, std::string& err) {
  const auto& e = entries_[i];
  // The plan as this run read it (an architect may have revised it without a commit): the
  // gates judge the reviewed plan, in a local worktree and in a dispatched plan's alike.
  bool ok_root = false, ok_wt = false;
  std::string mine = read_all(root_ / e.path, ok_root);
  std::string theirs = read_all(w.path / e.path, ok_wt);
  if (ok_root && (!ok_wt || mine != theirs)) {
    // Written as a regular file inside the worktree: a symlink committed at that path (or a
    // folder on the way leading out) is never followed.
    std::error_code ec;
    stdfs::path target = w.path / e.path;
    stdfs::create_directories(target.parent_path(), ec);
    stdfs::path parent = stdfs::weakly_canonical(target.parent_path(), ec);
    stdfs::path top = stdfs::weakly_canonical(w.path, ec);
    auto rel = parent.lexically_relative(top);
    if (ec || rel.empty() || *rel.begin() == "..") {
      err = "the plan's folder in the worktree leads outside it (" + target.string() + ")";
      return false;
    }
    if (stdfs::is_symlink(stdfs::symlink_status(target, ec))) stdfs::remove(target, ec);
    std::ofstream(target, std::ios::binary | std::ios::trunc) << mine;
  }
  run_of(i).worktree = w;
  core_.take_slot(i, slot);
  json rec = {{"path", w.path.string()}, {"branch", w.branch}, {"base", w.base}, {"merge", to_string(MergeState::None)}};
  run_of(i).worktree_record = rec;
  execution::PlanUpdate u = execution::started(std::nullopt);
  u.set = {{"worktree", rec}};
  queue_plan(i, std::move(u));
  return true;
}

bool Run::prepare_worktree(size_t i, long long wave, std::string& err) {
  const auto& e = entries_[i];
  if (!wave_base_.count(wave)) {
    std::string h = trees_->head();
    if (h.empty()) {
      err = "git rev-parse HEAD failed in " + root_.string();
      return false;
    }
    wave_base_[wave] = h;
  }
  int slot = core_.free_slot();
  auto w = trees_->create(e.id, wave_base_[wave], slot, err);
  if (!w) return false;
  return adopt_worktree(i, *w, slot, err);
}

bool Run::resume_finished(size_t i) {
  const auto& e = entries_[i];
  auto it = left_on_branch_.find(trees_->branch_for(e.id));
  if (it == left_on_branch_.end()) return false;
  const stdfs::path slot_dir = it->second;
  left_on_branch_.erase(it);  // looked at once: a plan that runs again starts afresh
  int slot = 0;
  if (std::string n = slot_dir.filename().string(); n.rfind("slot-", 0) == 0)
    slot = static_cast<int>(text::parse_digits(n.substr(5)).value_or(0));
  std::error_code same_ec;
  if (slot <= 0 || slot > 100000 || !stdfs::equivalent(trees_->slot_path(slot), slot_dir, same_ec)) return false;
  if (core_.slot_held(slot, i)) return false;
  const std::string sp = summary_rel_for(world_, root_, e.path);
  std::error_code ec;
  if (!stdfs::is_regular_file(slot_dir / sp, ec)) return false;  // not finished: it runs again
  PlanWorktree w{
      e.id, trees_->slot_path(slot), trees_->branch_for(e.id), trees_->base_of(trees_->branch_for(e.id)), "resumed", 0};
  if (w.base.empty() || !trees_->has_commits(w.branch, w.base)) return false;
  // Only a SUMMARY that passes its gate counts as finished work: one a killed executor left
  // half written, or that claims what its branch does not hold, is no reason to fail the
  // plan; it runs again instead.
  GitCli git(slot_dir);
  if (!verify_summary(world_, slot_dir / sp, slot_dir / e.path, slot_dir, mode_, &git).passed()) return false;
  std::string err;
  if (!adopt_worktree(i, w, slot, err)) return false;
  return true;
}

SummaryState Run::gate_in_worktree(size_t i, json& findings, json& set, bool commit) {
  const auto& e = entries_[i];
  const PlanWorktree& w = *run_of(i).worktree;  // conclude gates only a plan with one
  json rec = run_of(i).worktree_record;
  std::string sp = summary_rel_for(world_, root_, e.path);
  std::error_code ec;
  set["worktree"] = rec;
  // What the executor committed was taken in when it ended (on_done), or could not be.
  if (const std::string& oerr = run_of(i).objects_error; !oerr.empty()) {
    findings.push_back(make_finding(Severity::High, "worktree", oerr + " (" + w.path.string() + ")",
                                    "`yolo logs " + e.id + "`; `yolo execute` runs the plan again")
                           .to_json());
    return SummaryState::Failed;
  }
  if (!stdfs::exists(w.path / sp, ec)) return SummaryState::Missing;
  auto& git = slot_git_[w.path.string()];  // one per slot: it knows the repository already
  if (!git) git = std::make_unique<GitCli>(w.path);
  SummaryVerdict v = verify_summary(world_, w.path / sp, w.path / e.path, w.path, mode_, git.get());
  findings = v.to_json().value("findings", json::array());
  // One scan of the worktree: the commit the executor left (the fence judges, and the
  // SUMMARY is committed on, the commit that will be merged) and what it left uncommitted.
  std::string err;
  auto scanned = trees_->scan(w, err);
  std::string tip = scanned ? scanned->head : trees_->head(w.path);
  // The scope fence: the branch's commits against the plan's files.
  auto changed = trees_->changed_files(w, tip.empty() ? std::string("HEAD") : tip, err);
  bool summary_dirty = true, others_staged = true;
  auto l = load_plan(world_, w.path / e.path);
  json scope_json = json::object();
  json scope_findings = json::array();
  if (!changed) {
    Finding f = make_finding(Severity::High, "scope_fence",
                             "could not diff the plan's branch " + w.branch + " against its base: " + err,
                             "check the worktree " + w.path.string());
    scope_findings.push_back(f.to_json());
  } else {
    scope::Options so;
    so.outside = scope::severity_setting(cfg_.scope_outside);
    so.untouched = scope::severity_setting(cfg_.scope_untouched);
    so.exempt = {e.path, sp};
    std::vector<std::string> planned = l.plan ? scope::planned_files(*l.plan) : std::vector<std::string>{};
    scope::Result res = scope::check(planned, *changed, so);
    scope_json = res.to_json();
    for (const auto& f : res.findings) scope_findings.push_back(f.to_json());
    // Work the executor left uncommitted is not part of the plan's branch: it is not merged.
    // (Ignored files are listed too, for the slot's next plan, but are not the plan's work.)
    if (scanned) {
      summary_dirty = others_staged = false;
      std::vector<std::string> left;
      for (const auto& d : scanned->entries) {
        if (d.path == sp && !d.ignored()) summary_dirty = true;
        if (d.path != sp && d.staged()) others_staged = true;
        if (d.path != sp && d.path != e.path && !d.ignored()) left.push_back(d.path);
      }
      if (!left.empty()) {
        scope_json["uncommitted"] = left;
        if (so.outside)
          scope_findings.push_back(
              make_finding(Severity::Medium, "scope_fence",
                           "the executor left " + std::to_string(left.size()) +
                               " file(s) uncommitted in its worktree (not merged): " + text::join_some(left),
                           "commit the plan's work on its branch")
                  .to_json());
      }
    }
  }
  scope_json["findings"] = scope_findings;
  set["scope"] = scope_json;
  for (const auto& f : scope_findings) findings.push_back(f);
  // What the slot holds after this gate, for its next plan (runner/worktree.h): known only
  // when the tree was scanned and the tip read.
  auto remember = [&](const std::string& at, bool summary_committed) {
    if (!scanned || !changed || !is_commit_hash(at)) {
      trees_->forget(w.path);
      return;
    }
    std::vector<std::string> diff = *changed;
    std::vector<StatusEntry> left;
    for (const auto& d : scanned->entries)
      if (!(summary_committed && d.path == sp)) left.push_back(d);
    if (summary_committed && std::find(diff.begin(), diff.end(), sp) == diff.end()) diff.push_back(sp);
    trees_->remember(w, at, diff, left);
  };
  const execution::WorktreeGate gate = execution::worktree_gate(findings, commit);
  if (!gate.commit) {  // failed (a failed check fails it too): nothing to merge
    remember(tip, false);
    return gate.state;
  }
  // Passed: the SUMMARY goes onto the branch (the merge brings it to the checkout).
  std::string head =
      trees_->commit_paths(w, tip, {sp}, summary_dirty, others_staged, "yolo: SUMMARY of plan " + e.id, err);
  if (head.empty()) {
    trees_->forget(w.path);
    findings.push_back(make_finding(Severity::High, "worktree",
                                    "could not commit the SUMMARY on branch " + w.branch + ": " + err,
                                    "check the worktree " + w.path.string())
                           .to_json());
    return SummaryState::Failed;
  }
  remember(head, summary_dirty);
  rec["head"] = head;
  rec["merge"] = to_string(MergeState::Pending);
  run_of(i).worktree_record = rec;
  set["worktree"] = rec;
  return SummaryState::Passed;
}

std::string Run::merge_message(const PlanEntry& e, const json& wt) const {
  return "yolo: merge plan " + e.id + " (" + e.title + ") from " + str(wt, "branch");
}

bool Run::apply_merge(const json& wt, const MergeResult& m, json& record, std::string& error, json& findings) {
  std::string branch = str(wt, "branch");
  record = wt;
  if (m.outcome == MergeOutcome::Merged) {
    record["merge"] = to_string(MergeState::Merged);
    record["merge_commit"] = m.commit;
    record["merged_at"] = world_.now();
    return true;
  }
  if (m.outcome == MergeOutcome::Conflict) {
    record["merge"] = to_string(MergeState::Conflict);
    error = "its branch " + branch + " conflicts with the checkout in " +
            (m.files.empty() ? std::string("(files not named by git)") : text::join_some(m.files)) +
            ": the plan left its scope (nothing of it was merged)";
    Finding f = make_finding(Severity::High, "merge", error,
                             "keep the plan to its files_modified; the branch " + branch +
                                 " is kept for inspection; `yolo execute` runs the plan again in a fresh worktree");
    f.extra["files"] = m.files;
    findings.push_back(f.to_json());
    return false;
  }
  error = "git could not merge it (nothing merged): " + m.error;
  return false;
}

void Run::merge_plans(const std::vector<size_t>& plans) {
  std::vector<std::string> merged_branches;
  std::vector<stdfs::path> slots;
  // Every gated commit is on disk before git moves the branch (the core's WriteState came
  // first): a kill -9 from here on leaves a state from which the next run merges what is
  // missing and recognises what is merged.
  // In the core's order (plan order), in one pass: the checkout moves once. (A commit this run
  // gated a moment ago is on a branch nothing merged yet: whether it is in HEAD is not asked.)
  std::vector<size_t> order;
  std::vector<std::pair<std::string, std::string>> steps;
  for (size_t i : plans) {
    const json& r = run_of(i).worktree_record;
    if (!r.is_object() || !is_commit_hash(str(r, "head"))) {
      core_.merged(i, run::MergeOutcome::Refused);  // no gated commit to name: never merged blindly
      continue;
    }
    order.push_back(i);
    steps.push_back({str(r, "head"), merge_message(entries_[i], r)});
  }
  if (order.empty()) return;
  std::vector<MergeResult> results = trees_->merge_all(steps);
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    const auto& e = entries_[i];
    json record, findings = json::array();
    std::string error;
    bool ok = apply_merge(run_of(i).worktree_record, results[k], record, error, findings);
    run_of(i).worktree_record = record;
    if (ok) {
      execution::PlanUpdate u = execution::ended({PlanStatus::Complete, "", json::array()}, world_.now());
      u.set = {{"worktree", record}};
      queue_plan(i, std::move(u));
      json md = {{"plan", e.id},
                 {"branch", str(record, "branch")},
                 {"commit", str(record, "head")},
                 {"merge_commit", str(record, "merge_commit")}};
      if (results[k].ahead) md["computed_ahead"] = true;  // its merge step ran while jobs still did
      emit("plan_merged", md, Sym::Ok, "Plan " + e.id + " merged from " + str(record, "branch"));
      log("plan_merged", e.plan,
          {{"plan_id", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}});
      merged_branches.push_back(str(record, "branch"));
      slots.push_back(str(record, "path"));
      run_of(i).worktree.reset();
      core_.merged(i, run::MergeOutcome::Merged);
      continue;
    }
    if (execution::merge_state(record) == MergeState::Conflict) {
      core_.merged(i, run::MergeOutcome::Conflict);
      execution::PlanUpdate u = execution::ended({PlanStatus::Failed, error, findings}, world_.now());
      u.set = {{"worktree", record}};
      queue_plan(i, std::move(u));
      emit("plan_end",
           {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", error}, {"findings", findings}},
           Sym::Fail,
           "Plan " + e.id + " failed at its merge: " + error);
      next_ = "keep plan " + e.id + " to its files (its branch " + str(record, "branch") +
              " shows what it changed), then `yolo execute` runs it again in a fresh worktree";
      continue;  // the other plans are independent (Stage 1 refuses two plans of a wave writing one file)
    }
    // Refused (local changes in the way, a lock): nothing merged, the plan stays gated.
    execution::PlanUpdate u = execution::ended({PlanStatus::Complete, "", json::array()}, world_.now());
    u.set = {{"worktree", record}};
    queue_plan(i, std::move(u));
    emit("merge_refused", {{"plan", e.id}, {"error", error}}, Sym::Fail, "Plan " + e.id + ": " + error);
    next_ =
        "commit or stash the changes in the project's checkout that are in the way, then `yolo execute` "
        "merges plan " +
        e.id + " (its gated commit is kept on " + str(record, "branch") + ")";
    core_.merged(i, run::MergeOutcome::Refused);  // the core halts the run (MergeRefused)
  }
  if (dispatched()) {
    dispatch_premerge_reset();  // the checkout moved: a chain computed ahead starts again from it
    dispatch_delete_merged(merged_branches);  // a child of the loop: runs while the local ones go
  }
  trees_->delete_branches(merged_branches, slots);  // one child for all (the slots detached first)
  flush_plans();
}

int Run::init_worktrees(const json& doc) {
  if (!isolated()) return -1;
  std::string cid = str(doc, "correlation_id");
  if (cid.empty()) cid = fresh_cid_;
  trees_ = std::make_unique<Worktrees>(root_, cid);
  std::string err;
  if (!trees_->init(err)) {
    next_ = "run `git init` and commit the project, or set \"isolation\": \"none\" in .yolo-planning/config.json";
    return finish(kExecHalted, Result::Error, err);
  }
  if (str(doc, "phase_dir") != phase_.rel || !doc.contains("plans") || !doc["plans"].is_array()) return -1;
  // The slots a killed run of this phase left on its plans' branches: the work of an executor
  // that finished there is gated when its plan's turn comes (resume_finished), not redone.
  // Only where the state (which no child can write) says this run gave that plan that slot
  // and branch and did not gate it yet: a slot's HEAD is its executor's to move, so a slot
  // an executor switched to a later plan's branch is no finished work of that plan.
  if (!dispatched()) {
    // What their executors committed lies in the slots' own object folders until it is
    // hashed into the repository (slot_objects.h); before that, their branches name nothing.
    std::error_code ec;
    for (const auto& d : stdfs::directory_iterator(trees_->slot_path(1).parent_path(), ec))
      if (std::string oerr; !slot_objects::take_in(root_, d.path(), oerr)) {
        note("the slot " + d.path().string() + " is removed: " + oerr);
        trees_->remove(d.path(), "");
      }
    auto left = trees_->slots_on_plan_branches();
    for (const auto& e : entries_) {
      const json* p = execution::find_plan(doc, e.id);
      auto it = left.find(trees_->branch_for(e.id));
      if (!p || it == left.end()) continue;
      const std::string slot = execution::slot_to_take_up(*p, it->first);
      std::error_code same;
      if (!slot.empty() && stdfs::equivalent(it->second, slot, same)) left_on_branch_.insert(*it);
    }
  }
  if (trees_->abort_leftover_merge())
    emit("merge_aborted", json::object(), Sym::Warn,
         "A merge left half-done by a stopped execute was aborted (nothing half-merged)");
  // In plan order: the plans that passed their gates before the last execute stopped.
  for (size_t i = 0; i < entries_.size(); ++i) {
    const json* p = execution::find_plan(doc, entries_[i].id);
    if (!p || !p->contains("worktree") || !(*p)["worktree"].is_object()) continue;
    const json& wt = (*p)["worktree"];
    const MergeState merge = execution::merge_state(wt);
    if (merge == MergeState::Merged) {
      trees_->delete_branch(str(wt, "branch"), str(wt, "path"));  // killed before it was deleted
      continue;
    }
    if (merge != MergeState::Pending) continue;  // not gated: the plan runs again in a fresh worktree
    const auto& e = entries_[i];
    json record, findings = json::array();
    std::string error;
    bool ok = false;
    auto already = is_commit_hash(str(wt, "head")) ? trees_->merged(str(wt, "head")) : std::nullopt;
    if (already && *already) {  // merged before the kill -9: never twice
      record = wt;
      record["merge"] = to_string(MergeState::Merged);
      record["merged_at"] = world_.now();
      ok = true;
    } else {
      MergeResult m;
      if (!is_commit_hash(str(wt, "head")))
        m.error = "its worktree record names no gated commit";
      else
        m = trees_->merge_all({{str(wt, "head"), merge_message(e, wt)}}).front();
      ok = apply_merge(wt, m, record, error, findings);
    }
    // Merged: complete; a conflict fails the plan; refused: the plan stays as it was, gated.
    const std::optional<PlanStatus> status =
        ok ? std::optional<PlanStatus>(PlanStatus::Complete)
           : execution::merge_state(record) == MergeState::Conflict ? std::optional<PlanStatus>(PlanStatus::Failed)
                                                                    : std::nullopt;
    auto up = state::update(world_, root_, [&](json& d) {
      json* q = execution::find_plan(d, e.id);
      if (!q) return false;
      (*q)["worktree"] = record;
      if (status) (*q)["status"] = to_string(*status);
      if (status == PlanStatus::Failed) {
        (*q)["error"] = error;
        (*q)["findings"] = findings;
      }
      return true;
    });
    if (!up.ok()) return finish(kExecHalted, Result::Error, up.error);
    if (ok) {
      emit("plan_merged",
           {{"plan", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}, {"resumed", true}},
           Sym::Ok, "Plan " + e.id + " (gated before the last execute stopped) merged from " + str(record, "branch"));
      log("plan_merged", e.plan,
          {{"plan_id", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}, {"resumed", true}});
      trees_->delete_branch(str(record, "branch"), str(record, "path"));
      continue;
    }
    emit("plan_end",
         {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", error}, {"findings", findings}},
         Sym::Fail, "Plan " + e.id + ": " + error);
    next_ = status == PlanStatus::Failed
                ? "keep plan " + e.id + " to its files, then `yolo execute` runs it again in a fresh worktree"
                : "commit or stash the changes in the project's checkout that are in the way, then `yolo execute`";
    return finish(kExecHalted, Result::Halted, "Halted: plan " + e.id + " could not be merged");
  }
  return -1;
}

}  // namespace yolo::runner::phase
