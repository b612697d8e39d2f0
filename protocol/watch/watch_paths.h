// What a path under .yolo-planning means to the watcher, and which names are noise
// (editor swap/backup/probe files, atomic-save temp files, the runner's own files).
#pragma once
#include <filesystem>
#include <string>

namespace yolo::watch {

enum class PathKind {
  Plan,        // phases/<phase>/*PLAN.md
  Summary,     // phases/<phase>/*SUMMARY.md
  Roadmap,     // ROADMAP.md
  State,       // .execution-state.json (approvals land here)
  Ledger,      // .reviews/<phase>.json (review records: ours, or another yolo's such as a hook's)
  Config,      // config.json
  PhaseDir,    // phases/<phase>/
  PhasesRoot,  // phases/
  Ignored,     // editor temp files, the event log, locks, our temp files
  Other,
};

const char* to_string(PathKind k);

// Names that are never content: vim (.swp/.swx/4913/~), emacs (.#lock, #auto-save#, ~),
// JetBrains (___jb_tmp___/___jb_old___), VS Code / atomic writers (.tmp, .tmp.<n>),
// sed -i (sedXXXXXX), our own .lock/.watch.lock and state temp files.
bool is_noise_name(const std::string& name);

// Classifies `path` relative to the .yolo-planning folder `planning`.
PathKind classify(const std::filesystem::path& planning, const std::filesystem::path& path);

}  // namespace yolo::watch
