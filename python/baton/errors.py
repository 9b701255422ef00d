"""baton's exceptions and warnings (DESIGN section 3, "Errors").

- ``DeletedArrayError`` (a ``RuntimeError``): a deleted, donated or overwritten
  array was used. The message says how it was consumed -- "deleted",
  "donated to <function>", "overwritten by device_put(into=...)" -- and gives
  its shape and dtype.
- ``DonationError`` (a ``ValueError``): a donation or in-place overwrite was
  refused (live host views, which the message names; the same array twice).
  Nothing was consumed.
- ``ResourceExhaustedError`` (a ``MemoryError``): a memory space ran out or hit
  its limit; the message lists the largest live arrays. Nothing was allocated.
- ``DonationWarning``: a donated buffer that no output could use.

The first three are created by the C++ extension, which raises them.
"""

from baton._baton import (
    DeletedArrayDonationError,
    DeletedArrayError,
    DonationError,
    ResourceExhaustedError,
)


class DonationWarning(UserWarning):
    """A donated argument whose buffer no output could reuse; it was freed.

    The message names each such argument (its path in the pytree, shape and
    dtype). ``bt.config.update("donation", "error")`` raises ``DonationError``
    instead.
    """


for _cls in (
    DeletedArrayError,
    DonationError,
    ResourceExhaustedError,
    DeletedArrayDonationError,
    DonationWarning,
):
    _cls.__module__ = "baton"
del _cls

__all__ = [
    "DeletedArrayDonationError",
    "DeletedArrayError",
    "DonationError",
    "DonationWarning",
    "ResourceExhaustedError",
]
