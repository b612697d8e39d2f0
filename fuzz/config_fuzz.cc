// libFuzzer: the config loader (bounded JSON parse, then every key's rules).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/state/config.h"
#include "protocol/base/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = yolo::parse_json_bounded(text);
  if (!parsed.ok()) return 0;
  auto c = yolo::config_from_json(parsed.doc, "fuzz/config.json");
  (void)c;
  for (const char* agent : {"reviewer", "dev", "nobody"}) {
    (void)yolo::resolve_turns(agent, parsed.doc, "");
    (void)yolo::resolve_model(agent, parsed.doc, yolo::json::object());
  }
  return 0;
}
