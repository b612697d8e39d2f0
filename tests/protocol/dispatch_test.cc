// protocol/dispatch: submit or re-attach, attempts, submit's output, wait's exit codes,
// the templates' checks.
#include "protocol/run/dispatch.h"

#include <gtest/gtest.h>

#include "protocol/state/config.h"

namespace yolo::dispatch {
namespace {

TEST(DispatchRules, AJobStateIsReadByItsNameAndAnyOtherNameIsNone) {
  for (JobState st : {JobState::Submitting, JobState::Submitted, JobState::Done, JobState::Failed, JobState::Cancelled}) {
    EXPECT_EQ(job_state({{"state", job_state_name(st)}}), st) << job_state_name(st);
    EXPECT_EQ(job_state(record_ended({{"attempt", 1}}, st, "t")), st);
  }
  EXPECT_EQ(job_state({{"state", "Done"}}), std::nullopt);
  EXPECT_EQ(job_state({{"state", 3}}), std::nullopt);
  EXPECT_EQ(job_state(json::object()), std::nullopt);
  EXPECT_EQ(job_state(json()), std::nullopt);
  EXPECT_EQ(job_state(record_submitting(2)), JobState::Submitting);
}

TEST(DispatchRules, NeverDispatchedSubmitsAttemptOne) {
  for (const json& r : {json(nullptr), json::object(), json{{"state", "submitted"}}}) {
    Start s = decide_start(r, false);
    EXPECT_EQ(s.kind, Start::Kind::Submit) << r.dump();
    EXPECT_EQ(s.attempt, 1) << r.dump();
  }
}

TEST(DispatchRules, SubmittedWithHandleReattaches) {
  Start s = decide_start({{"attempt", 2}, {"state", "submitted"}, {"handle", "42"}}, false);
  EXPECT_EQ(s.kind, Start::Kind::Reattach);
  EXPECT_EQ(s.attempt, 2);
  EXPECT_EQ(s.handle, "42");
  // done: its branch was not gated when the run stopped: wait again, no new job
  s = decide_start({{"attempt", 1}, {"state", "done"}, {"handle", "j"}}, false);
  EXPECT_EQ(s.kind, Start::Kind::Reattach);
  EXPECT_EQ(s.attempt, 1);
}

TEST(DispatchRules, SubmittingSubmitsTheSameAttemptAgain) {
  Start s = decide_start({{"attempt", 3}, {"state", "submitting"}}, false);
  EXPECT_EQ(s.kind, Start::Kind::Submit);
  EXPECT_EQ(s.attempt, 3);
}

TEST(DispatchRules, FailedCancelledOrPlanFailedIsANewAttempt) {
  EXPECT_EQ(decide_start({{"attempt", 1}, {"state", "failed"}, {"handle", "h"}}, false).attempt, 2);
  EXPECT_EQ(decide_start({{"attempt", 1}, {"state", "cancelled"}, {"handle", "h"}}, false).attempt, 2);
  Start s = decide_start({{"attempt", 2}, {"state", "done"}, {"handle", "h"}}, true);  // its gates failed
  EXPECT_EQ(s.kind, Start::Kind::Submit);
  EXPECT_EQ(s.attempt, 3);
  EXPECT_EQ(s.previous_attempt, 0) << "its branch was gated already";
}

TEST(DispatchRules, ThePreviousAttemptsBranchIsLookedUpBeforeANewJob) {
  for (const char* st : {"failed", "cancelled"})
    for (bool plan_failed : {false, true}) {
      Start s = decide_start({{"attempt", 2}, {"state", st}, {"handle", "h"}}, plan_failed);
      EXPECT_EQ(s.kind, Start::Kind::Submit) << st;
      EXPECT_EQ(s.attempt, 3) << st;
      EXPECT_EQ(s.previous_attempt, 2) << st;
    }
}

TEST(DispatchRules, AJobThatMayBeAliveIsNeverRunAgainEvenWhenThePlanFailed) {
  // yolo gave up on an engine it could neither reach nor cancel through: the record stays
  // submitted, the plan failed; the next run waits on the same job.
  Start s = decide_start({{"attempt", 1}, {"state", "submitted"}, {"handle", "31"}}, true);
  EXPECT_EQ(s.kind, Start::Kind::Reattach);
  EXPECT_EQ(s.attempt, 1);
  EXPECT_EQ(s.handle, "31");
  // A submit that failed or timed out may have started the job: the same attempt again.
  s = decide_start({{"attempt", 2}, {"state", "submitting"}}, true);
  EXPECT_EQ(s.kind, Start::Kind::Submit);
  EXPECT_EQ(s.attempt, 2);
}

TEST(DispatchRules, BadAttemptIsIgnored) {
  for (const json& a : {json(-1), json(0), json("2"), json(1.5), json(100000000)}) {
    Start s = decide_start({{"attempt", a}, {"state", "submitted"}, {"handle", "h"}}, false);
    EXPECT_EQ(s.kind, Start::Kind::Submit) << a.dump();
    EXPECT_EQ(s.attempt, 1) << a.dump();
  }
}

TEST(DispatchRules, BranchPerAttempt) {
  EXPECT_EQ(branch_for_attempt("yolo/abcd1234/01-02", 1), "yolo/abcd1234/01-02");
  EXPECT_EQ(branch_for_attempt("yolo/abcd1234/01-02", 3), "yolo/abcd1234/01-02-a3");
}

TEST(DispatchRules, SubmitOutputLastJsonLineWithHandle) {
  auto s = parse_submit_output(
      "Submitted batch job 7\n{\"note\": 1}\n{\"handle\": \"7\", \"url\": \"u\", \"job_name\": \"n\", \"reused\": "
      "true}\n\n");
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(s.handle, "7");
  EXPECT_EQ(s.url, "u");
  EXPECT_EQ(s.job_name, "n");
  EXPECT_TRUE(s.reused);
  EXPECT_FALSE(parse_submit_output("").ok());
  EXPECT_FALSE(parse_submit_output("{\"handle\": \"\"}").ok());
  EXPECT_FALSE(parse_submit_output("{\"handle\": 7}").ok());
  EXPECT_FALSE(parse_submit_output("{\"handle\": \"a\\nb\"}").ok());
  EXPECT_FALSE(parse_submit_output("{\"handle\": \"7\"").ok());
  EXPECT_FALSE(parse_submit_output(std::string("{\"handle\": \"") + std::string(2000, 'x') + "\"}").ok());
}

TEST(DispatchRules, WaitExitCodes) {
  EXPECT_EQ(interpret_wait(true, 0), WaitResult::Done);
  EXPECT_EQ(interpret_wait(true, 1), WaitResult::Failed);
  EXPECT_EQ(interpret_wait(true, 2), WaitResult::Unknown);
  EXPECT_EQ(interpret_wait(true, 3), WaitResult::Unreachable);
  EXPECT_EQ(interpret_wait(true, 4), WaitResult::Error);
  EXPECT_TRUE(gives_up(WaitResult::Unreachable));
  EXPECT_TRUE(gives_up(WaitResult::Error));
  EXPECT_FALSE(gives_up(WaitResult::Unknown));
  EXPECT_FALSE(gives_up(WaitResult::Failed));
  EXPECT_EQ(interpret_wait(false, 0), WaitResult::Error);  // killed, timed out
  EXPECT_TRUE(fetch_after_wait(WaitResult::Done, false));
  EXPECT_TRUE(fetch_after_wait(WaitResult::Unknown, true));
  EXPECT_FALSE(fetch_after_wait(WaitResult::Unknown, false));
  EXPECT_FALSE(fetch_after_wait(WaitResult::Failed, true));  // a failed job's branch is not trusted
  EXPECT_FALSE(fetch_after_wait(WaitResult::Error, true));
}

TEST(DispatchRules, Records) {
  Submitted s;
  s.handle = "h";
  s.url = "u";
  json r = record_submitted(2, s, "2026-11-25T08:00:00Z");
  EXPECT_EQ(r["state"], "submitted");
  EXPECT_EQ(r["attempt"], 2);
  EXPECT_EQ(r["handle"], "h");
  json e = record_ended(r, JobState::Done, "2026-11-25T08:01:00Z");
  EXPECT_EQ(e["state"], "done");
  EXPECT_EQ(e["handle"], "h");
  EXPECT_EQ(record_submitting(1)["state"], "submitting");
}

TEST(DispatchRules, SubmitArgvAppendsTheExecutorAfterDoubleDash) {
  std::map<std::string, std::string> v = {{"plan_id", "01-01"}, {"plan_path", "p; rm -rf /"}};
  auto a = submit_argv({"adapter", "submit", "--plan-id", "{plan_id}", "--"}, {"agents/executor", "{plan_path}"}, v);
  EXPECT_EQ(
      a, (std::vector<std::string>{"adapter", "submit", "--plan-id", "01-01", "--", "agents/executor", "p; rm -rf /"}));
  // without a trailing "--" the template is the whole argv
  auto b = submit_argv({"adapter", "--", "x", "{plan_id}"}, {"agents/executor"}, v);
  EXPECT_EQ(b, (std::vector<std::string>{"adapter", "--", "x", "01-01"}));
}

TEST(DispatchRules, TemplatesChecked) {
  Templates t{{"a", "submit", "{plan_id}", "{correlation_id}", "{attempt}", "{branch}"},
              {"a", "wait", "{handle}"},
              {"a", "cancel", "{handle}"}};
  EXPECT_TRUE(check_templates(t).empty());
  t.wait = {"a", "wait"};
  auto errs = check_templates(t);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].find("dispatch.wait"), std::string::npos);
  t.submit = {"a", "{handle}"};
  EXPECT_GE(check_templates(t).size(), 5u);
}

