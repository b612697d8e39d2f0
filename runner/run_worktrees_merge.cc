// `yolo execute` with `isolation: "worktree"`: the merge back in plan order of the plans
// that passed their gates in their worktrees (plan_gate.cc), also after a kill -9
// (runner/run_worktrees.h, runner/worktree.h).
//
// The plan's record in the state (schemas/execution-state.json, plans[].worktree):
//   {path, branch, base, head, merge: none|pending|merged|conflict, merge_commit, merged_at}
// `head` is the commit that passed the gates (the SUMMARY committed on top): the merge names
// it, never the branch, and a resumed run asks git whether it is already in HEAD before it
// merges, so no plan is merged twice and none that passed is lost.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "protocol/base/numbers.h"
#include "runner/dispatch_internal.h"
#include "runner/run_worktrees.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {

std::string WorktreeDriver::merge_message(const PlanEntry& e, const json& wt) {
  return "yolo: merge plan " + e.id + " (" + e.title + ") from " + str(wt, "branch");
}

bool WorktreeDriver::apply_merge(const json& wt, const MergeResult& m, json& record, std::string& error, json& findings) {
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
    findings.push_back(execution::merge_conflict_finding(branch, m.files, error));
    return false;
  }
  error = "git could not merge it (nothing merged): " + m.error;
  return false;
}

void WorktreeDriver::merge(const std::vector<size_t>& plans) {
  run::Core& core = host_.core();
  std::vector<std::string> merged_branches;
  std::vector<std::pair<std::string, std::string>> merged_tips;  // branch, its gated tip
  std::vector<stdfs::path> slots;
  // Every gated commit is on disk before git moves the branch (the core's WriteState came
  // first): a kill -9 from here on leaves a state from which the next run merges what is
  // missing and recognises what is merged.
  // In the core's order (plan order), in one pass: the checkout moves once. (A commit this run
  // gated a moment ago is on a branch nothing merged yet: whether it is in HEAD is not asked.)
  std::vector<size_t> order;
  std::vector<std::pair<std::string, std::string>> steps;
  for (size_t i : plans) {
    const json& r = host_.plan(i).worktree_record;
    if (!r.is_object() || !is_commit_hash(str(r, "head"))) {
      core.merged(i, run::MergeOutcome::Refused);  // no gated commit to name: never merged blindly
      continue;
    }
    order.push_back(i);
    steps.push_back({str(r, "head"), merge_message(host_.entry(i), r)});
  }
  if (order.empty()) return;
  std::vector<MergeResult> results = trees_->merge_all(steps);
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    const auto& e = host_.entry(i);
    json record, findings = json::array();
    std::string error;
    bool ok = apply_merge(host_.plan(i).worktree_record, results[k], record, error, findings);
    host_.plan(i).worktree_record = record;
    const MergeState after = execution::merge_state(record);
    execution::PlanUpdate u = execution::ended(execution::end_after_merge(after, error, findings), world_.now());
    u.set = {{"worktree", record}};
    host_.queue(i, std::move(u));
    core.merged(i, run::merge_outcome(after));  // refused: the core halts the run (MergeRefused)
    if (ok) {
      json md = {{"plan", e.id},
                 {"branch", str(record, "branch")},
                 {"commit", str(record, "head")},
                 {"merge_commit", str(record, "merge_commit")}};
      if (results[k].ahead) md["computed_ahead"] = true;  // its merge step ran while jobs still did
      tell_.emit("plan_merged", md, Sym::Ok, "Plan " + e.id + " merged from " + str(record, "branch"));
      tell_.log("plan_merged", e.plan,
          {{"plan_id", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}});
      merged_branches.push_back(str(record, "branch"));
      merged_tips.push_back({str(record, "branch"), str(record, "head")});
      slots.push_back(str(record, "path"));
      host_.plan(i).worktree.reset();
    } else if (after == MergeState::Conflict) {
      tell_.emit("plan_end",
           {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", error}, {"findings", findings}},
           Sym::Fail,
           "Plan " + e.id + " failed at its merge: " + error);
      host_.next_step("keep plan " + e.id + " to its files (its branch " + str(record, "branch") +
                      " shows what it changed), then `yolo execute` runs it again in a fresh worktree");
      // the other plans are independent (Stage 1 refuses two plans of a wave writing one file)
    } else {  // refused (local changes in the way, a lock): nothing merged, the plan stays gated
      tell_.emit("merge_refused", {{"plan", e.id}, {"error", error}}, Sym::Fail, "Plan " + e.id + ": " + error);
      host_.next_step(
          "commit or stash the changes in the project's checkout that are in the way, then `yolo execute` "
          "merges plan " +
          e.id + " (its gated commit is kept on " + str(record, "branch") + ")");
    }
  }
  host_.merged(merged_branches);  // dispatch: its chain starts again, the remote's branches go
  delete_merged_branches(std::move(merged_tips), slots);
  host_.flush();
}

