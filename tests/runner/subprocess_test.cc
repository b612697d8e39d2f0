#include "runner/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "runner/child_keeper.h"
#include "test_support.h"

namespace yolo::runner {
namespace {

SpawnSpec spec(std::vector<std::string> argv, long long timeout_ms = 10000) {
  SpawnSpec s;
  s.argv = std::move(argv);
  s.timeout_ms = timeout_ms;
  return s;
}

// Gone = no such process, or a zombie waiting for a reaper that is not ours.
bool process_gone(int pid) {
  for (int i = 0; i < 100; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(Subprocess, CapturesStdoutStderrAndExitCode) {
  auto r = run_process(spec({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::Exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exited with status 3");
}

TEST(Subprocess, MissingBinaryIsASpawnFailure) {
  auto r = run_process(spec({"/nonexistent/yolo-reviewer"}));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::SpawnFailed);
  EXPECT_NE(r.describe().find("could not start"), std::string::npos);
  EXPECT_FALSE(r.ran());
}

TEST(Subprocess, ArgvIsLiteralNeverAShell) {
  test::TempDir d;
  std::string hostile = "$(touch " + (d / "pwned").string() + "); rm -rf ~ '; echo pwned";
  auto r = run_process(spec({"printf", "%s", hostile}));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, hostile);
  EXPECT_FALSE(std::filesystem::exists(d / "pwned"));
}

TEST(Subprocess, EnvAndStdinAndCwd) {
  test::TempDir d;
  SpawnSpec s = spec({"sh", "-c", "echo \"$YOLO_PLAN_ID\"; pwd; cat"});
  s.env = {{"YOLO_PLAN_ID", "01-02"}};
  s.cwd = d.path();
  s.stdin_data = "from stdin";
  auto r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "01-02\n" + std::filesystem::canonical(d.path()).string() + "\nfrom stdin");
}

TEST(Subprocess, TimeoutKillsTheWholeGroupIncludingGrandchildren) {
  auto r = run_process(spec({"sh", "-c", "sleep 30 & echo $!; sleep 30"}, 300));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::TimedOut);
  EXPECT_LT(r.elapsed_ms, 5000);
  int grandchild = std::stoi(r.out);
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " outlived the timeout";
}

TEST(Subprocess, TermIgnoringChildIsKilledAfterGrace) {
  SpawnSpec s = spec({"sh", "-c", "trap '' TERM; sleep 30"}, 200);
  s.kill_grace_ms = 200;
  auto r = run_process(s);
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::TimedOut);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_LT(r.elapsed_ms, 5000);
}

TEST(Subprocess, BackgroundLeftoversDieWithTheChild) {
  // The child exits at once but leaves a grandchild holding stdout open.
  auto r = run_process(spec({"sh", "-c", "sleep 30 & echo $!"}, 10000));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::Exited);
  EXPECT_LT(r.elapsed_ms, 5000);
  EXPECT_TRUE(process_gone(std::stoi(r.out)));
}

TEST(Subprocess, OutputIsCappedKeepingTheTail) {
  SpawnSpec s = spec({"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a; printf END"});
  s.output_cap = 1000;
  auto r = run_process(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.out_total, 3000003u);
  EXPECT_TRUE(r.out_truncated());
  EXPECT_EQ(r.out.substr(r.out.size() - 3), "END");
}

TEST(Subprocess, AsyncChildrenRunInParallelAndCanBeCancelled) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<SpawnResult> results;
  auto a = Process::start(&loop, spec({"sleep", "0.3"}), [&](SpawnResult r) { results.push_back(std::move(r)); });
  auto b = Process::start(&loop, spec({"sleep", "0.3"}), [&](SpawnResult r) { results.push_back(std::move(r)); });
  auto c = Process::start(&loop, spec({"sleep", "30"}), [&](SpawnResult r) { results.push_back(std::move(r)); });
  EXPECT_TRUE(c->running());
  c->cancel();
  auto t0 = std::chrono::steady_clock::now();
  uv_run(&loop, UV_RUN_DEFAULT);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(results.size(), 3u);
  int cancelled = 0, exited = 0;
  for (const auto& r : results) {
    if (r.outcome == SpawnResult::Outcome::Cancelled) ++cancelled;
    if (r.ok()) ++exited;
  }
  EXPECT_EQ(cancelled, 1);
  EXPECT_EQ(exited, 2);
  EXPECT_LT(ms, 3000);  // the two sleeps overlapped and the cancelled one did not run 30 s
  a.reset();
  b.reset();
  c.reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// Sets an environment variable for one test and restores the old value afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(Subprocess, UnsetEnvRemovesInheritedVariables) {
  ScopedEnv foo("YOLO_TEST_FOO", "inherited");
  ScopedEnv bar("YOLO_TEST_BAR", "kept");
  ScopedEnv empty("YOLO_TEST_EMPTY", "");
  SpawnSpec s = spec({"sh", "-c", "echo ${YOLO_TEST_FOO-unset} ${YOLO_TEST_BAR-unset} ${YOLO_TEST_EMPTY-unset}"});
  auto plain = run_process(s);
  ASSERT_TRUE(plain.ok()) << plain.describe() << plain.err;
  EXPECT_EQ(plain.out, "inherited kept\n");  // the empty one is set, so no "unset"

