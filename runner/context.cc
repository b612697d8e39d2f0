#include "runner/context.h"

#include "runner/config_report.h"
#include "runner/world.h"

namespace yolo::runner {

ConfigLoad Context::read_config() const { return load_config_reported(world, root); }

Context command_context(std::filesystem::path root) { return Context(world(), std::move(root)); }

}  // namespace yolo::runner
