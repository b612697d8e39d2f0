#include "protocol/plan/must_haves.h"

namespace yolo {

namespace {
std::vector<json> must_have_entries(const Plan& plan, const char* key) {
  std::vector<json> out;
  auto mh = plan.frontmatter.find("must_haves");
  if (mh == plan.frontmatter.end() || !mh->is_object()) return out;
  auto a = mh->find(key);
  if (a == mh->end() || !a->is_array()) return out;
  for (const auto& e : *a) out.push_back(e);
  return out;
}
}  // namespace

std::vector<json> artifact_entries(const Plan& plan) { return must_have_entries(plan, "artifacts"); }
std::vector<json> key_link_entries(const Plan& plan) { return must_have_entries(plan, "key_links"); }

std::string artifact_path(const json& e) {
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object())
    if (auto p = e.find("path"); p != e.end()) return scalar_text(*p);
  return {};
}

}  // namespace yolo
