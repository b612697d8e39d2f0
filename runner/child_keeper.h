// Supervision of escaped descendants. A child can leave processes outside its group (setsid,
// a daemon that double-forks) that hold our pipes open and outlive every timeout. With
// supervise_children() on (yolo's main does it), this process is a child subreaper
// (PR_SET_CHILD_SUBREAPER): such orphans are re-parented to us instead of init, so we can find
// them, as our own children, without scanning the whole system. Each child gets
// YOLO_PROC_<token>=<n> in its environment (inherited by its descendants), which says which
// spawn an orphan came from; when a spawn ends, the orphans carrying its number (or the number
// of any spawn that has ended) are killed with their descendants and reaped; an orphan with
// no number (it cleared its environment) is left alone while we run and, like every orphan
// left, killed at exit. A cgroup would
// catch even a descendant that clears its environment, but needs a writable, delegated cgroup
// v2 tree, which CI containers and many hosts do not give an unprivileged user; the subreaper
// needs nothing (Linux >= 3.4).
//
// If this process is killed (kill -9), a keeper process forked at the first spawn (it holds
// the read end of a pipe only we write) wakes on end-of-file, kills every process carrying
// this process's token and removes the private temp folder (prompt files): no agent runs on
// unbounded, no prompt is left in /tmp.
#pragma once
#include <filesystem>
#include <mutex>
#include <string>

namespace yolo::runner {

// Turns on the supervision described above (subreaper, spawn tokens, keeper). Call once,
// early in main(), in a process that starts all of its children through runner/subprocess.h
// (it reaps zombie children it did not start).
void supervise_children();
bool supervising_children();
// Forks the keeper now (else at the first spawn). A command that will start children calls
// it first, while this process is small: a fork copies the page tables, and every page this
// process writes after it is copied once (copy-on-write); forked after 800 plans were loaded,
// that was a thousand page faults and milliseconds before the first executor.
void start_keeper();
// Ends the process now with `code`, as a command whose work is done (its files written, its
// children reaped): its output flushed and, as at any exit, every orphan left ended; but
// nothing freed (freeing a run of 800 plans node by node, or a review of 8,000, cost more than
// the kernel's freeing it all at once). Under AddressSanitizer it returns `code`,
// so that the caller frees everything as usual and a leak still shows.
int exit_without_freeing(int code);

// A private folder (0700) for files handed to children, e.g. prompt files; when supervising,
// the keeper removes it even if this process is killed. Empty on failure.
std::filesystem::path private_temp_dir();

// The start time of a process in clock ticks since boot (/proc/PID/stat field 22), 0 when
// it does not exist: with the pid it names a process for good (pids are reused).
unsigned long long process_start_ticks(int pid);
// The process group of a live process, 0 when it does not exist.
int process_group_of(int pid);

// What runner/subprocess.cc asks of the supervisor around each spawn (nobody else calls these).
namespace keeper {
// The spawn's number (0 when not supervising) and the environment name that carries it;
// starts the keeper at the first spawn.
unsigned long long next_spawn(std::string& env_name);
// Held around the spawn (the clone) and spawned(): a sweep never sees the new child unregistered.
std::unique_lock<std::mutex> spawn_lock(unsigned long long seq);
void spawned(unsigned long long seq, int pid);  // under spawn_lock
// Reaps the child if it has exited (waitpid, WNOHANG): true and its wait status then, and
// its orphans may be swept from now on. The reap and the unregistering happen under the lock
// every sweep holds, so a sweep (which reaps zombies it does not know) never takes the exit
// status of a child of ours, and a pid reused after the reap is never taken for ours.
bool reap(unsigned long long seq, int pid, int* status);
// Kills the orphans of spawns that have ended and reaps stray zombies.
void sweep();
}  // namespace keeper

}  // namespace yolo::runner
