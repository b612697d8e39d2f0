// File access for the protocol layer: bounded reads, atomic writes, path containment.
// Every failure is reported as FileError naming the file; nothing here throws for I/O.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "protocol/base/result.h"

namespace yolo::fs {

namespace stdfs = std::filesystem;

inline constexpr size_t kDefaultMaxFileBytes = 1 << 20;  // 1 MiB

struct FileError {
  enum class Kind { NotFound, TooLarge, Binary, Io };
  Kind kind;
  std::string path;
  std::string message;  // whole sentence, names the file
};

struct ReadResult {
  std::string content;
  std::optional<FileError> error;
  bool ok() const { return !error; }
};

// Reads a text file of at most max_bytes. NUL bytes or invalid UTF-8 => Binary.
ReadResult read_text(const stdfs::path& path, size_t max_bytes = kDefaultMaxFileBytes);
// Reads any file (no text check). Used for hashing.
ReadResult read_bytes(const stdfs::path& path, size_t max_bytes = 64u << 20);

// Writes via temp file in the same folder, fsync, rename, fsync of the folder.
// Fails with a sentence naming the file.
Status write_atomic(const stdfs::path& path, const std::string& content);

}  // namespace yolo::fs
