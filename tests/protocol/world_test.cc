// The ports to the ambient world (protocol/ports/world.h, protocol/ports/disk.h): the in-memory disk
// answers as the real one does, and the state, the review ledger, the event and audit logs
// and the approval seal run on it with a fixed clock and a key of the test's own: no temp
// folder, no key file, no wall clock.
#include "protocol/ports/world.h"

#include <gtest/gtest.h>

#include "protocol/gates/approvals.h"
#include "protocol/state/audit.h"
#include "protocol/state/events.h"
#include "protocol/gates/gates.h"
#include "protocol/review/review_ledger.h"
#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

const stdfs::path kRoot = "/project";
const std::string kNow = "2026-11-25T08:00:00Z";

// A project on a memory disk, a fixed clock and a key.
struct Mem {
  fs::MemoryDisk disk;
  FixedClock clock{kNow};
  seal::Key key{std::string(32, 'a'), {}};
  World w{disk, clock, &key};
  Mem() { EXPECT_TRUE(disk.make_dirs(kRoot / ".yolo-planning" / "phases" / "01-core").ok()); }
};

// Disk::append hands `next` the end of the file, from the start of a line: the last
// max_bytes, less the partial line they begin with (nothing when the last line alone is
// longer); the whole file when it is shorter. The same on the real disk and in memory.
TEST(DiskAppend, TheEndOfTheFileFromALineStart) {
  test::TempDir t;
  fs::MemoryDisk mem;
  for (fs::Disk* d : {&fs::real_disk(), static_cast<fs::Disk*>(&mem)}) {
    const stdfs::path p = (d == &mem ? stdfs::path("/m") : t.path()) / "logs" / "x.log";
    auto seen_with = [&](size_t max_bytes) {
      std::string seen = "unset";
      EXPECT_EQ(d->append(
                    p,
                    [&](const std::string& before) {
                      seen = before;
                      return std::string();
                    },
                    max_bytes).error,
                "");
      return seen;
    };
    ASSERT_EQ(d->append(p, [](const std::string&) { return std::string("aaaa\nbbbb\ncccc\n"); }).error, "");
    EXPECT_EQ(seen_with(100), "aaaa\nbbbb\ncccc\n");
    EXPECT_EQ(seen_with(15), "aaaa\nbbbb\ncccc\n");
    EXPECT_EQ(seen_with(8), "cccc\n") << "\"bb\\n\" begins inside a line";
    EXPECT_EQ(seen_with(10), "cccc\n");
    EXPECT_EQ(seen_with(11), "bbbb\ncccc\n") << "the window begins just after a newline";
    EXPECT_EQ(seen_with(0), "");
    ASSERT_EQ(d->append(p, [](const std::string&) { return std::string("yyyyyyyyyy"); }).error, "");
    EXPECT_EQ(seen_with(5), "") << "a last line longer than the window: no line begins in it";
  }
}

