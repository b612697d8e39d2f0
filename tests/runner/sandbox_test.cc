// The sandbox as children meet it: real programs started through run_process under a
// confinement, each trying what a hostile agent would. Each refusal is the kernel's
// (EACCES, EPERM, EROFS), not a check of ours the child could skip.
#include "runner/sandbox.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "runner/refusal_calls.h"
#include "runner/refusals.h"
#include "runner/subprocess.h"
#include "test_support.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;
using test::read_file;
using test::TempDir;
using test::write_file;

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

#define REQUIRE_LANDLOCK()                                                     \
  if (landlock_abi() <= 0) GTEST_SKIP() << "skipped: this kernel has no Landlock"

SpawnResult sh(const std::string& script, std::shared_ptr<Confinement> c, const stdfs::path& cwd = {}) {
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.confinement = std::move(c);
  s.cwd = cwd;
  s.timeout_ms = 20000;
  return run_process(s);
}

std::shared_ptr<Confinement> reader(const TempDir& t, std::vector<std::string> hidden = {}) {
  sandbox::Policy p;
  p.role = sandbox::Role::Reviewer;
  p.hidden = std::move(hidden);
  stdfs::create_directories(t.path() / "tmp");
  p.grants.push_back({(t.path() / "tmp").string(), sandbox::Read | sandbox::Write | sandbox::Exec});
  auto r = confine_policy(p, t.path() / "tmp");
  EXPECT_TRUE(r.ok()) << r.error;
  r.confinement->keep_temp = true;
  return r.confinement;
}

TEST(Sandbox, AHiddenFileCannotBeReadAndEverythingElseCan) {
  REQUIRE_LANDLOCK();
  TempDir t;
  write_file(t.path() / "keys/approval.key", "secret");
  write_file(t.path() / "notes.txt", "open");
  auto c = reader(t, {(t.path() / "keys").string()});
  auto key = sh("cat '" + (t.path() / "keys/approval.key").string() + "'", c);
  EXPECT_NE(key.exit_code, 0);
  EXPECT_TRUE(has(key.err, "Permission denied")) << key.err;
  EXPECT_FALSE(has(key.out, "secret"));
  auto open = sh("cat '" + (t.path() / "notes.txt").string() + "'", c);
  EXPECT_EQ(open.exit_code, 0) << open.err;
  EXPECT_EQ(open.out, "open");
  // Through a link the reader made itself, the file is as hidden as where it lies.
  auto link = sh("ln -s '" + (t.path() / "keys/approval.key").string() + "' \"$TMPDIR/k\" && cat \"$TMPDIR/k\"", c);
  EXPECT_NE(link.exit_code, 0);
  EXPECT_FALSE(has(link.out, "secret"));
}

// The folders beside a hidden path are listed once per process; a folder made there later
// (a project made beside the key after yolo started) is readable by the next confined child.
TEST(Sandbox, AFolderMadeBesideAHiddenPathAfterAChildStartedIsReadableByTheNext) {
  REQUIRE_LANDLOCK();
  TempDir t;
  write_file(t.path() / "keys/approval.key", "secret");
  const std::vector<std::string> hidden = {(t.path() / "keys").string()};
  EXPECT_EQ(sh("true", reader(t, hidden)).exit_code, 0);
  write_file(t.path() / "later/notes.txt", "open");
  auto open = sh("cat '" + (t.path() / "later/notes.txt").string() + "'", reader(t, hidden));
  EXPECT_EQ(open.exit_code, 0) << open.err;
  EXPECT_EQ(open.out, "open");
  auto key = sh("cat '" + (t.path() / "keys/approval.key").string() + "'", reader(t, hidden));
  EXPECT_NE(key.exit_code, 0);
}

TEST(Sandbox, AReaderWritesItsTempFolderAndNothingElse) {
  REQUIRE_LANDLOCK();
  TempDir t;
  auto c = reader(t);
  auto ok = sh("echo hi > \"$TMPDIR/out\" && cat \"$TMPDIR/out\" && echo x >/dev/null", c);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "hi\n");
  auto no = sh("echo x > '" + (t.path() / "elsewhere").string() + "'", c);
  EXPECT_NE(no.exit_code, 0);
  EXPECT_TRUE(has(no.err, "Permission denied")) << no.err;
  EXPECT_FALSE(stdfs::exists(t.path() / "elsewhere"));
}

