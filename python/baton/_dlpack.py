"""``bt.from_dlpack``: arrays from other libraries through DLPack."""

from __future__ import annotations

from typing import Any

from baton import _baton
from baton._baton import Array, Device
from baton._device_put import check_device as _check_device

# kDLCPU and kDLCUDAHost: memory the host can read directly.
_HOST_DEVICE_TYPES = (1, 3)


def from_dlpack(
    x: Any, /, *, device: Device | None = None, copy: bool | None = None
) -> Array:
    """A baton Array with the values of ``x`` (anything with ``__dlpack__``,
    e.g. a numpy array, or a DLPack capsule).

    Like the array API: host memory that is C-contiguous and 16-byte aligned
    is shared (borrowed zero-copy, kept alive through the producer until the
    baton array and its work are gone, and not counted in ``memory_stats()``);
    otherwise -- or with ``copy=True`` -- the values are copied into baton
    memory (from a producer on an accelerator, through a host copy it is asked
    for with ``dl_device=(kDLCPU, 0)``). ``copy=False`` raises BufferError
    when sharing is impossible. Shared memory changes if the producer writes
    to it.
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
        dl_type = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        if dl_type not in _HOST_DEVICE_TYPES:
            # Memory this backend cannot read: ask the producer for a host copy.
            if copy is False:
                raise BufferError(
                    "from_dlpack(copy=False): the producer's memory is on DLPack "
                    f"device type {dl_type}, which the host cannot address"
                )
            capsule = x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=True)
        else:
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
