"""``bt.from_dlpack``: arrays from other libraries through DLPack."""

from __future__ import annotations

from typing import Any

from baton import _baton
from baton._baton import Array, Device
from baton._transfer import _check_device


def from_dlpack(
    x: Any, /, *, device: Device | None = None, copy: bool | None = None
) -> Array:
    """A baton Array with the values of ``x`` (anything with ``__dlpack__``,
    e.g. a numpy array, or a DLPack capsule).

    Like the array API: host memory that is C-contiguous and 16-byte aligned
    is shared (borrowed zero-copy, kept alive through the producer until the
    baton array and its work are gone, and not counted in ``memory_stats()``);
    otherwise -- or with ``copy=True`` -- the values are copied into baton
    memory. ``copy=False`` raises BufferError when sharing is impossible.
    Shared memory changes if the producer writes to it.
    """
    _check_device(device)
    if isinstance(x, Array):
        x._check_live()
        moves = device is not None and device != x.device
        if copy or moves:
            if copy is False:
                raise BufferError("from_dlpack(copy=False): x is on another device")
            return _baton._copy_array(x, device or x.device, x.memory_kind)
        return x
    if hasattr(x, "__dlpack__"):
        try:
            capsule = x.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer without the versioned protocol
            capsule = x.__dlpack__()
    elif type(x).__name__ == "PyCapsule":
        capsule = x
    else:
        raise TypeError(
            f"from_dlpack: {type(x).__name__} does not support DLPack (__dlpack__)"
        )
    return _baton._from_dlpack_capsule(capsule, device, copy)
