// Worktree isolation (runner/run_worktrees.h) driven alone through its Host, with a real git
// repository: a wave's plans get worktrees from the wave's base; a plan's gates in its worktree
// (its SUMMARY committed on its branch, the scope fence); the core's merges go in the order given,
// a conflict failing its plan; the merged branches are deleted by a child of the loop; a killed
// run's slot holding finished work is adopted, not run again, and its gated plans are merged once.
#include "runner/run_worktrees.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "runner/plan_gate.h"
#include "fake_teller.h"
#include "test_support.h"

namespace yolo::runner::phase {
namespace {

using test::TempDir;

const std::string kPhase = ".yolo-planning/phases/01-demo";
const std::string kCid = "0123456789abcdef";

using test::git;

bool has_branch(const stdfs::path& dir, const std::string& branch) {
  return test::run_program({"git", "rev-parse", "--verify", "-q", "refs/heads/" + branch}, dir).exit_code == 0;
}

// A run of two plans of wave 1, as much of it as worktree isolation reaches through its Host.
struct FakeRun {
  TempDir tmp;
  stdfs::path root = tmp / "repo";
  Config cfg;
  uv_loop_t loop{};
  std::vector<PlanEntry> entries;
  std::vector<PlanRun> runs;
  run::Core core;
  std::vector<std::pair<size_t, execution::PlanUpdate>> queued;
  test::FakeTeller told;
  std::vector<std::string> next;
  std::vector<size_t> resumed, gated;  // Host::resumed, Host::gated calls
  std::vector<std::vector<std::string>> merged;  // Host::merged calls
  std::unique_ptr<WorktreeDriver> d;

  FakeRun() {
    uv_loop_init(&loop);
    stdfs::create_directories(root / kPhase);
    git(root, {"init", "-q", "-b", "main"});
    test::write_file(root / "README.md", "demo\n");
    for (const char* p : {"01", "02"}) {
      const std::string rel = kPhase + "/01-" + p + "-PLAN.md";
      test::write_file(root / rel, std::string("---\nphase: 01\nplan: ") + p + "\nfiles_modified: [" +
                                       (p[1] == '1' ? "one.txt" : "two.txt") + "]\n---\n# Plan " + p + "\n");
      entries.push_back({std::string("01-") + p, p, std::string("plan ") + p, 1, {}, rel});
    }
    git(root, {"add", "."});
    git(root, {"commit", "-qm", "base"});
    runs.resize(entries.size());
    core = fresh_core();
    d = driver();
  }
  ~FakeRun() {
    close();
    runs.clear();
    uv_loop_close(&loop);
  }
  void close() {
    if (!d) return;
    d->close();
    uv_run(&loop, UV_RUN_DEFAULT);  // the branch deletions end, the timer closes
    d.reset();
  }

  run::Core fresh_core() const {
    run::Settings s;
    s.isolated = true;
    return run::Core(run::seeds(json::object(), entries, {}).plans, s);  // seeded as a fresh run's
  }

  std::unique_ptr<WorktreeDriver> driver() {
    WorktreeDriver::Host h;
    h.plans = [this] { return entries.size(); };
    h.entry = [this](size_t i) -> const PlanEntry& { return entries[i]; };
    h.plan = [this](size_t i) -> PlanRun& { return runs[i]; };
    h.core = [this]() -> run::Core& { return core; };
    h.queue = [this](size_t i, execution::PlanUpdate u) { queued.push_back({i, std::move(u)}); };
    h.flush = [] {};
    h.next_step = [this](std::string s) { next.push_back(std::move(s)); };
    h.gated = [this](size_t i, SpawnResult) { gated.push_back(i); };
    h.resumed = [this](size_t i, SpawnResult) { resumed.push_back(i); };
    h.merged = [this](const std::vector<std::string>& b) { merged.push_back(b); };
    auto w = std::make_unique<WorktreeDriver>(test::real_world(), root, cfg, &loop, told, std::move(h));
    w->open();
    return w;
  }