TEST(DispatchRules, WithheldEnvHasTheApprovalKey) {
  const auto& v = withheld_env();
  EXPECT_NE(std::find(v.begin(), v.end(), "YOLO_APPROVAL_KEY_FILE"), v.end());
  EXPECT_NE(std::find(v.begin(), v.end(), "YOLO_SIGNING_KEY"), v.end());
}

TEST(DispatchConfig, ParsedAndChecked) {
  json j = {{"dispatch",
             {{"submit", {"s", "{plan_id}", "{correlation_id}", "{attempt}", "{branch}", "--"}},
              {"wait", {{"command", {"w", "{handle}"}}, {"timeout_ms", 5000}}},
              {"cancel", {"c", "{handle}"}},
              {"remote", "origin"}}}};
  auto l = config_from_json(j, "config.json");
  ASSERT_TRUE(l.ok()) << l.error;
  EXPECT_TRUE(l.config.dispatch.configured());
  EXPECT_EQ(l.config.dispatch.wait.timeout_ms, 5000);
  EXPECT_EQ(l.config.dispatch.remote, "origin");
  EXPECT_TRUE(l.config.dispatch.errors.empty());
  EXPECT_TRUE(l.config.warnings.empty());
  j["dispatch"].erase("remote");
  EXPECT_FALSE(config_from_json(j, "config.json").ok());  // the schema requires it
  j["dispatch"]["remote"] = "origin";
  j["dispatch"]["cancel"] = {"c"};
  auto l2 = config_from_json(j, "config.json");
  ASSERT_TRUE(l2.ok());
  ASSERT_EQ(l2.config.dispatch.errors.size(), 1u);
  EXPECT_NE(l2.config.dispatch.errors[0].find("dispatch.cancel"), std::string::npos);
  j["dispatch"]["extra"] = 1;
  EXPECT_FALSE(config_from_json(j, "config.json").ok());
}

