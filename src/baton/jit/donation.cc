#include "baton/jit/donation.h"

#include "baton/core/error.h"

namespace baton {

Result<Donated> TryDonate(const Array& a) {
  if (!a.valid()) return InvalidArgument("donate: the array handle is null");
  BATON_ASSIGN_OR_RETURN(
      ArrayImpl::Taken taken,
      a.impl()->TakeExclusive({ConsumedReason::Kind::kDonated,
                               "a donate() marker that no call used yet"}));
  return Donated{a, std::move(taken)};
}

Donated donate(const Array& a) { return ValueOrThrow(TryDonate(a)); }

Array AdoptDonated(Donated& d) {
  ArrayImpl::Taken t = std::move(d.taken);
  d.taken = ArrayImpl::Taken{};
  t.buffer->ResetForNewOwner(JoinEvents(t.wait_for));
  const Array& src = d.array;
  return Array(ArrayImpl::Create(src.device(), src.memory_kind(), src.shape(),
                                 src.dtype(), std::move(t.buffer)));
}

}  // namespace baton