  // Plan i's work: `file` with `text` committed on its branch in its worktree, then recorded
  // as gated (its head, merge pending), as the gates leave it.
  void commit_in_slot(size_t i, const std::string& file, const std::string& text) {
    const PlanWorktree& w = *runs[i].worktree;
    test::write_file(w.path / file, text);
    git(w.path, {"add", file});
    git(w.path, {"commit", "-qm", "work of " + entries[i].id});
    runs[i].worktree_record["head"] = git(w.path, {"rev-parse", "HEAD"});
    runs[i].worktree_record["merge"] = "pending";
  }
  // Plan i of wave 1 starts, as the core decides it (its slot is held while it runs).
  bool prepare(size_t i, std::string& err) {
    core.started(i);
    return d->prepare(i, 1, err);
  }
  // Plan i's SUMMARY in its worktree (uncommitted, as an executor leaves it).
  std::string write_summary(size_t i) {
    const std::string sp = summary_rel_for(test::real_world(), root, entries[i].path);
    test::write_file(runs[i].worktree->path / sp,
                     "---\nphase: 01\nplan: " + entries[i].plan + "\nstatus: complete\n---\nDone.\n");
    return sp;
  }
  // Plan i's executor ended: its gates run on a worker thread, then Host::gated.
  void gate(size_t i) {
    d->gate(i, SpawnResult{});
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  // The state a killed run leaves: plan i running, its worktree record as the run holds it.
  json write_state(size_t i) {
    json doc = {{"status", "running"},
                {"phase_dir", kPhase},
                {"correlation_id", kCid},
                {"plans", json::array({{{"id", entries[i].id}, {"status", "running"}, {"worktree", runs[i].worktree_record}}})}};
    test::write_file(state::state_path(root), doc.dump(2));
    return doc;
  }
  json state_plan(size_t i) const {
    json doc = json::parse(test::read_file(state::state_path(root)));
    const json* p = execution::find_plan(doc, entries[i].id);
    return p ? *p : json();
  }
  // A new run (the driver anew, nothing held) reads doc.
  std::optional<WorktreeDriver::Stop> restart(const json& doc) {
    close();
    runs.clear();
    runs.resize(entries.size());
    core = fresh_core();
    told.clear();
    next.clear();
    d = driver();
    return d->init(doc, kPhase, kCid, SummaryMode::Off);
  }
  const execution::PlanUpdate* last_update(size_t i) const {
    for (auto it = queued.rbegin(); it != queued.rend(); ++it)
      if (it->first == i) return &it->second;
    return nullptr;
  }
};

TEST(WorktreeDriver, AWavesPlansGetWorktreesFromTheWavesBaseInSlotsOfTheirOwn) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  const std::string base = git(run.root, {"rev-parse", "HEAD"});
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  // The checkout moves on (a merge of an earlier plan): the wave's next plan starts where the
  // wave started all the same.
  test::write_file(run.root / "later.txt", "later\n");
  git(run.root, {"add", "later.txt"});
  git(run.root, {"commit", "-qm", "later"});
  ASSERT_TRUE(run.prepare(1, err)) << err;
  ASSERT_TRUE(run.runs[0].worktree && run.runs[1].worktree);
  const PlanWorktree& a = *run.runs[0].worktree;
  const PlanWorktree& b = *run.runs[1].worktree;
  EXPECT_EQ(a.base, base);
  EXPECT_EQ(b.base, base) << "the wave's base, not the checkout's HEAD now";
  EXPECT_EQ(git(b.path, {"rev-parse", "HEAD"}), base);
  EXPECT_FALSE(stdfs::exists(b.path / "later.txt"));
  EXPECT_NE(a.path, b.path);
  EXPECT_EQ(run.core.plan(0).slot, 1);
  EXPECT_EQ(run.core.plan(1).slot, 2);
  EXPECT_EQ(a.branch, run.d->trees()->branch_for("01-01"));
  EXPECT_TRUE(stdfs::exists(b.path / run.entries[1].path)) << "the plan is in its worktree";
  const execution::PlanUpdate* u = run.last_update(1);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->status, PlanStatus::Running);
  EXPECT_EQ(u->set["worktree"]["base"], base) << u->set.dump();
  EXPECT_EQ(u->set["worktree"]["merge"], "none");
  EXPECT_EQ(run.d->wave_bases()[1], base);
}

TEST(WorktreeDriver, MergesGoInTheCoresOrderAndAConflictFailsOnlyItsPlan) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  ASSERT_TRUE(run.prepare(1, err)) << err;
  run.commit_in_slot(0, "README.md", "plan one\n");
  run.commit_in_slot(1, "README.md", "plan two\n");  // the same file: the second merge conflicts
  const std::string branch0 = run.runs[0].worktree->branch, branch1 = run.runs[1].worktree->branch;
  run.d->merge({0, 1});
  EXPECT_EQ(test::read_file(run.root / "README.md"), "plan one\n") << "plan 01 first, then nothing of plan 02";
  EXPECT_EQ(run.core.plan(0).merge, MergeState::Merged);
  EXPECT_EQ(run.core.plan(1).merge, MergeState::Conflict);
  EXPECT_EQ(run.core.plan(1).status, PlanStatus::Failed);
  EXPECT_FALSE(run.runs[0].worktree) << "a merged plan's worktree is given up";
  const execution::PlanUpdate* ok = run.last_update(0);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, PlanStatus::Complete);
  EXPECT_EQ(ok->set["worktree"]["merge"], "merged");
  const execution::PlanUpdate* bad = run.last_update(1);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, PlanStatus::Failed);
  EXPECT_EQ(bad->set["worktree"]["merge"], "conflict");
  ASSERT_EQ(bad->findings.size(), 1u) << bad->findings.dump();
  EXPECT_EQ(bad->findings[0]["check"], "merge") << bad->findings.dump();
  EXPECT_NE(bad->error.find("README.md"), std::string::npos) << bad->error;
  ASSERT_EQ(run.merged.size(), 1u);
  EXPECT_EQ(run.merged[0], std::vector<std::string>{branch0});
  EXPECT_TRUE(run.told.has("plan_merged"));
  ASSERT_FALSE(run.next.empty());
  EXPECT_NE(run.next.back().find(branch1), std::string::npos) << run.next.back();
  // The merged plan's branch goes (a child of the loop); the failed plan's is kept to inspect.
  uv_run(&run.loop, UV_RUN_DEFAULT);
  EXPECT_FALSE(has_branch(run.root, branch0));
  EXPECT_TRUE(has_branch(run.root, branch1));
}