// ---- The wave-level form ---------------------------------------------------------------

TEST(DispatchWave, PlansAskingTheSameResourcesShareOneArrayInPlanIdOrder) {
  std::vector<WaveCandidate> c = {{7, "01-03", 1, ""}, {2, "01-01", 1, ""}, {5, "01-02", 2, "--time=10"},
                                  {9, "01-04", 1, ""}, {4, "01-05", 1, "--time=10"}};
  auto arrays = form_wave_arrays("corr", c);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].plans, (std::vector<size_t>{2, 7, 9}));  // index k -> plan, plan-id order
  EXPECT_EQ(arrays[1].plans, (std::vector<size_t>{5, 4}));
  EXPECT_EQ(arrays[0].key.size(), 12u);
  EXPECT_NE(arrays[0].key, arrays[1].key);
  // The same tasks give the same key whatever their order (a submit again after a kill finds
  // the array); another attempt or another run, another key.
  std::vector<WaveCandidate> shuffled = {c[3], c[1], c[0]};
  EXPECT_EQ(form_wave_arrays("corr", shuffled)[0].key, arrays[0].key);
  std::vector<WaveCandidate> again = {c[3], c[1], c[0]};
  again[0].attempt = 2;
  EXPECT_NE(form_wave_arrays("corr", again)[0].key, arrays[0].key);
  EXPECT_NE(form_wave_arrays("other", shuffled)[0].key, arrays[0].key);
  EXPECT_TRUE(form_wave_arrays("corr", {}).empty());
}

