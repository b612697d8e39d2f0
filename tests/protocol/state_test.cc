#include "protocol/state/state.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <random>

#include "protocol/base/schema.h"
#include "protocol/ports/world.h"
#include "test_support.h"

namespace yolo::state {
namespace {

struct Repo {
  test::TempDir dir;
  Repo() { std::filesystem::create_directories(dir / ".yolo-planning"); }
  const std::filesystem::path& root() const { return dir.path(); }
};

// The same project on an in-memory disk (protocol/ports/world.h): the state's rules need no temp
// folder. What only a real disk shows (a file replaced or not: its inode) stays on Repo.
struct MemRepo {
  fs::MemoryDisk disk;
  World w{disk, system_clock(), nullptr};
  MemRepo() { EXPECT_TRUE(disk.make_dirs("/repo/.yolo-planning").ok()); }
  std::filesystem::path root() const { return "/repo"; }
};

TEST(State, AnUpdateThatChangesNothingWritesNothing) {
  Repo repo;
  auto set = [](json& d) {
    d["status"] = "running";
    return true;
  };
  ASSERT_TRUE(update(test::real_world(), repo.root(), set).written);
  auto path = state_path(repo.root());
  auto ino = [&] {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_ino;
  };
  auto before = ino();
  auto again = update(test::real_world(), repo.root(), set);
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_FALSE(again.written);
  EXPECT_EQ(ino(), before);  // not replaced: watchers see no event
  EXPECT_EQ(again.doc["status"], "running");
}

TEST(State, BytesSeenValidOnceAreStillCheckedWhenTheyChange) {
  MemRepo repo;
  ASSERT_TRUE(update(repo.w, repo.root(), [](json& d) {
                d["status"] = "running";
                return true;
              }).written);
  ASSERT_TRUE(load(repo.w, repo.root()).ok());  // these bytes are now known valid
  repo.disk.put(state_path(repo.root()), R"({"status": "sleeping"})");
  auto l = load(repo.w, repo.root());
  EXPECT_FALSE(l.ok());
  EXPECT_NE(l.error.find("status"), std::string::npos) << l.error;
}

TEST(State, MissingFileIsEmptyNotAnError) {
  MemRepo repo;
  auto r = load(repo.w, repo.root());
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.exists);
  EXPECT_EQ(r.doc, json::object());
}

TEST(State, UpdateWritesValidatedStateAtomically) {
  MemRepo repo;
  auto u = update(repo.w, repo.root(), [](json& d) {
    d["status"] = "running";
    d["correlation_id"] = "abc";
    return true;
  });
  ASSERT_TRUE(u.ok()) << u.error;
  EXPECT_TRUE(u.written);
  auto l = load(repo.w, repo.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.doc["correlation_id"], "abc");
  // no temp files left behind
  for (const auto& name : repo.disk.list(repo.root() / ".yolo-planning"))
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
}

TEST(State, InvalidResultIsNeverWritten) {
  MemRepo repo;
  ASSERT_TRUE(update(repo.w, repo.root(), [](json& d) {
                d["status"] = "running";
                return true;
              }).ok());
  std::string before = repo.disk.get(state_path(repo.root()));
  auto u = update(repo.w, repo.root(), [](json& d) {
    d["status"] = "exploded";
    return true;
  });
  EXPECT_FALSE(u.ok());
  EXPECT_NE(u.error.find("/status"), std::string::npos) << u.error;
  EXPECT_EQ(repo.disk.get(state_path(repo.root())), before);
}

TEST(State, AbortedUpdateWritesNothing) {
  MemRepo repo;
  auto u = update(repo.w, repo.root(), [](json& d) -> Change {
    d["status"] = "running";
    return Status::fail("nothing pending");
  });
  EXPECT_FALSE(u.ok());
  EXPECT_EQ(u.error, "nothing pending");
  EXPECT_FALSE(u.written);
  EXPECT_FALSE(repo.disk.has(state_path(repo.root())));
}

// false from fn: nothing to write, and that is no failure.
TEST(State, UpdateWithNothingToWriteIsOkAndWritesNothing) {
  MemRepo repo;
  auto u = update(repo.w, repo.root(), [](json& d) {
    d["status"] = "running";
    return false;
  });
  EXPECT_TRUE(u.ok()) << u.error;
  EXPECT_FALSE(u.written);
  EXPECT_FALSE(repo.disk.has(state_path(repo.root())));
}

TEST(State, GarbageFileIsReportedKeptAndNeverOverwritten) {
  MemRepo repo;
  repo.disk.put(state_path(repo.root()), "{\"status\": \"running\", trailing garbage");
  auto l = load(repo.w, repo.root());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error.find(".execution-state.json"), std::string::npos);
  EXPECT_NE(l.error.find("not valid JSON"), std::string::npos);
  ASSERT_FALSE(l.kept_copy.empty());
  EXPECT_EQ(repo.disk.get(l.kept_copy), "{\"status\": \"running\", trailing garbage");
  auto u = update(repo.w, repo.root(), [](json& d) {
    d = {{"status", "running"}};
    return true;
  });
  EXPECT_FALSE(u.ok());
  EXPECT_EQ(repo.disk.get(state_path(repo.root())), "{\"status\": \"running\", trailing garbage");
}