TEST(Sandbox, NoNamespacesNoTracingNoSocketsByPath) {
  REQUIRE_LANDLOCK();
  TempDir t;
  auto c = reader(t);
  auto ns = sh("unshare --user --map-current-user --pid --fork true", c);
  EXPECT_NE(ns.exit_code, 0);
  EXPECT_TRUE(has(ns.err, "Operation not permitted")) << ns.err;
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "skipped: no python3 for the socket and ioctl probes";
  auto sock = sh("python3 -c 'import socket; socket.socket(socket.AF_UNIX)'", c);
  EXPECT_NE(sock.exit_code, 0);
  EXPECT_TRUE(has(sock.err, "PermissionError")) << sock.err;
  auto pair = sh("python3 -c 'import socket; socket.socketpair(); print(\"pair\")'", c);
  EXPECT_EQ(pair.out, "pair\n") << pair.err;  // a pair of its own stays allowed
  // TIOCSTI on a non-terminal: ENOTTY outside, EPERM inside (the filter answers first).
  auto sti = sh("python3 -c 'import fcntl,termios,sys\ntry:\n  fcntl.ioctl(0, termios.TIOCSTI, b\"x\")\nexcept "
                "OSError as e:\n  print(e.errno)'",
                c);
  EXPECT_EQ(sti.out, "1\n") << sti.err;
}

// The escape attempts are named as they are refused (in the child's and its descendants'
// refusal log); what programs probe for, and what they are allowed, is not.
TEST(Sandbox, EscapeAttemptsAreNamedProbesAndAllowedCallsAreNot) {
  REQUIRE_LANDLOCK();
  if (!refusal_notes_available()) GTEST_SKIP() << "skipped: this kernel cannot hand refused calls to yolo";
  TempDir t;
  auto quiet = reader(t);
  ASSERT_TRUE(quiet->refusals);
  auto ok = sh("echo hi > \"$TMPDIR/x\"; (sleep 0 &); wait", quiet);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(quiet->refusals->empty()) << describe_refusals(quiet->refusals.get());
  auto loud = reader(t);
  auto ns = sh("sh -c 'unshare --user --map-current-user true; unshare --mount --net true' 2>&1; echo done", loud);
  EXPECT_EQ(ns.out.substr(ns.out.size() - 5), "done\n") << ns.out;  // refused, and nothing hung
  const std::string said = describe_refusals(loud->refusals.get());
  EXPECT_TRUE(has(said, "unshare(CLONE_NEWUSER) by unshare (pid ")) << said;
  EXPECT_TRUE(has(said, "unshare(CLONE_NEWNS|CLONE_NEWNET) by unshare (pid ")) << said;
  if (::access("/usr/bin/python3", X_OK) == 0) {
    auto probes = reader(t);
    auto p = sh("python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); "
                "print(l.syscall(425,1,ctypes.create_string_buffer(120)), ctypes.get_errno())'",  // io_uring_setup
                probes);
    EXPECT_EQ(p.out, "-1 1\n") << p.err;
    EXPECT_TRUE(probes->refusals->empty()) << describe_refusals(probes->refusals.get());
    // clone3 answers ENOSYS (libc then uses clone); named only when it asks for a namespace.
    auto c3 = reader(t);
    auto q = sh("python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); a=(ctypes.c_uint64*11)(); "
                "print(l.syscall(435,a,88), ctypes.get_errno()); a[0]=0x10000000; "  // CLONE_NEWUSER
                "print(l.syscall(435,a,88), ctypes.get_errno())'",
                c3);
    EXPECT_EQ(q.out, "-1 38\n-1 38\n") << q.err;
    const std::string c3said = describe_refusals(c3->refusals.get());
    EXPECT_TRUE(has(c3said, "clone3(CLONE_NEWUSER) by python3 (pid ")) << c3said;
    EXPECT_EQ(c3->refusals->list().size(), 1u) << c3said;
  }
}

// A socket the test listens on, by path ("" and a name: abstract); -1 when it cannot.
int listen_unix(const std::string& path, int type, bool abstract = false) {
  int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + (abstract ? 1 : 0), path.c_str(), path.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 1 : 0));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || (type == SOCK_STREAM && ::listen(fd, 8) != 0)) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (!abstract) ::chmod(path.c_str(), 0777);  // the suite also runs as another user
  return fd;
}

// A child's connection attempts, one line each: "open", or "refused ERRNO" (at socket() or at
// connect/sendto).
const char* kConnector = R"(import socket, sys, os
def tryc(path, kind=socket.SOCK_STREAM, send=False):
    try:
        s = socket.socket(socket.AF_UNIX, kind)
        if send: s.sendto(b"x", path)
        else: s.connect(path)
        print("open")
    except OSError as e:
        print("refused", e.errno)