TEST(DispatchWave, TaskArgumentsStartAtTheFirstOptionAndTheFileIsNulSeparatedWithCounts) {
  std::vector<std::string> argv = {"/x/slurm", "submit", "--plan-id", "01-01", "--", "agents/e", "a b", ""};
  auto t = task_arguments(argv);
  EXPECT_EQ(t, (std::vector<std::string>{"--plan-id", "01-01", "--", "agents/e", "a b", ""}));
  std::string f = tasks_file({t, {"--plan-id", "x\ny"}});
  std::string want;
  for (const char* part : {"6", "--plan-id", "01-01", "--", "agents/e", "a b", "", "2", "--plan-id", "x\ny"}) {
    want += part;
    want.push_back('\0');
  }
  EXPECT_EQ(f, want);
}

TEST(DispatchWave, SubmitWaveOutputNeedsOneHandlePerTask) {
  auto w = parse_wave_submit_output(
      "note\n{\"handle\": \"12\", \"url\": \"slurm:12\", \"reused\": true, \"tasks\": [\"12_0\", \"12_1\"]}\n", 2);
  ASSERT_TRUE(w.ok()) << w.error;
  EXPECT_EQ(w.handle, "12");
  EXPECT_TRUE(w.reused);
  EXPECT_EQ(w.tasks, (std::vector<std::string>{"12_0", "12_1"}));
  EXPECT_FALSE(parse_wave_submit_output("{\"handle\": \"12\", \"tasks\": [\"12_0\"]}", 2).ok());
  EXPECT_FALSE(parse_wave_submit_output("{\"handle\": \"12\"}", 1).ok());
  EXPECT_FALSE(parse_wave_submit_output("{\"handle\": \"12\", \"tasks\": [3]}", 1).ok());
  EXPECT_FALSE(parse_wave_submit_output("12\n", 1).ok());
}

TEST(DispatchWave, ATaskLineSaysWhichPlanAndWhat) {
  auto l = parse_wave_line("task 3 status PENDING (Resources)", 4);
  EXPECT_EQ(l.kind, WaveLine::Kind::Status);
  EXPECT_EQ(l.index, 3u);
  EXPECT_EQ(l.text, "PENDING (Resources)");
  EXPECT_EQ(parse_wave_line("task 0 done", 4).kind, WaveLine::Kind::Done);
  l = parse_wave_line("task 1 failed run-job: ✗ nothing pushed", 4);
  EXPECT_EQ(l.kind, WaveLine::Kind::Failed);
  EXPECT_EQ(l.text, "run-job: ✗ nothing pushed");
  EXPECT_EQ(parse_wave_line("task 2 unknown", 4).kind, WaveLine::Kind::Unknown);
  EXPECT_EQ(parse_wave_line("task 2 log   | cloning", 4).kind, WaveLine::Kind::Log);
  // Not task lines: out of range, no index, another word, a status without text.
  for (const char* bad : {"task 4 done", "task x done", "task  done", "task 1 finished", "task 1 status", "  task 1 done",
                          "task 99999999999 done", "status: RUNNING"})
    EXPECT_EQ(parse_wave_line(bad, 4).kind, WaveLine::Kind::None) << bad;
  EXPECT_EQ(wave_line_result(WaveLine::Kind::Done), WaitResult::Done);
  EXPECT_EQ(wave_line_result(WaveLine::Kind::Failed), WaitResult::Failed);
  EXPECT_EQ(wave_line_result(WaveLine::Kind::Unknown), WaitResult::Unknown);
}

