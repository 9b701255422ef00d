// Status and Result<T>: how errors travel inside the runtime.
//
// Inside baton every fallible function returns Status or Result<T>; the public
// C++ API turns a failed Status into a typed exception (error.h) at its edge,
// and the Python bindings map those to bt.DeletedArrayError etc.
// Messages say what was wrong, with which array or argument, and what to do.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace baton {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,    // bad shape/dtype/kind/argument; nothing was changed
  kIndex,              // index out of range
  kDeletedArray,       // use of an array that was deleted or donated
  kDonation,           // a donation was refused; nothing was consumed
  kResourceExhausted,  // a memory limit or the system ran out of memory
  kFailedPrecondition, // the operation is not allowed in this state
  kWouldDeadlock,      // a wait for work that waits for the waiting thread
  kUnimplemented,
  kInternal,
};

const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(ErrorCode::kInvalidArgument, std::move(m));
}
inline Status IndexError(std::string m) {
  return Status(ErrorCode::kIndex, std::move(m));
}
inline Status DeletedArray(std::string m) {
  return Status(ErrorCode::kDeletedArray, std::move(m));
}
inline Status DonationRefused(std::string m) {
  return Status(ErrorCode::kDonation, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(ErrorCode::kResourceExhausted, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(ErrorCode::kFailedPrecondition, std::move(m));
}
inline Status WouldDeadlock(std::string m) {
  return Status(ErrorCode::kWouldDeadlock, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(ErrorCode::kUnimplemented, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(ErrorCode::kInternal, std::move(m));
}

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace baton

// Propagates a failed Status out of the enclosing function.
#define BATON_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::baton::Status _st = (expr);            \
    if (!_st.ok()) return _st;               \
  } while (0)

#define BATON_CONCAT_INNER(a, b) a##b
#define BATON_CONCAT(a, b) BATON_CONCAT_INNER(a, b)
// `BATON_ASSIGN_OR_RETURN(auto x, MakeX());`
#define BATON_ASSIGN_OR_RETURN(lhs, expr) \
  BATON_ASSIGN_OR_RETURN_IMPL(BATON_CONCAT(_res_, __LINE__), lhs, expr)
#define BATON_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
