// "Already reviewed as it is": the one rule review --changed, execute and the watcher share.
#include <gtest/gtest.h>

#include "protocol/review/reviewed.h"

namespace yolo::review {
namespace {

const std::string kHash(64, 'a');

TEST(Reviewed, SameContentAcceptsBothSpellingsAndNeverAnEmptyHash) {
  EXPECT_TRUE(same_content(kHash, kHash));
  EXPECT_TRUE(same_content("sha256:" + kHash, kHash));
  EXPECT_TRUE(same_content(kHash, "sha256:" + kHash));
  EXPECT_FALSE(same_content(kHash, std::string(64, 'b')));
  EXPECT_FALSE(same_content("", ""));
  EXPECT_FALSE(same_content("sha256:", "sha256:"));
}

TEST(Reviewed, ARecordOfTheSameContentWhateverItsVerdict) {
  json rec = {{"hash", kHash}, {"verdict", "reject"}};
  EXPECT_TRUE(reviewed_as_is(&rec, kHash));
  EXPECT_FALSE(reviewed_as_is(&rec, std::string(64, 'b')));
  EXPECT_FALSE(reviewed_as_is(nullptr, kHash));
  json no_hash = {{"verdict", "approve"}};
  EXPECT_FALSE(reviewed_as_is(&no_hash, kHash));
  json not_object = "x";
  EXPECT_FALSE(reviewed_as_is(&not_object, kHash));
}

TEST(Reviewed, ThePhasePassedAsItIsOnlyWhenEveryPlanDidWithoutAReject) {
  json ledger = {{"reviews",
                  {{"01-01", {{"hash", kHash}, {"verdict", "approve"}}},
                   {"01-02", {{"hash", "sha256:" + std::string(64, 'b')}, {"verdict", "conditional"}}},
                   {"01-03", {{"hash", std::string(64, 'c')}, {"verdict", "reject"}}}}}};
  EXPECT_TRUE(passed_as_is(ledger, {{"01-01", kHash}, {"01-02", std::string(64, 'b')}}));
  EXPECT_FALSE(passed_as_is(ledger, {{"01-01", kHash}, {"01-03", std::string(64, 'c')}}));  // a reject
  EXPECT_FALSE(passed_as_is(ledger, {{"01-01", std::string(64, 'z')}}));                    // edited since
  EXPECT_FALSE(passed_as_is(ledger, {{"01-01", kHash}, {"01-04", kHash}}));                 // never reviewed
  EXPECT_FALSE(passed_as_is(ledger, {{"01-01", ""}}));                                      // unreadable
  EXPECT_FALSE(passed_as_is(ledger, {}));
}

}  // namespace
}  // namespace yolo::review