TEST(State, SchemaViolationNamesThePointer) {
  MemRepo repo;
  repo.disk.put(state_path(repo.root()), R"({"status": "running", "plans": [{"id": "01-01", "status": "weird"}]})");
  auto l = load(repo.w, repo.root());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error.find("/plans/0/status"), std::string::npos) << l.error;
}

TEST(State, NotAProject) {
  MemRepo repo;
  auto u = update(repo.w, "/elsewhere", [](json& doc) {
    doc["status"] = "running";
    return true;
  });
  EXPECT_FALSE(u.ok());
  EXPECT_NE(u.error.find(".yolo-planning"), std::string::npos);
}

TEST(State, ChangedPlansAreCheckedAndTheRestIsNot) {
  json doc = {{"status", "running"},
              {"wave", 1},
              {"plans", {{{"id", "01-01"}, {"status", "weird"}}, {{"id", "01-02"}, {"status", "running"}}}}};
  // Plan 0 is broken, plan 1 is not: only the plans named are looked at.
  EXPECT_EQ(validate_changed_plans(doc, {1}).error, "");
  std::string e = validate_changed_plans(doc, {0, 1}).error;
  EXPECT_NE(e.find("/plans/0/status"), std::string::npos) << e;
  // The top-level scalars are always checked.
  doc["status"] = "exploded";
  EXPECT_NE(validate_changed_plans(doc, {1}).error.find("/status"), std::string::npos);
  doc["status"] = "running";
  doc["wave"] = "one";
  EXPECT_NE(validate_changed_plans(doc, {}).error.find("/wave"), std::string::npos);
  // A plans field that is not an array: the whole document is checked.
  EXPECT_FALSE(validate_changed_plans({{"status", "running"}, {"plans", 3}}, {}).ok());
}

TEST(State, AnUpdateWithACheckWritesOnlyWhatPassesIt) {
  MemRepo repo;
  auto plans = [](json& d) {
    d = {{"status", "running"}, {"plans", {{{"id", "01-01"}, {"status", "pending"}}}}};
    return true;
  };
  auto u = update(repo.w, repo.root(), plans);
  ASSERT_TRUE(u.written) << u.error;
  EXPECT_FALSE(u.stamp.empty());
  EXPECT_EQ(u.stamp, repo.disk.stamp(state_path(repo.root())));
  std::string before = repo.disk.get(state_path(repo.root()));
  auto bad = update(
      repo.w, repo.root(),
      [](json& d) {
        d["plans"][0]["status"] = "weird";
        return true;
      },
      [](const json& d) { return validate_changed_plans(d, {0}); });
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("/plans/0/status"), std::string::npos) << bad.error;
  EXPECT_EQ(repo.disk.get(state_path(repo.root())), before);
  auto good = update(
      repo.w, repo.root(),
      [](json& d) {
        d["plans"][0]["status"] = "running";
        return true;
      },
      [](const json& d) { return validate_changed_plans(d, {0}); });
  ASSERT_TRUE(good.written) << good.error;
  EXPECT_EQ(good.stamp, repo.disk.stamp(state_path(repo.root())));
  EXPECT_EQ(load(repo.w, repo.root()).doc["plans"][0]["status"], "running");
}

