#include "protocol/world.h"

#include "protocol/clock.h"

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

World World::real() { return World{&fs::real_disk(), &system_clock(), nullptr}; }

}  // namespace yolo
