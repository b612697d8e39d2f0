// The stand-in reviewer of `watch_bench --agent-sizes`: `stamp_reviewer STAMP PLAN`.
// Its first act appends CLOCK_MONOTONIC (in ns) to STAMP, so "reviewer start" is the moment
// the agent runs, whoever started it. It uses libc only (a static PIE where libc.a exists), so
// its own loading is as short as a program's can be: the watch_bench binary itself, with
// libstdc++, yaml-cpp and libuv to map, took about a millisecond more to reach main, and that
// millisecond counted on both sides (yolo's and the anchor's) of the comparison.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  if (argc < 2) return 2;
  char b[64];
  int n = std::snprintf(b, sizeof b, "%lld\n", static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
  int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    if (::write(fd, b, static_cast<size_t>(n)) != n) { /* the bench notices a missing stamp */
    }
    ::close(fd);
  }
  static const char kOut[] = "VERDICT: approve\nFINDINGS:\n- none\n";
  return ::write(1, kOut, std::strlen(kOut)) == static_cast<ssize_t>(std::strlen(kOut)) ? 0 : 1;
}
