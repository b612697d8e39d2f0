#include "runner/person.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <set>
#include <sstream>

#include "protocol/ports/fs.h"
#include "runner/identity.h"
#include "runner/sandbox.h"

namespace yolo::runner {

namespace {

// The parent pid of `pid` from /proc/PID/stat (the field after the command's closing paren).
pid_t parent_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(s.substr(close + 1));
  char state = 0;
  long long ppid = 0;
  in >> state >> ppid;
  return in ? static_cast<pid_t>(ppid) : 0;
}

// The nearest ancestor running the same executable as this process (same file: device and
// inode of /proc/PID/exe), or 0.
pid_t yolo_ancestor() {
  struct stat self {};
  if (::stat("/proc/self/exe", &self) != 0) return 0;
  pid_t p = parent_of(::getpid());
  // No depth limit: a chain of any length is walked to its end (pid 1, or a parent that is
  // gone); a pid seen twice ends it (a parent re-used while we walk).
  std::set<pid_t> seen;
  while (p > 1 && seen.insert(p).second) {
    struct stat st {};
    std::string exe = "/proc/" + std::to_string(p) + "/exe";
    if (::stat(exe.c_str(), &st) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino) return p;
    // Another build of yolo (an installed one and a development one): same file name.
    char buf[4096];
    ssize_t n = ::readlink(exe.c_str(), buf, sizeof buf - 1);
    if (n > 0) {
      std::string target(buf, static_cast<size_t>(n));
      if (auto sp = target.find(" (deleted)"); sp != std::string::npos) target.resize(sp);
      auto slash = target.rfind('/');
      if (target.substr(slash == std::string::npos ? 0 : slash + 1) == "yolo") return p;
    }
    p = parent_of(p);
  }
  return 0;
}

// The marker as this process inherited it (before it set its own for its children).
std::string& inherited_marker() {
  static std::string m = [] {
    const char* v = std::getenv(kStartedByYolo);
    return v ? std::string(v) : std::string();
  }();
  return m;
}

std::string ns_of(const char* kind) {
  char buf[64];
  ssize_t n = ::readlink((std::string("/proc/self/ns/") + kind).c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The pid and user namespaces of this process, as one line ("pid:[...] user:[...]").
std::string namespaces_now() { return ns_of("pid") + " " + ns_of("user"); }

// Beside the approval key: the namespaces the person decided in first. A process in another
// pid or user namespace (`unshare --user --pid`, where the walk of ancestors ends at the new
// namespace's first process) is not the person. The file lies with the key, which no
// sandboxed child can read or write.
std::filesystem::path namespaces_file() {
  auto k = approval_key_path();
  return k.empty() ? k : std::filesystem::path(k.string() + ".namespaces");
}

}  // namespace

void mark_children_as_started_by_yolo() {
  inherited_marker();
  ::setenv(kStartedByYolo, std::to_string(::getpid()).c_str(), 1);
}

PersonCheck person_at_terminal() {
  PersonCheck c;
  if (inside_sandbox()) {
    c.problem = "this process runs inside a yolo sandbox (an agent, executor, reviewer or approver, or `yolo sandbox`)";
    return c;
  }

  if (const std::string& m = inherited_marker(); !m.empty()) {
    c.problem = "this process was started by yolo (an agent, executor, reviewer or approver, yolo pid " + m + ")";
    return c;
  }
  if (auto f = namespaces_file(); !f.empty()) {
    auto known = fs::read_text(f);
    std::string now = namespaces_now();
    if (known.ok() && !known.content.empty() && std::string(known.content.substr(0, known.content.find('\n'))) != now) {
      c.problem = "this process runs in other namespaces (" + now + ") than the person's (" +
                  known.content.substr(0, known.content.find('\n')) + ", recorded in " + f.string() + ")";
      return c;
    }
  }
  if (pid_t y = yolo_ancestor()) {
    c.problem = "this process runs under yolo (pid " + std::to_string(y) +
                "): it was started by an agent, executor or approver";
    return c;
  }
  if (!::isatty(STDIN_FILENO)) {
    c.problem = "the standard input of this process is not a terminal";
    return c;
  }
  int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    c.problem = "this process has no controlling terminal";
    return c;
  }
  ::close(fd);
  c.ok = true;
  return c;
}

void remember_person_namespaces() {
  auto f = namespaces_file();
  if (f.empty()) return;
  std::error_code ec;
  if (std::filesystem::exists(f, ec)) return;
  (void)fs::write_atomic(f, namespaces_now() + "\n");
}

bool confirm(const std::string& question) {
  std::cerr << question << std::flush;
  std::string line;
  if (!std::getline(std::cin, line)) {
    std::cerr << "\n";
    return false;
  }
  std::string a;
  for (char ch : line)
    if (ch != ' ' && ch != '\t' && ch != '\r')
      a.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return a == "y" || a == "yes";
}

}  // namespace yolo::runner
