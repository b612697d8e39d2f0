// libFuzzer: the MCP server's JSON-RPC reader, one framed message per input line, on a
// project folder that does not exist (tools answer errors; nothing is written).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/mcp_server.h"
#include "runner/world.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  yolo::runner::mcp::Server server(yolo::runner::world(), "/nonexistent/yolo-fuzz-project");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    auto out = server.handle_message(line);
    (void)out;
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return 0;
}