  s.unset_env = {"YOLO_TEST_FOO", "YOLO_TEST_EMPTY", "YOLO_TEST_NOT_THERE"};
  auto r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "unset kept unset\n");
}

TEST(Subprocess, UnsetEnvIsAppliedBeforeOverrides) {
  ScopedEnv foo("YOLO_TEST_FOO", "inherited");
  SpawnSpec s = spec({"env"});
  s.unset_env = {"YOLO_TEST_FOO", "YOLO_TEST_BAZ"};
  s.env = {{"YOLO_TEST_BAZ", "override"}};
  auto r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out.find("YOLO_TEST_FOO="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nYOLO_TEST_BAZ=override\n"), std::string::npos) << r.out;
  // Unset then set again: the override wins, the inherited value is gone.
  s.env = {{"YOLO_TEST_FOO", "override"}};
  r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_NE(r.out.find("YOLO_TEST_FOO=override\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("YOLO_TEST_FOO=inherited"), std::string::npos) << r.out;
}

// A descendant that escaped the group and cleared its environment (nothing says whose it
// is) still holds the pipe: the drain after the child's exit has a deadline.
TEST(Subprocess, PipeDrainAfterExitHasADeadline) {
  SpawnSpec s = spec({"sh", "-c", "env -i setsid sleep 5 & sleep 0.3; echo hi"});
  s.drain_ms = 300;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(s);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 3.0);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_TRUE(r.drain_cut);
}

// ---- what a caller watches while the child runs (one runner: run_process) ----

TEST(Subprocess, LinesArriveAsTheChildWritesThem) {
  SpawnSpec s = spec({"sh", "-c", "echo one; echo two >&2; sleep 0.3; printf 'three\\nfour'"});
  std::vector<std::pair<SpawnSpec::Stream, std::string>> lines;
  std::vector<double> at;  // ms since the start when each line arrived
  auto t0 = std::chrono::steady_clock::now();
  s.on_line = [&](SpawnSpec::Stream st, std::string_view l) {
    lines.emplace_back(st, std::string(l));
    at.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  };
  auto r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], std::make_pair(SpawnSpec::Stream::Out, std::string("one")));
  EXPECT_EQ(lines[1], std::make_pair(SpawnSpec::Stream::Err, std::string("two")));
  EXPECT_EQ(lines[2], std::make_pair(SpawnSpec::Stream::Out, std::string("three")));
  EXPECT_EQ(lines[3], std::make_pair(SpawnSpec::Stream::Out, std::string("four")))
      << "a last line without a newline is handed over at the end";
  EXPECT_LT(at[0] + 150, at[2]) << "the first lines came while the child still ran, not at its end";
  EXPECT_EQ(r.out, "one\nthree\nfour") << "the captured output is the same with a line callback";
  EXPECT_EQ(r.err, "two\n");
}

TEST(Subprocess, AVeryLongLineComesInPieces) {
  SpawnSpec s = spec({"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo; echo end"});
  std::vector<size_t> sizes;
  std::string last;
  s.on_line = [&](SpawnSpec::Stream, std::string_view l) {
    sizes.push_back(l.size());
    last = std::string(l);
  };
  auto r = run_process(s);
  ASSERT_TRUE(r.ok());
  size_t total = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    EXPECT_LE(sizes[i], 64u * 1024);
    total += sizes[i];
  }
  EXPECT_EQ(total, 200000u);
  EXPECT_EQ(last, "end");
}

