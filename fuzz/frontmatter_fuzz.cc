// libFuzzer: the frontmatter parser and the plan parser on top of it (any bytes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/frontmatter.h"
#include "protocol/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto fm = yolo::parse_frontmatter(text);
  (void)fm;
  auto plan = yolo::parse_plan(text, "fuzz/01-01-PLAN.md");
  (void)plan.id();
  return 0;
}
