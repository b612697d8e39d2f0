#include "protocol/watch/watch_paths.h"

#include "protocol/plan/plan.h"

namespace yolo::watch {

const char* to_string(PathKind k) {
  switch (k) {
    case PathKind::Plan:
      return "plan";
    case PathKind::Summary:
      return "summary";
    case PathKind::Roadmap:
      return "roadmap";
    case PathKind::State:
      return "state";
    case PathKind::Ledger:
      return "ledger";
    case PathKind::Config:
      return "config";
    case PathKind::PhaseDir:
      return "phase_dir";
    case PathKind::PhasesRoot:
      return "phases";
    case PathKind::Ignored:
      return "ignored";
    case PathKind::Other:
      return "other";
  }
  return "other";
}

bool is_noise_name(const std::string& n) {
  if (n.empty()) return true;
  if (n == "4913" || n == ".lock" || n == ".watch.lock" || n == ".execute.lock" || n == ".execute-executors.jsonl")
    return true;
  if (n.back() == '~') return true;                                               // vim/emacs backups
  if (n.starts_with(".#") || (n.front() == '#' && n.back() == '#')) return true;  // emacs
  for (const char* suf : {".swp", ".swx", ".swo", ".tmp", ".bak", ".orig", ".crswap"})
    if (n.ends_with(suf)) return true;
  if (n.find("___jb_tmp___") != std::string::npos || n.find("___jb_old___") != std::string::npos) return true;
  if (n.find(".tmp.") != std::string::npos) return true;           // our atomic writes, many editors
  if (n.size() == 9 && n.starts_with("sed")) return true;          // sed -i temp: sedXXXXXX
  if (n.find(".json.corrupt-") != std::string::npos) return true;  // kept copies of broken state/ledgers
  if (n.starts_with(".goutputstream-")) return true;
  return false;
}

PathKind classify(const std::filesystem::path& planning, const std::filesystem::path& path) {
  std::filesystem::path rel = path.lexically_relative(planning);
  if (rel.empty() || rel.native().starts_with("..")) return PathKind::Other;
  std::string name = rel.filename().string();
  if (is_noise_name(name)) return PathKind::Ignored;
  auto first = *rel.begin();
  if (first == ".events" || first == ".cache") return PathKind::Ignored;  // .cache: verified_cache.h
  std::vector<std::string> parts;
  for (const auto& p : rel) parts.push_back(p.string());
  if (first == ".reviews") {
    // A ledger, or its journal (<phase>.jsonl: protocol/review/review_ledger.h).
    bool ledger = parts.size() == 2 && name.size() > 5 && name.front() != '.' &&
                  (name.ends_with(".json") || (name.size() > 6 && name.ends_with(".jsonl")));
    return ledger ? PathKind::Ledger : PathKind::Ignored;
  }
  if (parts.size() == 1) {
    if (name == ".execution-state.json") return PathKind::State;
    if (name == "config.json") return PathKind::Config;
    if (name == "ROADMAP.md") return PathKind::Roadmap;
    if (name == "phases") return PathKind::PhasesRoot;
    return PathKind::Other;
  }
  if (parts[0] != "phases") return PathKind::Other;
  if (parts.size() == 2) return PathKind::PhaseDir;
  if (parts.size() == 3) {
    if (is_plan_filename(name)) return PathKind::Plan;
    if (is_summary_filename(name)) return PathKind::Summary;
  }
  return PathKind::Other;
}

}  // namespace yolo::watch
