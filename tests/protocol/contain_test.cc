// fs::Root::contain (fs::Disk::contain on the real disk), the one containment check for paths from plans, SUMMARY
// files, gate requests, MCP calls and the command line: resolve every symbolic link, then compare with the root.
#include <gtest/gtest.h>

#include "protocol/ports/contain.h"
#include "protocol/ports/disk.h"
#include "protocol/ports/fs.h"
#include "test_support.h"

namespace yolo::fs {
namespace {

using test::TempDir;
using test::write_file;
using R = Contained::Refusal;

// The rule as the real disk applies it (every link resolved).
Contained contain(const stdfs::path& root, const std::string& p, AbsolutePaths a = AbsolutePaths::Refuse) {
  return real_disk().contain(root, p, a);
}

struct Tree {
  TempDir root, outside;
  Tree() {
    write_file(root / "src/a.cc", "a");
    write_file(outside / "secret.txt", "s");
    stdfs::create_directory_symlink(outside.path(), root / "out");                        // a folder link out
    stdfs::create_symlink(outside / "secret.txt", root / "secret-link");                  // a file link out
    stdfs::create_directory_symlink(root / "src", root / "src-link");                     // a link that stays in
    stdfs::create_symlink(outside / "not-yet", root / "dangling");                        // to nothing, outside
    stdfs::create_symlink("../" + outside.path().filename().string(), root / "rel-out");  // relative target
    stdfs::create_symlink("loop-b", root / "loop-a");
    stdfs::create_symlink("loop-a", root / "loop-b");
  }
};

TEST(Contain, PlainRelativePathsAreInsideAndNormalised) {
  Tree t;
  auto c = contain(t.root.path(), "./src//a.cc");
  ASSERT_TRUE(c.ok()) << c.why();
  EXPECT_EQ(c.rel, "src/a.cc");
  EXPECT_EQ(c.path, t.root / "src/a.cc");
  // A file the plan will create is fine too: only where it leads counts.
  EXPECT_TRUE(contain(t.root.path(), "src/new/b.cc").ok());
  EXPECT_EQ(contain(t.root.path(), "src/../src/a.cc").rel, "src/a.cc");
}

TEST(Contain, LexicalEscapesAndAbsolutePathsAreRefused) {
  Tree t;
  EXPECT_EQ(contain(t.root.path(), "").refusal, R::Empty);
  EXPECT_EQ(contain(t.root.path(), "../x").refusal, R::Escapes);
  EXPECT_EQ(contain(t.root.path(), "src/../../x").refusal, R::Escapes);
  EXPECT_EQ(contain(t.root.path(), "~/x").refusal, R::Absolute);
  EXPECT_EQ(contain(t.root.path(), (t.root / "src/a.cc").string()).refusal, R::Absolute);
  EXPECT_EQ(contain(t.root.path(), "/etc/passwd").why(), "is absolute or escapes the project root");
}

TEST(Contain, AbsolutePathsInsideTheRootMayBeAllowed) {
  Tree t;
  auto c = contain(t.root.path(), (t.root / "src/a.cc").string(), AbsolutePaths::AllowInside);
  ASSERT_TRUE(c.ok()) << c.why();
  EXPECT_EQ(c.rel, "src/a.cc");
  EXPECT_EQ(contain(t.root.path(), "/etc/passwd", AbsolutePaths::AllowInside).refusal, R::Escapes);
  EXPECT_EQ(contain(t.root.path(), (t.outside / "secret.txt").string(), AbsolutePaths::AllowInside).refusal,
            R::Escapes);
  // Through a link that leads out, spelled absolutely: still out.
  EXPECT_FALSE(contain(t.root.path(), (t.root / "out/secret.txt").string(), AbsolutePaths::AllowInside).ok());
}

TEST(Contain, SymbolicLinksAreResolvedBeforeTheComparison) {
  Tree t;
  for (const char* p : {"out/secret.txt", "out/not-written-yet.md", "secret-link", "dangling", "dangling/x",
                        "rel-out/secret.txt", "src-link/../out/secret.txt"}) {
    auto c = contain(t.root.path(), p);
    EXPECT_EQ(c.refusal, R::Symlink) << p;
    EXPECT_EQ(c.why(), "leads out of the project root through a symbolic link") << p;
    EXPECT_TRUE(c.path.empty()) << p;
  }
  EXPECT_EQ(contain(t.root.path(), "loop-a").refusal, R::LinkLoop);
  auto in = contain(t.root.path(), "src-link/a.cc");
  ASSERT_TRUE(in.ok()) << in.why();
  EXPECT_EQ(in.rel, "src-link/a.cc");  // as given: the link is the project's own
}

TEST(Contain, ARootReachedThroughALinkIsTheSameRoot) {
  Tree t;
  TempDir links;
  stdfs::create_directory_symlink(t.root.path(), links / "project");
  Root r = real_disk().root(links / "project");
  EXPECT_TRUE(r.contain("src/a.cc").ok());
  EXPECT_FALSE(r.contain("out/secret.txt").ok());
  auto abs = r.contain((t.root / "src/a.cc").string(), AbsolutePaths::AllowInside);
  ASSERT_TRUE(abs.ok()) << abs.why();
  EXPECT_EQ(abs.rel, "src/a.cc");
}

TEST(ResolveLinks, ResolvesEveryComponentEvenPastAMissingTarget) {
  Tree t;
  auto real_out = resolve_links(t.outside.path());
  ASSERT_TRUE(real_out);
  EXPECT_EQ(resolve_links(t.root / "dangling/x"), *real_out / "not-yet/x");
  EXPECT_EQ(resolve_links(t.root / "loop-a"), std::nullopt);
}

// Below a component that does not exist no link can lie, so the walk takes the rest as
// written; a `..` in a link's target that climbs back out of the missing part is walked
// again, link by link (here into `out`, a link out of the root), and a file taken as a
// folder is missing too.
TEST(ResolveLinks, BelowAMissingComponentOnlyTheClimbBackOutIsResolved) {
  Tree t;
  auto real_root = resolve_links(t.root.path());
  auto real_out = resolve_links(t.outside.path());
  ASSERT_TRUE(real_root && real_out);
  EXPECT_EQ(resolve_links(t.root / "nothing/here/x.md"), *real_root / "nothing/here/x.md");
  EXPECT_EQ(resolve_links(t.root / "src/a.cc/x"), *real_root / "src/a.cc/x");
  stdfs::create_symlink("nothing/deeper/../../out", t.root / "climb");
  EXPECT_EQ(resolve_links(t.root / "climb/secret.txt"), *real_out / "secret.txt");
  EXPECT_EQ(contain(t.root.path(), "climb/secret.txt").refusal, R::Symlink);
  stdfs::create_symlink("nothing/../src", t.root / "climb-in");
  EXPECT_EQ(resolve_links(t.root / "climb-in/a.cc"), *real_root / "src/a.cc");
  EXPECT_TRUE(contain(t.root.path(), "climb-in/a.cc").ok());
}

// Given the root's resolved path as a prefix, the walk starts below it and gives what the
// walk from `/` gives, for each kind of link the tree has (in, out, relative, dangling,
// loop) and for a prefix the path does not begin with (ignored, the whole path walked).
TEST(ResolveLinks, AResolvedPrefixGivesTheSameAnswerAsTheWholeWalk) {
  Tree t;
  auto real_root = resolve_links(t.root.path());
  ASSERT_TRUE(real_root);
  for (const char* rel : {"src/a.cc", "out/secret.txt", "secret-link", "src-link/a.cc", "dangling/x",
                          "rel-out/secret.txt", "loop-a", "src/new/b.cc", "src/../out", "."}) {
    stdfs::path p = *real_root / rel;
    EXPECT_EQ(resolve_links(p, *real_root), resolve_links(p)) << rel;
    EXPECT_EQ(resolve_links(p, stdfs::path(real_root->string() + "/")), resolve_links(p)) << rel << " (trailing /)";
  }
  stdfs::path elsewhere = t.outside / "secret.txt";
  EXPECT_EQ(resolve_links(elsewhere, *real_root), resolve_links(elsewhere));
  EXPECT_EQ(resolve_links(*real_root / "src/a.cc", "/"), resolve_links(*real_root / "src/a.cc"));
}

}  // namespace
}  // namespace yolo::fs
