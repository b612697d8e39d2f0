// What "already reviewed as it is" means, once for every caller: `yolo review --changed`
// (skips such plans), `yolo execute` (does not run the review gate again for contents that
// passed it) and the watcher (does not review a plan it sees unchanged). The records are
// the review ledgers' (protocol/review/review_ledger.h); whether a record counts at all is the
// ledger load's business, not this rule's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/json.h"

namespace yolo::review {

// Whether two content hashes name the same content: sha256 hex, or "sha256:<hex>" (both
// spellings occur in records). An empty hash (the file could not be read) matches nothing.
bool same_content(std::string_view recorded_hash, std::string_view content_hash);

// Whether `record` (a ledger record {hash, verdict, ...}, or nullptr when the plan has none)
// reviewed exactly the content whose hash is `content_hash`, whatever its verdict.
bool reviewed_as_is(const json* record, std::string_view content_hash);

struct PlanContent {
  std::string id;    // the plan id the ledger records it under ("01-02")
  std::string hash;  // sha256 hex of its bytes now ("" when unreadable)
};
// Whether the review gate passed for exactly these contents: every plan has a record of its
// content now, and none of them is a reject. An empty list has passed nothing.
bool passed_as_is(const json& ledger, const std::vector<PlanContent>& plans);

}  // namespace yolo::review