TEST(WorktreeDriver, AKilledRunsFinishedSlotIsAdoptedNotRunAgain) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  ASSERT_TRUE(run.prepare(1, err)) << err;
  // Plan 01's executor finished (its commit, its SUMMARY); plan 02's did not (no SUMMARY).
  run.commit_in_slot(0, "one.txt", "one\n");
  run.commit_in_slot(1, "two.txt", "two\n");
  const PlanWorktree w0 = *run.runs[0].worktree, w1 = *run.runs[1].worktree;
  const std::string sp = summary_rel_for(test::real_world(), run.root, run.entries[0].path);
  test::write_file(w0.path / sp, "---\nphase: 01\nplan: 01\nstatus: complete\n---\nDone.\n");
  // The run is killed: its state says which slot and branch each plan had, not gated yet.
  json doc = {{"phase_dir", kPhase}, {"plans", json::array()}};
  for (const PlanWorktree* w : {&w0, &w1})
    doc["plans"].push_back({{"id", w->plan_id},
                            {"status", "running"},
                            {"worktree", {{"path", w->path.string()}, {"branch", w->branch}, {"merge", "none"}}}});
  run.close();
  run.runs.clear();
  run.runs.resize(2);
  run.core = run.fresh_core();
  run.d = run.driver();
  ASSERT_FALSE(run.d->init(doc, kPhase, kCid, SummaryMode::Off));
  run.told.clear();
  run.runs[0].argv = {"an executor"};
  ASSERT_TRUE(run.d->resume_finished(0)) << "plan 01's finished work is taken up";
  ASSERT_TRUE(run.runs[0].worktree);
  EXPECT_EQ(run.runs[0].worktree->prepared, "resumed");
  EXPECT_EQ(run.runs[0].worktree->path, w0.path);
  EXPECT_EQ(run.core.plan(0).slot, 1);
  EXPECT_EQ(run.core.plan(0).status, PlanStatus::Running) << "started in the run core, without an executor";
  EXPECT_TRUE(run.runs[0].argv.empty()) << "no executor runs it";
  EXPECT_GT(run.runs[0].started_at, 0u);
  ASSERT_TRUE(run.told.has("plan_resumed"));
  EXPECT_EQ(run.told.last("plan_resumed")["branch"], w0.branch);
  EXPECT_EQ(run.told.log_types(), std::vector<std::string>{"plan_resumed"});
  EXPECT_FALSE(run.d->resume_finished(1)) << "no SUMMARY: plan 02 runs again";
  EXPECT_FALSE(run.runs[1].worktree);
  EXPECT_EQ(run.told.names(), std::vector<std::string>{"plan_resumed"}) << "plan 02's start is not said here";
  run.d->start_resumed();
  uv_run(&run.loop, UV_RUN_DEFAULT);
  EXPECT_EQ(run.resumed, std::vector<size_t>{0}) << "gated from the loop as if its executor ended";
}

