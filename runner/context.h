// What one command works with, built once when it starts and passed to what carries it out
// (phase::Run, the watcher) in their constructors: the World (files, clock, approval key,
// signature check), the project's root and its config. Nothing below the command reaches for
// the process's World (runner::world()) itself.
#pragma once
#include <filesystem>
#include <utility>

#include "protocol/ports/world.h"
#include "protocol/state/config.h"

namespace yolo::runner {

struct Context {
  Context(const World& w, std::filesystem::path r) : world(w), root(std::move(r)) {}
  const World& world;
  std::filesystem::path root;
  // The project's config: defaults until the command reads it (read_config), which it does
  // once it holds its instance lock (a second execute refused by the lock reads nothing); the
  // watcher reads it again when it changes.
  Config config;
  // .yolo-planning/config.json through the World, its warnings reported (load_config_reported).
  ConfigLoad read_config() const;
};

// The command's context: the process's World (built by run_cli) and the project's root.
Context command_context(std::filesystem::path root);

}  // namespace yolo::runner
