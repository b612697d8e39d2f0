// How protocol/ reports a failure: one convention for every function that can fail.
// Status is ok or a sentence saying what failed (naming the file when there is one);
// Result<T> is a value or such a sentence. Nothing throws across the API for an expected
// failure (a missing file, a lock held elsewhere, a schema violation).
//
// The surface is the one the state records had before (LoadResult, UpdateResult): `ok()` and
// a public `error` string that is empty exactly when ok. A record that carries more than one
// value on both paths (a document and whether its file existed, a kept copy) keeps its fields
// and has the same two members, so a caller reads every failure the same way.
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace yolo {

struct [[nodiscard]] Status {
  std::string error;  // "" when ok; else a whole sentence, naming the file
  bool ok() const { return error.empty(); }

  // A failure; an empty reason still fails (it is never read as success).
  static Status fail(std::string why) {
    if (why.empty()) why = "failed (no reason given)";
    return Status{std::move(why)};
  }
  // Keeps the first failure of a sequence of steps: `s.also(step())`.
  Status& also(const Status& next) {
    if (ok() && !next.ok()) error = next.error;
    return *this;
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status failed) : error(std::move(failed.error)) {
    if (error.empty()) error = "failed (no reason given)";
  }
  static Result fail(std::string why) { return Result(Status::fail(std::move(why))); }

  std::string error;  // "" when there is a value
  bool ok() const { return error.empty(); }
  Status status() const { return Status{error}; }

  // Only when ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  // The value, or `fallback` when there is none.
  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
};

}  // namespace yolo