// Execute's batched writes: the change is written, and the caller gets the document without
// its records; a refused one (fn's error, the check, a read-only file) writes nothing and
// returns the document as the file holds it, not the half-changed one.
TEST(State, APlanRecordsUpdateWritesItsChangeOrNothing) {
  MemRepo repo;
  ASSERT_TRUE(update(repo.w, repo.root(), [](json& d) {
                d = {{"status", "running"}, {"plans", {{{"id", "01-01"}, {"status", "pending"}}}}};
                return true;
              }).written);
  const auto file = state_path(repo.root());
  const std::string before = repo.disk.get(file);
  auto status_to = [](std::string status) {
    return [status](json& d, std::vector<size_t>& changed) {
      d["plans"][0]["status"] = status;
      changed.push_back(0);
      return true;
    };
  };
  auto refused = [&](const UpdateResult& u, const std::string& what) {
    EXPECT_FALSE(u.ok()) << what;
    EXPECT_FALSE(u.written) << what;
    EXPECT_EQ(repo.disk.get(file), before) << what;
    EXPECT_EQ(u.doc["plans"][0]["status"], "pending") << what << ": " << u.doc.dump();
  };
  refused(update_plan_records(repo.w, repo.root(),
                              [](json& d, std::vector<size_t>& changed) -> Change {
                                d["plans"][0]["status"] = "running";
                                changed.push_back(0);
                                return Status::fail("stopped halfway");
                              }),
          "fn's error");
  refused(update_plan_records(repo.w, repo.root(), status_to("weird")), "the check of a record");
  refused(update_plan_records(repo.w, repo.root(),
                              [](json& d, std::vector<size_t>&) {
                                d["steps_completed"] = {"step_2", 7};
                                return true;
                              }),
          "the check of a field beside the records");
  repo.disk.set_read_only(file, true);
  refused(update_plan_records(repo.w, repo.root(), status_to("running")), "read-only");
  repo.disk.set_read_only(file, false);
  auto good = update_plan_records(repo.w, repo.root(), status_to("running"));
  ASSERT_TRUE(good.written) << good.error;
  EXPECT_FALSE(good.doc.contains("plans")) << good.doc.dump();
  EXPECT_EQ(good.doc["status"], "running");
  EXPECT_EQ(good.stamp, repo.disk.stamp(file));
  EXPECT_EQ(load(repo.w, repo.root()).doc["plans"][0]["status"], "running");
  EXPECT_EQ(json::parse(repo.disk.get(file))["plans"][0]["status"], "running");
}

// The records' texts a write keeps for the next one: after any sequence of record updates,
// other writers' updates and a file replaced behind its back, the file holds exactly the
// whole document's dump(2), as every other write writes it.
TEST(State, APlanRecordsUpdateWritesWhatTheWholeDumpWould) {
  MemRepo repo;
  const auto file = state_path(repo.root());
  ASSERT_TRUE(update(repo.w, repo.root(), [](json& d) {
                d = {{"status", "running"}, {"wave", 1}, {"plans", json::array()}, {"steps_completed", {"step_2"}}};
                for (int i = 0; i < 40; ++i)
                  d["plans"].push_back({{"id", "01-" + std::to_string(i)},
                                        {"title", "Plan \"" + std::to_string(i) + "\"\nwith a newline"},
                                        {"status", "pending"},
                                        {"wave", 1 + i % 4}});
                return true;
              }).written);
  std::mt19937 rng(19);
  const char* statuses[] = {"pending", "running", "complete", "failed"};
  for (int step = 0; step < 300; ++step) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind == 0) {  // another writer: a whole update (the kept texts go with it)
      ASSERT_TRUE(update(repo.w, repo.root(), [&](json& d) {
                    d["plans"][rng() % 40]["title"] = "changed by another writer " + std::to_string(step);
                    return true;
                  }).ok());
    } else if (kind == 1) {  // the file replaced behind this process's back
      json d = json::parse(repo.disk.get(file));
      d["plans"][rng() % 40]["title"] = "edited by hand " + std::to_string(step);
      repo.disk.put(file, d.dump(2) + "\n");
    } else {
      const size_t n = 1 + rng() % 5;
      auto u = update_plan_records(repo.w, repo.root(), [&](json& d, std::vector<size_t>& changed) {
        for (size_t k = 0; k < n; ++k) {
          size_t i = rng() % 40;
          json& p = d["plans"][i];
          p["status"] = statuses[rng() % 4];
          if (rng() % 3 == 0) p["error"] = "broke at \u00e9tape " + std::to_string(step);
          if (rng() % 3 == 0) p.erase("error");
          changed.push_back(i);
        }
        if (rng() % 4 == 0) d["wave"] = 1 + static_cast<int>(rng() % 4);
        if (rng() % 8 == 0) d["steps_completed"].push_back("step_" + std::to_string(step));
        return true;
      });
      ASSERT_TRUE(u.written) << u.error;
    }
    const std::string text = repo.disk.get(file);
    ASSERT_EQ(text, json::parse(text).dump(2) + "\n") << "step " << step;
    ASSERT_EQ(load(repo.w, repo.root()).doc, json::parse(text)) << "step " << step;
  }
}

