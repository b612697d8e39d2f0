#include "protocol/review/review_ledger.h"
#include "protocol/ports/world.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/base/seal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "test_support.h"

namespace yolo::review_ledger {
namespace {

namespace stdfs = std::filesystem;

// A project on an in-memory disk with a key of its own (protocol/ports/world.h): no temp folder.
struct Repo {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-23T21:40:00Z"};
  seal::Key key{std::string(32, 'r'), {}};
  World w{disk, clock, &key};
  stdfs::path phase1 = "/repo/.yolo-planning/phases/01-core", phase2 = "/repo/.yolo-planning/phases/02-api";
  Repo() {
    EXPECT_TRUE(disk.make_dirs(phase1).ok());
    EXPECT_TRUE(disk.make_dirs(phase2).ok());
  }
  stdfs::path root() const { return "/repo"; }
};

// The same on the real disk, where several threads can race for the lock.
struct RealRepo {
  test::TempDir dir;
  stdfs::path phase1;
  RealRepo() {
    phase1 = dir / ".yolo-planning/phases/01-core";
    stdfs::create_directories(phase1);
  }
  const stdfs::path& root() const { return dir.path(); }
};

json rec(const std::string& hash, const std::string& verdict = "approve") {
  return {{"hash", hash},
          {"verdict", verdict},
          {"path", "p.md"},
          {"reviewed_at", "2026-11-23T21:40:00Z"},
          {"findings", json::array()},
          {"loop", {{"cycle", 1}, {"max", 3}, {"status", "passed"}}}};
}

TEST(ReviewLedger, OneFilePerPhaseNamedAfterTheFolder) {
  Repo repo;
  EXPECT_EQ(path_for(repo.root(), repo.phase1), repo.root() / ".yolo-planning/.reviews/01-core.json");
  EXPECT_EQ(path_for(repo.root(), repo.phase1 / ""), repo.root() / ".yolo-planning/.reviews/01-core.json");
}

TEST(ReviewLedger, MissingIsEmptyAndARecordRoundTrips) {
  Repo repo;
  auto l = load(repo.w, repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok()) << l.error;
  EXPECT_FALSE(l.exists);
  EXPECT_EQ(find(l.doc, "01-01"), nullptr);
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-02", rec("bb", "reject")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("cc")).error, "");  // replaces
  l = load(repo.w, repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok()) << l.error;
  ASSERT_NE(find(l.doc, "01-01"), nullptr);
  EXPECT_EQ((*find(l.doc, "01-01"))["hash"], "cc");
  EXPECT_EQ((*find(l.doc, "01-02"))["verdict"], "reject");
  EXPECT_EQ(l.doc["phase_dir"], ".yolo-planning/phases/01-core");
  // The other phase's ledger is untouched by these writes.
  EXPECT_FALSE(repo.disk.has(path_for(repo.root(), repo.phase2)));
}

TEST(ReviewLedger, ARecordThatBreaksTheSchemaIsRefusedAndNothingIsWritten) {
  Repo repo;
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")).error, "");
  std::string before = repo.disk.get(path_for(repo.root(), repo.phase1));
  std::string e = record(repo.w, repo.root(), repo.phase1, "01-02", rec("bb", "maybe")).error;
  EXPECT_NE(e.find("01-core.json"), std::string::npos) << e;
  EXPECT_NE(e.find("review-ledger"), std::string::npos) << e;
  EXPECT_EQ(repo.disk.get(path_for(repo.root(), repo.phase1)), before);
}

TEST(ReviewLedger, ABrokenLedgerIsNamedKeptAndNeverOverwritten) {
  Repo repo;
  stdfs::path f = path_for(repo.root(), repo.phase1);
  EXPECT_TRUE(repo.disk.make_dirs(f.parent_path()).ok());
  repo.disk.put(f, "{\"reviews\": {\"01-01\": ");
  auto l = load(repo.w, repo.root(), repo.phase1);
  EXPECT_FALSE(l.ok());
  EXPECT_NE(l.error.find(f.string()), std::string::npos) << l.error;
  EXPECT_FALSE(l.kept_copy.empty());
  EXPECT_TRUE(repo.disk.has(l.kept_copy));
  std::string e = record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")).error;
  EXPECT_NE(e.find(f.string()), std::string::npos) << e;
  EXPECT_EQ(repo.disk.get(f), "{\"reviews\": {\"01-01\": ");
  // load_all reports it and still reads the others.
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase2, "02-01", rec("dd")).error, "");
  auto all = load_all(repo.w, repo.root());
  ASSERT_EQ(all.errors.size(), 1u);
  EXPECT_NE(all.errors[0].find("01-core.json"), std::string::npos);
  EXPECT_EQ(all.reviews.size(), 1u);
  EXPECT_EQ(all.reviews["02-01"]["hash"], "dd");
}

