// The sealed cache of verified answers (protocol/review/verified_cache.h) and the overview's use of
// it: a hit only for files whose identity (inode, size, mtime, ctime) is unchanged and not
// racy; a cache edited or copied from another project is ignored.
#include "protocol/review/verified_cache.h"

#include <gtest/gtest.h>

#include <ctime>

#include "protocol/status/overview.h"
#include "protocol/review/review_ledger.h"
#include "test_support.h"

namespace yolo::verified_cache {
namespace {

namespace stdfs = std::filesystem;

using test::iso_in;

// The real disk (real ctimes), a key and a clock the test moves.
struct Project {
  test::TempDir dir;
  FixedClock clock{iso_in(10)};  // files written now are 10 s old: not racy
  World w{fs::real_disk(), clock, &test::test_key(), nullptr, nullptr};
  stdfs::path file;
  Project() {
    stdfs::create_directories(dir / ".yolo-planning");
    file = dir / ".yolo-planning" / "input.txt";
    test::write_file(file, "one");
  }
  const stdfs::path& root() const { return dir.path(); }
  // Computes "the answer" (the file's content) and remembers it; whether it was kept.
  bool remember() {
    Cache c(w, root(), "t");
    auto ids = c.identities({file});
    EXPECT_TRUE(ids);
    bool kept = c.put("k", *ids, {file}, test::read_file(file));
    EXPECT_EQ(c.save(true).error, "");
    return kept;
  }
  // What the cache gives for the file now, or null.
  json lookup() {
    Cache c(w, root(), "t");
    auto ids = c.identities({file});
    const json* v = ids ? c.find("k", *ids) : nullptr;
    return v ? *v : json(nullptr);
  }
};

TEST(VerifiedCache, AnUnchangedFileIsAHit) {
  Project p;
  ASSERT_TRUE(p.remember());
  EXPECT_TRUE(stdfs::exists(p.dir / ".yolo-planning/.cache/t.json"));
  EXPECT_EQ(p.lookup(), "one");
  Cache c(p.w, p.root(), "t");
  EXPECT_TRUE(c.loaded());
}

TEST(VerifiedCache, AnEditedFileIsAMiss) {
  Project p;
  ASSERT_TRUE(p.remember());
  test::write_file(p.file, "two");  // same size
  EXPECT_TRUE(p.lookup().is_null());
}

TEST(VerifiedCache, AFileChangedWithinTheRacyWindowIsNotRemembered) {
  Project p;
  p.clock.set(iso_in(0));  // the file's ctime is now: a write in the same tick could go unseen
  EXPECT_FALSE(p.remember());
  EXPECT_TRUE(p.lookup().is_null());
  p.clock.set(iso_in(kRacySeconds + 2));  // old enough now
  EXPECT_TRUE(p.remember());
  EXPECT_EQ(p.lookup(), "one");
}

TEST(VerifiedCache, AFileReplacedByACopyWithTheSameSizeAndMtimeIsAMiss) {
  Project p;
  ASSERT_TRUE(p.remember());
  auto mtime = stdfs::last_write_time(p.file);
  stdfs::path copy = p.dir / ".yolo-planning" / "copy.txt";
  test::write_file(copy, "two");
  stdfs::last_write_time(copy, mtime);  // `touch -d`: same size, same mtime
  stdfs::rename(copy, p.file);
  EXPECT_EQ(stdfs::last_write_time(p.file), mtime);
  EXPECT_TRUE(p.lookup().is_null());
  // Edited in place with the mtime set back: the ctime still moved.
  ASSERT_TRUE(p.remember());
  test::write_file(p.file, "thr");
  stdfs::last_write_time(p.file, mtime);
  EXPECT_TRUE(p.lookup().is_null());
}

TEST(VerifiedCache, AHandEditedCacheIsIgnored) {
  Project p;
  ASSERT_TRUE(p.remember());
  stdfs::path cf = p.dir / ".yolo-planning/.cache/t.json";
  std::string text = test::read_file(cf);
  auto at = text.find("\"one\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 5, "\"forged\"");
  test::write_file(cf, text);
  Cache c(p.w, p.root(), "t");
  EXPECT_FALSE(c.loaded());
  EXPECT_TRUE(p.lookup().is_null());
}

TEST(VerifiedCache, ACacheCopiedFromAnotherProjectIsIgnored) {
  Project a, b;
  ASSERT_TRUE(a.remember());
  stdfs::create_directories(b.dir / ".yolo-planning/.cache");
  stdfs::copy_file(a.dir / ".yolo-planning/.cache/t.json", b.dir / ".yolo-planning/.cache/t.json");
  Cache c(b.w, b.root(), "t");
  EXPECT_FALSE(c.loaded());  // sealed with the same key, but it names project a
  // Another key (another user): not loaded either.
  seal::Key other{std::string(32, 'o'), {}};
  World w2{fs::real_disk(), a.clock, &other, nullptr, nullptr};
  EXPECT_FALSE(Cache(w2, a.root(), "t").loaded());
}

TEST(VerifiedCache, NoKeyNoCache) {
  Project p;
  seal::Key none{"", "no key yet"};
  World w{fs::real_disk(), p.clock, &none, nullptr, nullptr};
  Cache c(w, p.root(), "t");
  EXPECT_FALSE(c.enabled());
  EXPECT_FALSE(c.identities({p.file}));
  EXPECT_EQ(c.save(true).error, "");
  EXPECT_FALSE(stdfs::exists(p.dir / ".yolo-planning/.cache"));
}

// The overview through the cache: a ledger record edited by hand with its size and mtime
// kept does not count, though the row was cached while it was valid.
TEST(VerifiedCache, OverviewRecountsALedgerEditedAfterItWasCached) {
  Project p;
  stdfs::path phase = p.dir / ".yolo-planning/phases/01-core";
  test::write_file(phase / "01-01-PLAN.md", "---\nphase: 1\nplan: 1\n---\n# Plan\n");
  json r = {{"hash", "h1"}, {"verdict", "approve"}, {"path", ".yolo-planning/phases/01-core/01-01-PLAN.md"}};
  ASSERT_EQ(review_ledger::record(p.w, p.root(), phase, "01-01", r).error, "");
  auto o = project_overview(p.w, p.root());
  EXPECT_EQ(o["totals"]["reviewed"], 1);
  EXPECT_EQ(o["totals"]["approved"], 1);
  stdfs::path cf = p.dir / ".yolo-planning/.cache/overview.json";
  ASSERT_TRUE(stdfs::exists(cf));
  {
    Cache c(p.w, p.root(), "overview");
    stdfs::path ledger = review_ledger::path_for(p.root(), phase);
    auto ids = c.identities({phase, ledger, review_ledger::journal_for(ledger)});
    EXPECT_NE(c.find("01-core", *ids), nullptr);  // a hit now
  }
  o = project_overview(p.w, p.root());
  EXPECT_EQ(o["totals"]["approved"], 1);

  // The record's hash edited (same size), the ledger's mtime set back.
  stdfs::path ledger = review_ledger::path_for(p.root(), phase);
  auto mtime = stdfs::last_write_time(ledger);
  std::string text = test::read_file(ledger);
  auto at = text.find("\"h1\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 4, "\"h2\"");
  test::write_file(ledger, text);
  stdfs::last_write_time(ledger, mtime);
  o = project_overview(p.w, p.root());
  EXPECT_EQ(o["totals"]["reviewed"], 0);  // its seal fails: not counted
  EXPECT_EQ(o["totals"]["approved"], 0);
  EXPECT_EQ(o["totals"]["plans"], 1);

  // The cache file itself hand-edited to say approved: ignored, recomputed.
  std::string ct = test::read_file(cf);
  auto rv = ct.find("\"reviewed\":0");
  if (rv != std::string::npos) {
    ct.replace(rv, 12, "\"reviewed\":1");
    test::write_file(cf, ct);
    o = project_overview(p.w, p.root());
    EXPECT_EQ(o["totals"]["reviewed"], 0);
  }
}

// A large ledger takes a new record in its journal and is not itself rewritten: the row
// remembered before counts it all the same (the journal is one of the row's inputs).
TEST(VerifiedCache, OverviewCountsARecordAppendedToTheLedgersJournal) {
  Project p;
  stdfs::path phase = p.dir / ".yolo-planning/phases/01-core";
  const int n = 140;
  auto id = [](int i) { return "01-" + std::to_string(100 + i); };
  for (int i = 0; i < n; ++i)
    test::write_file(phase / (id(i) + "-PLAN.md"),
                     "---\nphase: 1\nplan: " + std::to_string(100 + i) + "\n---\n# Plan\n");
  auto rec = [&](int i) {
    return json{{"hash", "h" + std::to_string(i)},
                {"verdict", "approve"},
                {"path", ".yolo-planning/phases/01-core/" + id(i) + "-PLAN.md"}};
  };
  for (int i = 0; i + 1 < n; ++i) ASSERT_EQ(review_ledger::record(p.w, p.root(), phase, id(i), rec(i)).error, "");
  EXPECT_EQ(project_overview(p.w, p.root())["totals"]["reviewed"], n - 1);  // remembered now
  stdfs::path ledger = review_ledger::path_for(p.root(), phase);
  const std::string before = test::read_file(ledger);
  ASSERT_EQ(review_ledger::record(p.w, p.root(), phase, id(n - 1), rec(n - 1)).error, "");
  ASSERT_TRUE(stdfs::exists(review_ledger::journal_for(ledger)));
  EXPECT_EQ(test::read_file(ledger), before);  // the new record went to the journal only
  EXPECT_EQ(project_overview(p.w, p.root())["totals"]["reviewed"], n);
}

// A phase folder that gains a SUMMARY or a plan is recounted (the folder's identity moved).
TEST(VerifiedCache, OverviewSeesNewPlansAndSummaries) {
  Project p;
  stdfs::path phase = p.dir / ".yolo-planning/phases/01-core";
  test::write_file(phase / "01-01-PLAN.md", "---\nphase: 1\nplan: 1\n---\n# Plan\n");
  EXPECT_EQ(project_overview(p.w, p.root())["totals"]["plans"], 1);
  EXPECT_EQ(project_overview(p.w, p.root())["totals"]["summaries"], 0);
  test::write_file(phase / "01-01-SUMMARY.md", "# done\n");
  test::write_file(phase / "01-02-PLAN.md", "---\nphase: 1\nplan: 2\n---\n# Plan\n");
  auto o = project_overview(p.w, p.root());
  EXPECT_EQ(o["totals"]["plans"], 2);
  EXPECT_EQ(o["totals"]["summaries"], 1);
}

}  // namespace
}  // namespace yolo::verified_cache
