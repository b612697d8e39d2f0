// `yolo execute` with `isolation: "worktree"`: the pool of worktrees a run starts with, each
// plan's worktree made ready or adopted again after a kill -9 (runner/run_worktrees.h;
// run_worktrees_merge.cc has the merges, plan_gate.cc the gates; runner/worktree.h).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "protocol/findings/make_finding.h"
#include "protocol/base/numbers.h"
#include "runner/run_worktrees.h"
#include "runner/slot_objects.h"

namespace yolo::runner::phase {

bool WorktreeDriver::adopt(size_t i, const PlanWorktree& w, int slot, std::string& err) {
  const auto& e = host_.entry(i);
  // The plan as this run read it (an architect may have revised it without a commit): the
  // gates judge the reviewed plan, in a local worktree and in a dispatched plan's alike.
  constexpr size_t kPlanMax = 64u << 20;
  const auto mine = world_.files().read(root_ / e.path, kPlanMax, /*text=*/false);
  const auto theirs = world_.files().read(w.path / e.path, kPlanMax, /*text=*/false);
  if (mine.ok() && (!theirs.ok() || mine.content != theirs.content)) {
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
    // A new file renamed over the path: a symlink there is replaced, never followed.
    if (auto wrote = world_.files().write_atomic(target, mine.content); !wrote.ok()) {
      err = "could not put the plan into its worktree: " + wrote.error;
      return false;
    }
  }
  PlanRun& pr = host_.plan(i);
  pr.worktree = w;
  host_.core().take_slot(i, slot);
  json rec = {{"path", w.path.string()}, {"branch", w.branch}, {"base", w.base}, {"merge", to_string(MergeState::None)}};
  pr.worktree_record = rec;
  execution::PlanUpdate u = execution::started(std::nullopt);
  u.set = {{"worktree", rec}};
  host_.queue(i, std::move(u));
  return true;
}

bool WorktreeDriver::prepare(size_t i, long long wave, std::string& err) {
  const auto& e = host_.entry(i);
  if (!wave_base_.count(wave)) {
    std::string h = trees_->head();
    if (h.empty()) {
      err = "git rev-parse HEAD failed in " + root_.string();
      return false;
    }
    wave_base_[wave] = h;
  }
  int slot = host_.core().free_slot();
  auto w = trees_->create(e.id, wave_base_[wave], slot, err);
  if (!w) return false;
  return adopt(i, *w, slot, err);
}

bool WorktreeDriver::resume_finished(size_t i) {
  const auto& e = host_.entry(i);
  auto it = left_on_branch_.find(trees_->branch_for(e.id));
  if (it == left_on_branch_.end()) return false;
  const stdfs::path slot_dir = it->second;
  left_on_branch_.erase(it);  // looked at once: a plan that runs again starts afresh
  int slot = 0;
  if (std::string n = slot_dir.filename().string(); n.rfind("slot-", 0) == 0)
    slot = static_cast<int>(text::parse_digits(n.substr(5)).value_or(0));
  std::error_code same_ec;
  if (slot <= 0 || slot > 100000 || !stdfs::equivalent(trees_->slot_path(slot), slot_dir, same_ec)) return false;
  if (host_.core().slot_held(slot, i)) return false;
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
  if (!adopt(i, w, slot, err)) return false;
  PlanRun& r = host_.plan(i);
  const PlanWorktree& got = *r.worktree;  // as adopt recorded it
  tell_.emit("plan_resumed",
             {{"plan", e.id}, {"worktree", got.path.string()}, {"branch", got.branch}, {"base", got.base}}, Sym::Ok,
             "Plan " + e.id + ": its executor had finished before the last execute stopped (its commits on " +
                 got.branch + ", its SUMMARY in " + got.path.string() + "): gated now, not run again");
  tell_.log("plan_resumed", e.plan, {{"plan_id", e.id}, {"branch", got.branch}});
  host_.core().started(i);
  r.started_at = uv_hrtime();
  r.argv = {};
  resumed_.push_back(i);  // gated from the loop (start_resumed), never inside the caller's schedule()
  return true;
}

void WorktreeDriver::start_resumed() {
  if (resumed_.empty()) return;
  uv_timer_start(
      &resume_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<WorktreeDriver*>(t->data);
        std::vector<size_t> todo;
        todo.swap(self->resumed_);
        for (size_t k : todo) {
          SpawnResult r;
          r.outcome = SpawnResult::Outcome::Exited;
          r.exit_code = 0;
          self->host_.resumed(k, std::move(r));
        }
      },
      0, 0);
}

void WorktreeDriver::open() {
  uv_timer_init(loop_, &resume_timer_);
  resume_timer_.data = this;
}

void WorktreeDriver::close() { uv_close(reinterpret_cast<uv_handle_t*>(&resume_timer_), nullptr); }

void WorktreeDriver::drop(const PlanWorktree& w) {
  trees_->forget(w.path);
  trees_->remove(w.path, w.branch);
}

void WorktreeDriver::tidy() {
  if (!trees_ || tidied_) return;
  // What killed runs leave (a slot on a plan's branch, merged branches, a killed git's lock
  // file) goes at the end of every run; what cannot go is said, with how.
  tidied_ = true;
  std::vector<std::string> notes;
  trees_->tidy(notes);
  for (const auto& n : notes) tell_.emit("worktree_tidy", {{"note", n}}, Sym::Warn, n);
}

std::optional<WorktreeDriver::Stop> WorktreeDriver::init(const json& doc, const std::string& phase_rel,
                                                         const std::string& fresh_cid, SummaryMode mode) {
  mode_ = mode;
  std::string cid = str(doc, "correlation_id");
  if (cid.empty()) cid = fresh_cid;
  trees_ = std::make_unique<Worktrees>(root_, cid);
  std::string err;
  if (!trees_->init(err)) {
    host_.next_step(
        "run `git init` and commit the project, or set \"isolation\": \"none\" in .yolo-planning/config.json");
    return Stop{kExecHalted, execution::Result::Error, err};
  }
  if (str(doc, "phase_dir") != phase_rel || !doc.contains("plans") || !doc["plans"].is_array()) return std::nullopt;
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
        tell_.note("the slot " + d.path().string() + " is removed: " + oerr);
        trees_->remove(d.path(), "");
      }
    auto left = trees_->slots_on_plan_branches();
    for (size_t i = 0; i < host_.plans(); ++i) {
      const json* p = execution::find_plan(doc, host_.entry(i).id);
      auto it = left.find(trees_->branch_for(host_.entry(i).id));
      if (!p || it == left.end()) continue;
      const std::string slot = execution::slot_to_take_up(*p, it->first);
      std::error_code same;
      if (!slot.empty() && stdfs::equivalent(it->second, slot, same)) left_on_branch_.insert(*it);
    }
  }
  if (trees_->abort_leftover_merge())
    tell_.emit("merge_aborted", json::object(), Sym::Warn,
               "A merge left half-done by a stopped execute was aborted (nothing half-merged)");
  // In plan order: the plans that passed their gates before the last execute stopped.
  for (size_t i = 0; i < host_.plans(); ++i) {
    const json* p = execution::find_plan(doc, host_.entry(i).id);
    if (!p || !p->contains("worktree") || !(*p)["worktree"].is_object()) continue;
    if (auto stop = merge_left(i, (*p)["worktree"])) return stop;
  }
  return std::nullopt;
}

}  // namespace yolo::runner::phase
