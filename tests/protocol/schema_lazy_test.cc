// protocol/base/schema.cc compiles each embedded schema on its first use, once, and caches it.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "protocol/base/schema.h"

namespace yolo {
namespace {

TEST(SchemaLazy, NamesAndDocumentsDoNotCompile) {
  size_t before = schema::compiled_count();
  EXPECT_LE(before, schema::names().size());
  EXPECT_TRUE(schema::has("todo"));
  EXPECT_FALSE(schema::has("no-such-schema"));
  EXPECT_TRUE(schema::document("todo").is_object());
  EXPECT_THROW(schema::document("no-such-schema"), std::out_of_range);
  EXPECT_EQ(schema::compiled_count(), before);
}

TEST(SchemaLazy, CompilesOneSchemaOnFirstUseAndCachesIt) {
  size_t before = schema::compiled_count();
  auto errors = schema::validate("todo", json::array());
  EXPECT_FALSE(errors.empty()) << "an array is not a todo record";
  size_t after = schema::compiled_count();
  EXPECT_LE(after, before + 1) << "only the schema asked for is compiled";
  EXPECT_GE(after, 1u);
  schema::validate("todo", json::object());
  schema::validate("todo", json::array());
  EXPECT_EQ(schema::compiled_count(), after) << "a compiled schema is reused";
  auto unknown = schema::validate("no-such-schema", json::object());
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].message.find("unknown schema"), std::string::npos);
  EXPECT_EQ(schema::compiled_count(), after);
}

TEST(SchemaLazy, ConcurrentFirstUseCompilesEachSchemaOnce) {
  size_t before = schema::compiled_count();
  const std::vector<std::string> names = {"metrics", "recovery", "startup"};
  std::vector<std::thread> threads;
  std::vector<size_t> error_counts(8 * names.size());
  for (size_t t = 0; t < error_counts.size(); ++t)
    threads.emplace_back([&, t] {
      error_counts[t] = schema::validate(names[t % names.size()], json::array()).size();
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < error_counts.size(); ++t) EXPECT_GT(error_counts[t], 0u) << names[t % names.size()];
  EXPECT_LE(schema::compiled_count(), before + names.size());
}

}  // namespace
}  // namespace yolo
