// Status and Result<T>: the one way protocol/ reports a failure.
#include "protocol/base/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace yolo {
namespace {

Status write_thing(bool works) {
  if (!works) return Status::fail("cannot write /p/f: No space left on device");
  return {};
}

Result<int> parse_count(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    return Result<int>::fail("count.txt: '" + s + "' is not a number");
  return std::stoi(s);
}

TEST(StatusType, DefaultIsOkAndFailCarriesTheSentence) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.error, "");
  Status bad = write_thing(false);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error, "cannot write /p/f: No space left on device");
  EXPECT_TRUE(write_thing(true).ok());
}

TEST(StatusType, AnEmptyReasonStillFails) {
  Status s = Status::fail("");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.error, "failed (no reason given)");
  Result<int> r = Result<int>::fail("");
  EXPECT_FALSE(r.ok());
  Result<int> from_status{Status{}};  // an ok Status has no value to give: still a failure
  EXPECT_FALSE(from_status.ok());
}

TEST(StatusType, AlsoKeepsTheFirstFailure) {
  Status s;
  s.also(write_thing(true));
  EXPECT_TRUE(s.ok());
  s.also(Status::fail("first")).also(Status::fail("second"));
  EXPECT_EQ(s.error, "first");
}

TEST(Result, ValueOrError) {
  Result<int> r = parse_count("42");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.status().ok());

  Result<int> bad = parse_count("4x");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error, "count.txt: '4x' is not a number");
  EXPECT_EQ(bad.status().error, bad.error);
  EXPECT_EQ(bad.value_or(-1), -1);
  EXPECT_EQ(r.value_or(-1), 42);
}

TEST(Result, HoldsMoveOnlyValuesAndPointers) {
  Result<std::unique_ptr<std::string>> r = std::make_unique<std::string>("held");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, "held");
  std::unique_ptr<std::string> taken = std::move(r).value();
  EXPECT_EQ(*taken, "held");

  std::string target = "x";
  Result<std::string*> p = &target;
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, &target);
  Result<std::string*> none = Status::fail("no such gate");
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.error, "no such gate");
}

TEST(Result, StringValueAndErrorAreDistinct) {
  // A function returning text that may fail: "" is a value here, not success-by-convention.
  Result<std::string> empty_value = std::string();
  EXPECT_TRUE(empty_value.ok());
  EXPECT_EQ(*empty_value, "");
  Result<std::string> failed = Status::fail("plan.md: outside the project");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.value_or("fallback"), "fallback");
}

}  // namespace
}  // namespace yolo
