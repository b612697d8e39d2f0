// What a person is shown at a gate before deciding (yolo approve / reject): each covered
// file's change since the last approval, the config keys then and now, the agents' argv.
#pragma once

#include <filesystem>
#include <string>

#include "protocol/base/json.h"
#include "protocol/ports/world.h"

namespace yolo::runner::gate_show {

// Gate messages and errors carry plan paths, feedback and approver output: no control
// characters reach the terminal.
std::string safe(const std::string& s);

// Shows the person what the gate covers (now) and what changed since it opened, on stderr.
// Returns the covers shown.
json show_gate(const World& w, const std::filesystem::path& root, const json& g, bool verbose);

}  // namespace yolo::runner::gate_show
