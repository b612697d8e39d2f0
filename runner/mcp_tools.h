// The tools `yolo mcp` offers to agents: each has an input and an output JSON
// Schema in schemas/ (mcp-<tool-name-with-dashes>-input / -output). The server validates
// every call's arguments against the input schema before a tool runs, and publishes the
// very same documents in tools/list.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::runner::mcp {

// What a tool knows about the session it runs in.
struct ToolContext {
  const World& world;          // the server's command's World: files, clock, approval key
  std::filesystem::path root;  // the project root (folder holding .yolo-planning/, or --repo)
  std::string client_name;     // clientInfo.name from initialize ("unknown" when absent)
};

// A tool's answer. A failure (is_error) carries only text: it is returned as a result
// with isError: true, which the model reads; structured is then ignored.
struct ToolResult {
  json structured = json::object();  // matches the tool's output schema when !is_error
  std::string text;                  // the text content block
  bool is_error = false;

  static ToolResult failure(std::string message);
};

struct Tool {
  std::string name;         // e.g. "request_human_approval"
  std::string title;        // short human title
  std::string description;  // what the tool does, for the model
  json annotations;         // MCP tool annotations (readOnlyHint, destructiveHint...)
  // Runs the tool on arguments already validated against input_schema().
  std::function<ToolResult(const json& args, const ToolContext& ctx)> run;

  std::string input_schema() const;   // "mcp-<name with dashes>-input"
  std::string output_schema() const;  // "mcp-<name with dashes>-output"
};

// All tools, in the order tools/list shows them.
const std::vector<Tool>& tools();
const Tool* find_tool(const std::string& name);

}  // namespace yolo::runner::mcp