TEST(Subprocess, TicksWhileTheChildRuns) {
  RunOptions o;
  std::vector<double> ticks;
  o.tick_ms = 100;
  o.on_tick = [&](double elapsed) { ticks.push_back(elapsed); };
  auto r = run_process(spec({"sleep", "0.55"}), o);
  ASSERT_TRUE(r.ok());
  EXPECT_GE(ticks.size(), 3u);
  EXPECT_LE(ticks.size(), 7u);
  for (size_t i = 1; i < ticks.size(); ++i) EXPECT_GT(ticks[i], ticks[i - 1]);
  // No tick after the child ended.
  auto quick = run_process(spec({"true"}), o);
  EXPECT_TRUE(quick.ok());
}

TEST(Subprocess, ASignalStopsTheChildGroupAndIsReported) {
  test::TempDir d;
  std::filesystem::path pidfile = d / "grandchild";
  // A child with a grandchild in its group: both end when the signal comes.
  SpawnSpec s = spec({"sh", "-c", "sleep 30 & echo $! > '" + pidfile.string() + "'; wait"}, 60000);
  RunOptions o;
  o.stop_on_signals = true;
  o.tick_ms = 200;
  bool sent = false;
  o.on_tick = [&](double) {
    if (!sent && std::filesystem::exists(pidfile) && !test::read_file(pidfile).empty()) {
      sent = true;
      ::kill(::getpid(), SIGHUP);  // as if the terminal went away
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(s, o);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(sent);
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::Cancelled) << r.describe();
  EXPECT_EQ(r.interrupt_signal, SIGHUP);
  EXPECT_LT(ms, 10000);
  int grandchild = std::atoi(test::read_file(pidfile).c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(process_gone(grandchild));
  // Without stop_on_signals nothing is caught: interrupt_signal stays 0.
  EXPECT_EQ(run_process(spec({"true"})).interrupt_signal, 0);
}

// ---- the spawn itself (runner/launch.h: a clone sharing our memory, not a fork of yolo) ----

// An fd of ours without close-on-exec (a library's, a leaked one) does not reach the child:
// only 0-2 are open in it, stdin is /dev/null when no stdin_data is given.
TEST(Subprocess, NoFdOfOursReachesTheChild) {
  int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  ASSERT_GE(leaked, 0);
  int high = ::fcntl(leaked, F_DUPFD, 200);  // no FD_CLOEXEC either
  ASSERT_GE(high, 200);
  // ls holds one fd of its own (the folder it reads, the lowest free one): 3 if nothing leaked.
  auto r = run_process(spec({"ls", "/proc/self/fd"}));
  auto probe =
      run_process(spec({"sh", "-c",
                        "test -e /proc/$$/fd/" + std::to_string(leaked) + " && echo leaked; test -e /proc/$$/fd/" +
                            std::to_string(high) + " && echo leaked-high; readlink /proc/$$/fd/0"}));
  ::close(leaked);
  ::close(high);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");
  ASSERT_TRUE(probe.ok()) << probe.describe() << probe.err;
  EXPECT_EQ(probe.out, "/dev/null\n");
}

// With our own stdin/stdout closed (a caller may start yolo so), new pipes get fds 0 and 1: they
// land on the child's 0-2 all the same, none overwritten by another. (The loop is made
// before, with a first pipe handle: libuv itself refuses to own fds 0-2, and its loop opens a
// spare fd at its first stream.)
TEST(Subprocess, PipesArriveWhenOurOwnStdioIsClosed) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  uv_pipe_t first;
  uv_pipe_init(&loop, &first, 0);
  uv_close(reinterpret_cast<uv_handle_t*>(&first), nullptr);
  int saved_in = ::fcntl(0, F_DUPFD_CLOEXEC, 10), saved_out = ::fcntl(1, F_DUPFD_CLOEXEC, 10);
  ASSERT_GE(saved_in, 0);
  ASSERT_GE(saved_out, 0);
  ::close(0);
  ::close(1);
  SpawnSpec s = spec({"sh", "-c", "cat; echo out; echo err >&2"});
  s.stdin_data = "in\n";
  SpawnResult r;
  auto p = Process::start(&loop, s, [&](SpawnResult res) { r = std::move(res); });
  uv_run(&loop, UV_RUN_DEFAULT);
  p.reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  ::dup2(saved_in, 0);
  ::dup2(saved_out, 1);
  ::close(saved_in);
  ::close(saved_out);
  EXPECT_EQ(uv_loop_close(&loop), 0);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "in\nout\n");
  EXPECT_EQ(r.err, "err\n");
}