// With `enough`, the end is read in windows from 64 KiB up to max_bytes, the smallest one
// that is enough: a marker line 300 KiB from the end is found, with a 1 MiB limit, in a window
// of 512 KiB; with a 200 KiB limit it is out of reach, and the whole limit is what `next` gets.
TEST(DiskAppend, TheEndGrowsUntilItIsEnough) {
  test::TempDir t;
  fs::MemoryDisk mem;
  for (fs::Disk* d : {&fs::real_disk(), static_cast<fs::Disk*>(&mem)}) {
    const stdfs::path p = (d == &mem ? stdfs::path("/m") : t.path()) / "g.log";
    const std::string filler_line(1023, 'f');  // 1 KiB lines, newline included
    auto lines = [&](int n) {
      std::string out;
      for (int i = 0; i < n; ++i) out += filler_line + "\n";
      return out;
    };
    ASSERT_EQ(d->append(p, [&](const std::string&) { return lines(400) + "MARK\n" + lines(300); }).error, "");
    auto has_mark = [](const std::string& w) { return w.find("MARK\n") != std::string::npos; };
    auto seen_with = [&](size_t max_bytes) {
      std::string seen;
      std::vector<size_t> asked;
      EXPECT_EQ(d->append(
                    p,
                    [&](const std::string& before) {
                      seen = before;
                      return std::string();
                    },
                    max_bytes, false,
                    [&](const std::string& w) {
                      asked.push_back(w.size());
                      return has_mark(w);
                    }).error,
                "");
      return std::make_pair(seen, asked);
    };
    auto [seen, asked] = seen_with(1u << 20);
    EXPECT_TRUE(has_mark(seen));
    EXPECT_LE(seen.size(), 512u * 1024) << "the smallest window with the mark: 512 KiB, not the 1 MiB limit";
    EXPECT_GT(seen.size(), 256u * 1024);
    EXPECT_EQ(asked.size(), 4u) << "64, 128, 256 and 512 KiB";
    auto [short_seen, short_asked] = seen_with(200 * 1024);
    EXPECT_FALSE(has_mark(short_seen));
    EXPECT_GT(short_seen.size(), 190u * 1024) << "the whole limit, from a line start";
    EXPECT_EQ(short_asked.size(), 2u) << "64 and 128 KiB; the last window (200 KiB) is not asked";
    // Without `enough`: the whole limit at once, as before.
    std::string plain;
    ASSERT_EQ(d->append(
                  p,
                  [&](const std::string& before) {
                    plain = before;
                    return std::string();
                  },
                  1u << 20).error,
              "");
    EXPECT_GT(plain.size(), 700u * 1024 - 1);
  }
}

TEST(MemoryDisk, ReadsWritesAppendsAsTheRealDiskDoes) {
  fs::MemoryDisk d;
  auto missing = d.read("/a/b.txt", 100, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error->kind, fs::FileError::Kind::NotFound);
  EXPECT_NE(d.write_atomic("/a/b.txt", "x").error, "") << "the folder must exist, as for a rename";
  ASSERT_EQ(d.make_dirs("/a").error, "");
  ASSERT_EQ(d.write_atomic("/a/b.txt", "hello").error, "");
  EXPECT_EQ(d.read("/a/b.txt", 100, true).content, "hello");
  EXPECT_EQ(d.read("/a/b.txt", 3, true).error->kind, fs::FileError::Kind::TooLarge);
  d.put("/a/bin", std::string("\0x", 2));
  EXPECT_EQ(d.read("/a/bin", 100, true).error->kind, fs::FileError::Kind::Binary);
  EXPECT_TRUE(d.read("/a/bin", 100, false).ok());
  std::string s1 = d.stamp("/a/b.txt");
  ASSERT_EQ(d.write_atomic("/a/b.txt", "hello").error, "");
  EXPECT_NE(d.stamp("/a/b.txt"), s1) << "every write is a new file";
  fs::MemoryDisk other;
  other.put("/a/b.txt", "hello");
  EXPECT_NE(other.stamp("/a/b.txt"), d.stamp("/a/b.txt")) << "two disks never share a stamp";
  std::string seen;
  ASSERT_EQ(d.append(
                "/logs/x.log",
                [&](const std::string& before) {
                  seen = before;
                  return "1\n";
                },
                100).error,
            "");
  ASSERT_EQ(d.append(
                "/logs/x.log",
                [&](const std::string& before) {
                  seen = before;
                  return "2\n";
                },
                100).error,
            "");
  EXPECT_EQ(seen, "1\n");
  EXPECT_EQ(d.get("/logs/x.log"), "1\n2\n");
  EXPECT_EQ(d.list("/a"), (std::vector<std::string>{"b.txt", "bin"}));
  auto l = d.lock("/a/.lock");
  ASSERT_TRUE(l.ok()) << l.error;
  EXPECT_TRUE(d.locked("/a/.lock"));
  auto again = d.lock("/a/.lock");
  EXPECT_FALSE(again.ok()) << "held";
  EXPECT_EQ(again.error, "/a/.lock: already locked (it would wait for itself)");
  l->reset();
  EXPECT_FALSE(d.locked("/a/.lock"));
  d.fail_writes("No space left on device");
  EXPECT_NE(d.write_atomic("/a/b.txt", "y").error.find("No space left"), std::string::npos);
  EXPECT_EQ(d.get("/a/b.txt"), "hello");
}

