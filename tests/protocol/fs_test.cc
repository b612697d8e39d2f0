// protocol/ports/fs.cc reads: only regular files are read; FIFOs, devices and folders are refused
// at once with an error naming the path, never a hang.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

#include "protocol/ports/fs.h"
#include "test_support.h"

namespace yolo {
namespace {

namespace stdfs = std::filesystem;

TEST(FsRead, RegularFile) {
  test::TempDir t;
  test::write_file(t / "a.md", "hello\n");
  auto r = fs::read_text(t / "a.md");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.content, "hello\n");
  auto b = fs::read_bytes(t / "a.md");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.content, "hello\n");
}

TEST(FsRead, MissingFileIsNotFound) {
  test::TempDir t;
  auto r = fs::read_text(t / "nope.md");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, fs::FileError::Kind::NotFound);
  EXPECT_NE(r.error->message.find("nope.md"), std::string::npos);
  auto under_file = fs::read_text(t / "nope.md" / "x");
  ASSERT_FALSE(under_file.ok());
}

TEST(FsRead, FifoIsRefusedWithoutBlocking) {
  test::TempDir t;
  stdfs::path fifo = t / "01-PLAN.md";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = fs::read_text(fifo);
  auto b = fs::read_bytes(fifo);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, fs::FileError::Kind::Io);
  EXPECT_EQ(r.error->path, fifo.string());
  EXPECT_NE(r.error->message.find(fifo.string()), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("not a regular file"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("FIFO"), std::string::npos) << r.error->message;
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error->message.find("not a regular file"), std::string::npos);
}

TEST(FsRead, SymlinkToFifoIsRefused) {
  test::TempDir t;
  ASSERT_EQ(::mkfifo((t / "pipe").c_str(), 0600), 0);
  stdfs::create_symlink(t / "pipe", t / "link.md");
  auto r = fs::read_text(t / "link.md");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->message.find("not a regular file"), std::string::npos) << r.error->message;
}

TEST(FsRead, DevicesAndFoldersAreRefused) {
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/urandom"}) {
    auto r = fs::read_bytes(dev);
    ASSERT_FALSE(r.ok()) << dev;
    EXPECT_NE(r.error->message.find(dev), std::string::npos) << r.error->message;
    EXPECT_NE(r.error->message.find("not a regular file (a character device)"), std::string::npos)
        << r.error->message;
  }
  test::TempDir t;
  auto d = fs::read_text(t.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error->message.find("not a regular file (a directory)"), std::string::npos) << d.error->message;
}

TEST(FsRead, SymlinkToRegularFileIsRead) {
  test::TempDir t;
  test::write_file(t / "real.md", "x");
  stdfs::create_symlink(t / "real.md", t / "link.md");
  auto r = fs::read_text(t / "link.md");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.content, "x");
}

}  // namespace
}  // namespace yolo
