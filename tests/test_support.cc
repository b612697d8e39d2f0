#include <algorithm>
#include "test_support.h"

#include <gtest/gtest.h>

#include "protocol/base/seal.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace yolo::test {

TempDir::TempDir() {
  std::random_device rd;
  path_ = stdfs::temp_directory_path() / ("yolo-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  stdfs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  stdfs::remove_all(path_, ec);
}

namespace {
// Every test process seals approvals with its own key, made in a temp folder: tests never
// touch the user's key; the yolo children they start inherit it, and code in this process
// that takes the runner's World (runner/world.h) reads the same file.
struct TestApprovalKey {
  TempDir dir;
  TestApprovalKey() { ::setenv("YOLO_APPROVAL_KEY_FILE", (dir / "approval.key").c_str(), 1); }
};
const TestApprovalKey test_approval_key;
}  // namespace

const seal::Key& test_key() {
  static const seal::Key k{std::string(32, 't'), {}};
  return k;
}

const World& real_world() {
  static const World w{fs::real_disk(), system_clock(), &test_key(), nullptr, nullptr};
  return w;
}

void write_file(const stdfs::path& p, const std::string& content) {
  if (p.has_parent_path()) stdfs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::string read_file(const stdfs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

json review_records(const stdfs::path& root) {
  json all = json::object();
  std::error_code ec;
  std::vector<stdfs::path> files;
  for (stdfs::directory_iterator it(root / ".yolo-planning" / ".reviews", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json" && it->path().filename().string().front() != '.') files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    json l = json::parse(read_file(f));
    for (auto& [id, rec] : l["reviews"].items()) all[id] = rec;
  }
  return all;
}

json RunResult::json_out() const { return json::parse(out); }

std::vector<json> RunResult::json_lines() const {
  std::vector<json> v;
  std::istringstream in(out);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) v.push_back(json::parse(l));
  return v;
}

namespace {

// The test process's environment with `extra` ("K=V") in place of the same names: getenv takes
// the first entry of a name, so an added one must replace the inherited one, not follow it.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || name_of(x) == name_of(kv);
    if (!replaced) envs.push_back(kv);
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    bool later = false;  // of two entries of one name in `extra`, the later one counts
    for (size_t j = i + 1; j < extra.size(); ++j) later = later || name_of(extra[j]) == name_of(extra[i]);
    if (!later) envs.push_back(extra[i]);
  }
  return envs;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> v;
  for (auto& s : strings) v.push_back(s.data());
  v.push_back(nullptr);
  return v;
}

// Writes input to fd, then closes it. A child that exits before reading its input (a usage
// error, say) must not kill the test with SIGPIPE: the signal is blocked around the writes
// (only in this thread, after the spawn, so children keep the default) and a pending one is
// consumed.
void feed(int fd, const std::string& input) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  size_t written = 0;
  bool broken = false;
  while (written < input.size()) {
    ssize_t n = ::write(fd, input.data() + written, input.size() - written);
    if (n <= 0) {
      broken = n < 0 && errno == EPIPE;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (broken) {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  ::close(fd);
}

// How the child's stdin is given: a pipe fed with `input`, or a fresh pseudo-terminal that
// is also its controlling terminal (a new session), `input` typed into it ahead.
enum class Stdin { Pipe, Terminal };

// The one child-process runner of the tests: argv (no shell), cwd, env added; stdout and
// stderr are pipes read to the end; the exit status (128 + signal when killed).
RunResult run_child(const std::vector<std::string>& argv, const stdfs::path& cwd, const std::vector<std::string>& env,
                    const std::string& input, Stdin how) {
  int out_p[2], err_p[2], in_p[2] = {-1, -1};
  if (::pipe2(out_p, O_CLOEXEC) || ::pipe2(err_p, O_CLOEXEC)) throw std::runtime_error("pipe failed");
  int master = -1;
  std::string slave;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (how == Stdin::Terminal) {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) throw std::runtime_error("no pseudo-terminal");
    slave = ::ptsname(master);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);  // a session leader: opening the tty makes it controlling
    posix_spawn_file_actions_addopen(&fa, 0, slave.c_str(), O_RDWR, 0);
  } else {
    if (::pipe2(in_p, O_CLOEXEC)) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_adddup2(&fa, in_p[0], 0);
  }
  posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<std::string> envs = environment_with(env), args = argv;
  std::vector<char*> envp = pointers(envs), argp = pointers(args);
  pid_t pid;
  int rc = posix_spawnp(&pid, argp[0], &fa, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out_p[1]);
  ::close(err_p[1]);
  if (in_p[0] >= 0) ::close(in_p[0]);
  if (rc != 0) {
    for (int fd : {out_p[0], err_p[0], in_p[1], master})
      if (fd >= 0) ::close(fd);
    throw std::runtime_error("spawn failed: " + std::string(std::strerror(rc)));
  }
  if (how == Stdin::Pipe) {
    feed(in_p[1], input);
  } else if (!input.empty() && ::write(master, input.data(), input.size()) < 0) {
    // The person types ahead; the terminal keeps the line until yolo reads it.
  }
  RunResult r;
  pollfd fds[3] = {{out_p[0], POLLIN, 0}, {err_p[0], POLLIN, 0}, {master, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 3; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (i == 2) {  // the terminal's echo: drained, not kept
        if (n <= 0) fds[i].fd = -1;
        continue;
      }
      if (n > 0)
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (master >= 0) ::close(master);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::vector<std::string> yolo_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv{yolo_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

RunResult run_program(const std::vector<std::string>& argv, const stdfs::path& cwd, const std::vector<std::string>& env,
                      const std::string& input) {
  return run_child(argv, cwd, env, input, Stdin::Pipe);
}

std::string git(const stdfs::path& dir, const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv = {"git", "-c", "user.name=t", "-c", "user.email=t@example.com"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_program(argv, dir, {}, input);
  EXPECT_EQ(r.exit_code, 0) << "git in " << dir << ": " << r.err;
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) out.pop_back();
  return out;
}

RunResult run_yolo(const std::vector<std::string>& args, const stdfs::path& cwd, const std::vector<std::string>& env,
                   const std::string& input) {
  return run_child(yolo_argv(args), cwd, env, input, Stdin::Pipe);
}

RunResult run_yolo_tty(const std::vector<std::string>& args, const stdfs::path& cwd,
                       const std::vector<std::string>& env, const std::string& typed) {
  return run_child(yolo_argv(args), cwd, env, typed, Stdin::Terminal);
}

bool become_terminal_session() {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return false;
  char name[128];
  if (::ptsname_r(master, name, sizeof name) != 0) return false;
  if (::setsid() < 0) return false;
  int slave = ::open(name, O_RDWR);  // a session leader without a terminal: this one becomes it
  if (slave < 0) return false;
  if (::dup2(slave, 0) < 0) return false;
  if (slave != 0) ::close(slave);
  return true;
}

stdfs::path source_dir() { return YOLO_SOURCE_DIR; }
stdfs::path corpus_dir() { return YOLO_CORPUS_DIR; }
std::string yolo_bin() { return YOLO_BIN; }

std::string iso_in(long long seconds_from_now) {
  std::time_t t = std::time(nullptr) + seconds_from_now;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void copy_fixture(const std::string& name, const stdfs::path& dest) {
  stdfs::copy(source_dir() / "fixtures" / name, dest,
              stdfs::copy_options::recursive | stdfs::copy_options::overwrite_existing);
}

}  // namespace yolo::test
