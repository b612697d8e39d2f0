// sandbox_detail::canonical: the same answer as std::filesystem::weakly_canonical for every
// shape of path a policy names, with and without a scope that resolves each folder once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/sandbox_internal.h"
#include "test_support.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;
using sandbox_detail::canonical;
using sandbox_detail::CanonicalScope;
using test::TempDir;

std::string expected(const std::string& p) {
  std::string s = stdfs::weakly_canonical(p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

class CanonicalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = stdfs::canonical(dir_.path()).string();
    stdfs::create_directories(root_ + "/real/sub");
    test::write_file(root_ + "/real/sub/file", "x");
    stdfs::create_directory_symlink(root_ + "/real", root_ + "/link");     // a folder through a link
    stdfs::create_directory_symlink("link/sub", root_ + "/chain");          // a link to a path through a link, relative
    stdfs::create_symlink(root_ + "/nowhere/at/all", root_ + "/dangling");  // a link to nothing
    stdfs::create_symlink("sub/file", root_ + "/real/file-link");
  }
  std::vector<std::string> shapes() const {
    return {root_ + "/real/sub/file",       root_ + "/link/sub/file",         root_ + "/chain/file",
            root_ + "/chain",               root_ + "/link/missing/deeper",   root_ + "/dangling",
            root_ + "/dangling/below",      root_ + "/real/file-link",        root_ + "/link/sub/../sub/./file",
            root_ + "/link/missing/../sub", root_ + "/real/sub/",             root_ + "/real/sub/file/under-a-file",
            root_ + "/not-there",           "/",                              root_};
  }
  TempDir dir_;
  std::string root_;
};

TEST_F(CanonicalTest, WithoutAScopeEveryShapeIsResolvedAsWeaklyCanonicalWould) {
  for (const auto& p : shapes()) EXPECT_EQ(canonical(p), expected(p)) << p;
}

TEST_F(CanonicalTest, InAScopeEveryShapeIsResolvedAsWeaklyCanonicalWouldTwiceOver) {
  CanonicalScope scope;
  for (int round = 0; round < 2; ++round)  // the second round from what the scope knows
    for (const auto& p : shapes()) EXPECT_EQ(canonical(p), expected(p)) << p << " (round " << round << ")";
}

TEST_F(CanonicalTest, ARelativePathIsResolvedFromTheWorkingFolder) {
  const stdfs::path before = stdfs::current_path();
  stdfs::current_path(root_);
  CanonicalScope scope;
  const std::string a = canonical("link/sub/file"), b = canonical("chain/../x");
  stdfs::current_path(before);
  EXPECT_EQ(a, root_ + "/real/sub/file");
  EXPECT_EQ(b, root_ + "/real/x");  // ".." after a link: from where the link leads
}

TEST_F(CanonicalTest, AFolderSwappedForALinkIsSeenByTheNextScope) {
  const std::string p = root_ + "/swap/file";
  stdfs::create_directories(root_ + "/swap");
  {
    CanonicalScope scope;
    EXPECT_EQ(canonical(p), p);
  }
  stdfs::remove_all(root_ + "/swap");
  stdfs::create_directory_symlink(root_ + "/real", root_ + "/swap");
  CanonicalScope scope;
  EXPECT_EQ(canonical(p), root_ + "/real/file");
}

}  // namespace
}  // namespace yolo::runner
