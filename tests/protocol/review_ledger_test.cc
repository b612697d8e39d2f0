#include "protocol/review_ledger.h"
#include "protocol/world.h"

#include <gtest/gtest.h>

#include <thread>

#include "test_support.h"

namespace yolo::review_ledger {
namespace {

namespace stdfs = std::filesystem;

// A project on an in-memory disk with a key of its own (protocol/world.h): no temp folder.
struct Repo {
  fs::MemoryDisk disk;
  FixedClock clock{"2026-11-23T21:40:00Z"};
  seal::Key key{std::string(32, 'r'), {}};
  World w{&disk, &clock, &key};
  stdfs::path phase1 = "/repo/.yolo-planning/phases/01-core", phase2 = "/repo/.yolo-planning/phases/02-api";
  Repo() {
    disk.make_dirs(phase1);
    disk.make_dirs(phase2);
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
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")), "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-02", rec("bb", "reject")), "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("cc")), "");  // replaces
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
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")), "");
  std::string before = repo.disk.get(path_for(repo.root(), repo.phase1));
  std::string e = record(repo.w, repo.root(), repo.phase1, "01-02", rec("bb", "maybe"));
  EXPECT_NE(e.find("01-core.json"), std::string::npos) << e;
  EXPECT_NE(e.find("review-ledger"), std::string::npos) << e;
  EXPECT_EQ(repo.disk.get(path_for(repo.root(), repo.phase1)), before);
}

TEST(ReviewLedger, ABrokenLedgerIsNamedKeptAndNeverOverwritten) {
  Repo repo;
  stdfs::path f = path_for(repo.root(), repo.phase1);
  repo.disk.make_dirs(f.parent_path());
  repo.disk.put(f, "{\"reviews\": {\"01-01\": ");
  auto l = load(repo.w, repo.root(), repo.phase1);
  EXPECT_FALSE(l.ok());
  EXPECT_NE(l.error.find(f.string()), std::string::npos) << l.error;
  EXPECT_FALSE(l.kept_copy.empty());
  EXPECT_TRUE(repo.disk.has(l.kept_copy));
  std::string e = record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa"));
  EXPECT_NE(e.find(f.string()), std::string::npos) << e;
  EXPECT_EQ(repo.disk.get(f), "{\"reviews\": {\"01-01\": ");
  // load_all reports it and still reads the others.
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase2, "02-01", rec("dd")), "");
  auto all = load_all(repo.w, repo.root());
  ASSERT_EQ(all.errors.size(), 1u);
  EXPECT_NE(all.errors[0].find("01-core.json"), std::string::npos);
  EXPECT_EQ(all.reviews.size(), 1u);
  EXPECT_EQ(all.reviews["02-01"]["hash"], "dd");
}

TEST(ReviewLedger, LoadAllMergesEveryPhaseAndSkipsTempFilesAndKeptCopies) {
  Repo repo;
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase1, "01-01", rec("aa")), "");
  ASSERT_EQ(record(repo.w, repo.root(), repo.phase2, "02-01", rec("bb")), "");
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
            record(test::real_world(), repo.root(), repo.phase1, "01-" + std::to_string(t * 100 + i), rec("h"));
        if (!e.empty()) errors[t] = e;
      }
    });
  for (auto& t : ts) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  auto l = load(test::real_world(), repo.root(), repo.phase1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.doc["reviews"].size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace yolo::review_ledger
