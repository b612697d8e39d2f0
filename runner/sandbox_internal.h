// What the parts of the sandbox share: sandbox.cc (the Landlock ruleset, the mount namespace's
// binds, entering it), sandbox_paths.cc (canonical paths, the read rules), sandbox_filter.cc
// (the seccomp program) and sandbox_inputs.cc (what a request and the config make of the
// policy's inputs).
#pragma once
#include <linux/filter.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocol/state/config.h"

namespace yolo::runner {
struct Confinement;
}

namespace yolo::runner::sandbox_detail {

// The canonical form of a path as far as it exists (a hidden path named through a link is
// hidden where it lies): absolute, no link, no "." or "..", no trailing "/"
// (runner/sandbox_paths.cc).
std::string canonical(const std::string& p);
// While one lives on the stack, canonical() resolves each folder once on this thread: for
// the making of one confinement (a link swapped meanwhile is seen at the next one).
class CanonicalScope {
 public:
  CanonicalScope();
  ~CanonicalScope();
  CanonicalScope(const CanonicalScope&) = delete;
  CanonicalScope& operator=(const CanonicalScope&) = delete;

 private:
  friend std::string canonical(const std::string& p);
  CanonicalScope* outer_;
  std::map<std::string, std::string> known_;
};

// One path granted read and execute, and whether it is a folder.
struct ReadRule {
  std::string path;
  bool dir;
};
// The read rules of a child that must not see the `hidden` paths: every path beneath "/" but
// them (the folders that hold one listed entry by entry). 0 or an errno.
int read_rules(const std::vector<std::string>& hidden, std::shared_ptr<const std::vector<ReadRule>>& out);

// The seccomp program of a confined child. `notify`: the escape attempts are handed to yolo's
// supervisor (runner/refusals.h) rather than refused silently; `watch_writes`: so are writes;
// `watch_sockets` (with `unix_sockets`): so are connections to an address.
std::vector<sock_filter> seccomp_program(bool unix_sockets, bool notify, bool watch_writes, bool watch_sockets = false);

// The secret files an open of which is named (sandbox.cc binds an empty decoy over each and
// watches it): the approval key and the files of yolo's key folders, the SSH private keys
// (`~/.ssh/id_*` but `.pub`, and any file there whose first line says "PRIVATE KEY"), GnuPG's
// private keys (`~/.gnupg/private-keys-v1.d`). Regular files only, as they are now; canonical.
std::vector<std::string> secret_files();

// Empty decoys standing in for the secret files, one set per child at a time and reused by
// the next child (runner/sandbox_decoys.cc): making files costs far more than a start on a file
// system where files come and go (ext4 skips inodes freed recently), so a set is made once per
// yolo process and concurrency, not once per child. An inotify descriptor watches each decoy
// for IN_OPEN.
struct DecoySet {
  std::string dir;  // in yolo's private folder, hidden from every child
  int fd = -1;
  std::vector<std::string> asked;            // the secrets it was made for
  std::vector<std::string> secrets, decoys;  // secrets[k] is stood in for by decoys[k]
  std::vector<int> wds;                      // decoys[k]'s watch
};
// A free set for exactly these secrets, in a folder beneath `parent` (made when none is free);
// its queue holds nothing. nullptr when none can be made.
DecoySet* take_decoys(const std::vector<std::string>& secrets, const std::string& parent);
// Drops what the set's queue holds (opens made before its child started).
void drop_queued(const DecoySet& set);
// The set free again for the next child.
void give_back(DecoySet* set);

// The config's "sandbox" object, when it is one.
const json* sandbox_object(const Config& cfg);

// The read-only binds (and the writable ones below them) the child makes in its own mount
// namespace, for the policy's paths that exist, then the decoys over the secrets
// (runner/sandbox_mounts.cc).
void prepare_mounts(Confinement& c);

}  // namespace yolo::runner::sandbox_detail
