// What protocol/ reaches in the ambient world, passed in by whoever calls it: the files (a
// Disk), the time (a Clock) and the approval key. The runner passes World::real(); unit tests
// pass an in-memory disk, a fixed clock and a key of their own, and need no temp folder.
// The functions that take no World use World::real().
#pragma once
#include <string>

#include "protocol/disk.h"
#include "protocol/seal.h"

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

struct World {
  fs::Disk* disk = nullptr;
  const Clock* clock = nullptr;
  // The approval key; null: the key file the runner chose (seal::use_key_file), read to
  // check a seal (never created then) and created, when missing, to make one.
  const seal::Key* key = nullptr;

  static World real();
  fs::Disk& files() const { return disk ? *disk : fs::real_disk(); }
  std::string now() const { return clock ? clock->now_iso8601() : system_clock().now_iso8601(); }
  const seal::Key& sealing_key() const { return key ? *key : seal::key(); }
  const seal::Key& checking_key() const { return key ? *key : seal::existing_key(); }
};

}  // namespace yolo
