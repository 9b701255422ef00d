#include "baton/core/status.h"

namespace baton {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kIndex: return "INDEX";
    case ErrorCode::kDeletedArray: return "DELETED_ARRAY";
    case ErrorCode::kDonation: return "DONATION";
    case ErrorCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case ErrorCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case ErrorCode::kWouldDeadlock: return "WOULD_DEADLOCK";
    case ErrorCode::kUnimplemented: return "UNIMPLEMENTED";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(error_code_name(code_)) + ": " + message_;
}

}  // namespace baton