TEST(WorldState, AnUpdateIsLockedValidatedAndWrittenOnce) {
  Mem m;
  bool locked_inside = false;
  auto u = state::update(m.w, kRoot, [&](json& doc) {
    locked_inside = m.disk.locked(state::lock_path(kRoot));
    doc["status"] = "running";
    doc["phase"] = 1;
    return true;
  });
  ASSERT_TRUE(u.ok()) << u.error;
  EXPECT_TRUE(u.written);
  EXPECT_TRUE(locked_inside) << "fn runs under the lock";
  EXPECT_FALSE(m.disk.locked(state::lock_path(kRoot)));
  auto l = state::load(m.w, kRoot);
  ASSERT_TRUE(l.ok()) << l.error;
  EXPECT_EQ(l.doc["status"], "running");
  // The same document again: no write.
  size_t writes = m.disk.writes();
  auto same = state::update(m.w, kRoot, [](json&) { return true; });
  EXPECT_TRUE(same.ok());
  EXPECT_FALSE(same.written);
  EXPECT_EQ(m.disk.writes(), writes);
  // A result the schema refuses is never written.
  auto bad = state::update(m.w, kRoot, [](json& doc) {
    doc["status"] = 42;
    return true;
  });
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("update refused"), std::string::npos) << bad.error;
  EXPECT_EQ(json::parse(m.disk.get(state::state_path(kRoot)))["status"], "running");
}

TEST(WorldState, ABrokenFileIsKeptNeverOverwrittenAndReadOnlyIsRespected) {
  Mem m;
  m.disk.put(state::state_path(kRoot), "{not json");
  auto l = state::load(m.w, kRoot);
  EXPECT_FALSE(l.ok());
  ASSERT_FALSE(l.kept_copy.empty());
  EXPECT_EQ(m.disk.get(l.kept_copy), "{not json");
  auto u = state::update(m.w, kRoot, [](json& doc) {
    doc["status"] = "running";
    return true;
  });
  EXPECT_FALSE(u.ok());
  EXPECT_EQ(m.disk.get(state::state_path(kRoot)), "{not json");
  m.disk.put(state::state_path(kRoot), "{\"status\": \"running\"}\n");
  m.disk.set_read_only(state::state_path(kRoot), true);
  auto ro = state::update(m.w, kRoot, [](json& doc) {
    doc["status"] = "halted";
    return true;
  });
  EXPECT_FALSE(ro.ok());
  EXPECT_NE(ro.error.find("read-only"), std::string::npos) << ro.error;
  // Not a project: no .yolo-planning folder.
  EXPECT_FALSE(state::update(m.w, "/elsewhere", [](json&) { return true; }).ok());
}

json rec(const std::string& hash) {
  return {
      {"hash", hash},        {"verdict", "approve"},      {"path", "p.md"},
      {"reviewed_at", kNow}, {"findings", json::array()}, {"loop", {{"cycle", 1}, {"max", 3}, {"status", "passed"}}}};
}

TEST(WorldReviewLedger, RecordsAreSealedWithThePassedKeyAndCheckedWithIt) {
  Mem m;
  stdfs::path phase = kRoot / ".yolo-planning" / "phases" / "01-core";
  ASSERT_EQ(review_ledger::record(m.w, kRoot, phase, "01-01", rec("aa")).error, "");
  ASSERT_EQ(review_ledger::record_many(m.w, kRoot, phase, {{"01-02", rec("bb")}, {"01-03", rec("cc")}}).error, "");
  auto l = review_ledger::load(m.w, kRoot, phase);
  ASSERT_TRUE(l.ok()) << l.error;
  ASSERT_NE(review_ledger::find(l.doc, "01-02"), nullptr);
  EXPECT_EQ((*review_ledger::find(l.doc, "01-01"))["hash"], "aa");
  // Edited by hand: dropped, the plan is reviewed again.
  stdfs::path file = review_ledger::path_for(kRoot, phase);
  json doc = json::parse(m.disk.get(file));
  doc["reviews"]["01-01"]["verdict"] = "reject";
  m.disk.put(file, doc.dump(2));
  l = review_ledger::load(m.w, kRoot, phase);
  ASSERT_TRUE(l.ok()) << l.error;
  EXPECT_EQ(review_ledger::find(l.doc, "01-01"), nullptr);
  EXPECT_NE(review_ledger::find(l.doc, "01-02"), nullptr);
  // Another machine's key trusts none of them.
  seal::Key other{std::string(32, 'b'), {}};
  World elsewhere{m.disk, m.clock, &other};
  auto all = review_ledger::load_all(elsewhere, kRoot);
  EXPECT_TRUE(all.reviews.empty()) << all.reviews.dump();
  EXPECT_EQ(all.errors.size(), 3u);  // one per record
  EXPECT_EQ(review_ledger::load_all(m.w, kRoot).reviews.size(), 2u);
}