os.chdir(sys.argv[1])
for a in sys.argv[2:]:
    if a.startswith("dgram:"): tryc(a[6:], socket.SOCK_DGRAM, True)
    elif a.startswith("@"): tryc("\0" + a[1:])
    else: tryc(a)
)";

// A role the config allows UNIX sockets reaches them by path wherever they lie (Landlock cannot
// scope them): a connection to the person's ssh-agent, or to a socket in a hidden folder, is
// refused by yolo's supervisor and named; one to any other socket goes through. A role not
// allowed them cannot make one at all (refused at socket(), with nothing yet to name).
TEST(Sandbox, AConnectionToThePersonsAgentIsRefusedAndNamedAndOthersGoThrough) {
  REQUIRE_LANDLOCK();
  if (!write_notes_available()) GTEST_SKIP() << "skipped: this kernel cannot let a handed-over call go on";
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "skipped: no python3 for the socket probes";
  TempDir t;
  const std::string d = stdfs::canonical(t.path()).string();
  stdfs::create_directories(d + "/agent");
  stdfs::create_directories(d + "/tmp");
  int hidden = listen_unix(d + "/agent/ssh.sock", SOCK_STREAM);
  int person = listen_unix(d + "/person.sock", SOCK_STREAM);
  int ok = listen_unix(d + "/ok.sock", SOCK_STREAM);
  int dgram = listen_unix(d + "/agent/log.sock", SOCK_DGRAM);
  const std::string abstract_name = "yolo-test-" + std::to_string(::getpid());
  int abs = listen_unix(abstract_name, SOCK_STREAM, true);
  ASSERT_TRUE(hidden >= 0 && person >= 0 && ok >= 0 && dgram >= 0 && abs >= 0);
  const char* was = std::getenv("SSH_AUTH_SOCK");
  const std::string saved = was ? was : "";
  ::setenv("SSH_AUTH_SOCK", (d + "/person.sock").c_str(), 1);
  sandbox::Policy p;
  p.role = sandbox::Role::Executor;
  p.hidden = {d + "/agent"};
  p.grants.push_back({d + "/tmp", sandbox::Read | sandbox::Write | sandbox::Exec});
  p.unix_sockets = true;
  auto r = confine_policy(p, d + "/tmp");
  if (was) ::setenv("SSH_AUTH_SOCK", saved.c_str(), 1); else ::unsetenv("SSH_AUTH_SOCK");
  ASSERT_TRUE(r.ok()) << r.error;
  r.confinement->keep_temp = true;
  SpawnSpec s;
  s.argv = {"/usr/bin/python3", "-c", kConnector, d, d + "/agent/ssh.sock", "person.sock", "ok.sock",
            "dgram:" + d + "/agent/log.sock", "@" + abstract_name};
  s.confinement = r.confinement;
  s.timeout_ms = 20000;
  auto res = run_process(s);
  const std::string abs_line = landlock_abi() >= 6 ? "refused 1\n" : "open\n";  // scoped from ABI 6
  EXPECT_EQ(res.out, "refused 13\nrefused 13\nopen\nrefused 13\n" + abs_line) << res.err;
  const std::string said = describe_refusals(r.confinement->refusals.get());
  EXPECT_TRUE(has(said, "connecting to " + d + "/agent/ssh.sock by python3 (pid ")) << said;
  EXPECT_TRUE(has(said, "connecting to " + d + "/person.sock by python3 (pid ")) << said;  // named relative
  EXPECT_TRUE(has(said, "connecting to " + d + "/agent/log.sock by python3 (pid ")) << said;
  EXPECT_FALSE(has(said, "ok.sock")) << said;
  EXPECT_EQ(r.confinement->refusals->list().size(), 3u) << said;

  // Without the config's leave, no UNIX socket can be made, whatever it would reach.
  TempDir t2;
  auto plain = reader(t2);
  s.confinement = plain;
  auto res2 = run_process(s);
  EXPECT_EQ(res2.out, "refused 13\nrefused 13\nrefused 13\nrefused 13\nrefused 13\n") << res2.err;
  for (int fd : {hidden, person, ok, dgram, abs}) ::close(fd);
}

