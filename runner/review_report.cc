#include "runner/review_report.h"

#include <algorithm>

#include "protocol/text.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

std::string safe(const std::string& s) { return text::sanitize_for_terminal(s); }

std::string str(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int rank(const std::string& severity) { return severity == "high" ? 0 : severity == "medium" ? 1 : 2; }

bool is_reject(const json& l) { return l.is_object() && str(l, "type") == "plan" && str(l, "verdict") == "reject"; }

}  // namespace

std::vector<std::string> rejected_plans_report(const json& lines, size_t top) {
  std::vector<std::string> out;
  if (!lines.is_array()) return out;
  for (const auto& l : lines) {
    if (!is_reject(l)) continue;
    std::string head = out::sym(out::Sym::Fail) + " " + out::bold(safe(str(l, "plan_id"))) + " rejected";
    if (l.contains("cycles") && l["cycles"].is_number_unsigned() && l["cycles"].get<size_t>() > 0)
      head += " after " + std::to_string(l["cycles"].get<size_t>()) + " cycle" +
              (l["cycles"].get<size_t>() == 1 ? "" : "s");
    if (std::string src = str(l, "source"); !src.empty()) head += " (" + safe(src) + ")";
    if (std::string p = str(l, "plan"); !p.empty()) head += "  " + out::dim(safe(p));
    out.push_back(head);
    if (std::string why = str(l, "stop_reason"); !why.empty()) out.push_back("    why: " + safe(why));
    if (auto esc = l.find("escalated"); esc != l.end() && esc->is_array() && !esc->empty()) {
      std::string ids;
      for (const auto& e : *esc)
        if (e.is_string()) ids += (ids.empty() ? "" : ", ") + safe(e.get<std::string>());
      out.push_back("    escalated (high in 2+ cycles, never approved): " + ids);
    }
    std::vector<json> fs;
    for (const char* key : {"findings", "accumulated_findings"}) {
      if (auto f = l.find(key); f != l.end() && f->is_array() && !f->empty()) {
        for (const auto& x : *f)
          if (x.is_object()) fs.push_back(x);
        break;
      }
    }
    if (fs.empty())
      if (auto s1 = l.find("stage1"); s1 != l.end() && s1->is_object())
        if (auto f = s1->find("findings"); f != s1->end() && f->is_array())
          for (const auto& x : *f)
            if (x.is_object()) fs.push_back(x);
    std::stable_sort(fs.begin(), fs.end(),
                     [](const json& a, const json& b) { return rank(str(a, "severity")) < rank(str(b, "severity")); });
    for (size_t i = 0; i < fs.size() && i < top; ++i) {
      const json& f = fs[i];
      std::string text = str(f, "title");
      if (text.empty()) text = str(f, "issue");
      if (text.empty()) text = str(f, "description");
      std::string s = "    [" + safe(str(f, "severity")) + "]";
      if (std::string id = str(f, "id"); !id.empty()) s += " " + safe(id);
      if (std::string file = str(f, "file"); !file.empty()) s += " " + safe(file);
      s += " — " + safe(text);
      std::string fix = str(f, "suggestion");
      if (fix.empty()) fix = str(f, "suggested_fix");
      if (!fix.empty()) s += out::dim("  → " + safe(fix));
      out.push_back(s);
    }
    if (fs.size() > top)
      out.push_back(out::dim("    … " + std::to_string(fs.size() - top) + " more (yolo status, yolo review " +
                             safe(str(l, "plan")) + ")"));
  }
  return out;
}

std::vector<std::string> rejected_plan_paths(const json& lines) {
  std::vector<std::string> out;
  if (!lines.is_array()) return out;
  for (const auto& l : lines)
    if (is_reject(l) && !str(l, "plan").empty()) out.push_back(str(l, "plan"));
  return out;
}

}  // namespace yolo::runner
