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
- ``DistributedError`` (a ``RuntimeError``): ``bt.distributed`` could not
  join the processes within ``initialization_timeout`` (the message says which
  never came), or a collective failed because a peer died or hung past
  ``collective_timeout`` (it names the operation).
- ``DonationWarning``: a donated buffer that no output could use.
- ``InPlaceError`` (a ``ValueError``): ``bt.jit(fun, require_in_place=True)``
  found an update (``.at[]``, ``dynamic_update_slice``, a loop carry) that
  would copy its operand; the message names each and why.

JAX's error classes, for the ``except`` clauses of ported programs
(DESIGN 5.4); baton's messages say what was wrong and what to do:

- ``ConcretizationTypeError`` (a ``TypeError``): a traced value was used
  where a concrete one is needed (``int()``, ``float()`` of a Tracer).
- ``TracerBoolConversionError`` (a ``ConcretizationTypeError``): ``bool()``
  of a Tracer (``if x > 0:`` inside ``bt.jit``).
- ``TracerIntegerConversionError`` (a ``TypeError``): a Tracer used as a
  Python index (``__index__``).
- ``TracerArrayConversionError`` (a ``TypeError``): a Tracer converted to
  a numpy array.
- ``NonConcreteBooleanIndexError`` (an ``IndexError``; also a
  ``NotImplementedError``, which baton raised before): indexing with a
  traced boolean mask.

All but ``DonationWarning`` and ``NonConcreteBooleanIndexError`` are
created by the C++ extension, which raises them.
"""

from baton._baton import (
    ConcretizationTypeError,
    DeletedArrayDonationError,
    DeletedArrayError,
    DonationError,
    InPlaceError,
    ResourceExhaustedError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
)


class DistributedError(RuntimeError):
    """Joining or talking to the other processes of ``bt.distributed`` failed.

    Example::

        try:
            bt.distributed.initialize("127.0.0.1:1234", 2, 0, initialization_timeout=5)
        except bt.errors.DistributedError as e:
            print(e)  # ... was not set within 5000 ms (the process that sets it never arrived)
    """


class DonationWarning(UserWarning):
    """A donated argument whose buffer no output could reuse; it was freed.

    The message names each such argument (its path in the pytree, shape and
    dtype). ``bt.config.update("donation", "error")`` raises ``DonationError``
    instead.
    """


class NonConcreteBooleanIndexError(IndexError, NotImplementedError):
    """An array was indexed with a traced boolean mask inside a trace: the
    result's shape would depend on the mask's values. Use
    ``bnp.where(mask, x, other)`` or integer indices instead."""


for _cls in (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    NonConcreteBooleanIndexError,
):
    _cls.__module__ = "baton.errors"

for _cls in (
    DeletedArrayError,
    DonationError,
    InPlaceError,
    ResourceExhaustedError,
    DeletedArrayDonationError,
    DonationWarning,
):
    _cls.__module__ = "baton"
del _cls

__all__ = [
    "ConcretizationTypeError",
    "DeletedArrayDonationError",
    "DeletedArrayError",
    "DistributedError",
    "DonationError",
    "DonationWarning",
    "InPlaceError",
    "NonConcreteBooleanIndexError",
    "ResourceExhaustedError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
]


class TypePromotionError(ValueError):
    """Raised when dtypes cannot be promoted (JAX's class, for ``except``
    clauses)."""