// Plan i's work committed in its worktree by its executor (the record not gated yet).
void executor_commits(FakeRun& run, size_t i, const std::string& file, const std::string& text) {
  const PlanWorktree& w = *run.runs[i].worktree;
  test::write_file(w.path / file, text);
  git(w.path, {"add", file});
  git(w.path, {"commit", "-qm", "work of " + run.entries[i].id});
}

TEST(WorktreeDriver, APassingSummaryIsCommittedOnItsBranchAndItsHeadWaitsForTheMerge) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  executor_commits(run, 0, "one.txt", "one\n");
  const stdfs::path slot = run.runs[0].worktree->path;
  const std::string work = git(slot, {"rev-parse", "HEAD"});
  const std::string sp = run.write_summary(0);
  run.gate(0);
  ASSERT_EQ(run.gated, std::vector<size_t>{0}) << "Host::gated once, from the loop";
  ASSERT_TRUE(run.runs[0].gated);
  const GateOut& g = *run.runs[0].gated;
  EXPECT_EQ(g.state, execution::SummaryState::Passed) << g.findings.dump();
  const std::string head = git(slot, {"rev-parse", "HEAD"});
  EXPECT_NE(head, work) << "the SUMMARY is a commit of its own on the branch";
  EXPECT_EQ(git(slot, {"rev-parse", head + "^"}), work);
  EXPECT_EQ(git(slot, {"log", "-1", "--format=%s"}), "yolo: SUMMARY of plan 01-01");
  EXPECT_EQ(git(slot, {"ls-tree", "--name-only", head, "--", sp}), sp);
  EXPECT_EQ(git(slot, {"status", "--porcelain", "--", sp}), "") << "committed, nothing left";
  EXPECT_EQ(run.runs[0].worktree_record["head"], head) << run.runs[0].worktree_record.dump();
  EXPECT_EQ(run.runs[0].worktree_record["merge"], "pending");
  EXPECT_EQ(g.set["worktree"]["merge"], "pending");
  EXPECT_EQ(run.runs[0].aside_step, nullptr) << "no longer running its gates";
}

TEST(WorktreeDriver, APlanThatWroteOutsideItsFilesFailsItsScopeFenceWithNothingToMerge) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  executor_commits(run, 0, "one.txt", "one\n");
  executor_commits(run, 0, "two.txt", "not plan 01's\n");
  const stdfs::path slot = run.runs[0].worktree->path;
  const std::string work = git(slot, {"rev-parse", "HEAD"});
  run.write_summary(0);
  run.gate(0);
  ASSERT_TRUE(run.runs[0].gated);
  const GateOut& g = *run.runs[0].gated;
  EXPECT_EQ(g.state, execution::SummaryState::Failed);
  bool fence = false;
  for (const auto& f : g.findings)
    if (f.value("check", "") == "scope_fence" && f.value("issue", "").find("two.txt") != std::string::npos) fence = true;
  EXPECT_TRUE(fence) << g.findings.dump();
  EXPECT_EQ(g.set["scope"]["outside"], json::array({"two.txt"})) << g.set.dump();
  EXPECT_NE(run.runs[0].worktree_record.value("merge", ""), "pending") << run.runs[0].worktree_record.dump();
  EXPECT_FALSE(run.runs[0].worktree_record.contains("head"));
  EXPECT_EQ(git(slot, {"rev-parse", "HEAD"}), work) << "no SUMMARY commit on a failed plan's branch";
}

