// The runner's World (protocol/ports/world.h): the real disk, the system clock, the approval key
// file (runner/identity.h: approval_key_path) and SSH-signed approvals checked with
// ssh-keygen (runner/signing.h). run_cli builds it once at start-up and hands it to the
// command in its context (runner/context.h); the runner passes it on to every protocol
// function that reaches files, time or keys.
#pragma once
#include <filesystem>
#include <mutex>

#include "protocol/base/seal.h"
#include "protocol/ports/world.h"

namespace yolo::runner {

// The approval key in a file outside any repository, read once per process. sealing()
// creates it (mode 0600, 32 random bytes, without a race: another process's key wins) when
// missing; checking() never does. A key file of the wrong size is an error, never replaced:
// approvals sealed with it would be lost.
class KeyFile : public seal::KeySource {
 public:
  explicit KeyFile(std::filesystem::path p)
      : path_(std::move(p)),
        // Fixed once: read-only callers on two threads (the watcher's loop and its reviews)
        // may hold it at the same time, so it is never assigned again.
        none_{{}, "no approval key " + path_.string() + " yet: nothing was approved with yolo on this machine"} {}
  const seal::Key& sealing() override { return get(/*create=*/true); }
  const seal::Key& checking() override { return get(/*create=*/false); }

 private:
  const seal::Key& get(bool create);
  std::filesystem::path path_;
  std::mutex m_;
  seal::Key key_, none_;
  bool have_ = false;
};

// The process's World, built on the first call, by run_cli, which hands it to the command in
// its context. Everything below a command is given it (a Context, a World&) by its caller;
// the only other callers are the benchmarks, which have no command.
const World& world();

}  // namespace yolo::runner
