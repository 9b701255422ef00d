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

std::string UnusableDonationMessage(std::string_view fn_name,
                                    const std::vector<std::string>& arguments,
                                    bool per_device, bool refused) {
  std::string msg(fn_name);
  msg += ": donated buffers that no output can reuse";
  msg += per_device
             ? " on every device (reuse needs an output of the same block "
               "size, dtype and memory kind, computed in the stage that "
               "reads the buffer last): "
             : " (reuse needs an output of the same byte size, dtype and "
               "memory kind, computed after the program's last read of the "
               "buffer): ";
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i > 0) msg += "; ";
    msg += arguments[i];
  }
  msg += refused ? ". Nothing was consumed (bt.config donation mode is "
                   "\"error\"; \"warn\" frees them after the call instead)."
                 : ". They are freed when the call is done.";
  return msg;
}

}  // namespace baton