TEST(DispatchWave, AnUnreportedTaskTakesTheWavesExitNeverDone) {
  EXPECT_EQ(wave_exit_result(true, 3), WaitResult::Unreachable);
  EXPECT_EQ(wave_exit_result(true, 2), WaitResult::Unknown);
  EXPECT_EQ(wave_exit_result(true, 0), WaitResult::Error);  // ended without a word of it
  EXPECT_EQ(wave_exit_result(true, 1), WaitResult::Error);
  EXPECT_EQ(wave_exit_result(false, 0), WaitResult::Error);
  EXPECT_TRUE(gives_up(wave_exit_result(true, 0)));
}

TEST(DispatchWave, WaveTemplatesComeTogetherWithTheirPlaceholders) {
  EXPECT_TRUE(check_wave_templates({}, {}).empty());
  EXPECT_TRUE(check_wave_templates({"a", "submit-wave", "--tasks", "{tasks}", "--correlation-id", "{correlation_id}"},
                                   {"a", "wait-wave", "{handle}"})
                  .empty());
  EXPECT_EQ(check_wave_templates({"a", "{tasks}", "{correlation_id}"}, {}).size(), 1u);
  auto e = check_wave_templates({"a"}, {"a", "wait-wave"});
  EXPECT_EQ(e.size(), 3u);  // no {tasks}, no {correlation_id}, no {handle}
}

TEST(DispatchResources, FromTheFrontmatterToTheAdaptersOptions) {
  std::vector<std::string> errs;
  Resources r = resources_of(json::parse(R"({"resources": {"time": "2h", "cpus": 4, "memory": "8G", "gpus": 1}})"), errs);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(r.time_minutes, 120);
  EXPECT_EQ(r.memory_mb, 8192);
  EXPECT_EQ(resources_options(r), (std::vector<std::string>{"--time-minutes", "120", "--cpus", "4", "--memory-mb",
                                                            "8192", "--gpus", "1"}));
  EXPECT_EQ(resources_key(r), "--time-minutes 120 --cpus 4 --memory-mb 8192 --gpus 1");
  r = resources_of(json::parse(R"({"resources": {"time": 90, "memory": "512M"}})"), errs);
  EXPECT_EQ(r.time_minutes, 90);
  EXPECT_EQ(r.memory_mb, 512);
  EXPECT_EQ(resources_of(json::parse(R"({"resources": {"time": "1d"}})"), errs).time_minutes, 1440);
  EXPECT_TRUE(errs.empty());
  // None: no options (the plans share the array of plans without resources).
  EXPECT_FALSE(resources_of(json::parse(R"({"wave": 1})"), errs).any());
  EXPECT_TRUE(resources_options(Resources{}).empty());
  // Each bad value is named by its key.
  for (const char* bad : {R"({"resources": {"memory": "4X"}})", R"({"resources": {"time": "1.5h"}})",
                          R"({"resources": {"cpus": 0}})", R"({"resources": {"cpus": "4"}})",
                          R"({"resources": {"gpus": -1}})", R"({"resources": {"disk": 10}})",
                          R"({"resources": "big"})", R"({"resources": {"time": -5}})"}) {
    errs.clear();
    resources_of(json::parse(bad), errs);
    EXPECT_EQ(errs.size(), 1u) << bad;
    if (!errs.empty()) {
      EXPECT_EQ(errs[0].rfind("resources", 0), 0u) << errs[0];
    }
  }
}