TEST(ReviewLedger, LoadAllMergesEveryPhaseAndSkipsTempFilesAndKeptCopies) {
  Repo repo;
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase2, "02-01", rec("bb")).error, "");
  repo.disk.put(dir(repo.root()) / ".01-core.json.tmp.1.1", "garbage");
  repo.disk.put(dir(repo.root()) / "01-core.json.corrupt-2026", "garbage");
  auto all = load_all(repo.w, repo.root());
  EXPECT_TRUE(all.errors.empty());
  EXPECT_EQ(all.reviews.size(), 2u);
  EXPECT_EQ(all.reviews["01-01"]["hash"], "aa");
}

TEST(ReviewLedger, ConcurrentWritersToOnePhaseLoseNothing) {
  RealRepo repo;
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> ts;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string e =
            record(test::real_world(), repo.root(), repo.phase1, "01-" + std::to_string(t * 100 + i), rec("h")).error;
        if (!e.empty()) errors[t] = e;
      }
    });
  for (auto& t : ts) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  auto l = load(test::real_world(), repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.doc["reviews"].size(), static_cast<size_t>(kThreads * kEach));
}

// --- the journal: a large ledger takes new records as appended lines ---------------------

std::vector<std::pair<std::string, json>> many(size_t n, const std::string& hash) {
  std::vector<std::pair<std::string, json>> v;
  for (size_t i = 1; i <= n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "01-%03zu", i);
    v.emplace_back(id, rec(hash));
  }
  return v;
}

std::string hash_of(const Repo& repo, const char* id) {
  auto l = load(repo.w, repo.root(), repo.phase1);
  EXPECT_TRUE(l.ok()) << l.error;
  const json* r = find(l.doc, id);
  return r ? (*r)["hash"].get<std::string>() : std::string();
}

TEST(ReviewLedgerJournal, ALargeLedgerKnownAsItIsTakesARecordWithoutBeingRewritten) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  stdfs::path f = path_for(repo.root(), repo.phase1);
  std::string before = repo.disk.get(f);
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-005", rec("new")).error, "");
  EXPECT_EQ(repo.disk.get(f), before);  // not rewritten
  std::string j = repo.disk.get(journal_for(f));
  EXPECT_EQ(std::count(j.begin(), j.end(), '\n'), 1) << j;
  EXPECT_EQ(journal_for(f), dir(repo.root()) / "01-core.jsonl");
  EXPECT_EQ(hash_of(repo, "01-005"), "new");
  EXPECT_EQ(hash_of(repo, "01-006"), "old");
  auto all = load_all(repo.w, repo.root());
  EXPECT_TRUE(all.errors.empty());
  EXPECT_EQ(all.reviews["01-005"]["hash"], "new");
  auto lf = load_file(repo.w, f);
  ASSERT_TRUE(lf.ok());
  EXPECT_EQ((*find(lf.doc, "01-005"))["hash"], "new");
}

TEST(ReviewLedgerJournal, ASmallLedgerIsStillRewrittenWhole) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords - 1, "old")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-005", rec("new")).error, "");
  EXPECT_FALSE(repo.disk.has(journal_for(path_for(repo.root(), repo.phase1))));
  EXPECT_NE(repo.disk.get(path_for(repo.root(), repo.phase1)).find("\"new\""), std::string::npos);
}

