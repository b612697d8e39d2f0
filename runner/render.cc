#include "runner/render.h"

#include "protocol/text.h"
#include "runner/output.h"

namespace yolo::render {

std::string structural_review(const StructuralReview& r) {
  // Ids, paths, findings and fixes come from the plan: no control characters reach the terminal.
  auto safe = [](const std::string& s) { return text::sanitize_for_terminal(s); };
  Verdict v = r.verdict();
  std::string s = out::sym(out::sym_for(v)) + " " + out::bold(safe(r.plan_id.empty() ? r.plan_path : r.plan_id)) +
                  "  " + to_string(v) + "  " + out::dim(safe(r.plan_path));
  for (const auto& c : r.checks) {
    out::Sym cs = c.status == "fail" ? out::Sym::Fail : c.status == "warn" ? out::Sym::Warn : out::Sym::Ok;
    s += "\n  " + out::sym(cs) + " " + safe(c.name);
    for (const auto& f : r.findings) {
      if (f.check != c.name) continue;
      s += "\n      [" + std::string(to_string(f.severity)) + "] " + safe(f.issue);
      if (!f.suggested_fix.empty()) s += out::dim("  → " + safe(f.suggested_fix));
    }
  }
  return s;
}

}  // namespace yolo::render
