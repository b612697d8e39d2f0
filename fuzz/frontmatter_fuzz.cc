// libFuzzer: the frontmatter parser and the plan parser on top of it (any bytes); and where
// the flat frontmatter reader answers, its answer is yaml-cpp's (else it aborts).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "protocol/plan/frontmatter.h"
#include "protocol/plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto fm = yolo::parse_frontmatter(text);
  (void)fm;
  auto plan = yolo::parse_plan(text, "fuzz/01-01-PLAN.md");
  (void)plan.id();
  if (auto simple = yolo::simple_yaml_to_json(text)) {
    std::optional<yolo::FrontmatterError> err;
    yolo::json full = yolo::yaml_cpp_to_json(text, err);
    if (err || full != *simple) std::abort();
  }
  return 0;
}