TEST(ReviewLedgerJournal, ATornLastLineIsSkippedAndTheNextRecordStillCounts) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-005", rec("new")).error, "");
  stdfs::path j = journal_for(path_for(repo.root(), repo.phase1));
  std::string whole = repo.disk.get(j);
  // A writer killed part way through the line of 01-006.
  std::string torn = whole;
  size_t at = torn.find("01-005");
  torn += whole.substr(0, at) + "01-006" + whole.substr(at + 6, 40);
  repo.disk.put(j, torn);
  EXPECT_EQ(hash_of(repo, "01-006"), "old");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-007", rec("seven")).error, "");
  EXPECT_EQ(hash_of(repo, "01-007"), "seven");
  EXPECT_EQ(hash_of(repo, "01-006"), "old");
  EXPECT_EQ(hash_of(repo, "01-005"), "new");
}

TEST(ReviewLedgerJournal, AForgedOrMovedJournalLineNeverCounts) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-005", rec("new")).error, "");
  stdfs::path j = journal_for(path_for(repo.root(), repo.phase1));
  json line = json::parse(repo.disk.get(j).substr(0, repo.disk.get(j).find('\n')));
  // The same sealed record under another plan's id: its seal names 01-005.
  json moved = line;
  moved["plan_id"] = "01-008";
  // A record edited by hand (the hash of the plan as it is now), its seal kept.
  json edited = line;
  edited["record"]["hash"] = "edited";
  // No seal at all; and a line that breaks the schema.
  json unsealed = {{"plan_id", "01-009"}, {"record", rec("unsealed")}};
  json bad = {{"plan_id", "01-010"}, {"record", rec("bad", "maybe")}};
  repo.disk.put(j, repo.disk.get(j) + moved.dump() + "\n" + edited.dump() + "\n" + unsealed.dump() + "\n" + bad.dump() +
                       "\n" + "not json\n");
  // Each replaced a good record and is dropped: the plan has no record (reviewed again), or
  // (the schema break: skipped) keeps its last good one.
  EXPECT_EQ(hash_of(repo, "01-008"), "");
  EXPECT_EQ(hash_of(repo, "01-005"), "");
  EXPECT_EQ(hash_of(repo, "01-009"), "");
  EXPECT_EQ(hash_of(repo, "01-010"), "old");
  EXPECT_EQ(hash_of(repo, "01-011"), "old");
}

TEST(ReviewLedgerJournal, AFullJournalIsFoldedIntoTheLedgerAndEmptied) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  stdfs::path f = path_for(repo.root(), repo.phase1), j = journal_for(f);
  std::string before = repo.disk.get(f);
  size_t n = 0;
  bool folded = false;
  for (; n < 5000 && !folded; ++n) {
    ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-" + std::to_string(200 + n), rec("h" + std::to_string(n))).error,
              "");
    folded = repo.disk.get(f) != before;
  }
  ASSERT_TRUE(folded);
  EXPECT_GT(n, 100u);  // appended many times before
  EXPECT_EQ(repo.disk.get(j), "");
  auto l = load(repo.w, repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.doc["reviews"].size(), kJournalFromRecords + n);
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ((*find(l.doc, "01-" + std::to_string(200 + i)))["hash"], "h" + std::to_string(i));
  // Nothing was lost from the file alone either (no journal).
  auto raw = json::parse(repo.disk.get(f));
  EXPECT_EQ(raw["reviews"].size(), kJournalFromRecords + n);
}

TEST(ReviewLedgerJournal, ACrashBetweenTheFoldAndEmptyingTheJournalChangesNothing) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  stdfs::path f = path_for(repo.root(), repo.phase1), j = journal_for(f);
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-001", rec("one")).error, "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-001", rec("two")).error, "");
  std::string lines = repo.disk.get(j);
  // The ledger written with every line applied, the journal not emptied yet.
  json doc = json::parse(repo.disk.get(f));
  ASSERT_EQ(apply_journal(doc, lines), 2u);
  repo.disk.put(f, doc.dump(2) + "\n");
  repo.disk.put(j, lines);
  EXPECT_EQ(hash_of(repo, "01-001"), "two");
  EXPECT_EQ(load(repo.w, repo.root(), repo.phase1).doc["reviews"].size(), kJournalFromRecords);
}

