// yolo mcp [--repo DIR]: the MCP server over stdio (runner/mcp_server.h).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "protocol/ports/fs.h"
#include "runner/command.h"
#include "runner/mcp_server.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo = ".";
  size_t max_message_bytes = 4u << 20;
};

int run(const Context& ctx, const Options& o) {
  std::error_code ec;
  stdfs::path repo = stdfs::absolute(o.repo, ec);
  if (ec || !stdfs::is_directory(repo, ec)) {
    out::err("✗ mcp: --repo is not a folder: " + o.repo);
    return kExitUsage;
  }
  // The folder holding .yolo-planning/ (the repo or one above it); else the repo itself,
  // so the server still starts and tools explain what is missing.
  stdfs::path root = ctx.world.files().project_root(repo).value_or(repo);
  // A client that goes away must not kill the server with SIGPIPE mid-write.
  ::signal(SIGPIPE, SIG_IGN);
  mcp::Limits limits;
  limits.max_message_bytes = o.max_message_bytes;
  mcp::Server server(ctx.world, root, limits);
  // stdout carries only protocol messages; diagnostics go to stderr.
  return server.serve(STDIN_FILENO, STDOUT_FILENO) == 0 ? kExitOk : kExitFail;
}

const CommandRegistrar reg{Command{
    "mcp", "MCP server over stdio (JSON-RPC): gates, approvals, plan review and status for agents", [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--repo", o->repo, "The project (folder holding .yolo-planning/); default: the current folder");
      sub.add_option("--max-message-bytes", o->max_message_bytes, "Longest accepted message line (default 4 MiB)")
          ->check(CLI::Range(static_cast<size_t>(1024), static_cast<size_t>(1) << 30));
      return [o](const Context& ctx) { return run(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
