// Dispatch's return path (runner/dispatch_return.h, docs/dispatch.md): ended jobs' branches
// fetched in batches, checked out in worktree slots by children of the loop, merged ahead
// while jobs still run, and deleted from the remote once merged.
#include "protocol/run/dispatch.h"

#include "protocol/findings/make_finding.h"
#include "protocol/plan/plan.h"
#include "runner/dispatch_internal.h"
#include "runner/dispatch_return.h"

namespace yolo::runner::phase {
using dispatch_detail::adapter_unset_env;
using dispatch_detail::first_line;

// The return path: a plan whose job ended joins the queue; one `git fetch` child (off the
// event loop) brings every branch of this run that is on the remote, and the plans queued
// meanwhile go with the next one: one fetch per batch of ended jobs, not one per plan.
void DispatchReturn::fetch(size_t i, long long wave, SpawnResult r) {
  e_.host.hold(i, nullptr);  // still running for the scheduler until its branch is checked out
  fetch_queue_.push_back({i, wave, std::move(r)});
  if (!fetch_proc_) fetch_batch();
}

void DispatchReturn::fetch_batch() {
  if (fetch_queue_.empty()) return;
  fetch_batch_ = std::move(fetch_queue_);
  fetch_queue_.clear();
  const std::string prefix = "yolo/" + trees()->run_tag() + "/";
  SpawnSpec spec;
  // No `git maintenance run --auto` (nor `gc --auto`) after each batch's fetch: a large wave's
  // fetches leave thousands of loose objects, and an automatic repack of the whole repository
  // would start in the middle of the wave.
  spec.argv = {"git",     "-c", "maintenance.auto=false", "-c", "gc.auto=0", "fetch", "--quiet", "--no-tags",
               "--no-write-fetch-head", e_.url, "+refs/heads/" + prefix + "*:refs/yolo-dispatch/" + prefix + "*"};
  spec.cwd = e_.root;
  spec.unset_env = adapter_unset_env();
  spec.timeout_ms = 600000;
  spec.output_cap = 64 * 1024;
  fetch_proc_ = Process::start(e_.loop, std::move(spec), [this](SpawnResult fr) {
    if (!fr.ok()) return fetched_batch(std::move(fr), "");
    // The fetched heads, read once for the batch by a second child (not on the loop either).
    SpawnSpec h = git_child_spec(e_.root,
                                 {"for-each-ref", "--format=%(objectname) %(refname)",
                                  "refs/yolo-dispatch/yolo/" + trees()->run_tag() + "/"},
                                 30000);
    h.unset_env = adapter_unset_env();
    auto fetched = std::make_shared<SpawnResult>(std::move(fr));
    fetch_proc_ = Process::start(e_.loop, std::move(h), [this, fetched](SpawnResult hr) {
      fetched_batch(std::move(*fetched), hr.ok() ? std::move(hr.out) : std::string());
    });
  });
}

void DispatchReturn::fetched_batch(SpawnResult fr, std::string heads_out) {
  auto batch = std::move(fetch_batch_);
  fetch_batch_.clear();
  auto held = std::move(after_fetch_);  // the fetch has ended: the slots' resets may run now
  after_fetch_.clear();
  for (auto& reset : held) reset();
  std::map<std::string, std::string> heads;
  for (const auto& l : text::lines(heads_out)) {
    auto sp = l.find(' ');
    if (sp != std::string_view::npos) heads[std::string(l.substr(sp + 1))] = std::string(l.substr(0, sp));
  }
  for (auto& item : batch) {
    size_t i = item.plan;
    release(i);
    if (interrupted()) {
      e_.plans.on_interrupt(i);
      continue;
    }
    const auto& e = entry(i);
    json rec = run_of(i).dispatch_rec;
    std::string handle = str(rec, "handle"), branch = e_.plans.branch_of(i);
    std::string job = "its job " + handle + " (branch " + branch + ")";
    auto hit = heads.find("refs/yolo-dispatch/" + branch);
    if (!fr.ok() || hit == heads.end()) {
      e_.plans.record(i, dispatch::record_ended(rec, dispatch::JobState::Failed, e_.world.now()), false);
      std::string error = fr.ok() ? job + " ended but pushed nothing: the branch is not on the remote " + e_.url
                                  : "git fetch of " + job + " from " + e_.url + " failed: " +
                                        first_line(fr.err.empty() ? fr.describe() : fr.err);
      fail(i, error,
           "the job must commit the plan's work and push its branch (docs/dispatch.md, The job); read its "
           "log (`yolo logs " +
               e.id + "`)",
           &item.r);
      continue;
    }
    e_.plans.record(i, dispatch::record_ended(rec, dispatch::JobState::Done, e_.world.now()), false);
    fetched(i, item.wave, hit->second, std::move(item.r));
  }
  fetch_proc_.reset();  // ended: its callback is this one, which is done with it
  if (!fetch_queue_.empty()) fetch_batch();
}

void DispatchReturn::delete_merged(const std::vector<std::string>& branches) {
  std::vector<std::string> argv = {"push", "--quiet", "--delete", e_.url};
  const std::string prefix = "yolo/" + trees()->run_tag() + "/";
  for (const auto& b : branches)
    if (b.rfind(prefix, 0) == 0 && b != prefix + "base") argv.push_back("refs/heads/" + b);
  if (argv.size() == 4) return;
  // Their jobs' logs (refs/yolo-logs/BRANCH, pushed by run-job) go with them, each earlier
  // attempt's too (a failed job's, whose log is the plan's log here), in a push of their own:
  // a job that pushed no log (another job script) must not fail the branches' one.
  std::vector<std::string> logs = {"push", "--quiet", "--delete", e_.url};
  for (size_t k = 4; k < argv.size(); ++k) {
    const std::string b = argv[k].substr(11);
    logs.push_back("refs/yolo-logs/" + b);
    for (size_t i = 0; i < e_.host.plans(); ++i) {
      const PlanRun* r = e_.host.plan_at(i);
      if (!r || r->dispatch_rec.is_null() || e_.plans.branch_of(i) != b) continue;
      const std::string plan_branch = trees()->branch_for(entry(i).id);
      for (int a = 1; a < r->dispatch_rec.value("attempt", 1); ++a)
        logs.push_back("refs/yolo-logs/" + dispatch::branch_for_attempt(plan_branch, a));
    }
  }
  // Best effort: a branch left on the remote is only clutter (the merge is in the checkout).
  // Children of the loop, not waited for here: the loop (and so the run) ends after they do.
  SpawnSpec spec = git_child_spec(e_.root, argv, 120000);
  spec.unset_env = adapter_unset_env();
  remote_deletes_.push_back({std::move(spec), true});
  SpawnSpec ls = git_child_spec(e_.root, logs, 120000);
  ls.unset_env = adapter_unset_env();
  remote_deletes_.push_back({std::move(ls), false});
  next_remote_delete();
}

void DispatchReturn::next_remote_delete() {
  if (remote_delete_proc_ || remote_deletes_.empty()) return;
  RemoteDelete d = std::move(remote_deletes_.front());
  remote_deletes_.erase(remote_deletes_.begin());
  remote_delete_proc_ = Process::start(e_.loop, std::move(d.spec), [this, say = d.say_failure](SpawnResult g) {
    if (say && !g.ok())
      e_.tell.note("could not delete the merged branches from the remote " + e_.url + ": " +
                       first_line(g.err.empty() ? g.describe() : g.err),
                   true);
    // A remote that does not answer holds the end of the run no longer than one push did
    // when they ran at once: the deletions still queued are given up (clutter only).
    if (g.outcome == SpawnResult::Outcome::TimedOut && !remote_deletes_.empty()) {
      e_.tell.note("the remote " + e_.url + " did not answer a deletion in time: " +
                       std::to_string(remote_deletes_.size()) +
                       " more deletion(s) not sent; the merged branches stay there (`git push --delete` removes them)",
                   true);
      remote_deletes_.clear();
    }
    remote_delete_proc_.reset();  // ended: its callback is this one, which is done with it
    next_remote_delete();
  });
}

void DispatchReturn::premerge() {
  if (premerge_proc_ || premerge_stuck_ || interrupted() || e_.host.stopping() || !trees()) return;
  if (premerge_tip_.empty()) {
    premerge_tip_ = trees()->head();
    if (premerge_tip_.empty()) return;
  }
  // The next step is the first gated plan in plan order not in the chain yet; a plan still
  // running before it may join the merge ahead of it, so the chain waits for it.
  for (size_t i = 0; i < e_.host.plans(); ++i) {
    if (premerge_done_.count(i)) continue;
    const auto& p = e_.host.core().plan(i);
    if (p.status == PlanStatus::Running) return;
    if (p.merge != MergeState::Pending || p.status != PlanStatus::Complete || p.head.empty()) continue;
    const json& r = run_of(i).worktree_record;
    if (!r.is_object() || !is_commit_hash(str(r, "head"))) return;
    premerge_step(i, premerge_tip_, str(r, "head"), e_.host.merge_message(entry(i), r));
    return;
  }
}

void DispatchReturn::premerge_step(size_t i, const std::string& onto, const std::string& commit,
                                   const std::string& message) {
  const int gen = premerge_gen_;
  SpawnSpec spec = trees()->merge_tree_spec(onto, commit);
  spec.unset_env = adapter_unset_env();
  premerge_proc_ = Process::start(e_.loop, std::move(spec), [this, i, gen, onto, commit, message](SpawnResult t) {
    auto stuck = [&] {
      premerge_stuck_ = gen == premerge_gen_;  // an answer from before a merge says nothing now
      premerge_proc_.reset();                  // ended: its callback is this one, which is done with it
    };
    std::string tree = first_line(t.out);
    if (gen != premerge_gen_ || !t.ok() || !is_commit_hash(tree)) return stuck();  // a conflict: merge_all's
    SpawnSpec c = trees()->commit_tree_spec(tree, onto, commit, message);
    c.unset_env = adapter_unset_env();
    premerge_proc_ = Process::start(e_.loop, std::move(c), [this, i, gen, onto, commit, message](SpawnResult cr) {
      std::string id = first_line(cr.out);
      if (gen != premerge_gen_ || !cr.ok() || !is_commit_hash(id)) {
        premerge_stuck_ = gen == premerge_gen_;
        premerge_proc_.reset();
        return;
      }
      trees()->remember_merge(onto, commit, message, id);
      premerge_tip_ = id;
      premerge_done_.insert(i);
      premerge_proc_.reset();
      premerge();
    });
  });
}

void DispatchReturn::premerge_reset() {
  ++premerge_gen_;
  premerge_tip_.clear();
  premerge_done_.clear();
  premerge_stuck_ = false;
  if (trees()) trees()->forget_merges();
}

void DispatchReturn::fetched(size_t i, long long wave, const std::string& head, SpawnResult r) {
  const int slot = e_.host.core().free_slot();
  e_.host.core().take_slot(i, slot);  // the slot is this plan's while its checkout runs
  auto c = std::make_shared<Checkout>();
  c->plan = i;
  c->wave = wave;
  c->head = head;
  c->slot = slot;
  c->r = std::move(r);
  std::string err;
  c->steps = trees()->switch_steps(entry(i).id, head, slot, e_.plans.branch_of(i), c->w, err);
  if (c->steps.empty()) {
    fail(i, "could not check out the fetched branch " + e_.plans.branch_of(i) + " (" + head.substr(0, 12) + "): " + err,
         "check the project's git repository", &c->r);
    return;
  }
  checkout_step(std::move(c));
}

// One step of a fetched branch's checkout; a failed one leaves the slot to create(), which
// removes and adds it again (a lock a killed git left, a slot broken by hand).
void DispatchReturn::checkout_step(std::shared_ptr<Checkout> c) {
  const size_t i = c->plan;
  if (c->next == c->steps.size()) return checked_out(i, c->wave, c->head, c->slot, c->w, std::move(c->r));
  SpawnSpec spec = std::move(c->steps[c->next++]);
  spec.unset_env = adapter_unset_env();
  std::string what;
  for (const auto& a : spec.argv) what += (what.empty() ? "" : " ") + a;
  e_.host.hold(i, Process::start(e_.loop, std::move(spec), [this, c, i, what](SpawnResult g) {
    release(i);
    if (interrupted()) return e_.plans.on_interrupt(i);
    if (g.ok()) return checkout_step(c);
    const std::string why = g.describe() + ": " + text::tail_lines(g.err, 5);
    emit("plan_checkout_retried", {{"plan", entry(i).id}, {"step", what}, {"error", why}}, Sym::Warn,
         "Plan " + entry(i).id + ": `" + what + "` " + why + "; checking the slot out again");
    trees()->forget(c->w.path);
    auto reset = [this, c, i] {
      release(i);
      if (interrupted()) return e_.plans.on_interrupt(i);
      std::string err;
      auto w = trees()->create(entry(i).id, c->head, c->slot, err, e_.plans.branch_of(i));
      if (!w) {
        fail(i,
             "could not check out the fetched branch " + e_.plans.branch_of(i) + " (" + c->head.substr(0, 12) +
                 "): " + err,
             "check the project's git repository", &c->r);
        return;
      }
      checked_out(i, c->wave, c->head, c->slot, std::move(w), std::move(c->r));
    };
    if (!fetch_proc_) return reset();
    e_.host.hold(i, nullptr);  // still running for the scheduler until its reset
    after_fetch_.push_back(std::move(reset));
  }));
}

void DispatchReturn::checked_out(size_t i, long long wave, const std::string& head, int slot,
                                 std::optional<PlanWorktree> w, SpawnResult r) {
  const auto& e = entry(i);
  std::string err;
  // The scope fence diffs the job's commits against the base the job started from (recorded at
  // submit: a re-attached job's wave may have moved since, when a stopped run merged some plans).
  std::string job_base = str(run_of(i).dispatch_rec, "base");
  w->base = is_commit_hash(job_base) ? job_base : e_.host.wave_bases()[wave];
  if (!e_.host.adopt_worktree(i, *w, slot, err)) {
    fail(i, err, "check the project's git repository", &r);
    return;
  }
  emit("plan_fetched", {{"plan", e.id}, {"branch", e_.plans.branch_of(i)}, {"commit", head}}, Sym::Diamond,
       "Plan " + e.id + ": branch " + e_.plans.branch_of(i) + " fetched (" + head.substr(0, 12) + "), gating it here");
  r.outcome = SpawnResult::Outcome::Exited;
  r.exit_code = 0;
  r.elapsed_ms = static_cast<double>(uv_hrtime() - run_of(i).started_at) / 1e6;
  e_.host.run_checks(i, std::move(r));  // then conclude(): SUMMARY gate, scope fence, checks; merged in plan order
}

}  // namespace yolo::runner::phase