TEST(ReviewLedgerJournal, ALedgerChangedBehindOurBackIsReadBeforeItIsWritten) {
  Repo repo;
  ASSERT_EQ(record_many(repo.w, repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  stdfs::path f = path_for(repo.root(), repo.phase1), j = journal_for(f);
  // Broken by hand: the next record is refused, the file kept, nothing appended.
  repo.disk.put(f, "{\"reviews\": {\"01-01\": ");
  EXPECT_NE(record(repo.w, repo.root(), repo.phase1, "01-005", rec("new")).error, "");
  EXPECT_EQ(repo.disk.get(f), "{\"reviews\": {\"01-01\": ");
  EXPECT_EQ(repo.disk.get(j), "");
}

TEST(ReviewLedgerJournal, ConcurrentWritersToALargePhaseLoseNothing) {
  RealRepo repo;
  ASSERT_EQ(record_many(test::real_world(), repo.root(), repo.phase1, many(kJournalFromRecords, "old")).error, "");
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> ts;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string e =
            record(test::real_world(), repo.root(), repo.phase1, "02-" + std::to_string(t * 100 + i), rec("h")).error;
        if (!e.empty()) errors[t] = e;
      }
    });
  for (auto& t : ts) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_TRUE(stdfs::exists(journal_for(path_for(repo.root(), repo.phase1))));
  auto l = load(test::real_world(), repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.doc["reviews"].size(), kJournalFromRecords + kThreads * kEach);
}

}  // namespace
}  // namespace yolo::review_ledger

namespace yolo::review_ledger {
namespace {
// A record's seal is over the canonical JSON of {ledger, plan_id, project, record}: the bytes
// review_ledger writes out member by member are exactly that document's dump, so records
// sealed before (over the dump) still count, and nothing else does.
TEST(ReviewLedger, TheSealCoversTheCanonicalDumpOfTheRecordAndItsPlace) {
  Repo r;
  const stdfs::path ledger = path_for(r.root(), r.phase1);
  json rec = {{"hash", "sha256:ab"},
              {"verdict", "approve"},
              {"source", "reviewer"},
              {"path", ".yolo-planning/phases/01-core/01-PLAN.md"},
              {"findings", json::array({{{"check", "x"}, {"message", "naïve \"quoted\" \u00e9 \\ tab\t"}}})},
              {"reviewed_at", "2026-11-23T21:40:00Z"}};
  json fields = {{"project", gates::project_id(r.w, r.root())},
                 {"ledger", ledger.filename().string()},
                 {"plan_id", "01-01"},
                 {"record", rec}};
  json sealed = rec;
  sealed["seal"] = seal::seal_of("yolo-review-record-v1", fields, r.key);
  EXPECT_TRUE(trusted(r.w, r.root(), ledger, "01-01", sealed));
  // Each part is covered: another plan, ledger, project or field is not trusted.
  EXPECT_FALSE(trusted(r.w, r.root(), ledger, "01-02", sealed));
  EXPECT_FALSE(trusted(r.w, r.root(), path_for(r.root(), r.phase2), "01-01", sealed));
  EXPECT_FALSE(trusted(r.w, "/other", ledger, "01-01", sealed));
  json edited = sealed;
  edited["verdict"] = "reject";
  EXPECT_FALSE(trusted(r.w, r.root(), ledger, "01-01", edited));
  edited = sealed;
  edited["extra"] = 1;
  EXPECT_FALSE(trusted(r.w, r.root(), ledger, "01-01", edited));
  // And what record().error seals now is trusted, read back through load.
  ASSERT_EQ(record(r.w, r.root(), r.phase1, "01-01", rec).error, "");
  auto l = load(r.w, r.root(), r.phase1);
  ASSERT_TRUE(l.ok()) << l.error;
  ASSERT_NE(find(l.doc, "01-01"), nullptr);
  EXPECT_EQ((*find(l.doc, "01-01"))["seal"], sealed["seal"]);
}
}  // namespace
}  // namespace yolo::review_ledger
