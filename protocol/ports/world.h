// What protocol/ reaches in the ambient world, passed in by whoever calls it: the files (a
// Disk), the time (a Clock), the approval key and the check of SSH-signed approvals. The
// runner builds one World at start-up (runner/world.h: the real disk, the system clock, the
// key file, ssh-keygen); unit tests pass an in-memory disk, a fixed clock, a key and a
// verifier of their own, and need no temp folder. Nothing is registered process-wide: the
// files, the time, the key and the signature check come only from the World passed in. The
// disk and the clock are references given at construction, so no code path can reach the
// real ones by forgetting to pass a port.
#pragma once
#include <filesystem>
#include <string>

#include "protocol/base/json.h"
#include "protocol/base/result.h"

#include "protocol/ports/disk.h"
#include "protocol/base/seal.h"

namespace yolo {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::string now_iso8601() const = 0;  // UTC, e.g. 2026-11-22T04:51:16Z
};
// The system's clock (now_iso8601() of clock.h).
const Clock& system_clock();

// A clock that says what it is told: tests.
class FixedClock : public Clock {
 public:
  explicit FixedClock(std::string now) : now_(std::move(now)) {}
  std::string now_iso8601() const override { return now_; }
  void set(std::string now) { now_ = std::move(now); }

 private:
  std::string now_;
};

// SSH-signed approvals (docs/trust.md): whether a project requires them (it commits
// .yolo-planning/allowed_signers) and whether one verifies. ssh-keygen is a child process,
// so the runner implements it (runner/signing.h); tests pass a fake.
// The trust root is never a file an agent can write in the working tree: the person's own
// allowed-signers file (git's gpg.ssh.allowedSignersFile in the person's global config),
// and the project's file only when `project_file` says an approval made under another root
// pinned its content (gates::project_signers_pinned).
class SignatureVerifier {
 public:
  virtual ~SignatureVerifier() = default;
  virtual bool required(const std::filesystem::path& root) const = 0;
  // Ok when gate["ssh_signature"] verifies against a trusted root; else why not.
  virtual Status verify(const std::filesystem::path& root, const json& gate, bool project_file) const = 0;
};

struct World {
  World(fs::Disk& d, const Clock& c, const seal::Key* k = nullptr, seal::KeySource* ks = nullptr,
        const SignatureVerifier* sigs = nullptr)
      : disk(&d), clock(&c), key(k), keys(ks), signatures(sigs) {}

  fs::Disk* disk;      // never null (set from the constructor's reference)
  const Clock* clock;  // never null
  // The approval key: a fixed one (tests), else `keys` (the runner's key file: read to
  // check a seal, never created then; created, when missing, to make one). Neither: no key,
  // nothing is sealed and no seal counts.
  const seal::Key* key;
  seal::KeySource* keys;
  // Null: no project requires SSH signatures and none is checked (only the seal counts).
  const SignatureVerifier* signatures;

  fs::Disk& files() const { return *disk; }
  std::string now() const { return clock->now_iso8601(); }
  const seal::Key& sealing_key() const;
  const seal::Key& checking_key() const;
};

}  // namespace yolo