// The supervisor judges each write by a worker of its own: a write whose path takes long to
// walk (a hung network or FUSE mount; here a stand-in stall) holds its own caller only up to
// the deadline, and another child's writes not at all.
TEST(Sandbox, AWriteWhosePathHangsHoldsNoOtherChildsWrites) {
  REQUIRE_LANDLOCK();
  if (!write_notes_available()) GTEST_SKIP() << "skipped: this kernel cannot let a handed-over call go on";
  TempDir t;
  stdfs::path root = t.path() / "p";
  stdfs::create_directories(root);
  auto confined = [&](const char* name) {
    sandbox::Policy p;
    p.role = sandbox::Role::Executor;
    stdfs::create_directories(t.path() / name);
    p.grants.push_back({(t.path() / name).string(), sandbox::Read | sandbox::Write | sandbox::Exec});
    auto r = confine_policy(p, t.path() / name, root.string(), (root / ".git").string());
    EXPECT_TRUE(r.ok()) << r.error;
    r.confinement->keep_temp = true;
    return r.confinement;
  };
  auto slow = confined("a");
  auto fast = confined("b");
  ASSERT_TRUE(slow->refusals && slow->refusals->writes());
  // The stalled walk lasts far longer than the deadline and than what a loaded machine adds
  // to either child, so each bound below tells the two apart whatever the load.
  refusal_calls::stall_walks_for_tests("HUNG-MOUNT", std::chrono::milliseconds(12000));
  using clock = std::chrono::steady_clock;
  SpawnResult slow_res;
  long long slow_ms = 0;
  std::thread a([&] {
    auto t0 = clock::now();
    slow_res = sh("echo x > \"$TMPDIR/HUNG-MOUNT\" && echo written", slow);
    slow_ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t0).count();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its write is handed over by now
  auto t0 = clock::now();
  auto fast_res = sh("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo $i > \"$TMPDIR/f$i\"; done; "
                     "echo done",
                     fast);
  const long long fast_ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t0).count();
  a.join();
  refusal_calls::stall_walks_for_tests("", std::chrono::milliseconds(0));
  EXPECT_EQ(fast_res.out, "done\n") << fast_res.err;
  EXPECT_LT(fast_ms, 6000) << "another child's stalled judgement held these writes";
  EXPECT_EQ(slow_res.out, "written\n") << slow_res.err;
  EXPECT_LT(slow_ms, 9000) << "the stalled write waited for its walk, not for the deadline";
  EXPECT_GE(slow_ms, judge_deadline().count() - 50);
  auto unjudged = slow->refusals->unjudged();
  ASSERT_EQ(unjudged.size(), 1u);
  EXPECT_TRUE(has(unjudged[0], "a write by sh (pid ")) << unjudged[0];
  EXPECT_TRUE(slow->refusals->empty()) << describe_refusals(slow->refusals.get());
  EXPECT_TRUE(fast->refusals->unjudged().empty());
}

TEST(Sandbox, NoSignalLeavesTheSandbox) {
  REQUIRE_LANDLOCK();
  if (landlock_abi() < 6) GTEST_SKIP() << "skipped: Landlock ABI " << landlock_abi() << " has no signal scoping";
  TempDir t;
  auto c = reader(t);
  auto r = sh("kill -0 " + std::to_string(::getpid()) + " && echo reached", c);
  EXPECT_FALSE(has(r.out, "reached"));
  EXPECT_TRUE(has(r.err, "Operation not permitted")) << r.err;
}

TEST(Sandbox, NoProcessOutsideCanBeTracedOrRead) {
  REQUIRE_LANDLOCK();
  TempDir t;
  auto c = reader(t);
  const std::string self = "/proc/" + std::to_string(::getpid());
  // Its environment and memory (what ptrace's access check guards): refused outside the domain.
  auto env = sh("cat " + self + "/environ >/dev/null && echo read-environ; head -c1 " + self +
                    "/mem >/dev/null 2>&1 && echo read-mem; readlink " + self + "/cwd >/dev/null && echo read-cwd",
                c);
  EXPECT_FALSE(has(env.out, "read-environ")) << env.out;
  EXPECT_FALSE(has(env.out, "read-mem")) << env.out;
  EXPECT_FALSE(has(env.out, "read-cwd")) << env.out;
  // Its own process stays its own.
  auto own = sh("cat /proc/self/environ >/dev/null && echo own", c);
  EXPECT_EQ(own.out, "own\n") << own.err;
}

