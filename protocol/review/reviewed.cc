#include "protocol/review/reviewed.h"

#include "protocol/base/json_field.h"
#include "protocol/review/review_ledger.h"

namespace yolo::review {
namespace {

std::string_view bare(std::string_view h) {
  constexpr std::string_view kPrefix = "sha256:";
  if (h.substr(0, kPrefix.size()) == kPrefix) h.remove_prefix(kPrefix.size());
  return h;
}

using json_field::str;

}  // namespace

bool same_content(std::string_view recorded_hash, std::string_view content_hash) {
  std::string_view a = bare(recorded_hash), b = bare(content_hash);
  return !a.empty() && a == b;
}

bool reviewed_as_is(const json* record, std::string_view content_hash) {
  if (!record || !record->is_object()) return false;
  return same_content(str(*record, "hash"), content_hash);
}

bool passed_as_is(const json& ledger, const std::vector<PlanContent>& plans) {
  if (plans.empty()) return false;
  for (const auto& p : plans) {
    const json* rec = review_ledger::find(ledger, p.id);
    if (!reviewed_as_is(rec, p.hash) || str(*rec, "verdict") == "reject") return false;
  }
  return true;
}

}  // namespace yolo::review
