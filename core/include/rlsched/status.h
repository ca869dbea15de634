// Status and Result: how core/ reports errors without exceptions crossing module boundaries.
//
// An expected outcome ("this job cannot be placed") is a value of the domain type, never a Status.
// A Status is for errors: bad input, unreadable files, a model that failed verification.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace rlsched {

/// [[nodiscard]]: a Status dropped on the floor is an error nobody handles; log it, return it, or count it.
class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kInvalidInput, kNotFound, kIoError, kUnsupported, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message) { return Status(Code::kInvalidInput, std::move(message)); }
  static Status NotFound(std::string message) { return Status(Code::kNotFound, std::move(message)); }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  static Status Unsupported(std::string message) { return Status(Code::kUnsupported, std::move(message)); }
  static Status Internal(std::string message) { return Status(Code::kInternal, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  /// \return a message that says what was wrong and where, e.g. "cluster.yaml:14: speed must be > 0 (got -1)".
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor): return T or Status alike
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  /// \return the value; throws std::logic_error with the status message when there is none (check ok() first).
  /// operator* and operator-> do not check.
  T& value() & {
    check();
    return *value_;
  }
  const T& value() const& {
    check();
    return *value_;
  }
  T&& value() && {
    check();
    return std::move(*value_);
  }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  void check() const {
    if (!value_) throw std::logic_error("Result::value() without a value: " + status_.message());
  }

  std::optional<T> value_;
  Status status_;
};

}  // namespace rlsched
