#include "protocol/ports/world.h"

#include "protocol/ports/clock.h"

namespace yolo {

namespace {
class SystemClock : public Clock {
 public:
  std::string now_iso8601() const override { return yolo::now_iso8601(); }
};
}  // namespace

const Clock& system_clock() {
  static SystemClock c;
  return c;
}

namespace {
const seal::Key& no_key() {
  static const seal::Key k{{}, "no approval key was given"};
  return k;
}
}  // namespace

const seal::Key& World::sealing_key() const { return key ? *key : keys ? keys->sealing() : no_key(); }
const seal::Key& World::checking_key() const { return key ? *key : keys ? keys->checking() : no_key(); }

}  // namespace yolo
