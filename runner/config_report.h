// Telling the person what is wrong with .yolo-planning/config.json: every command
// that loads the config reports its unknown keys (with the nearest known key) on stderr, and
// `execute` checks before a run that the configured agents' programs exist.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/state/config.h"

namespace yolo::runner {

// Prints each of c.config.warnings once per process on stderr ("⚠ .yolo-planning/config.json:
// unknown key 'reveiw_gate' (did you mean 'review_gate'?)").
void report_config_warnings(const ConfigLoad& c);

// load_config + report_config_warnings; `{dispatch_dir}` in the dispatch templates is replaced
// by dispatch_dir(). The files through the caller's World (its command's context).
ConfigLoad load_config_reported(const World& w, const std::filesystem::path& root);

// Where the dispatch adapters are (contrib/dispatch, installed by cmake --install into
// LIBEXECDIR/yolo/dispatch): $YOLO_DISPATCH_DIR, else beside this yolo (PREFIX/bin/yolo ->
// PREFIX/libexec/yolo/dispatch; a build folder inside the source tree -> ../contrib/dispatch).
std::string dispatch_dir();

// True when argv0 names a program that can be started: a path with '/' (relative to root)
// that is an executable file, or a name found on PATH.
bool program_exists(const std::string& argv0, const std::filesystem::path& root);

struct MissingAgent {
  std::string role;     // reviewer | architect | executor
  std::string program;  // argv[0] as configured
};
// The configured reviewer/architect/executor whose program does not exist.
std::vector<MissingAgent> missing_agent_programs(const Config& c, const std::filesystem::path& root);

}  // namespace yolo::runner
