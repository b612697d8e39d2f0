#include "runner/mcp_server.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <utility>

#include "protocol/base/schema.h"
#include "protocol/base/text.h"

namespace yolo::runner::mcp {
namespace {

// Keeps error details short: never echo a huge message back to the client.
std::string clip(std::string_view s, size_t n = 240) {
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n)) + "...";
}

bool is_valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::binary:
      return "binary";
    case json::value_t::discarded:
      return "discarded";
    default:
      return j.is_number_integer() ? "an integer" : "a number";
  }
}

// A client name fit for `approved_by`: printable, bounded.
std::string clean_name(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
  out = std::string(text::trim(out));
  if (out.size() > 128) out.resize(128);
  if (!text::valid_utf8(out)) return "unknown";
  return out.empty() ? "unknown" : out;
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

json error_response(const json& id, int code, const std::string& message, const json& data) {
  json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

json result_response(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

std::string dump_line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Server::Server(const World& w, std::filesystem::path root, Limits limits)
    : world_(w), root_(std::move(root)), limits_(limits) {}

bool Server::modern() const { return protocol_version_ != "2025-03-26"; }

std::string Server::oversize_error(size_t bytes) const {
  return dump_line(error_response(nullptr, kInvalidRequest,
                                  "Invalid Request: message of " + std::to_string(bytes) +
                                      " bytes exceeds the limit of " + std::to_string(limits_.max_message_bytes) +
                                      " bytes; it was discarded"));
}

std::optional<std::string> Server::handle_message(std::string_view raw) {
  std::string_view msg = text::trim(raw);
  if (msg.empty()) return std::nullopt;
  try {
    if (msg.size() > limits_.max_message_bytes) return oversize_error(msg.size());
    if (!text::valid_utf8(msg))
      return dump_line(error_response(nullptr, kParseError, "Parse error: the message is not valid UTF-8"));
    if (msg.find('\0') != std::string_view::npos)
      return dump_line(error_response(nullptr, kParseError, "Parse error: the message holds a NUL byte"));
    JsonParse parsed = parse_json_bounded(msg, limits_.max_depth);
    if (parsed.problem == JsonParse::Problem::TooDeep)
      return dump_line(error_response(
          nullptr, kInvalidRequest,
          "Invalid Request: JSON nested deeper than " + std::to_string(limits_.max_depth) + " levels is refused"));
    if (!parsed.ok()) {
      json detail = {{"detail", clip(parsed.message)}};
      if (parsed.byte) detail["byte"] = parsed.byte;
      return dump_line(error_response(nullptr, kParseError, "Parse error: the message is not valid JSON", detail));
    }
    json doc = std::move(parsed.doc);
    if (doc.is_array()) {
      if (!initialized_ || modern())
        return dump_line(error_response(nullptr, kInvalidRequest,
                                        "Invalid Request: JSON-RPC batches are not supported by protocol revision " +
                                            std::string(initialized_ ? protocol_version_ : kLatestProtocolVersion)));
      if (doc.empty()) return dump_line(error_response(nullptr, kInvalidRequest, "Invalid Request: empty batch"));
      if (doc.size() > limits_.max_batch)
        return dump_line(error_response(
            nullptr, kInvalidRequest,
            "Invalid Request: a batch may hold at most " + std::to_string(limits_.max_batch) + " messages"));
      json answers = json::array();
      for (const auto& m : doc)
        if (auto a = handle_value(m, true)) answers.push_back(std::move(*a));
      if (answers.empty()) return std::nullopt;
      return dump_line(answers);
    }
    auto a = handle_value(doc, false);
    if (!a) return std::nullopt;
    return dump_line(*a);
  } catch (const std::exception& e) {
    return dump_line(error_response(nullptr, kInternalError, "Internal error: " + clip(e.what())));
  }
}

std::optional<json> Server::handle_value(const json& msg, bool in_batch) {
  if (!msg.is_object())
    return error_response(nullptr, kInvalidRequest,
                          std::string("Invalid Request: a message must be a JSON object, got ") + type_name(msg));
  json id = nullptr;
  bool has_id = msg.contains("id");
  if (has_id) {
    if (!is_valid_id(msg["id"]))
      return error_response(
          nullptr, kInvalidRequest,
          std::string("Invalid Request: id must be a string or an integer, got ") + type_name(msg["id"]));
    id = msg["id"];
  }
  auto jit = msg.find("jsonrpc");
  if (jit == msg.end() || !jit->is_string() || *jit != "2.0")
    return error_response(id, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  auto mit = msg.find("method");
  if (mit == msg.end()) {
    // A response to a request we never sent: nothing to answer.
    if (has_id && (msg.contains("result") || msg.contains("error"))) return std::nullopt;
    return error_response(id, kInvalidRequest, "Invalid Request: no \"method\"");
  }
  if (!mit->is_string())
    return error_response(id, kInvalidRequest,
                          std::string("Invalid Request: \"method\" must be a string, got ") + type_name(*mit));
  const std::string method = *mit;
  json params = msg.contains("params") ? msg["params"] : json(nullptr);
  if (msg.contains("params") && !params.is_object() && !params.is_array())
    return error_response(id, kInvalidRequest, "Invalid Request: \"params\" must be an object");
  if (!has_id) {
    handle_notification(method, params);
    return std::nullopt;
  }
  return handle_request(method, params, id, in_batch);
}

void Server::handle_notification(const std::string& method, const json& /*params*/) {
  if (method == "notifications/initialized" && initialized_) ready_ = true;
  // notifications/cancelled and others: requests are answered synchronously, nothing to do.
}

json Server::handle_request(const std::string& method, const json& params, const json& id, bool in_batch) {
  if (method == "ping") return result_response(id, json::object());
  if (method == "initialize") {
    if (in_batch) return error_response(id, kInvalidRequest, "Invalid Request: initialize must not be part of a batch");
    if (initialized_) return error_response(id, kInvalidRequest, "Invalid Request: the session is already initialized");
    return initialize(params, id);
  }
  bool known = method == "tools/list" || method == "tools/call";
  if (!known) return error_response(id, kMethodNotFound, "Method not found: " + clip(method, 120));
  if (!initialized_)
    return error_response(id, kInvalidRequest,
                          "Invalid Request: the server is not initialized; send \"initialize\" first");
  if (!params.is_null() && !params.is_object())
    return error_response(id, kInvalidParams, "Invalid params: \"params\" must be an object");
  if (method == "tools/list") return tools_list(params, id);
  return tools_call(params, id);
}

json Server::initialize(const json& params, const json& id) {
  if (!params.is_object()) return error_response(id, kInvalidParams, "Invalid params: initialize needs an object");
  auto pv = params.find("protocolVersion");
  if (pv == params.end() || !pv->is_string())
    return error_response(id, kInvalidParams, "Invalid params: \"protocolVersion\" must be a string");
  if (params.contains("capabilities") && !params["capabilities"].is_object())
    return error_response(id, kInvalidParams, "Invalid params: \"capabilities\" must be an object");
  if (params.contains("clientInfo")) {
    const json& ci = params["clientInfo"];
    if (!ci.is_object() || (ci.contains("name") && !ci["name"].is_string()))
      return error_response(id, kInvalidParams, "Invalid params: \"clientInfo\" must be an object with a string name");
    if (ci.contains("name")) client_name_ = clean_name(ci["name"].get<std::string>());
  }
  const std::string asked = *pv;
  protocol_version_ = kLatestProtocolVersion;
  for (const char* v : kSupportedProtocolVersions)
    if (asked == v) protocol_version_ = v;
  initialized_ = true;
  json info = {{"name", "yolo"}, {"version", YOLO_VERSION}};
  if (modern()) info["title"] = "yolo-runner plan gates";
  return result_response(
      id, json{{"protocolVersion", protocol_version_},
               {"capabilities", {{"tools", json::object()}}},
               {"serverInfo", std::move(info)},
               {"instructions",
                "Gates and reviews of a .yolo-planning project. Call request_human_approval after writing "
                "ROADMAP.md and then stop: a person approves (yolo approve). review_plan runs the structural "
                "pre-check of a PLAN.md; execution_status shows the run; manage_hitl_gate lists open gates."}});
}

json Server::tools_list(const json& params, const json& id) const {
  if (params.is_object() && params.contains("cursor"))
    return error_response(id, kInvalidParams, "Invalid params: unknown cursor (this server does not paginate)");
  json list = json::array();
  for (const Tool& t : tools()) {
    json j = {{"name", t.name}, {"description", t.description}, {"inputSchema", schema::document(t.input_schema())}};
    if (modern()) {
      j["title"] = t.title;
      j["outputSchema"] = schema::document(t.output_schema());
    }
    if (!t.annotations.is_null()) j["annotations"] = t.annotations;
    list.push_back(std::move(j));
  }
  return result_response(id, json{{"tools", std::move(list)}});
}

json Server::tools_call(const json& params, const json& id) {
  if (!params.is_object()) return error_response(id, kInvalidParams, "Invalid params: tools/call needs an object");
  auto nit = params.find("name");
  if (nit == params.end() || !nit->is_string())
    return error_response(id, kInvalidParams, "Invalid params: \"name\" must be a string");
  const std::string name = *nit;
  const Tool* tool = find_tool(name);
  if (!tool) return error_response(id, kInvalidParams, "Unknown tool: " + clip(name, 120));
  json args = params.contains("arguments") ? params["arguments"] : json::object();
  if (args.is_null()) args = json::object();
  if (!args.is_object()) return error_response(id, kInvalidParams, "Invalid params: \"arguments\" must be an object");
  auto errors = schema::validate(tool->input_schema(), args);
  if (!errors.empty()) {
    json details = json::array();
    for (size_t i = 0; i < errors.size() && i < 10; ++i)
      details.push_back({{"pointer", errors[i].pointer}, {"message", clip(errors[i].message)}});
    return error_response(id, kInvalidParams,
                          "Invalid arguments for tool " + name + ": " + clip(schema::describe(errors, 3), 600),
                          json{{"tool", name}, {"errors", std::move(details)}});
  }
  ToolResult r;
  try {
    r = tool->run(args, ToolContext{world_, root_, client_name_});
  } catch (const std::exception& e) {
    return error_response(id, kInternalError, "Internal error in tool " + name + ": " + clip(e.what()));
  }
  if (r.is_error)
    return result_response(id,
                           json{{"content", json::array({{{"type", "text"}, {"text", r.text}}})}, {"isError", true}});
  auto out_errors = schema::validate(tool->output_schema(), r.structured);
  if (!out_errors.empty())
    return error_response(id, kInternalError,
                          "Internal error: tool " + name + " produced output that does not match " +
                              tool->output_schema() + ": " + clip(schema::describe(out_errors, 3), 600));
  json content = json::array();
  if (!r.text.empty()) content.push_back({{"type", "text"}, {"text", r.text}});
  // The same result serialised, for clients that do not read structuredContent.
  content.push_back({{"type", "text"}, {"text", dump_line(r.structured)}});
  json result = {{"content", std::move(content)}, {"isError", false}};
  if (modern()) result["structuredContent"] = std::move(r.structured);
  return result_response(id, std::move(result));
}

int Server::serve(int in_fd, int out_fd) {
  std::string line;
  bool overflow = false;
  size_t overflow_bytes = 0;
  char buf[1 << 16];
  auto answer = [&](const std::optional<std::string>& a) {
    if (!a) return true;
    std::string s = *a;
    s += '\n';
    return write_all(out_fd, s);
  };
  for (;;) {
    ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) break;
    std::string_view chunk(buf, static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t nl = chunk.find('\n');
      std::string_view part = chunk.substr(0, nl);
      if (overflow) {
        overflow_bytes += part.size();
      } else if (line.size() + part.size() > limits_.max_message_bytes) {
        overflow = true;
        overflow_bytes = line.size() + part.size();
        std::string().swap(line);
      } else {
        line.append(part);
      }
      if (nl == std::string_view::npos) break;
      chunk.remove_prefix(nl + 1);
      bool ok = overflow ? answer(oversize_error(overflow_bytes)) : answer(handle_message(line));
      overflow = false;
      overflow_bytes = 0;
      line.clear();
      if (!ok) return 1;
    }
  }
  // End of input: a last message without its newline is still answered.
  if (overflow) {
    if (!answer(oversize_error(overflow_bytes))) return 1;
  } else if (!line.empty()) {
    if (!answer(handle_message(line))) return 1;
  }
  return 0;
}

}  // namespace yolo::runner::mcp
