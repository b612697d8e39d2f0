// The store of each phase's cross-plan facts (protocol/review/cross_facts.h): Stage 1 answers from it
// exactly what a full parse of every plan gives; a plan is taken from it only while its file
// is the one it was parsed from; a store edited, copied from another project or phase, made
// with another key, or replayed is not believed; racy files are not remembered.
#include "protocol/review/cross_facts.h"

#include <gtest/gtest.h>

#include <ctime>

#include "protocol/review/phase_snapshot.h"
#include "protocol/review/stage1.h"
#include "protocol/review/verified_cache.h"
#include "test_support.h"

namespace yolo::cross_facts {
namespace {

namespace stdfs = std::filesystem;

using test::iso_in;

std::string plan(const std::string& n, const std::string& wave, const std::string& deps = "[]",
                 const std::string& file = "src/a.txt", const std::string& extra = "") {
  return "---\nphase: \"01\"\nplan: \"" + n + "\"\ntitle: \"P" + n + "\"\nwave: " + wave + "\ndepends_on: " + deps +
         "\n" + extra + "must_haves:\n  - \"it works\"\n---\n\n## Task 1: Do it\n\n**Files:** `" + file + "`\n";
}

// The real disk (real ctimes), the test key and a clock the test moves.
struct Project {
  test::TempDir dir;
  FixedClock clock{iso_in(10)};  // files written now are 10 s old: not racy
  World w{fs::real_disk(), clock, &test::test_key(), nullptr, nullptr};
  seal::Key none{"", "no key yet"};
  World plain{fs::real_disk(), clock, &none, nullptr, nullptr};  // no key: no store, every plan parsed
  stdfs::path phase;
  Project() {
    phase = dir / ".yolo-planning/phases/01-x";
    test::write_file(phase / "01-01-PLAN.md", plan("01", "1"));
    test::write_file(phase / "01-02-PLAN.md",
                     plan("02", "1", "[]", "src/a.txt",  // same file, same wave
                          "files_modified: [\"src/*.cc\", \"tab\\there\", \"back\\\\slash\"]\n"));
    test::write_file(phase / "01-03-PLAN.md", plan("03", "1", "[\"04\"]"));               // depends on a later wave
    test::write_file(phase / "01-04-PLAN.md", plan("04", "2", "[\"05\"]", "b"));          // cycle 04 -> 05 -> 04
    test::write_file(phase / "01-05-PLAN.md", plan("05", "3", "[\"04\", \"99\"]", "c"));  // and an unknown one
    test::write_file(phase / "01-06-PLAN.md", plan("05", "4", "[]", "d"));                // duplicate id 01-05
    test::write_file(phase / "01-07-PLAN.md", "---\nphase: [\n---\nbroken\n");            // frontmatter error
    test::write_file(phase / "01-08-PLAN.md",
                     plan("0\\\\8\\u00e9\\n", "abc", "01-01", "é/ü.txt"));  // odd text, no wave
    test::write_file(phase / "01-09-PLAN.md", "no frontmatter at all\n");
    test::write_file(phase / "01-10-PLAN.md", std::string("---\nphase: 1\n\0---\n", 18));  // binary: unreadable
    test::write_file(phase / "01-11-PLAN.md", plan("11", "2", "[\"01-01\", \"1-2\"]", "src/a.txt"));
  }
  const stdfs::path& root() const { return dir.path(); }
  stdfs::path store_file() const { return dir / ".yolo-planning/.cache/stage1/01-x.facts"; }
};

// Every plan of the folder reviewed three ways: parsed in full (no key, no store), through a
// review pass's snapshots and through stage1_plan_file alone, both with the store.
void expect_same_as_full_parse(const Project& p) {
  for (const auto& f : list_plan_files(p.w, p.phase)) {
    json full = stage1_plan_file(p.plain, f, p.phase, Stage1Options{}).to_json();
    PhaseSnapshots snaps;
    Stage1Options with;
    with.snapshots = &snaps;
    EXPECT_EQ(full, stage1_plan_file(p.w, f, p.phase, with).to_json()) << f;
    EXPECT_EQ(full, stage1_plan_file(p.w, f, p.phase, Stage1Options{}).to_json()) << f;
  }
}

size_t hits(const Project& p) {
  Store s(p.w, p.phase, Stage1Options{}.max_file_bytes);
  size_t n = 0;
  for (const auto& f : list_plan_files(p.w, p.phase)) n += s.find(f).has_value();
  return n;
}

TEST(CrossFacts, EncodeDecodeKeepsWhatTheCrossPlanChecksRead) {
  Plan p = parse_plan(plan("0\\t7\\\\", "3", "[\"a\\tb\", \"01-02\"]", "src/x\\y.txt",
                           "files_modified: [\"src/*.cc\", \"\\u001f\\n\"]\n"),
                      "/p/01-07-PLAN.md");
  auto q = decode(encode(p), p.path);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->path, p.path);
  EXPECT_EQ(q->content_hash, p.content_hash);
  EXPECT_EQ(q->has_frontmatter, p.has_frontmatter);
  EXPECT_EQ(q->phase, p.phase);
  EXPECT_EQ(q->plan, p.plan);
  EXPECT_EQ(q->wave, p.wave);
  EXPECT_EQ(q->depends_on, p.depends_on);
  ASSERT_EQ(q->files.size(), p.files.size());
  for (size_t i = 0; i < p.files.size(); ++i) {
    EXPECT_EQ(q->files[i].path, p.files[i].path);
    EXPECT_EQ(q->files[i].is_glob, p.files[i].is_glob);
  }
  Plan broken = parse_plan("---\nphase: [\n---\nx\n", "/p/b.md");
  ASSERT_TRUE(broken.frontmatter_error);
  auto b = decode(encode(broken), broken.path);
  ASSERT_TRUE(b && b->frontmatter_error);
  EXPECT_EQ(b->frontmatter_error->message, broken.frontmatter_error->message);
  EXPECT_EQ(b->frontmatter_error->line, broken.frontmatter_error->line);
  EXPECT_EQ(b->frontmatter_error->column, broken.frontmatter_error->column);
  EXPECT_FALSE(decode("not\tenough", "x"));
  EXPECT_FALSE(decode("h\t2\t\t01\t01\t1\t\t", "x"));  // has_frontmatter is 0 or 1
}

TEST(CrossFacts, FindingsAreThoseOfAFullParseAndTheStoreIsReadBack) {
  Project p;
  expect_same_as_full_parse(p);  // fills the store
  ASSERT_TRUE(stdfs::exists(p.store_file()));
  Store s(p.w, p.phase, Stage1Options{}.max_file_bytes);
  EXPECT_TRUE(s.loaded());
  EXPECT_EQ(hits(p), 10u);       // every readable plan (the binary one is parsed each time)
  expect_same_as_full_parse(p);  // from the store now
  // A pass's snapshots take every sibling from the store: no plan parsed but the one reviewed.
  PhaseSnapshots snaps;
  Stage1Options with;
  with.snapshots = &snaps;
  auto before = test::read_file(p.store_file());
  stage1_plan_file(p.w, p.phase / "01-01-PLAN.md", p.phase, with);
  EXPECT_EQ(test::read_file(p.store_file()), before);  // nothing new: not written again
}

TEST(CrossFacts, AnEditedPlanIsReadAgain) {
  Project p;
  expect_same_as_full_parse(p);
  ASSERT_EQ(hits(p), 10u);
  // 01-02 leaves wave 1 (no overlap with 01-01 any more): same size, mtime set back.
  stdfs::path f = p.phase / "01-02-PLAN.md";
  auto mtime = stdfs::last_write_time(f);
  std::string text = test::read_file(f);
  auto at = text.find("wave: 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "wave: 5");
  test::write_file(f, text);
  stdfs::last_write_time(f, mtime);
  EXPECT_EQ(hits(p), 9u);
  expect_same_as_full_parse(p);
  auto r = stage1_plan_file(p.w, p.phase / "01-01-PLAN.md", p.phase, Stage1Options{});
  bool overlap = false;  // with 01-03 still, with 01-02 no more
  for (const auto& fd : r.findings) {
    EXPECT_EQ(fd.issue.find("01-02"), std::string::npos) << r.to_json().dump();
    overlap = overlap || fd.check == "file_overlap";
  }
  EXPECT_TRUE(overlap);
  EXPECT_EQ(hits(p), 10u);  // remembered again (10 s old by the test's clock)
}

TEST(CrossFacts, AForgedStoreIsNotBelieved) {
  Project p;
  expect_same_as_full_parse(p);
  std::string text = test::read_file(p.store_file());
  // 01-01's wave 1 -> 7 in the store: 01-01 and 01-02 would no longer overlap.
  auto line = text.find("\n01-01-PLAN.md\t");
  ASSERT_NE(line, std::string::npos);
  auto wave = text.find("\t1\t", text.find("\t01\t", line));
  ASSERT_NE(wave, std::string::npos);
  text[wave + 1] = '7';
  test::write_file(p.store_file(), text);
  EXPECT_FALSE(Store(p.w, p.phase, Stage1Options{}.max_file_bytes).loaded());
  EXPECT_EQ(hits(p), 0u);
  expect_same_as_full_parse(p);  // and the store is written again, right
  EXPECT_EQ(hits(p), 10u);
  // The same forgery sealed with another key (another user's): not loaded either.
  seal::Key other{std::string(32, 'o'), {}};
  World w2{fs::real_disk(), p.clock, &other, nullptr, nullptr};
  EXPECT_FALSE(Store(w2, p.phase, Stage1Options{}.max_file_bytes).loaded());
  // Made for another read limit: not this one's.
  EXPECT_FALSE(Store(p.w, p.phase, 1000).loaded());
}

TEST(CrossFacts, AStoreCopiedFromAnotherPhaseOrProjectIsNotBelieved) {
  Project a, b;
  expect_same_as_full_parse(a);
  // Another project with the same phase folder.
  stdfs::create_directories(b.store_file().parent_path());
  stdfs::copy_file(a.store_file(), b.store_file());
  EXPECT_FALSE(Store(b.w, b.phase, Stage1Options{}.max_file_bytes).loaded());
  EXPECT_EQ(hits(b), 0u);
  expect_same_as_full_parse(b);
  // Another phase folder of the same project, with the same plan names.
  stdfs::path other = a.dir / ".yolo-planning/phases/02-y";
  stdfs::create_directories(other);
  stdfs::copy_file(a.store_file(), a.dir / ".yolo-planning/.cache/stage1/02-y.facts");
  EXPECT_FALSE(Store(a.w, other, Stage1Options{}.max_file_bytes).loaded());
}

// A store sealed before a plan changed, put back later (replayed): it loads, but the changed
// plan's facts are not its file's any more and are not taken.
TEST(CrossFacts, AReplayedStoreGivesNothingForAPlanChangedSince) {
  Project p;
  expect_same_as_full_parse(p);
  std::string old = test::read_file(p.store_file());
  test::write_file(p.phase / "01-01-PLAN.md", plan("01", "2"));  // no overlap; 01-11 now overlaps it
  expect_same_as_full_parse(p);
  test::write_file(p.store_file(), old);
  EXPECT_TRUE(Store(p.w, p.phase, Stage1Options{}.max_file_bytes).loaded());
  EXPECT_EQ(hits(p), 9u);
  expect_same_as_full_parse(p);
}

TEST(CrossFacts, RacyFilesAreNotRemembered) {
  Project p;
  p.clock.set(iso_in(0));  // the plans' ctime is now
  expect_same_as_full_parse(p);
  EXPECT_FALSE(stdfs::exists(p.store_file()));
  p.clock.set(iso_in(verified_cache::kRacySeconds + 2));
  expect_same_as_full_parse(p);
  EXPECT_EQ(hits(p), 10u);
}

TEST(CrossFacts, NoKeyNoDiskIdentitiesOrNoPhaseFolderNoStore) {
  Project p;
  stdfs::remove_all(p.dir / ".yolo-planning/.cache");
  Store none(p.plain, p.phase, Stage1Options{}.max_file_bytes);
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.load(p.phase / "01-01-PLAN.md").plan);
  EXPECT_EQ(none.save(true).error, "");
  EXPECT_FALSE(stdfs::exists(p.store_file()));
  // The memory disk cannot tell identities.
  fs::MemoryDisk disk;
  World mw{disk, p.clock, &test::test_key(), nullptr, nullptr};
  disk.put("/r/.yolo-planning/phases/01-x/01-01-PLAN.md", plan("01", "1"));
  EXPECT_FALSE(Store(mw, "/r/.yolo-planning/phases/01-x", 1 << 20).enabled());
  // A folder outside a project's phases.
  test::write_file(p.dir / "loose/01-01-PLAN.md", plan("01", "1"));
  EXPECT_FALSE(Store(p.w, p.dir / "loose", 1 << 20).enabled());
  // A trailing separator or a relative path names the same folder.
  EXPECT_EQ(Store(p.w, p.phase / "", 1 << 20).file(), p.store_file());
}

}  // namespace
}  // namespace yolo::cross_facts