// One `update-ref --stdin` child of the loop for the batch (the slots that hold one of the
// branches detached first, on the loop); one such child at a time, the next batch's after it
// (two would race for packed-refs.lock). The run ends after the last; what it could not
// delete, tidy() deletes or names at the end of the run.
void WorktreeDriver::delete_merged_branches(std::vector<std::pair<std::string, std::string>> merged,
                                            const std::vector<stdfs::path>& slots) {
  if (!merged.empty()) {
    SpawnSpec spec = trees_->delete_branches_spec(merged, slots);
    if (spec.argv.empty()) return;
    spec.unset_env = dispatch_detail::adapter_unset_env();
    branch_deletes_.push_back(std::move(spec));
  }
  if (branch_delete_proc_ || branch_deletes_.empty()) return;
  SpawnSpec next = std::move(branch_deletes_.front());
  branch_deletes_.erase(branch_deletes_.begin());
  branch_delete_proc_ = Process::start(loop_, std::move(next), [this](SpawnResult) {
    branch_delete_proc_.reset();  // ended: its callback is this one, which is done with it
    delete_merged_branches({}, {});
  });
}

std::optional<WorktreeDriver::Stop> WorktreeDriver::merge_left(size_t i, const json& wt) {
  const MergeState merge = execution::merge_state(wt);
  if (merge == MergeState::Merged) {
    trees_->delete_branch(str(wt, "branch"), str(wt, "path"));  // killed before it was deleted
    return std::nullopt;
  }
  if (merge != MergeState::Pending) return std::nullopt;  // not gated: the plan runs again in a fresh worktree
  const auto& e = host_.entry(i);
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
  const std::optional<PlanStatus> status = execution::status_after_merge(execution::merge_state(record));
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
  if (!up.ok()) return Stop{kExecHalted, execution::Result::Error, up.error};
  if (ok) {
    tell_.emit("plan_merged",
               {{"plan", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}, {"resumed", true}},
               Sym::Ok, "Plan " + e.id + " (gated before the last execute stopped) merged from " + str(record, "branch"));
    tell_.log("plan_merged", e.plan,
              {{"plan_id", e.id}, {"branch", str(record, "branch")}, {"commit", str(record, "head")}, {"resumed", true}});
    trees_->delete_branch(str(record, "branch"), str(record, "path"));
    return std::nullopt;
  }
  tell_.emit("plan_end",
             {{"plan", e.id}, {"status", to_string(PlanStatus::Failed)}, {"error", error}, {"findings", findings}},
             Sym::Fail, "Plan " + e.id + ": " + error);
  host_.next_step(status == PlanStatus::Failed
                      ? "keep plan " + e.id + " to its files, then `yolo execute` runs it again in a fresh worktree"
                      : "commit or stash the changes in the project's checkout that are in the way, then `yolo execute`");
  return Stop{kExecHalted, execution::Result::Halted, "Halted: plan " + e.id + " could not be merged"};
}

}  // namespace yolo::runner::phase
