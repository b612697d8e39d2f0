// What one command works with: the World (files, clock, approval key, signature check), the
// project's root and its config. run_cli builds one for the chosen command and hands it over;
// the command passes it (or its World) to what carries the work out (phase::Run, the watcher,
// the review gate, the approver, the MCP server), in a constructor or a call. Nothing below run_cli
// builds a World or reaches for the process's one, but the confinement's inputs (runner/world.h).
#pragma once
#include <filesystem>
#include <utility>

#include "protocol/ports/world.h"
#include "protocol/state/config.h"

namespace yolo::runner {

struct Context {
  Context(const World& w, std::filesystem::path r) : world(w), root(std::move(r)) {}
  const World& world;
  // The project's root: as run_cli hands it over, the folder holding .yolo-planning/ found
  // from the current folder upward, or empty when there is none; a command given another
  // project (--repo, a plan's path) works with at(that root).
  std::filesystem::path root;
  // The project's config: defaults until the command reads it (read_config), which it does
  // once it holds its instance lock (a second execute refused by the lock reads nothing) and
  // knows which project it runs in; the watcher reads it again when it changes.
  Config config;
  // .yolo-planning/config.json through the World, its warnings reported (load_config_reported).
  ConfigLoad read_config() const;
  // The same World for another project root.
  Context at(std::filesystem::path r) const { return Context(world, std::move(r)); }
};

}  // namespace yolo::runner