// An update without a check of its own checks only what changed (state.cc, validate_changes),
// and still refuses every invalid change, wherever it is: a plan among many, a new plan, a
// gate, the approval, a duplicate gate id. Nothing of a refused update is written.
TEST(State, AnUpdateWithoutACheckRefusesAnInvalidChangeWhereverItIs) {
  MemRepo repo;
  auto setup = [](json& d) {
    d = {{"status", "running"}, {"wave", 1}, {"plans", json::array()}, {"gates", json::array()}};
    for (int i = 0; i < 50; ++i) d["plans"].push_back({{"id", "01-" + std::to_string(i)}, {"status", "pending"}});
    d["gates"].push_back(
        {{"id", "vision-1"}, {"gate_type", "vision"}, {"status", "OPEN"}, {"created_at", "2026-01-01T00:00:00Z"}});
    d["approval"] = {{"plan_path", "ROADMAP.md"}, {"approved", false}};
    return true;
  };
  ASSERT_TRUE(update(repo.w, repo.root(), setup).written);
  const std::string before = repo.disk.get(state_path(repo.root()));
  std::vector<std::pair<std::string, std::function<void(json&)>>> bad = {
      {"/status", [](json& d) { d["plans"][37]["status"] = "weird"; }},
      {"/status",
       [](json& d) {
         d["plans"].push_back({{"id", "01-99"}, {"status", "weird"}});
       }},
      {"property 'id'", [](json& d) { d["plans"][0].erase("id"); }},
      {"/gate_type", [](json& d) { d["gates"][0]["gate_type"] = "nonsense"; }},
      {"/approved", [](json& d) { d["approval"]["approved"] = "yes"; }},
      {"/wave", [](json& d) { d["wave"] = "two"; }},
      {"more than once", [](json& d) { d["gates"].push_back(d["gates"][0]); }},
      {"plans", [](json& d) { d["plans"] = json::object(); }},
  };
  for (const auto& [what, change] : bad) {
    auto u = update(repo.w, repo.root(), [&](json& d) {
      change(d);
      return true;
    });
    EXPECT_FALSE(u.ok()) << what;
    EXPECT_NE(u.error.find(what), std::string::npos) << what << ": " << u.error;
    EXPECT_EQ(repo.disk.get(state_path(repo.root())), before) << what;
  }
  auto good = update(repo.w, repo.root(), [](json& d) {
    d["plans"][37]["status"] = "running";
    d["gates"][0]["status"] = "APPROVED";
    return true;
  });
  ASSERT_TRUE(good.written) << good.error;
  EXPECT_EQ(load(repo.w, repo.root()).doc["plans"][37]["status"], "running");
}

// What that partial check relies on: the state's schema constrains each element of an array
// on its own. A keyword that counts, orders or compares the elements of an array (or an
// object's keys) would make the check of the changed elements differ from the whole check.
TEST(State, TheStateSchemaConstrainsEachArrayElementOnItsOwn) {
  std::vector<std::string> found;
  std::function<void(const json&, const std::string&)> walk = [&](const json& j, const std::string& at) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        for (const char* kw : {"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
                               "prefixItems", "additionalItems", "minProperties", "maxProperties"})
          if (k == kw) found.push_back(at + "/" + k);
        if (k == "items" && v.is_array()) found.push_back(at + "/items (positional)");
        walk(v, at + "/" + k);
      }
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) walk(j[i], at + "/" + std::to_string(i));
    }
  };
  walk(schema::document("execution-state"), "");
  EXPECT_TRUE(found.empty()) << "keyword(s) over a whole array: " << (found.empty() ? std::string() : found.front());
}

}  // namespace
}  // namespace yolo::state
