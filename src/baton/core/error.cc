#include "baton/core/error.h"

namespace baton {

void ThrowIfError(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk: return;
    case ErrorCode::kInvalidArgument: throw InvalidArgumentError(s);
    case ErrorCode::kIndex: throw IndexOutOfRangeError(s);
    case ErrorCode::kDeletedArray: throw DeletedArrayError(s);
    case ErrorCode::kDonation: throw DonationError(s);
    case ErrorCode::kResourceExhausted: throw ResourceExhaustedError(s);
    default: throw Error(s);
  }
}

}  // namespace baton