TEST(DispatchResources, TheyGoBeforeTheDashesThatEndTheSubmitOptions) {
  std::vector<std::string> opts = {"--cpus", "2"};
  auto a = submit_argv({"s", "submit", "--plan-id", "{plan_id}", "--"}, {"agents/e", "{plan_path}"},
                       {{"plan_id", "01-01"}, {"plan_path", "p.md"}}, opts);
  EXPECT_EQ(a, (std::vector<std::string>{"s", "submit", "--plan-id", "01-01", "--cpus", "2", "--", "agents/e", "p.md"}));
  a = submit_argv({"s", "submit", "--plan-id", "{plan_id}", "--", "own", "--"}, {"agents/e"}, {{"plan_id", "01-01"}},
                  opts);
  EXPECT_EQ(a[4], "--cpus");  // before the first "--": the template's own executor follows it
  a = submit_argv({"s", "submit", "--plan-id", "{plan_id}"}, {}, {{"plan_id", "01-01"}}, opts);
  EXPECT_EQ(a.back(), "2");
  EXPECT_EQ(submit_argv({"s", "--"}, {"e"}, {}, {}), (std::vector<std::string>{"s", "--", "e"}));
}


// Re-attached plans: each task of an earlier array joins its array's one wait at its index;
// an index past max_tasks, one another plan holds, or a record with no array waits alone.
TEST(DispatchRules, ReattachedTasksJoinTheirArrayAndAnEditedIndexWaitsAlone) {
  auto task = [](const std::string& handle, json index) {
    return json{{"state", "submitted"}, {"handle", handle + "_x"}, {"wave_handle", handle}, {"wave_index", index},
                {"wave_key", "k-" + handle}};
  };
  std::vector<std::pair<size_t, json>> recs = {
      {0, task("12", 0)},
      {1, task("12", 4000000000000ULL)},  // past any array
      {2, task("12", 0)},                 // 0 is plan 0's
      {3, task("12", 3)},
      {4, task("15", 1)},
      {5, json{{"state", "submitted"}, {"handle", "77"}}},  // a per-plan job
      {6, task("15", -1)},                                  // not an index
  };
  Reattached r = group_reattached(recs, 8);
  ASSERT_EQ(r.arrays.size(), 2u);
  EXPECT_EQ(r.arrays[0].handle, "12");
  EXPECT_EQ(r.arrays[0].key, "k-12");
  EXPECT_EQ(r.arrays[0].at, (std::vector<size_t>{0, kNoPlan, kNoPlan, 3}));
  EXPECT_EQ(r.arrays[1].handle, "15");
  EXPECT_EQ(r.arrays[1].at, (std::vector<size_t>{kNoPlan, 4}));
  EXPECT_EQ(r.alone, (std::vector<size_t>{1, 2, 5, 6}));
  EXPECT_EQ(group_reattached(recs, 3).alone, (std::vector<size_t>{1, 2, 3, 5, 6})) << "index 3 of 3 tasks";
}

TEST(DispatchWait, AWavesWordForATaskReadsAsThePlansOwnWaitExit) {
  for (auto w : {WaitResult::Done, WaitResult::Failed, WaitResult::Unknown, WaitResult::Unreachable, WaitResult::Error})
    EXPECT_EQ(interpret_wait(true, wait_exit_code(w)), w);
  EXPECT_EQ(wait_exit_code(wave_line_result(WaveLine::Kind::Done)), 0);
  EXPECT_EQ(wait_exit_code(wave_line_result(WaveLine::Kind::Failed)), 1);
  EXPECT_EQ(wait_exit_code(wave_line_result(WaveLine::Kind::Unknown)), 2);
  EXPECT_EQ(wait_exit_code(wave_exit_result(true, 3)), 3);
  EXPECT_EQ(wait_exit_code(wave_exit_result(true, 0)), 4) << "a task the wave never reported is not done";
}