TEST(WorktreeDriver, APlanWithoutItsSummaryIsMissingWithNothingToMerge) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  executor_commits(run, 0, "one.txt", "one\n");
  const std::string work = git(run.runs[0].worktree->path, {"rev-parse", "HEAD"});
  run.gate(0);
  ASSERT_EQ(run.gated, std::vector<size_t>{0});
  ASSERT_TRUE(run.runs[0].gated);
  EXPECT_EQ(run.runs[0].gated->state, execution::SummaryState::Missing);
  EXPECT_NE(run.runs[0].worktree_record.value("merge", ""), "pending");
  EXPECT_EQ(git(run.runs[0].worktree->path, {"rev-parse", "HEAD"}), work);
}

TEST(WorktreeDriver, APlanAKilledRunGatedIsMergedOnceAtTheNextInit) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  run.commit_in_slot(0, "one.txt", "one\n");
  const std::string head = run.runs[0].worktree_record["head"];
  const std::string branch = run.runs[0].worktree->branch;
  const json doc = run.write_state(0);
  ASSERT_FALSE(run.restart(doc)) << "merged, the run goes on";
  EXPECT_EQ(test::read_file(run.root / "one.txt"), "one\n");
  const std::string after = git(run.root, {"rev-parse", "HEAD"});
  EXPECT_EQ(git(run.root, {"rev-list", "--count", "HEAD", "^" + head}), "1") << "one merge commit";
  json p = run.state_plan(0);
  EXPECT_EQ(p["status"], "complete") << p.dump();
  EXPECT_EQ(p["worktree"]["merge"], "merged");
  EXPECT_EQ(p["worktree"]["merge_commit"], after);
  const auto events = run.told.names();
  EXPECT_EQ(std::count(events.begin(), events.end(), "plan_merged"), 1);
  EXPECT_FALSE(has_branch(run.root, branch)) << "the merged branch goes";
  // Killed again before its state was read back: the same record (merge pending) is found
  // merged, never merged twice.
  ASSERT_FALSE(run.restart(doc));
  EXPECT_EQ(git(run.root, {"rev-parse", "HEAD"}), after) << "not merged again";
  EXPECT_EQ(run.state_plan(0)["worktree"]["merge"], "merged");
  // And from the state as written: nothing to do.
  ASSERT_FALSE(run.restart(json::parse(test::read_file(state::state_path(run.root)))));
  EXPECT_EQ(git(run.root, {"rev-parse", "HEAD"}), after);
}

TEST(WorktreeDriver, AKilledRunsGatedPlanThatConflictsFailsAndHalts) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  run.commit_in_slot(0, "README.md", "plan one\n");
  test::write_file(run.root / "README.md", "the checkout's\n");
  git(run.root, {"commit", "-qam", "meanwhile"});
  const std::string before = git(run.root, {"rev-parse", "HEAD"});
  auto stop = run.restart(run.write_state(0));
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->result, execution::Result::Halted);
  EXPECT_EQ(git(run.root, {"rev-parse", "HEAD"}), before) << "nothing merged";
  EXPECT_EQ(test::read_file(run.root / "README.md"), "the checkout's\n");
  json p = run.state_plan(0);
  EXPECT_EQ(p["status"], "failed") << p.dump();
  EXPECT_EQ(p["worktree"]["merge"], "conflict");
  EXPECT_NE(p.value("error", "").find("README.md"), std::string::npos) << p.dump();
  ASSERT_EQ(p["findings"].size(), 1u);
  EXPECT_EQ(p["findings"][0]["check"], "merge");
  EXPECT_TRUE(run.told.has("plan_end"));
}

TEST(WorktreeDriver, AKilledRunsGatedPlanRefusedByLocalChangesHaltsKeptGated) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  std::string err;
  ASSERT_TRUE(run.prepare(0, err)) << err;
  run.commit_in_slot(0, "README.md", "plan one\n");
  const std::string head = run.runs[0].worktree_record["head"];
  const std::string before = git(run.root, {"rev-parse", "HEAD"});
  const json doc = run.write_state(0);
  test::write_file(run.root / "README.md", "a local change\n");  // uncommitted, in the merge's way
  auto stop = run.restart(doc);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->result, execution::Result::Halted);
  EXPECT_EQ(git(run.root, {"rev-parse", "HEAD"}), before);
  EXPECT_EQ(test::read_file(run.root / "README.md"), "a local change\n") << "the person's change is kept";
  json p = run.state_plan(0);
  EXPECT_EQ(p["status"], "running") << "kept as it was: " << p.dump();
  EXPECT_EQ(p["worktree"]["merge"], "pending");
  EXPECT_EQ(p["worktree"]["head"], head);
  EXPECT_FALSE(p.contains("findings"));
  ASSERT_FALSE(run.next.empty());
  EXPECT_NE(run.next.back().find("commit or stash"), std::string::npos) << run.next.back();
}