// With our own stdin closed and no stdin_data, the child's /dev/null lands on its 0 (the
// lowest free fd: the child opens it there, and must not then dup it onto itself).
TEST(Subprocess, StdinIsDevNullWhenOurOwnStdinIsClosed) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  uv_pipe_t first;  // libuv's own spare fd first (see above)
  uv_pipe_init(&loop, &first, 0);
  uv_close(reinterpret_cast<uv_handle_t*>(&first), nullptr);
  int saved_in = ::fcntl(0, F_DUPFD_CLOEXEC, 10);
  ASSERT_GE(saved_in, 0);
  ::close(0);
  SpawnResult r;
  auto p = Process::start(&loop, spec({"readlink", "/proc/self/fd/0"}), [&](SpawnResult res) { r = std::move(res); });
  uv_run(&loop, UV_RUN_DEFAULT);
  p.reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  ::dup2(saved_in, 0);
  ::close(saved_in);
  EXPECT_EQ(uv_loop_close(&loop), 0);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "/dev/null\n");
}

TEST(Subprocess, AMissingProgramIsNamedInTheError) {
  auto r = run_process(spec({"yolo-no-such-program-1f3a"}));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::SpawnFailed);
  EXPECT_EQ(r.spawn_error, "no such file or directory: yolo-no-such-program-1f3a");
  EXPECT_EQ(r.describe(), "could not start: no such file or directory: yolo-no-such-program-1f3a");
  EXPECT_EQ(r.pid, 0);
  auto abs = run_process(spec({"/nonexistent/yolo-reviewer"}));
  EXPECT_EQ(abs.spawn_error, "no such file or directory: /nonexistent/yolo-reviewer");
  // Found but not executable; a cwd that does not exist.
  test::TempDir d;
  test::write_file(d / "notexec", "#!/bin/sh\necho hi\n");
  auto denied = run_process(spec({(d / "notexec").string()}));
  EXPECT_EQ(denied.outcome, SpawnResult::Outcome::SpawnFailed);
  EXPECT_EQ(denied.spawn_error, "permission denied: " + (d / "notexec").string());
  SpawnSpec nocwd = spec({"true"});
  nocwd.cwd = d / "gone";
  auto c = run_process(nocwd);
  EXPECT_EQ(c.outcome, SpawnResult::Outcome::SpawnFailed);
  EXPECT_EQ(c.spawn_error, "no such file or directory: true");
}

// argv[0] without a '/' is looked up in the PATH the child gets (as execvp did), relative to
// its cwd; a file without "#!" runs under /bin/sh (as execvp runs it).
TEST(Subprocess, TheChildsPathFindsTheProgram) {
  test::TempDir d;
  std::filesystem::create_directories(d / "bin");
  test::write_file(d / "bin" / "yolo-test-tool", "echo tool \"$@\"\n");  // no "#!"
  ::chmod((d / "bin" / "yolo-test-tool").c_str(), 0755);
  SpawnSpec s = spec({"yolo-test-tool", "a b", "$HOME"});
  s.env = {{"PATH", (d / "bin").string() + ":/usr/bin:/bin"}};
  auto r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "tool a b $HOME\n");
  s.env = {{"PATH", "bin"}};  // relative: to the child's cwd
  s.cwd = d.path();
  r = run_process(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "tool a b $HOME\n");
  s.env = {{"PATH", "/usr/bin:/bin"}};
  r = run_process(s);
  EXPECT_EQ(r.spawn_error, "no such file or directory: yolo-test-tool");
}

TEST(Subprocess, DeathBySignalIsReported) {
  auto r = run_process(spec({"sh", "-c", "echo before; kill -USR1 $$; echo after"}));
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::Signaled);
  EXPECT_EQ(r.term_signal, SIGUSR1);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.out, "before\n");
  EXPECT_TRUE(r.ran());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe().rfind("killed by signal " + std::to_string(SIGUSR1), 0), 0u) << r.describe();
}

// Each child leads its own session (and so its own process group, with no controlling
// terminal): a timeout or cancel kills exactly its group.
TEST(Subprocess, TheChildLeadsItsOwnSession) {
  auto r = run_process(spec({"sh", "-c", "echo $$; cut -d' ' -f5,6 /proc/$$/stat"}));
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  std::string pid = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(pid, std::to_string(r.pid));
  EXPECT_EQ(r.out, pid + "\n" + pid + " " + pid + "\n");
}

