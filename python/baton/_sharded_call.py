"""jit of sharded arguments (DESIGN 5.6, issue 37).

When a jitted function (or an eager operation, which runs through jit) gets
a :class:`~baton._sharded_array.ShardedArray` argument, the C++ call path
(python/src/jit.cc) sees its type among the sharded types and hands the
call to :func:`call` here. Every such call is partitioned over the mesh of
its sharded arguments and run by one compiled SPMD executable on every
device at once (:mod:`baton._partitioned_call`, jit/spmd_executable.h): an
elementwise program is one compute stage on each device's blocks, anything
else gets the collectives it needs. This module splits the call into
leaves and takes the donations first, all or nothing: donated sharded
arguments are written over by the stage that reads them last (R4 per
block); donating an unsharded array, read whole on every device, raises
``DonationError`` and consumes nothing.
"""

from __future__ import annotations

from typing import Any

from baton import _partitioned_call, _sharded_array, tree
from baton._baton import Array, Donated
from baton._sharded_array import ShardedArray, ShardedDonated, is_sharded
from baton.errors import DonationError


def _split(jitted: Any, args: tuple, kwargs: dict) -> tuple[list, Any, list]:
    """The dynamic leaves of a call, a function rebuilding the call from new
    leaves, and their names."""
    static_nums, static_names = jitted._static_nums, jitted._static_names
    dyn_args = [None if i in static_nums else a for i, a in enumerate(args)]
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
    paths, leaves, treedef = tree.paths_and_leaves((dyn_args, dyn_kwargs))

    def rebuild(new_leaves: list) -> tuple[tuple, dict]:
        a, k = tree.unflatten(treedef, new_leaves)
        a = tuple(args[i] if i in static_nums else v for i, v in enumerate(a))
        k = dict(k)
        k.update({n: kwargs[n] for n in kwargs if n in static_names})
        return a, k

    return leaves, rebuild, _Names(paths)


class _Names:
    """The leaves' names (``keystr`` of their paths) for messages, made
    when one is asked for: a call that raises nothing prints none."""

    __slots__ = ("_paths",)

    def __init__(self, paths: list) -> None:
        self._paths = paths

    def __getitem__(self, i: int) -> str:
        return tree.keystr(self._paths[i])

    def __len__(self) -> int:
        return len(self._paths)


def _give_back(leaves: list) -> None:
    """Gives back the storage of every donate() marker among ``leaves`` --
    the caller's (bt.donate) and those taken for donated positions -- that
    no device's call used: a refused or failed call consumes nothing it did
    not run on, as for a single-device call."""
    for leaf in leaves:
        if isinstance(leaf, ShardedDonated):
            for s in leaf._shards:
                if not s.data.used:
                    s.data._restore()
        elif isinstance(leaf, Donated) and not leaf.used:
            leaf._restore()


def call(jitted: Any, args: tuple, kwargs: dict) -> Any:
    """Runs ``jitted`` on every shard of its sharded arguments."""
    leaves, rebuild, names = _split(jitted, args, kwargs)
    try:
        return _call(jitted, args, kwargs, leaves, rebuild, names)
    except BaseException:
        _give_back(leaves)  # _take_donations put its markers into `leaves`
        raise


def _call(
    jitted: Any, args: tuple, kwargs: dict, leaves: list, rebuild: Any, names: list
) -> Any:
    sharded = [i for i, leaf in enumerate(leaves) if is_sharded(leaf)]
    for i in sharded:
        if isinstance(leaves[i], ShardedArray):
            leaves[i]._check_live()
    _refuse_unsharded_donation(jitted, args, kwargs, leaves, names, sharded)
    _take_donations(jitted, args, kwargs, leaves, names, sharded)
    # A failure before the call spent the markers: call() gives them back.
    return _partitioned_call.call(jitted, kwargs, leaves, rebuild, names)


def _refuse_unsharded_donation(
    jitted: Any, args: tuple, kwargs: dict, leaves: list, names: list, sharded: list
) -> None:
    """DonationError, nothing consumed, for a donated unsharded array in a
    call that is partitioned: it is read whole on every device (copied to
    each), so no device's output could take its storage."""
    donated = _donated_leaves(jitted, args, kwargs)
    for i, leaf in enumerate(leaves):
        if i in sharded:
            continue
        if isinstance(leaf, Donated) or (i in donated and isinstance(leaf, Array)):
            raise DonationError(
                f"{getattr(jitted, '__name__', 'jit')}: argument {names[i]} is an "
                f"unsharded array donated to a program of sharded arguments, "
                f"partitioned over the mesh; it is read whole on every "
                "device, so no output can reuse its storage. Put it on the mesh "
                "(bt.device_put(x, NamedSharding(mesh, P(...)))) to donate it, or "
                "pass it undonated. Nothing was consumed."
            )