TEST(Sandbox, AnExecutorInTheCheckoutWritesItButNotYolosFilesNorGitsConfig) {
  REQUIRE_LANDLOCK();
  TempDir t;
  stdfs::path root = t.path() / "p";
  write_file(root / ".yolo-planning/.execution-state.json", "{}");
  write_file(root / ".yolo-planning/phases/01-demo/01-01-PLAN.md", "plan");
  write_file(root / ".yolo-planning/phases/02-next/02-01-PLAN.md", "later");
  write_file(root / ".git/config", "[core]\n");
  stdfs::create_directories(root / ".git/hooks");
  Config cfg;
  SandboxRequest req;
  req.role = sandbox::Role::Executor;
  req.project_root = root;
  req.phase_dir = root / ".yolo-planning/phases/01-demo";
  auto r = confine(test::real_world(), cfg, req);
  ASSERT_TRUE(r.ok()) << r.error;
  auto w = sh("echo new > new.txt && mkdir -p src && echo c > src/a.c && echo s > .yolo-planning/phases/01-demo/S.md "
              "&& echo ok",
              r.confinement, root);
  // Nor a plan of its own phase (read between its hash check and an executor's reading it).
  auto plan = sh("echo evil >> .yolo-planning/phases/01-demo/01-01-PLAN.md", r.confinement, root);
  EXPECT_NE(plan.exit_code, 0);
  EXPECT_EQ(read_file(root / ".yolo-planning/phases/01-demo/01-01-PLAN.md"), "plan");
  EXPECT_EQ(w.out, "ok\n") << w.err;
  for (const char* target : {".yolo-planning/.execution-state.json", ".yolo-planning/phases/02-next/02-01-PLAN.md",
                             ".git/config", ".git/hooks/post-checkout", ".yolo-planning/config.json"}) {
    auto no = sh(std::string("echo evil > ") + target, r.confinement, root);
    EXPECT_NE(no.exit_code, 0) << target;
    EXPECT_TRUE(has(no.err, "Read-only file system") || has(no.err, "Permission denied")) << target << ": " << no.err;
  }
  EXPECT_EQ(read_file(root / ".yolo-planning/.execution-state.json"), "{}");
  EXPECT_EQ(read_file(root / ".git/config"), "[core]\n");
  EXPECT_FALSE(stdfs::exists(root / ".git/hooks/post-checkout"));
  // Nor can it undo the binds: mount and umount are refused.
  auto um = sh("umount .yolo-planning 2>&1; mount --bind /tmp .yolo-planning 2>&1; echo evil > .yolo-planning/x",
               r.confinement, root);
  EXPECT_FALSE(stdfs::exists(root / ".yolo-planning/x"));
}

// A .git moved aside and replaced by a copy whose config the child wrote would be read by
// every later git in the checkout (the person's `git status` runs its fsmonitor). The folder
// is kept in place; inside it git still writes what a commit needs.
TEST(Sandbox, AnExecutorInTheCheckoutCannotSwapTheRepositoryFolder) {
  REQUIRE_LANDLOCK();
  TempDir t;
  stdfs::path root = t.path() / "p";
  write_file(root / ".yolo-planning/phases/01-demo/01-01-PLAN.md", "plan");
  write_file(root / ".git/config", "[core]\n");
  write_file(root / ".git/modules/sub/config", "[core]\n");
  stdfs::create_directories(root / ".git/hooks");
  stdfs::create_directories(root / ".git/objects");
  Config cfg;
  SandboxRequest req;
  req.role = sandbox::Role::Executor;
  req.project_root = root;
  req.phase_dir = root / ".yolo-planning/phases/01-demo";
  auto r = confine(test::real_world(), cfg, req);
  ASSERT_TRUE(r.ok()) << r.error;
  for (const char* attempt : {"mv .git .git-old", "mv .git/modules .git/m2", "echo evil >> .git/modules/sub/config"}) {
    auto no = sh(attempt, r.confinement, root);
    EXPECT_NE(no.exit_code, 0) << attempt;
  }
  EXPECT_TRUE(stdfs::is_directory(root / ".git"));
  EXPECT_FALSE(stdfs::exists(root / ".git-old"));
  EXPECT_EQ(read_file(root / ".git/config"), "[core]\n");
  EXPECT_EQ(read_file(root / ".git/modules/sub/config"), "[core]\n");
  auto w = sh("echo x > .git/objects/probe && echo ref > .git/HEAD.lock && rm .git/HEAD.lock && echo ok", r.confinement,
              root);
  EXPECT_EQ(w.out, "ok\n") << w.err;
}

