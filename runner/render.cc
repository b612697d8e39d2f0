#include "runner/render.h"

#include "protocol/base/text.h"
#include "runner/output.h"

namespace yolo::render {

std::string structural_review(const StructuralReview& r) {
  // Ids, paths, findings and fixes come from the plan: no control characters reach the terminal.
  auto safe = [](const std::string& s) { return text::sanitize_for_terminal(s); };
  Verdict v = r.verdict();
  std::string s = out::sym(out::sym_for(v)) + " " + out::bold(safe(r.plan_id.empty() ? r.plan_path : r.plan_id)) +
                  "  " + to_string(v) + "  " + out::dim(safe(r.plan_path));
  return s + checks(r);
}

std::string checks(const StructuralReview& r) {
  auto safe = [](const std::string& s) { return text::sanitize_for_terminal(s); };
  std::string s;
  for (const auto& c : r.checks) {
    out::Sym cs = c.status == CheckStatus::Fail   ? out::Sym::Fail
                  : c.status == CheckStatus::Warn ? out::Sym::Warn
                                                  : out::Sym::Ok;
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

namespace yolo::runner {

std::vector<std::string> rejected_plans_report(const std::vector<review::PlanReview>& rows, size_t top) {
  auto safe = [](const std::string& s) { return text::sanitize_for_terminal(s); };
  std::vector<std::string> out;
  for (const auto& r : review::rejected_plans(rows, top)) {
    std::string head = out::sym(out::Sym::Fail) + " " + out::bold(safe(r.plan_id)) + " rejected";
    if (r.cycles > 0) head += " after " + std::to_string(r.cycles) + " cycle" + (r.cycles == 1 ? "" : "s");
    if (!r.source.empty()) head += " (" + safe(r.source) + ")";
    if (!r.plan.empty()) head += "  " + out::dim(safe(r.plan));
    out.push_back(head);
    if (!r.stop_reason.empty()) out.push_back("    why: " + safe(r.stop_reason));
    if (!r.escalated.empty()) {
      std::string ids;
      for (const auto& e : r.escalated) ids += (ids.empty() ? "" : ", ") + safe(e);
      out.push_back("    escalated (high in 2+ cycles, never approved): " + ids);
    }
    for (const auto& f : r.top_findings) {
      std::string s = "    [" + std::string(to_string(f.severity)) + "]";
      if (!f.id.empty()) s += " " + safe(f.id);
      if (!f.file.empty()) s += " " + safe(f.file);
      s += " — " + safe(f.title.empty() ? f.description : f.title);
      if (!f.suggestion.empty()) s += out::dim("  → " + safe(f.suggestion));
      out.push_back(s);
    }
    if (r.more > 0)
      out.push_back(
          out::dim("    … " + std::to_string(r.more) + " more (yolo status, yolo review " + safe(r.plan) + ")"));
  }
  return out;
}

}  // namespace yolo::runner