// A dispatched plan's job's work as the return path finds it after its fetch: `files` and the
// plan's SUMMARY (naming `summary_commits` and the work's own commit) committed on a branch of
// the project's repository that its checkout does not follow. Returns the commit.
std::string job_commit(FakeRun& run, size_t i, const std::vector<std::string>& files,
                       const std::vector<std::string>& summary_commits = {}) {
  const std::string id = run.entries[i].id;
  git(run.root, {"checkout", "-q", "-b", "job-" + id});
  for (const auto& f : files) test::write_file(run.root / f, "the job of " + id + "\n");
  git(run.root, {"add", "-A"});
  git(run.root, {"commit", "-qm", "work of " + id});
  const std::string work = git(run.root, {"rev-parse", "HEAD"});
  std::string hashes = "commit_hashes:\n  - \"" + work.substr(0, 12) + "\"\n";
  for (const auto& h : summary_commits) hashes += "  - \"" + h + "\"\n";
  const std::string sp = summary_rel_for(test::real_world(), run.root, run.entries[i].path);
  test::write_file(run.root / sp, "---\nphase: \"01\"\nplan: \"" + run.entries[i].plan +
                                      "\"\ntitle: \"t\"\nstatus: complete\ncompleted: 2026-01-01\ntasks_completed: 0\n"
                                      "tasks_total: 0\n" +
                                      hashes + "deviations: 0\n---\n\n# Summary\n\nDone.\n");
  git(run.root, {"add", "-A"});
  git(run.root, {"commit", "-qm", "SUMMARY of " + id});
  const std::string head = git(run.root, {"rev-parse", "HEAD"});
  git(run.root, {"checkout", "-q", "main"});
  return head;
}

// Plan i's fetched commit checked out in pool slot `slot` by the return path's steps (run one
// after the other, as the loop runs them), adopted from base, then gated. Returns how many
// steps (git children) the checkout took.
size_t gate_fetched(FakeRun& run, size_t i, const std::string& commit, const std::string& base, int slot) {
  run.core.started(i);
  run.core.take_slot(i, slot);
  PlanWorktree w;
  std::string err;
  Worktrees& trees = *run.d->trees();
  auto steps = trees.switch_steps(run.entries[i].id, commit, slot, trees.branch_for(run.entries[i].id), w, err);
  EXPECT_FALSE(steps.empty()) << err;
  for (auto& s : steps) {
    SpawnResult r = run_process(s);
    EXPECT_TRUE(r.ok()) << r.err;
  }
  w.base = base;
  EXPECT_TRUE(run.d->adopt(i, w, slot, err)) << err;
  run.gate(i);
  return steps.size();
}

bool in_tree(const stdfs::path& dir, const std::string& commit, const std::string& path) {
  return !git(dir, {"ls-tree", "-r", "--name-only", commit, "--", path}).empty();
}

TEST(WorktreeDriver, AFetchedCommitWritingOutsideItsFilesIsRefusedThoughAFileIsNamedLikeACommit) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Strict));
  const std::string base = git(run.root, {"rev-parse", "HEAD"});
  // A file named as the id of a commit the SUMMARY lists, sorted before the file outside the
  // plan's scope: the SUMMARY gate's diff-tree lists both with the branch's files.
  const std::string other = job_commit(run, 1, {"two.txt"});
  const std::string c = job_commit(run, 0, {"one.txt", other, "zz-outside.txt"}, {other});
  const int before = run.d->trees()->processes_started();
  gate_fetched(run, 0, c, base, 1);
  ASSERT_TRUE(run.runs[0].gated);
  const GateOut& g = *run.runs[0].gated;
  EXPECT_EQ(g.state, execution::SummaryState::Failed) << g.findings.dump();
  EXPECT_EQ(g.set["scope"]["outside"], json::array({other, "zz-outside.txt"})) << g.set.dump();
  EXPECT_FALSE(run.runs[0].worktree_record.contains("head")) << "nothing to merge";
  // The fence's list came with the SUMMARY gate's children: the slot's scan is the one
  // child of the worktree cache (no `git diff` of its own).
  EXPECT_EQ(run.d->trees()->processes_started() - before, 3) << "worktree add, checkout, status";
}