// The spawner does not wait for the child's exec (runner/launch.h): a cancel made at once,
// maybe before the child has made its own session (its group), still reaches it, with
// SIGTERM, not only with the SIGKILL after the grace period (a minute here). Repeated: the
// child is caught at different points of its start.
TEST(Subprocess, ACancelAtOnceReachesAChildStillStarting) {
  for (int round = 0; round < 20; ++round) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    SpawnSpec s = spec({"sleep", "30"});
    s.kill_grace_ms = 60000;
    SpawnResult r;
    auto p = Process::start(&loop, s, [&](SpawnResult res) { r = std::move(res); });
    p->cancel();
    auto t0 = std::chrono::steady_clock::now();
    uv_run(&loop, UV_RUN_DEFAULT);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.outcome, SpawnResult::Outcome::Cancelled) << "round " << round << ": " << r.describe();
    EXPECT_EQ(r.term_signal, SIGTERM) << "round " << round;
    EXPECT_LT(ms, 5000) << "round " << round;
    p.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
    if (ms >= 5000) break;
  }
}

// The start time a Process gives (what execute records to know a leftover executor for sure)
// is /proc/PID/stat's, though it comes from the clock read around the clone, not from /proc.
TEST(Subprocess, TheStartTimeIsTheKernels) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<std::unique_ptr<Process>> ps;
  for (int k = 0; k < 40; ++k) {
    ps.push_back(Process::start(&loop, spec({"sleep", "5"}), [](SpawnResult) {}));
    ASSERT_GT(ps.back()->pid(), 0);
    EXPECT_EQ(ps.back()->start_ticks(), process_start_ticks(ps.back()->pid())) << "child " << k;
    EXPECT_NE(ps.back()->start_ticks(), 0u);
  }
  for (auto& p : ps) p->cancel();
  uv_run(&loop, UV_RUN_DEFAULT);
  ps.clear();
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// What we block or ignore (SIGPIPE is ignored in yolo, libuv blocks signals on its threads)
// is not what the child starts with: no signal blocked, none ignored.
TEST(Subprocess, OurBlockedAndIgnoredSignalsAreNotInherited) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  sigaddset(&block, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old), 0);
  struct sigaction ign {
  }, old_pipe{}, old_hup{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old_pipe);
  ::sigaction(SIGHUP, &ign, &old_hup);
  auto r = run_process(spec({"grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"}));
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(r.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

// A grandchild that ignores SIGTERM in the child's group dies on timeout too (SIGKILL after the
// grace), and the timeout's outcome is kept even though the child's own exit came after it.
TEST(Subprocess, TimeoutReachesATermIgnoringGrandchild) {
  SpawnSpec s = spec({"sh", "-c", "sh -c \"trap '' TERM; sleep 30\" & echo $!; wait"}, 300);
  s.kill_grace_ms = 200;
  auto r = run_process(s);
  EXPECT_EQ(r.outcome, SpawnResult::Outcome::TimedOut);
  EXPECT_LT(r.elapsed_ms, 5000);
  int grandchild = std::stoi(r.out);
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " outlived the timeout";
}

// With supervision on (yolo's main), sweeps reap zombie children they do not know, from any
// thread. A sweep that runs while our child is a zombie not yet reaped by its Process must
// leave it: every exit status arrives intact.
TEST(Subprocess, SweepsNeverStealAChildsExitStatus) {
  supervise_children();
  std::atomic<bool> stop{false};
  std::atomic<int> sweeps{0};
  std::thread sweeper([&] {
    while (!stop) {
      keeper::sweep();
      ++sweeps;
    }
  });
  uv_loop_t loop;
  uv_loop_init(&loop);
  int done = 0, intact = 0;
  std::string bad;
  std::vector<std::unique_ptr<Process>> procs;
  std::function<void()> next = [&] {
    if (procs.size() >= 120) return;
    procs.push_back(Process::start(&loop, spec({"sh", "-c", "exit 7"}), [&](SpawnResult r) {
      ++done;
      if (r.outcome == SpawnResult::Outcome::Exited && r.exit_code == 7)
        ++intact;
      else
        bad = r.describe();
      // A busy loop thread: the other children exit meanwhile and wait as zombies, seen by
      // the sweeps, until their Process reaps them.
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      next();
    }));
  };
  for (int i = 0; i < 4; ++i) next();
  uv_run(&loop, UV_RUN_DEFAULT);
  stop = true;
  sweeper.join();
  procs.clear();
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
  EXPECT_EQ(done, 120);
  EXPECT_EQ(intact, 120) << bad;
  EXPECT_GT(sweeps.load(), 10);
}

}  // namespace
}  // namespace yolo::runner
