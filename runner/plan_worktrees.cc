// `yolo execute` with `isolation: "worktree"`: the pool of worktrees a run starts with, each
// plan's worktree made ready or adopted again after a kill -9 (plan_merge.cc has the gates and
// the merges; runner/phase_run_internal.h, runner/worktree.h).
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
