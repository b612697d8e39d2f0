// Human-readable renderings of protocol results, shared by commands.
#pragma once
#include <string>

#include "protocol/findings.h"

namespace yolo::render {
// A Stage 1 review as a few lines with ✓ ⚠ ✗ (no trailing newline).
std::string structural_review(const StructuralReview& r);
}  // namespace yolo::render
