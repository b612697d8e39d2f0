// What the watcher reads, as its core (protocol/watch/watch_core.h) keeps and asks for it: content
// hashes kept compact, a review ledger's records, and one phase learnt (its ledger and its
// plans' hashes). Reading only, through the World: the driver may run learn_phase and
// read_ledger on a worker thread.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/ports/world.h"

namespace yolo::watch {

// Content hashes (sha256 hex, or "" for an unreadable file) by file, kept compact: the path's
// text and the 32 bytes of the digest. A std::filesystem::path (a component list on the heap)
// and a hex std::string per plan cost several times that, and the watcher keeps two of these
// for every plan of a project (docs/benchmarks.md).
class Digests {
 public:
  std::optional<std::string> get(const std::filesystem::path& p) const;
  void set(const std::filesystem::path& p, std::string_view hash);
  bool erase(const std::filesystem::path& p);
  size_t size() const { return map_.size(); }
  // Removes the entries whose path `gone` says; calls `removed` with each first.
  void erase_if(const std::function<bool(const std::filesystem::path&)>& gone,
                const std::function<void(const std::filesystem::path&)>& removed);
  // Up to `max` paths, in order.
  std::vector<std::filesystem::path> paths(size_t max) const;

 private:
  struct Val {
    unsigned char kind = 0;  // 0: "", 1: the digest below, 2: other text (in odd_)
    unsigned char d[32] = {};
  };
  std::map<std::string, Val> map_;
  std::map<std::string, std::string> odd_;  // values that are not a sha256 hex (never in practice)
};

// A review ledger as the watcher needs it: its bytes as one number (nullopt: no ledger) and
// its records (plan id -> the content hash reviewed).
struct LedgerRead {
  std::optional<size_t> fingerprint;
  std::vector<std::pair<std::string, std::string>> records;
  std::string error;  // could not be loaded (named)
};
LedgerRead read_ledger(const World& w, const std::filesystem::path& ledger_file);
std::optional<size_t> ledger_fingerprint(const World& w, const std::filesystem::path& ledger_file);

// One phase learnt (Action::Learn): its ledger (unless plans_only) and its plans' hashes.
// Pure reading through the World: the driver may run it on a worker thread.
struct LearntPhase {
  std::filesystem::path dir;
  bool plans_only = false;
  LedgerRead ledger;
  std::vector<std::pair<std::filesystem::path, std::string>> plans;  // plan file -> hash
};
LearntPhase learn_phase(const World& w, const std::filesystem::path& root, const std::filesystem::path& dir,
                        bool plans_only);

}  // namespace yolo::watch
