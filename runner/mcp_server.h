// `yolo mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per
// line). Lifecycle (initialize with version negotiation, notifications/initialized, ping),
// tools/list and tools/call over the tools of runner/mcp_tools.h.
//
// Robustness: a message longer than Limits::max_message_bytes or nested deeper than
// Limits::max_depth is refused with an error (id null) without being parsed; bytes that
// are not UTF-8 or not JSON get a parse error; the server keeps serving after each.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json.h"
#include "runner/mcp_tools.h"

namespace yolo::runner::mcp {

inline constexpr const char* kLatestProtocolVersion = "2025-06-18";
// The revisions this server speaks, newest first.
inline constexpr const char* kSupportedProtocolVersions[] = {"2025-06-18", "2025-03-26"};

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

struct Limits {
  size_t max_message_bytes = 4u << 20;  // 4 MiB per line
  int max_depth = 64;                   // arrays/objects nested deeper are refused
  size_t max_batch = 64;                // elements of a JSON-RPC batch (2025-03-26 only)
};

class Server {
 public:
  Server(const World& w, std::filesystem::path root, Limits limits = {});

  // Handles one framed message (the line without its newline). Returns the response line
  // (without newline), or nullopt when no response is due (notifications, responses).
  std::optional<std::string> handle_message(std::string_view text);
  // The error answered for a line that was longer than the limit and was discarded.
  std::string oversize_error(size_t bytes) const;

  // Reads newline-delimited messages from in_fd until end of input, answering on out_fd.
  // Returns 0 on end of input, 1 when the output could not be written (client gone).
  int serve(int in_fd, int out_fd);

  bool initialized() const { return initialized_; }
  const std::string& protocol_version() const { return protocol_version_; }
  const std::string& client_name() const { return client_name_; }

 private:
  std::optional<json> handle_value(const json& msg, bool in_batch);
  json handle_request(const std::string& method, const json& params, const json& id, bool in_batch);
  void handle_notification(const std::string& method, const json& params);
  json initialize(const json& params, const json& id);
  json tools_list(const json& params, const json& id) const;
  json tools_call(const json& params, const json& id);
  bool modern() const;  // 2025-06-18: titles, outputSchema, structuredContent

  const World& world_;
  std::filesystem::path root_;
  Limits limits_;
  bool initialized_ = false;  // initialize answered
  bool ready_ = false;        // notifications/initialized received
  std::string protocol_version_;
  std::string client_name_ = "unknown";
};

// Helpers, exposed for tests.
json error_response(const json& id, int code, const std::string& message, const json& data = nullptr);
json result_response(const json& id, json result);
// One line of JSON for the wire: invalid UTF-8 in strings is replaced, never thrown.
std::string dump_line(const json& j);

}  // namespace yolo::runner::mcp