TEST(DispatchWait, TheReasonIsWaitsLastTwoLinesThatSaySomething) {
  EXPECT_EQ(wait_reason("cloned\nslurm: job 7 FAILED\n  run-job: ✗ the executor exited 3  \n"),
            "slurm: job 7 FAILED; run-job: ✗ the executor exited 3");
  EXPECT_EQ(wait_reason("only this\n"), "only this");
  EXPECT_EQ(wait_reason(""), "");
  EXPECT_EQ(wait_reason("\n \n"), "");
}

TEST(DispatchWait, WhatTheEngineSaysOfAWaitingJobIsAStatusLineTrimmedAndBounded) {
  EXPECT_EQ(status_line("status: Pending (Priority)"), "Pending (Priority)");
  EXPECT_EQ(status_line("status:   Running  "), "  Running  ");
  EXPECT_FALSE(status_line("squeue: error: status: x"));
  EXPECT_FALSE(status_line("Status: Pending"));
  EXPECT_EQ(engine_status("  Running on node-4 \t"), "Running on node-4");
  EXPECT_EQ(engine_status(std::string(400, 'x')).size(), 300u);
  EXPECT_EQ(engine_status("   "), "");
}

TEST(DispatchWait, DeadlinesComeFromTheConfigOrADay) {
  const long long day = 24LL * 3600 * 1000;
  EXPECT_EQ(wait_deadline_ms(0), day);
  EXPECT_EQ(wait_deadline_ms(1500), 1500);
  EXPECT_EQ(wait_deadline_ms(1500, 9000), 9000) << "wait_wave's own first";
  EXPECT_EQ(wait_deadline_ms(1500, 0), 1500) << "else wait's";
  EXPECT_EQ(wait_deadline_ms(0, 0), day);
  EXPECT_EQ(unreachable_seconds(json::object()), 600);
  EXPECT_EQ(unreachable_seconds({{"dispatch", {{"unreachable_timeout_ms", 2500}}}}), 2);
  EXPECT_EQ(unreachable_seconds({{"dispatch", {{"unreachable_timeout_ms", 10}}}}), 1) << "at least a second";
  EXPECT_EQ(unreachable_seconds({{"dispatch", {{"unreachable_timeout_ms", "5000"}}}}), 600);
  EXPECT_EQ(unreachable_seconds({{"dispatch", 3}}), 600);
}

TEST(DispatchWait, TheRemotesHeadsAreTheRefsLsRemoteNames) {
  EXPECT_EQ(remote_heads("1111\trefs/heads/yolo/ab/01-01\n2222\trefs/heads/yolo/ab/01-02-a2 \r\n\nnot a head\n"),
            (std::set<std::string>{"refs/heads/yolo/ab/01-01", "refs/heads/yolo/ab/01-02-a2"}));
  EXPECT_TRUE(remote_heads("").empty());
}

TEST(DispatchWave, ATasksRecordNamesItsArrayAndIndex) {
  json r = record_wave_submitting(2, "abc", "k12");
  EXPECT_EQ(r, json({{"attempt", 2}, {"state", "submitting"}, {"base", "abc"}, {"wave_key", "k12"}}));
  WaveSubmitted ws;
  ws.handle = "arr-5";
  ws.url = "http://engine/arr-5";
  ws.tasks = {"arr-5_0", "arr-5_1"};
  ws.reused = true;
  r = record_wave_submitted(2, ws, 1, "abc", "k12", "2026-11-29T08:00:00Z");
  EXPECT_EQ(r["state"], "submitted");
  EXPECT_EQ(r["attempt"], 2);
  EXPECT_EQ(r["handle"], "arr-5_1");
  EXPECT_EQ(r["url"], "http://engine/arr-5");
  EXPECT_EQ(r["reused"], true);
  EXPECT_EQ(r["base"], "abc");
  EXPECT_EQ(r["wave_key"], "k12");
  EXPECT_EQ(r["wave_handle"], "arr-5");
  EXPECT_EQ(r["wave_index"], 1);
  EXPECT_EQ(r["submitted_at"], "2026-11-29T08:00:00Z");
}

}  // namespace
}  // namespace yolo::dispatch
