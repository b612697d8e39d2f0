// libFuzzer: the reviewer's completion message (VERDICT/CYCLE/FINDINGS lines).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/review/reviewer_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = yolo::review::parse_reviewer_output(text);
  (void)r;
  size_t nl = text.find('\n');
  auto f = yolo::review::parse_finding_line(text.substr(0, nl));
  (void)f;
  return 0;
}
