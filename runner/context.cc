#include "runner/context.h"

#include "runner/config_report.h"

namespace yolo::runner {

ConfigLoad Context::read_config() const { return load_config_reported(world, root); }

}  // namespace yolo::runner
