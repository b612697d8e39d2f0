// libFuzzer: the SUMMARY.md parser (frontmatter, sections, claims).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/summary/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = yolo::parse_summary(text, "fuzz/01-01-SUMMARY.md");
  (void)s;
  return 0;
}