TEST(Sandbox, TheProbeTellsAConfinedProcessFromAnotherAndCannotBeFaked) {
  REQUIRE_LANDLOCK();
  EXPECT_FALSE(inside_sandbox());
  TempDir t;
  auto c = reader(t);
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "skipped: no python3 for the probe";
  const std::string probe =
      "python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(309,0,0,0x796f6c6f); "
      "print(r, ctypes.get_errno())'";
  auto inside = sh(probe, c);
  EXPECT_EQ(inside.out, "-1 131\n") << inside.err;  // ENOTRECOVERABLE: the filter's answer
  auto outside = sh(probe, nullptr);
  EXPECT_EQ(outside.out, "0 0\n") << outside.err;
}

TEST(Sandbox, WithTheSandboxOffTheChildIsNotConfinedAndTheRecordSaysSo) {
  TempDir t;
  Config cfg;
  cfg.raw = {{"sandbox", "off"}};
  SandboxRequest req;
  req.role = sandbox::Role::Reviewer;
  req.project_root = t.path();
  auto r = confine(test::real_world(), cfg, req);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.confinement->off());
  EXPECT_EQ(r.confinement->record()["mechanism"], "off");
  auto w = sh("echo x > '" + (t.path() / "f").string() + "' && echo ok", r.confinement);
  EXPECT_EQ(w.out, "ok\n");
}

// A set of decoys serves one child at a time and then the next: the second child of the
// same policy gets the first one's decoys (no files made again), and what the first read is
// named in the first child's log alone. Two children at once get two sets.
TEST(Sandbox, DecoysServeOneChildAtATimeAndNameOnlyItsOwnReads) {
  REQUIRE_LANDLOCK();
  if (!refusal_notes_available()) GTEST_SKIP() << "skipped: this kernel hands no refused call to yolo";
  TempDir t;
  const stdfs::path home = t.path() / "home";
  stdfs::create_directories(home / ".ssh");
  write_file(home / ".ssh/id_ed25519", "PRIVATE-KEY-BYTES\n");
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  ::setenv("HOME", home.c_str(), 1);
  stdfs::path root = t.path() / "p";
  stdfs::create_directories(root);
  auto confined = [&](const char* name) {
    sandbox::Policy p;
    p.role = sandbox::Role::Reviewer;
    p.hidden = {(home / ".ssh").string()};
    stdfs::create_directories(t.path() / name);
    p.grants.push_back({(t.path() / name).string(), sandbox::Read | sandbox::Write | sandbox::Exec});
    auto r = confine_policy(p, t.path() / name, root.string());
    EXPECT_TRUE(r.ok()) << r.error;
    return r.confinement;
  };
  const std::string read_key = "c=$(cat \"" + (home / ".ssh/id_ed25519").string() + "\"); echo \"bytes=${#c}\"";
  std::string first_set;
  {
    auto c = confined("a");
    ASSERT_FALSE(c->decoys.empty());
    first_set = stdfs::path(c->decoys.front().first).parent_path().string();
    auto r = sh(read_key, c);
    EXPECT_EQ(r.out, "bytes=0\n") << r.err;
    EXPECT_TRUE(has(describe_refusals(c->refusals.get()), "reading ~/.ssh/id_ed25519 by the reviewer"))
        << describe_refusals(c->refusals.get());
  }
  {
    auto c = confined("b");
    ASSERT_FALSE(c->decoys.empty());
    EXPECT_EQ(stdfs::path(c->decoys.front().first).parent_path().string(), first_set);  // the same set again
    auto r = sh("test -e \"" + (home / ".ssh/id_ed25519").string() + "\" && echo seen", c);
    EXPECT_EQ(r.out, "seen\n") << r.err;
    EXPECT_TRUE(c->refusals->empty()) << describe_refusals(c->refusals.get());
    auto other = confined("c");  // while b holds it: a set of its own
    ASSERT_FALSE(other->decoys.empty());
    EXPECT_NE(stdfs::path(other->decoys.front().first).parent_path().string(), first_set);
    auto r2 = sh(read_key, other);
    EXPECT_EQ(r2.out, "bytes=0\n") << r2.err;
    EXPECT_FALSE(other->refusals->empty());
    EXPECT_TRUE(c->refusals->empty()) << describe_refusals(c->refusals.get());
  }
  if (old_home) ::setenv("HOME", saved.c_str(), 1); else ::unsetenv("HOME");
}

}  // namespace
}  // namespace yolo::runner
