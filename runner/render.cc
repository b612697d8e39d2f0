#include "runner/render.h"

#include "runner/output.h"

namespace yolo::render {

std::string structural_review(const StructuralReview& r) {
  Verdict v = r.verdict();
  std::string s = out::sym(out::sym_for(v)) + " " + out::bold(r.plan_id.empty() ? r.plan_path : r.plan_id) + "  " +
                  to_string(v) + "  " + out::dim(r.plan_path);
  for (const auto& c : r.checks) {
    out::Sym cs = c.status == "fail" ? out::Sym::Fail : c.status == "warn" ? out::Sym::Warn : out::Sym::Ok;
    s += "\n  " + out::sym(cs) + " " + c.name;
    for (const auto& f : r.findings) {
      if (f.check != c.name) continue;
      s += "\n      [" + std::string(to_string(f.severity)) + "] " + f.issue;
      if (!f.suggested_fix.empty()) s += out::dim("  → " + f.suggested_fix);
    }
  }
  return s;
}

}  // namespace yolo::render