TEST(WorldLogs, EventsAndAuditUseTheClockTheDiskAndTheKey) {
  Mem m;
  events::Event e;
  e.type = "gate_frozen";
  e.phase = 1;
  e.correlation_id = "cid-1";
  auto w1 = events::log_always(m.w, kRoot, e);
  ASSERT_TRUE(w1.written) << w1.reason;
  json line = json::parse(m.disk.get(events::log_path(kRoot)));
  EXPECT_EQ(line["ts"], kNow);
  EXPECT_EQ(line["event"], "gate_frozen");
  EXPECT_FALSE(events::log(m.w, kRoot, json::object(), e).written) << "v3_event_log off";

  ASSERT_EQ(audit::append(m.w, kRoot, {e, e}).error, "");
  m.clock.set("2026-11-25T09:00:00Z");
  ASSERT_EQ(audit::append(m.w, kRoot, {e}).error, "");
  auto c = audit::check(m.w, kRoot);
  EXPECT_TRUE(c.exists);
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.entries[0]["ts"], kNow);
  EXPECT_EQ(c.entries[2]["ts"], "2026-11-25T09:00:00Z");
  EXPECT_EQ(c.entries[2]["seq"], 3);
  // Checked with another key: every mac is refused.
  seal::Key other{std::string(32, 'b'), {}};
  auto c2 = audit::check(World{m.disk, m.clock, &other}, kRoot);
  EXPECT_EQ(c2.problems.size(), 3u);
  // A full disk: the append says so and leaves the log as it was.
  std::string before = m.disk.get(audit::path(kRoot));
  m.disk.fail_writes("No space left on device");
  EXPECT_NE(audit::append(m.w, kRoot, {e}).error.find("No space left"), std::string::npos);
  EXPECT_EQ(m.disk.get(audit::path(kRoot)), before);
}

TEST(WorldApprovals, AnApprovalIsSealedAndCheckedWithThePassedKey) {
  seal::Key key{std::string(32, 'a'), {}}, other{std::string(32, 'b'), {}};
  const std::string digest = "sha256:" + std::string(64, 'e');
  json doc = {{"status", "running"}, {"phase", 1}, {"correlation_id", "cid-1"}};
  gates::RequestInput in;
  in.type = gates::GateType::Vision;
  in.plan_path = ".yolo-planning/ROADMAP.md";
  in.now = kNow;
  ASSERT_TRUE(gates::request(doc, in).ok());
  gates::ResolveInput r{{}, "alice", digest, {}, kNow};
  r.key = &key;
  auto t = gates::approve(doc, r);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_TRUE(seal::valid(t.gate, key));
  gates::Now now = gates::now_with_digest(".yolo-planning/ROADMAP.md", digest, key);
  EXPECT_TRUE(gates::gate_status(doc, t.gate, now).counts());
  now.key = &other;
  auto st = gates::gate_status(doc, t.gate, now);
  EXPECT_EQ(st.check, gates::ApprovalCheck::Stale);
  EXPECT_NE(st.message.find("carries no valid seal"), std::string::npos) << st.message;
  // No key at all: nothing is approved.
  seal::Key none{{}, "no approval key here"};
  json doc2 = {{"status", "running"}, {"phase", 1}, {"correlation_id", "cid-2"}};
  ASSERT_TRUE(gates::request(doc2, in).ok());
  r.key = &none;
  auto refused = gates::approve(doc2, r);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.error.find("no approval key here"), std::string::npos) << refused.error;
}

}  // namespace
}  // namespace yolo
