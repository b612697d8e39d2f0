// Which line of a failed program's output says why it failed. Command-line parsers end
// their complaint with a usage tail ("Usage: ...", "For more information, try '--help'."),
// so the last line is the least useful one to show; the `error:` line above it is the one.
#pragma once
#include <string>
#include <string_view>

namespace yolo::failure {

// The line of `err` (else of `out`) that explains a failure: the last line that reads as an
// error ("error: ...", "Error: ...", "fatal: ...", "ERROR ..."), else the last line that is
// not part of a usage tail, else the last non-blank line; "" when both are blank. Trimmed,
// cut to 300 bytes, valid UTF-8 (an invalid line is skipped).
std::string explaining_line(std::string_view err, std::string_view out = {});

// True for a line of a usage tail ("Usage: ...", "For more information, try '--help'.",
// "tip: ...", "Try 'prog --help' ...", "Run 'prog --help' ...").
bool is_usage_tail(std::string_view line);

}  // namespace yolo::failure
