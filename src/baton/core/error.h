// Typed exceptions thrown by baton's public C++ API.
//
// The runtime works with Status (status.h); the API surface calls
// ThrowIfError to turn a failure into one of these. Each maps to the Python
// exception of the same name (DESIGN.md section 3).
#pragma once

#include <stdexcept>
#include <string>

#include "baton/core/status.h"

namespace baton {

class Error : public std::runtime_error {
 public:
  explicit Error(const Status& s) : std::runtime_error(s.message()), code_(s.code()) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// Bad arguments (Python: ValueError). Nothing was changed.
class InvalidArgumentError : public Error { using Error::Error; };
// Out-of-range index (Python: IndexError).
class IndexOutOfRangeError : public Error { using Error::Error; };
// Use of a deleted or donated array (Python: bt.DeletedArrayError).
class DeletedArrayError : public Error { using Error::Error; };
// A refused donation; nothing was consumed (Python: bt.DonationError).
class DonationError : public Error { using Error::Error; };
// A memory limit was hit (Python: bt.ResourceExhaustedError, a MemoryError).
class ResourceExhaustedError : public Error { using Error::Error; };

// Throws the exception type that matches s.code(); does nothing for OK.
void ThrowIfError(const Status& s);

template <typename T>
T ValueOrThrow(Result<T> r) {
  ThrowIfError(r.status());
  return std::move(r).value();
}

}  // namespace baton
