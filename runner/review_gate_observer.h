// What the review gate shows and records while its loops run (run_review_gate's observer),
// and the few text helpers the gate and its observer both use.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/ports/world.h"
#include "protocol/review/phase_snapshot.h"
#include "protocol/review/review_loop.h"
#include "runner/review_gate.h"

namespace yolo::runner {

class GateObserver : public review::LoopObserver {
 public:
  // Writes what is pending (state, then ledgers), then prints the JSON lines it held back.
  virtual void flush() = 0;
};

// Records through w; result collects what could not be recorded.
std::unique_ptr<GateObserver> make_gate_observer(const World& w, const ReviewGateOptions& o, std::string cid,
                                                 ReviewGateResult& result, PhaseSnapshots& snapshots);

namespace gate_text {
// Plan ids, paths, reasons and reviewer/architect text come from plans and agents: shown to
// people without control characters (no terminal escape sequences get through).
std::string safe(std::string_view s);
// p relative to root when it lies inside it, else p as given.
std::string rel(const std::filesystem::path& root, const std::string& p);
std::string plural(size_t n, const char* word);
}  // namespace gate_text

}  // namespace yolo::runner
