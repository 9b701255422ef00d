"""``bt.donate(x)``: call-site donation (DESIGN R4).

``donate(x)`` consumes ``x`` -- or every Array leaf of a pytree ``x`` -- at
once: ``x.is_deleted()`` is True for every reference, and any use of ``x``
raises ``DeletedArrayError`` saying where it was donated. It returns a
``Donated`` marker (or the pytree with markers for its Array leaves; other
leaves are kept) for the next call that takes it -- ``jit`` or
``device_put`` -- which may reuse the storage for its result. A marker that
is dropped unused frees the storage once work already enqueued on it is done.

Refused with nothing consumed: an array with live host views or DLPack
exports (``DonationError``, naming them), an array already deleted or
donated (``DeletedArrayError``, which is also a ``DonationError``), the
same array twice in one pytree (``DonationError``).
"""

from __future__ import annotations

import threading

from typing import Any

from baton import _baton, tree
from baton._baton import Array


def donate(x: Any) -> Any:
    from baton import _sharded_array

    paths, leaves, treedef = tree.paths_and_leaves(x)
    out: list[Any] = []
    taken: list[Any] = []
    seen: set[Any] = set()
    try:
        for path, leaf in zip(paths, leaves):
            if isinstance(leaf, _sharded_array.ShardedArray):
                if ("sharded", id(leaf)) in seen:
                    raise _baton.DonationError(
                        f"donate: the same sharded array appears twice in the pytree "
                        f"(again at x{tree.keystr(path)}). Nothing was consumed."
                    )
                seen.add(("sharded", id(leaf)))
                marker = _sharded_array.donate(leaf)
                taken.append(marker)
                out.append(marker)
            elif isinstance(leaf, Array):
                if leaf._id in seen:
                    raise _baton.DonationError(
                        f"donate: the same array ({leaf._describe()}) appears twice "
                        f"in the pytree (again at x{tree.keystr(path)}); an array "
                        "can be donated once. Nothing was consumed."
                    )
                seen.add(leaf._id)
                marker = _baton._donate(leaf)
                taken.append(marker)
                out.append(marker)
            else:
                out.append(leaf)
    except BaseException:
        for marker in reversed(taken):
            marker._restore()  # all or nothing
        raise
    return tree.unflatten(treedef, out)


_inlined = threading.local()


def inlined_donations() -> int:
    """How many calls this thread has inlined into a trace that asked for a
    donation (a jitted function with donate_argnums, or a donate() marker):
    a trace ignores them. shard_map's compiled body counts them
    (baton/_shard_map_compile.py): such a body runs per device instead,
    where the donation is real."""
    return getattr(_inlined, "donations", 0)


def note_inlined_donation() -> None:
    """Counts one donation a trace ignored (:func:`inlined_donations`)."""
    _inlined.donations = inlined_donations() + 1
