// `yolo execute` with `isolation: "worktree"`: a plan's gates in its worktree, off the event
// loop (runner/plan_gate.h). The git children of a gate (`git status`, `git diff`, the
// SUMMARY's commit, what the SUMMARY gate asks git) take tens of milliseconds a plan; on a
// worker thread the gates of plans that ended together run at once, and the loop goes on
// drawing, waiting and starting plans meanwhile. The loop records the answer (conclude).
#include <algorithm>

#include "protocol/findings/make_finding.h"
#include "runner/plan_gate.h"
#include "runner/run_worktrees.h"

namespace yolo::runner::phase {

namespace {

GateOut gate(const GateIn& in) {
  GateOut out;
  const PlanWorktree& w = in.w;
  const std::string& sp = in.summary_path;
  json rec = in.record;
  out.record = rec;
  out.set["worktree"] = rec;
  // What the executor committed was taken in when it ended (on_done), or could not be.
  if (!in.objects_error.empty()) {
    out.findings.push_back(make_finding(Severity::High, "worktree", in.objects_error + " (" + w.path.string() + ")",
                                        "`yolo logs " + in.plan_id + "`; `yolo execute` runs the plan again")
                               .to_json());
    return out;
  }
  std::error_code ec;
  if (!stdfs::exists(w.path / sp, ec)) {
    out.state = SummaryState::Missing;
    return out;
  }
  // One scan of the worktree: the commit the executor left (the fence judges, and the
  // SUMMARY is committed on, the commit that will be merged) and what it left uncommitted.
  // First, so that the SUMMARY gate's git child also lists what the fence judges.
  Worktrees& trees = *in.trees;
  std::string err;
  auto scanned = trees.scan(w, err);
  std::string tip = scanned ? scanned->head : trees.head(w.path);
  if (in.git && scanned) in.git->work_tree_known();
  if (in.git) in.git->want_range(w.base, tip);
  SummaryVerdict v = verify_summary(*in.world, w.path / sp, w.path / in.plan_path, w.path, in.mode, in.git);
  json findings = v.to_json().value("findings", json::array());
  // The scope fence: the branch's commits (base..tip) against the plan's files, from the
  // SUMMARY gate's diff-tree when it listed them, else one diff of its own.
  auto changed = in.git ? in.git->range_files(w.base, tip) : std::nullopt;
  if (!changed) changed = trees.changed_files(w, tip.empty() ? std::string("HEAD") : tip, err);
  bool summary_dirty = true, others_staged = true;
  auto l = load_plan(*in.world, w.path / in.plan_path);
  json scope_json = json::object();
  json scope_findings = json::array();
  scope::Options so = in.scope;
  if (!changed) {
    Finding f = make_finding(Severity::High, "scope_fence",
                             "could not diff the plan's branch " + w.branch + " against its base: " + err,
                             "check the worktree " + w.path.string());
    scope_findings.push_back(f.to_json());
  } else {
    so.exempt = {in.plan_path, sp};
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
        if (d.path != sp && d.path != in.plan_path && !d.ignored()) left.push_back(d.path);
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
  out.set["scope"] = scope_json;
  for (const auto& f : scope_findings) findings.push_back(f);
  // What the slot holds after this gate, for its next plan (runner/worktree.h): known only
  // when the tree was scanned and the tip read.
  auto remember = [&](const std::string& at, bool summary_committed) {
    if (!scanned || !changed || !is_commit_hash(at)) {
      out.slot = GateOut::Slot::Forget;
      return;
    }
    out.slot = GateOut::Slot::Remember;
    out.tip = at;
    out.changed = *changed;
    for (const auto& d : scanned->entries)
      if (!(summary_committed && d.path == sp)) out.left.push_back(d);
    if (summary_committed && std::find(out.changed.begin(), out.changed.end(), sp) == out.changed.end())
      out.changed.push_back(sp);
  };
  const execution::WorktreeGate g = execution::worktree_gate(findings, in.commit);
  out.findings = std::move(findings);
  if (!g.commit) {  // failed (a failed check fails it too): nothing to merge
    remember(tip, false);
    out.state = g.state;
    return out;
  }
  // Passed: the SUMMARY goes onto the branch (the merge brings it to the checkout).
  std::string head =
      trees.commit_paths(w, tip, {sp}, summary_dirty, others_staged, "yolo: SUMMARY of plan " + in.plan_id, err);
  if (head.empty()) {
    out.slot = GateOut::Slot::Forget;
    out.findings.push_back(make_finding(Severity::High, "worktree",
                                        "could not commit the SUMMARY on branch " + w.branch + ": " + err,
                                        "check the worktree " + w.path.string())
                               .to_json());
    out.state = SummaryState::Failed;
    return out;
  }
  remember(head, summary_dirty);
  rec["head"] = head;
  rec["merge"] = to_string(MergeState::Pending);
  out.record = rec;
  out.set["worktree"] = rec;
  out.state = SummaryState::Passed;
  return out;
}

// One plan's gates on a worker thread of the loop.
struct GateJob {
  uv_work_t req{};
  WorktreeDriver* driver = nullptr;
  size_t plan = 0;
  GateIn in;
  GateOut out;
  SpawnResult executor;  // what conclude goes on with
};

}  // namespace

GateOut gate_worktree(const GateIn& in) {
  try {
    return gate(in);
  } catch (const std::exception& e) {  // never escapes the thread (that would end the process)
    GateOut out;
    out.record = in.record;
    out.set["worktree"] = in.record;
    out.slot = GateOut::Slot::Forget;
    out.findings.push_back(make_finding(Severity::High, "worktree",
                                        std::string("the gates in the worktree failed: ") + e.what(),
                                        "check the worktree " + in.w.path.string())
                               .to_json());
    return out;
  }
}

void WorktreeDriver::gate(size_t i, SpawnResult r) {
  const PlanEntry& e = host_.entry(i);
  PlanRun& pr = host_.plan(i);
  const PlanWorktree& w = *pr.worktree;  // conclude gates only a plan with one
  auto* j = new GateJob;
  j->req.data = j;
  j->driver = this;
  j->plan = i;
  j->executor = std::move(r);
  GateIn& in = j->in;
  in.w = w;
  in.plan_id = e.id;
  in.plan_path = e.path;
  in.summary_path = summary_rel_for(world_, root_, e.path);
  in.record = pr.worktree_record;
  in.objects_error = pr.objects_error;
  in.scope.outside = scope::severity_setting(cfg_.scope_outside);
  in.scope.untouched = scope::severity_setting(cfg_.scope_untouched);
  in.mode = mode_;
  in.commit = plan_checks::findings(pr.check_out, pr.check_errors).empty();
  in.world = &world_;
  auto& git = slot_git_[w.path.string()];  // one per slot: it knows the repository already
  if (!git) git = std::make_unique<GitCli>(w.path);
  in.git = git.get();
  in.trees = trees_.get();
  pr.aside_step = "running its gates";
  uv_queue_work(loop_, &j->req, [](uv_work_t* req) {
    auto* job = static_cast<GateJob*>(req->data);
    job->out = gate_worktree(job->in);
  }, [](uv_work_t* req, int) {
    std::unique_ptr<GateJob> job(static_cast<GateJob*>(req->data));
    WorktreeDriver& d = *job->driver;
    PlanRun& p = d.host_.plan(job->plan);
    p.aside_step = nullptr;
    GateOut& o = job->out;
    const stdfs::path& slot = job->in.w.path;
    // Recorded even after a Ctrl-C meanwhile: the gates ran to their end, and a plan that
    // passed waits for its merge like one gated a moment before the interrupt (the next run
    // merges it).
    if (o.slot == GateOut::Slot::Forget) d.trees_->forget(slot);
    if (o.slot == GateOut::Slot::Remember) d.trees_->remember(job->in.w, o.tip, o.changed, o.left);
    p.worktree_record = o.record;
    p.gated = std::make_unique<GateOut>(std::move(o));
    d.host_.gated(job->plan, job->executor);
  });
}

}  // namespace yolo::runner::phase