def _donated_positions(jitted: Any, args: tuple, kwargs: dict) -> tuple[set, set]:
    """The positional indices and keyword names of ``jitted``'s donated
    arguments in this call (an argnum also covers the argument passed by
    keyword, an argname the argument passed by position)."""
    nums, names = set(jitted._donate_nums), set(jitted._donate_names)
    params = jitted._param_names
    for i in list(nums):
        if i < len(params):
            names.add(params[i])
    for n in list(names):
        if n in params:
            nums.add(params.index(n))
    return {i for i in nums if i < len(args)}, {n for n in names if n in kwargs}


def _take_donations(
    jitted: Any, args: tuple, kwargs: dict, leaves: list, names: list, sharded: list
) -> list:
    """Donates every shard of every sharded argument in a donated position,
    all or nothing, before any shard runs: a refusal (a host view on one
    shard, a deleted one) then consumes nothing, where running the devices'
    calls one by one consumed the shards before the refused one. Replaces
    those leaves by their markers (ShardedDonated) and returns the markers."""
    donated_leaves = _donated_leaves(jitted, args, kwargs)
    if not donated_leaves:
        return []
    _refuse_aliased_donations(jitted, leaves, names, sharded, donated_leaves)
    taken: list = []
    try:
        for i in sharded:
            if i in donated_leaves and isinstance(leaves[i], ShardedArray):
                try:
                    marker = _sharded_array.donate(leaves[i])
                except DonationError as e:
                    raise DonationError(
                        f"{getattr(jitted, '__name__', 'jit')}: cannot donate "
                        f"argument {names[i]} (every shard is donated before any "
                        f"device runs): {e}"
                    ) from None
                taken.append(marker)
                leaves[i] = marker
    except BaseException:
        for marker in reversed(taken):
            marker._restore()
        raise
    return taken


def _donated_leaves(jitted: Any, args: tuple, kwargs: dict) -> set:
    """The indices of the flattened leaves in donated positions
    (donate_argnums / donate_argnames) of this call."""
    donated_nums, donated_names = _donated_positions(jitted, args, kwargs)
    donated_leaves: set = set()
    if not donated_nums and not donated_names:
        return donated_leaves
    position = 0
    for i, a in enumerate(args):
        n = 0 if i in jitted._static_nums else len(tree.leaves(a))
        if i in donated_nums:
            donated_leaves.update(range(position, position + n))
        position += n
    for k in sorted(kwargs):  # the order tree.flatten gives a dict's keys
        if k in jitted._static_names:
            continue
        n = len(tree.leaves(kwargs[k]))
        if k in donated_names:
            donated_leaves.update(range(position, position + n))
        position += n
    return donated_leaves


def _refuse_aliased_donations(
    jitted: Any, leaves: list, names: list, sharded: list, donated_leaves: set
) -> None:
    """DonationError, as for a single-device call, when a sharded array is
    donated twice or donated and also passed undonated (else the first
    device's call would find the shard consumed and say so misleadingly)."""
    name = getattr(jitted, "__name__", "jit")
    donated_at: dict = {}
    for i in sharded:
        if i in donated_leaves and isinstance(leaves[i], ShardedArray):
            for s in leaves[i]._shards:
                j = donated_at.setdefault(s.data._id, i)
                if j != i:
                    raise DonationError(
                        f"{name}: argument {names[i]} is donated twice (also as "
                        f"{names[j]}); an array can be donated once. Nothing was "
                        "consumed."
                    )
    for i in sharded:
        if i not in donated_leaves and isinstance(leaves[i], ShardedArray):
            for s in leaves[i]._shards:
                j = donated_at.get(s.data._id)
                if j is not None:
                    raise DonationError(
                        f"{name}: argument {names[j]} is donated and also passed "
                        f"undonated as {names[i]}. A donated buffer is overwritten "
                        "by the call, so it cannot be read elsewhere in it. Pass a "
                        "copy. Nothing was consumed."
                    )
