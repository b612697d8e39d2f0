// protocol/state/state.cc: temp files left by atomic writers that died are removed under the lock;
// a deeply nested state file is refused with an error, not a crash.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "protocol/state/state.h"
#include "test_support.h"

namespace yolo::state {
namespace {

namespace stdfs = std::filesystem;

// A pid that was used and is no longer alive (a child that exited and was reaped).
pid_t dead_pid() {
  pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  int status = 0;
  ::waitpid(p, &status, 0);
  return p;
}

struct Repo {
  test::TempDir dir;
  Repo() { stdfs::create_directories(dir / ".yolo-planning"); }
  stdfs::path yp() const { return dir / ".yolo-planning"; }
};

TEST(StateTempFiles, DeadWritersTempFilesAreRemovedWhenTakingTheLock) {
  Repo repo;
  pid_t dead = dead_pid();
  std::string d = std::to_string(dead), me = std::to_string(::getpid());
  const stdfs::path stale_state = repo.yp() / ("..execution-state.json.tmp." + d + ".12345");
  const stdfs::path stale_other = repo.yp() / (".config.json.tmp." + d + ".9");
  const stdfs::path live = repo.yp() / ("..execution-state.json.tmp." + me + ".777");
  const stdfs::path not_ours = repo.yp() / (".notes.tmp.abc.1");
  const stdfs::path no_counter = repo.yp() / ("..execution-state.json.tmp." + d);
  const stdfs::path plain = repo.yp() / "config.json";
  for (const auto& p : {stale_state, stale_other, live, not_ours, no_counter, plain}) test::write_file(p, "{}");
  const stdfs::path stale_dir = repo.yp() / (".dir.tmp." + d + ".1");
  stdfs::create_directories(stale_dir);

  auto u = update(test::real_world(), repo.dir.path(), [](json& doc) {
    doc["status"] = "running";
    return true;
  });
  ASSERT_TRUE(u.ok()) << u.error;
  EXPECT_FALSE(stdfs::exists(stale_state)) << "dead writer's temp file of the state";
  EXPECT_FALSE(stdfs::exists(stale_other)) << "dead writer's temp file of another file";
  EXPECT_TRUE(stdfs::exists(live)) << "a live writer may still rename it";
  EXPECT_TRUE(stdfs::exists(not_ours));
  EXPECT_TRUE(stdfs::exists(no_counter));
  EXPECT_TRUE(stdfs::exists(plain));
  EXPECT_TRUE(stdfs::is_directory(stale_dir)) << "only regular files are removed";
  EXPECT_TRUE(stdfs::exists(state_path(repo.dir.path())));
}

TEST(StateTempFiles, RemoveStaleTempFilesCountsWhatItRemoves) {
  Repo repo;
  pid_t dead = dead_pid();
  for (int i = 0; i < 3; ++i)
    test::write_file(repo.yp() / ("..execution-state.json.tmp." + std::to_string(dead) + "." + std::to_string(i)), "x");
  test::write_file(repo.yp() / ("..execution-state.json.tmp." + std::to_string(::getpid()) + ".1"), "x");
  test::write_file(repo.yp() / ".x.tmp.0.1", "pid 0 is never a writer");
  test::write_file(repo.yp() / ".x.tmp.99999999999999999999.1", "no such pid");
  EXPECT_EQ(fs::real_disk().remove_stale_temp_files(repo.yp()), 3u);
  EXPECT_EQ(fs::real_disk().remove_stale_temp_files(repo.yp()), 0u);
  EXPECT_EQ(fs::real_disk().remove_stale_temp_files(repo.yp() / "missing-folder"), 0u);
  size_t left = 0;
  for ([[maybe_unused]] const auto& e : stdfs::directory_iterator(repo.yp())) ++left;
  EXPECT_EQ(left, 3u);
}

TEST(StateTempFiles, DeeplyNestedStateIsRefusedNotACrash) {
  Repo repo;
  test::write_file(state_path(repo.dir.path()), "{\"x\":" + std::string(300000, '[') + std::string(300000, ']') + "}");
  auto l = load(test::real_world(), repo.dir.path());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error.find(".execution-state.json"), std::string::npos) << l.error;
  EXPECT_NE(l.error.find("nested deeper than 64"), std::string::npos) << l.error;
  auto u = update(test::real_world(), repo.dir.path(), [](json&) { return true; });
  EXPECT_FALSE(u.ok());
  EXPECT_FALSE(u.written);
}

}  // namespace
}  // namespace yolo::state
