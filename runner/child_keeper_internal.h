// The supervisor's internals shared by its three files: the Supervisor record and what each
// file needs of the others. child_keeper.cc holds the public calls and the exit,
// child_keeper_process.cc the keeper process (forked, async-signal-safe), child_keeper_sweep.cc
// the subreaper's sweep of orphans through /proc.
#pragma once

#include <dirent.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <mutex>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace yolo::runner::keeper_detail {

struct Supervisor {
  std::mutex mu;  // held around each spawn, each reap and every sweep: no child of ours is unregistered
  bool enabled = false;
  bool keeper_started = false;
  std::string env_name;          // YOLO_PROC_<token>
  char keeper_needle[64] = {0};  // "YOLO_PROC_<token>=", for the keeper (no allocation there)
  char temp_dir[4096] = {0};
  bool temp_made = false;
  int keeper_pid = 0;
  int keeper_fd = -1;
  std::set<int> live_pids;  // children started by subprocess.cc that it has not reaped yet
  std::set<unsigned long long> live_seqs;
  // The mount namespace of each live spawn that has one of its own (a confined child), and
  // those of the spawns that ended: a confined child cannot leave its namespace, so an orphan
  // in an ended spawn's namespace is that spawn's, even with its environment cleared.
  std::map<unsigned long long, unsigned long long> ns_of_seq;
  std::set<unsigned long long> ended_ns;
  unsigned long long own_ns = 0;
  pid_t owner_pid = 0;       // the process that turned supervision on (not a forked copy)
  bool final_sweep = false;  // at exit: every orphan goes, with a number or without
  unsigned long long next_seq = 1;
};

Supervisor& sup();

// The inode of the mount namespace pid is in; 0 when it cannot be read (it has ended).
unsigned long long mount_ns_of(int pid);

// getdents64 records: glibc's dirent64 has the kernel's layout (d_ino, d_off, d_reclen, d_type, d_name).
using LinuxDirent64 = struct dirent64;

bool all_digits(const char* p);

// f(name) for each entry of the open folder dfd, read with getdents64 into buf (raw
// syscalls, no allocation: the keeper uses it too). "." and ".." are passed over.
template <size_t N, class F>
void each_entry(int dfd, char (&buf)[N], F f) {
  for (;;) {
    long n = ::syscall(SYS_getdents64, dfd, buf, N);
    if (n <= 0) return;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] == '.' && (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2]))) continue;
      f(static_cast<const char*>(d->d_name));
    }
  }
}

// Forks the keeper (once, when supervising). Under sup().mu.
void start_keeper_locked();
// "S" and the fields after the command name of /proc/PID/stat; empty when gone.
std::vector<std::string> stat_fields(int pid);
// Ends the orphans (re-parented to us) of spawns that have ended and reaps the zombies among
// our children that subprocess.cc does not wait for. Returns how many orphans were killed.
int sweep_orphans_locked();

}  // namespace yolo::runner::keeper_detail