TEST(WorktreeDriver, AReusedSlotsLeftoverTheGateSawIsCleanedBeforeTheNextFetchedPlan) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  const std::string base = git(run.root, {"rev-parse", "HEAD"});
  const std::string c0 = job_commit(run, 0, {"one.txt"}), c1 = job_commit(run, 1, {"two.txt"});
  EXPECT_EQ(gate_fetched(run, 0, c0, base, 1), 1u) << "a slot just added needs no clean";
  const stdfs::path slot = run.runs[0].worktree->path;
  ASSERT_TRUE(run.runs[0].gated);
  EXPECT_EQ(run.runs[0].gated->state, execution::SummaryState::Passed) << run.runs[0].gated->findings.dump();
  // The second plan in the slot, after a check of the first left a file its gate saw.
  test::write_file(slot / "litter.txt", "a check's output\n");
  run.runs[0].gated.reset();
  ASSERT_TRUE(run.runs[0].worktree);
  run.d->gate(0, SpawnResult{});  // gated again: its scan sees the litter
  uv_run(&run.loop, UV_RUN_DEFAULT);
  EXPECT_EQ(gate_fetched(run, 1, c1, base, 1), 2u) << "checkout and clean";
  EXPECT_FALSE(stdfs::exists(slot / "litter.txt"));
  ASSERT_TRUE(run.runs[1].gated);
  EXPECT_EQ(run.runs[1].gated->state, execution::SummaryState::Passed) << run.runs[1].gated->findings.dump();
  EXPECT_FALSE(run.runs[1].gated->set["scope"].contains("uncommitted")) << run.runs[1].gated->set.dump();
}

TEST(WorktreeDriver, AFileWrittenInAReusedSlotAfterItsGateIsTheNextGatesNeverMerged) {
  FakeRun run;
  ASSERT_FALSE(run.d->init(json::object(), kPhase, kCid, SummaryMode::Off));
  const std::string base = git(run.root, {"rev-parse", "HEAD"});
  const std::string c0 = job_commit(run, 0, {"one.txt"}), c1 = job_commit(run, 1, {"two.txt"});
  gate_fetched(run, 0, c0, base, 1);
  const stdfs::path slot = run.runs[0].worktree->path;
  ASSERT_TRUE(run.runs[0].gated);
  // Nothing was left at the first gate: the next plan's checkout is one child. A file that
  // appears after that gate stays for the next plan's scan, which reports it; it is not merged.
  test::write_file(slot / "leak.txt", "written after the gate\n");
  EXPECT_EQ(gate_fetched(run, 1, c1, base, 1), 1u) << "checkout only";
  ASSERT_TRUE(run.runs[1].gated);
  const GateOut& g = *run.runs[1].gated;
  EXPECT_EQ(g.set["scope"]["uncommitted"], json::array({"leak.txt"})) << g.set.dump();
  const std::string head0 = run.runs[0].worktree_record.value("head", ""),
                    head1 = run.runs[1].worktree_record.value("head", "");
  ASSERT_FALSE(head0.empty()) << run.runs[0].worktree_record.dump();
  if (!head1.empty()) {
    EXPECT_FALSE(in_tree(run.root, head1, "leak.txt"));
  }
  std::vector<size_t> plans = {0};
  if (!head1.empty()) plans.push_back(1);
  run.d->merge(plans);
  EXPECT_TRUE(stdfs::exists(run.root / "one.txt"));
  EXPECT_FALSE(stdfs::exists(run.root / "leak.txt")) << "never merged";
  EXPECT_FALSE(in_tree(run.root, "HEAD", "leak.txt"));
}

}  // namespace
}  // namespace yolo::runner::phase
