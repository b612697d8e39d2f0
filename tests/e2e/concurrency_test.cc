// 200 yolo processes at once against one repo: request-approval, approve, reject and
// log-event. The state file must parse and be schema-valid whenever it is read, no update
// may be lost (every success is counted and found in the state), and the event log must
// hold exactly one whole line per event.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo::test {
namespace {

// argv prepared before fork: the child only calls async-signal-safe functions.
struct Job {
  std::string role;
  std::vector<std::string> args;
  std::vector<char*> argv;
  std::string out_path;
  pid_t pid = -1;
  int exit_code = -1;
};

void start(Job& j, const stdfs::path& cwd) {
  j.argv.clear();
  for (auto& a : j.args) j.argv.push_back(a.data());
  j.argv.push_back(nullptr);
  const char* dir = cwd.c_str();
  const char* out = j.out_path.c_str();
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    if ((j.role == "approve" || j.role == "reject") && !become_terminal_session()) _exit(125);  // a person's commands
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(j.argv[0], j.argv.data());
    _exit(127);
  }
  j.pid = pid;
}

std::string slurp(const stdfs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Concurrency, TwoHundredProcessesLoseNoUpdate) {
  TempDir dir;
  const stdfs::path root = dir.path();
  write_file(root / ".yolo-planning/config.json", R"({"v3_event_log": true})");
  const std::vector<std::string> types = {"vision", "security", "scope_change", "wave"};
  std::vector<Job> jobs;
  for (int i = 0; i < 200; ++i) {
    Job j;
    j.out_path = (root / ("out-" + std::to_string(i) + ".txt")).string();
    switch (i % 4) {
      case 0:
      case 1: {
        if (i % 8 == 1) {  // 1/8 of the jobs are rejects
          j.role = "reject";
          j.args = {yolo_bin(), "reject", "--yes", "--by", "r" + std::to_string(i), "--feedback", "no " + std::to_string(i)};
        } else {
          j.role = "request";
          std::string file = "docs/r" + std::to_string(i) + ".md";
          write_file(root / file, "request " + std::to_string(i) + "\n");
          j.args = {yolo_bin(), "request-approval", "--plan-path", file, "--gate-type", types[i % types.size()], "--json"};
        }
        break;
      }
      case 2:
        j.role = "approve";
        j.args = {yolo_bin(), "approve", "--yes", "--by", "a" + std::to_string(i), "--json"};
        break;
      default:
        j.role = "log";
        j.args = {yolo_bin(), "log-event", "task_start", "1", "n=" + std::to_string(i)};
        break;
    }
    jobs.push_back(std::move(j));
  }
  std::shuffle(jobs.begin(), jobs.end(), std::mt19937(42));

  // A reader that checks the state file the whole time.
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, bad{0};
  std::string first_bad;
  std::thread watcher([&] {
    const auto path = root / ".yolo-planning/.execution-state.json";
    while (!stop) {
      std::string s = slurp(path);
      if (!s.empty()) {
        ++reads;
        json doc = json::parse(s, nullptr, false);
        std::string why = doc.is_discarded() ? "does not parse" : state::validate(doc).error;
        if (!why.empty() && bad++ == 0) first_bad = why + ": " + s.substr(0, 200);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });

  for (auto& j : jobs) start(j, root);
  for (auto& j : jobs) {
    int st = 0;
    waitpid(j.pid, &st, 0);
    j.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  stop = true;
  watcher.join();

  std::map<std::string, int> ok, total;
  for (auto& j : jobs) {
    ++total[j.role];
    if (j.exit_code == 0) ++ok[j.role];
    // Every failure is a clean, expected refusal, never a crash or a lock/IO error.
    if (j.exit_code != 0) {
      std::string out = slurp(j.out_path);
      bool expected = (j.role == "request" && out.find("Cannot freeze: already frozen") != std::string::npos) ||
                      ((j.role == "approve" || j.role == "reject") && out.find("No pending approval to resolve") != std::string::npos);
      EXPECT_TRUE(expected) << j.role << " exit " << j.exit_code << ": " << out;
    }
  }
  EXPECT_EQ(total["request"] + total["approve"] + total["reject"] + total["log"], 200);
  EXPECT_EQ(bad.load(), 0) << first_bad;
  EXPECT_GT(reads.load(), 0);

  json doc = json::parse(slurp(root / ".yolo-planning/.execution-state.json"));
  EXPECT_EQ(state::validate(doc).error, "");
  std::map<std::string, int> by_status;
  for (const auto& g : doc["gates"]) ++by_status[g["status"].get<std::string>()];
  EXPECT_GE(ok["request"], 1);
  EXPECT_EQ(static_cast<int>(doc["gates"].size()), ok["request"]) << "a request-approval that succeeded is missing";
  EXPECT_EQ(by_status["APPROVED"], ok["approve"]);
  EXPECT_EQ(by_status["REJECTED"], ok["reject"]);
  EXPECT_LE(by_status["OPEN"], 1);
  EXPECT_EQ(ok["log"], total["log"]);

  // The event log: one whole JSON line per event, nothing torn or lost.
  std::string log = slurp(root / ".yolo-planning/.events/event-log.jsonl");
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back(), '\n');
  std::map<std::string, int> events;
  std::set<std::string> ids;
  size_t lines = 0, pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    json e = json::parse(log.substr(pos, nl - pos), nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << "torn line: " << log.substr(pos, nl - pos);
    ++events[e["event"].get<std::string>()];
    ids.insert(e["event_id"].get<std::string>());
    ++lines;
    pos = nl + 1;
  }
  EXPECT_EQ(events["gate_frozen"], ok["request"]);
  EXPECT_EQ(events["gate_resumed"], ok["approve"]);
  EXPECT_EQ(events["gate_rejected"], ok["reject"]);
  EXPECT_EQ(events["task_start"], ok["log"]);
  EXPECT_EQ(lines, static_cast<size_t>(ok["request"] + ok["approve"] + ok["reject"] + ok["log"]));
  EXPECT_EQ(ids.size(), lines);
  std::cout << "[ concurrency ] requests " << ok["request"] << "/" << total["request"] << ", approvals " << ok["approve"] << "/"
            << total["approve"] << ", rejections " << ok["reject"] << "/" << total["reject"] << ", events " << lines
            << ", state reads checked " << reads.load() << "\n";
}

}  // namespace
}  // namespace yolo::test
