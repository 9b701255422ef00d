"""numpy conversion of baton arrays with bound view lifetimes (DESIGN R7).

``np.asarray(x)`` of a host-resident array (every memory kind on the CPU
backend) is a zero-copy, read-only view. Its owner (the numpy ``base``) holds
an external reference on x's storage for exactly as long as numpy keeps the
view: when the last numpy array using it is freed, the reference goes -- by
reference counting, no garbage collector involved -- and x can be donated or
overwritten again. Nothing is cached on x. (numpy takes the view through
the buffer protocol, or through ``__array__`` for bfloat16; both hold the
same way.) For memory the host cannot address, ``np.asarray`` returns a host
copy owned by the numpy array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _baton
from baton._dtypes import bfloat16


def numpy_view(x: Any, holder: str, writable: bool = False) -> np.ndarray | None:
    """A numpy array viewing x's storage whose base holds the view's hold;
    None if the host cannot address x's memory."""
    try:
        hold = _baton._acquire_host_view(x, writable, holder)
    except BufferError:
        if x.is_deleted():
            x._check_live()  # DeletedArrayError
        if _host_addressable(x):
            raise  # a conflicting view, not a copy case
        return None
    a = np.asarray(hold)
    if x.dtype == bfloat16:
        a = a.view(bfloat16)  # its base `a` keeps `hold`
    return a


def _host_addressable(x: Any) -> bool:
    return x.device._host_addressable(x.memory_kind)


def numpy_copy(x: Any) -> np.ndarray:
    """A numpy array owning a copy of x's values."""
    x._check_live()
    out = np.empty(x.shape, x.dtype)
    _baton._copy_to_numpy([x], [out])
    return out


def numpy_values(x: Any) -> np.ndarray:
    """x's values for reading right away: a view when possible, else a copy."""
    a = numpy_view(x, "host read")
    return numpy_copy(x) if a is None else a


def array_dunder(x: Any, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``Array.__array__``: numpy's protocol, with numpy 2's ``copy``."""
    if copy:
        a = numpy_copy(x)
    else:
        a = numpy_view(x, "np.asarray view")
        if a is None:
            if copy is False:
                raise ValueError(
                    "np.asarray(x, copy=False): x's memory cannot be addressed by "
                    "the host, so converting it needs a copy"
                )
            # Memory the host cannot address: a real device-to-host copy.
            from baton._config_states import check_transfer

            check_transfer(
                "device_to_host", False, f"np.asarray of {x.dtype}{list(x.shape)}"
            )
            a = numpy_copy(x)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError(
                f"np.asarray(x, dtype={np.dtype(dtype)}, copy=False): converting "
                f"from {a.dtype} needs a copy"
            )
        a = a.astype(dtype)
    return a


class HostView:
    """``with x.host_view(writable=False) as a:`` -- direct host access.

    Inside the block ``a`` is a numpy array on x's storage (zero-copy). A
    read-only view waits for x's value; it keeps x from being donated or
    overwritten until the block ends. A writable view (``pinned_host`` or
    ``unpinned_host`` arrays only; ValueError otherwise) is exclusive: it
    waits for the work already using x, no other view can be taken while it
    lives, and computations enqueued on x meanwhile wait until the block
    ends -- e.g. to load a checkpoint straight into pinned memory with
    ``f.readinto(a)`` or ``np.copyto(a, data)``.

    On exit the hold is released. Do not use ``a`` afterwards: it is made
    read-only, and while it stays alive it keeps x's storage allocated (so it
    never dangles), but its contents are no longer guaranteed -- x may be
    donated or overwritten from then on.
    """

    def __init__(self, array: Any, writable: bool) -> None:
        self._array = array
        self._writable = bool(writable)
        self._hold: Any = None
        self._ndarray: np.ndarray | None = None

    def __enter__(self) -> np.ndarray:
        if self._hold is not None:
            raise RuntimeError("this host_view() is already active")
        x = self._array
        if self._writable and x.memory_kind not in ("pinned_host", "unpinned_host"):
            # As the runtime's HostView::Acquire says it, and before the
            # binding's host-addressability check: on an accelerator, device
            # memory is also unaddressable, but what the caller must change is
            # the memory kind (ValueError, as documented, on every platform).
            x._check_live()
            raise ValueError(
                "a writable host view needs an array in pinned_host or "
                f"unpinned_host memory, but this {x.dtype}{tuple(x.shape)} is in "
                f"{x.memory_kind} memory. Move it first: "
                'device_put(x, memory_kind="pinned_host").'
            )
        holder = f"host_view(writable={self._writable})"
        hold = _baton._acquire_host_view(x, self._writable, holder)
        a = np.asarray(hold)
        if x.dtype == bfloat16:
            a = a.view(bfloat16)
        self._hold, self._ndarray = hold, a
        return a

    def __exit__(self, *exc: Any) -> None:
        a, hold = self._ndarray, self._hold
        self._ndarray = self._hold = None
        if a is not None and a.flags.writeable:
            a.flags.writeable = False
        if hold is not None:
            hold.release()


def tolist(x: Any) -> Any:
    a = numpy_values(x)
    if a.dtype == bfloat16:
        a = a.astype(np.float32)  # Python floats, as for float16
    return a.tolist()


def item(x: Any, *args: Any) -> Any:
    a = numpy_values(x)
    if a.dtype == bfloat16:
        a = a.astype(np.float32)
    return a.item(*args)
