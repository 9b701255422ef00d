"""``bt.shard_map``: run a function on every shard, with collectives (DESIGN 5.6).

``shard_map(f, mesh=, in_specs=, out_specs=)(*args)`` places each argument
as ``NamedSharding(mesh, spec)`` (an argument already placed so is used as
it is; anything else is put there first, a copy). Then, where it can, it
compiles ``f`` once for every device of the mesh (traced on one device's
blocks, each collective a stage between compiled programs, ``axis_index``
a parameter per device; baton/_shard_map_compile.py says which bodies) and
runs that program on every device, without calling ``f`` again for the
same argument shapes.
Otherwise it calls ``f`` once per device of the mesh in this process, each
call on its own thread with that device's shards -- ordinary ``bt.Array``
values on that device, so everything ``f`` does (eager operations, jitted
functions, donation) runs on that device. Inside ``f`` the collectives of ``bt.lax`` (``psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``all_to_all``, ``ppermute``, ``axis_index``; baton/_collectives.py) combine
values across the devices of named mesh axes.

The outputs are assembled into sharded arrays as ``out_specs`` says: a
dimension an out spec splits over mesh axes is the concatenation of the
devices' blocks along those axes; a mesh axis the out spec does not name
means the value is the same on every device along it (as after a
``psum``), and each device keeps its own copy. That promise is checked as
JAX's ``check_vma`` does (baton/_shard_map_vma.py): an output varying over
an axis its out spec leaves out raises ValueError; ``check_vma=False``
(or ``check_rep=False``) skips the check.

baton adds no collectives of its own (as JAX with ``check_vma=False``):
the gradient of a replicated input inside ``f`` is this device's own; take
``pmean`` / ``psum`` of it explicitly.

If ``f`` raises on one device, the others are stopped at their next
collective and the first error is raised; a device that returns without a
collective the others wait in raises an error naming it (a compiled body
fails before anything runs). ``compiled(mapped, *args)`` says which way a
signature ran. Called inside a traced function (``bt.jit``, ``grad``,
``vmap``, a loop body), the shard_map is a vmap over the mesh axes of the
global arrays, partitioned with the rest of the program
(baton/_shard_map_trace.py). Not supported yet: a ``shard_map`` inside
another ``shard_map`` (``bt.jit(shard_map(...))`` runs the shard_map
itself).

Example::

    mesh = bt.make_mesh((4,), ("x",))
    def f(block):                         # each device's (2,) block
        return bt.lax.psum(block.sum(), "x")
    total = bt.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P())(
        np.arange(8.0, dtype=np.float32))   # 28.0 on every device
"""

from __future__ import annotations

import contextlib
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
import optree

from baton import _baton, _device_put, _shard_map_compile, _shard_map_vma, tree
from baton._baton import Array, Donated
from baton._baton import lax as _lax
from baton._config_states import check_thread_guard, guard_checked
from baton._sharded_array import ShardedArray, ShardedDonated
from baton.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, current_mesh

__all__ = ["shard_map"]


class DeviceContext:
    """What a collective needs to know on one device's thread."""

    __slots__ = ("count", "device", "exchange", "mesh", "position", "vma")

    def __init__(self, mesh: Mesh, position: dict, device: Any, exchange: Any) -> None:
        self.mesh = mesh
        self.position = position  # {axis name: index}
        self.device = device
        self.exchange = exchange
        self.count = 0  # collectives called so far on this device
        self.vma = None  # a _shard_map_vma.VmaTrace while checking out_specs


_local = threading.local()


def current_context(what: str) -> DeviceContext:
    """The shard_map device context of this thread, or a clear error."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        raise ValueError(
            f"{what}: called outside bt.shard_map; collectives combine the shards "
            "of a shard_map'ed function across mesh axes (bt.shard_map(f, mesh=, "
            "in_specs=, out_specs=))"
        )
    return ctx


def _is_spec(x: Any) -> bool:
    return isinstance(x, PartitionSpec) or x is None


class _Aborted(RuntimeError):
    """A collective stopped because another device's call failed."""


class Exchange:
    """Where the devices of one shard_map call meet for collectives.

    ``swap`` deposits this device's value for collective number ``seq`` of
    its group and returns the values of every member, in group order, once
    all have come. A failed or finished member wakes the waiters with an
    error instead of leaving them blocked."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._slots: dict = {}
        self._failed: BaseException | None = None
        self._finished: set = set()

    def swap(
        self,
        key: Any,
        members: list,
        me: int,
        value: Any,
        what: str,
        combine: Callable[[list], Any] | None = None,
    ) -> Any:
        """The members' values in order -- or, with ``combine``, what it
        returns for them, computed once by the last member to arrive (outside
        the lock: it may wait on the network) and shared by all."""
        with self._cv:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = {
                    "values": [None] * len(members),
                    "arrived": 0,
                    "read": 0,
                    "done": combine is None,
                    "result": None,
                    "what": what,
                    "by": me,
                }
            elif slot["what"] != what:
                # Another member of this group called another collective as
                # the same step (psum here, pmax there): fail them all.
                error = ValueError(
                    f"{what}: the devices of one group called different collectives "
                    f"as the same step: member {slot['by']} called {slot['what']}, "
                    f"member {me} called {what}; every device of a group must call "
                    "the same collectives in the same order"
                )
                if self._failed is None:
                    self._failed = error
                self._cv.notify_all()
                raise error
            slot["values"][me] = value
            slot["arrived"] += 1
            self._cv.notify_all()
            last = slot["arrived"] == len(members)
            while not last and (slot["arrived"] < len(members) or not slot["done"]):
                self._check(members, what)
                self._cv.wait(1.0)
        if last and combine is not None:
            try:
                result = combine(list(slot["values"]))
            except BaseException as e:
                self.fail(e)
                raise
            with self._cv:
                slot["result"], slot["done"] = result, True
                self._cv.notify_all()
        with self._cv:
            out = slot["result"] if combine is not None else list(slot["values"])
            slot["read"] += 1
            if slot["read"] == len(members):
                del self._slots[key]
            return out

    def _check(self, members: list, what: str) -> None:
        if self._failed is not None:
            raise _Aborted(
                f"{what}: another device of this shard_map failed "
                f"({type(self._failed).__name__}: {self._failed})"
            )
        gone = [m for m in members if m in self._finished]
        if gone:
            raise RuntimeError(
                f"{what}: the device at mesh position {dict(gone[0])} returned "
                "without taking part in this collective; every device of a "
                "group must call the same collectives in the same order"
            )

    def fail(self, error: BaseException) -> None:
        with self._cv:
            if self._failed is None:
                self._failed = error
            self._cv.notify_all()

    def finish(self, member: Any) -> None:
        with self._cv:
            self._finished.add(member)
            self._cv.notify_all()


_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool_size = max(n, 4)
            _pool = ThreadPoolExecutor(_pool_size, thread_name_prefix="baton-shard")
        return _pool


class _InferFromArgs:
    """``in_specs``'s default (JAX's ``jax.sharding.Infer``): take each
    argument's spec from its sharding; only on a mesh whose axes are all
    ``AxisType.Explicit``."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _InferFromArgs()
_REQUIRED = object()


def shard_map(
    f: Callable[..., Any] | None = None,
    mesh: Mesh | None = None,
    in_specs: Any = Infer,
    out_specs: Any = _REQUIRED,
    *,
    check_rep: bool = True,
    check_vma: bool | None = None,
    axis_names: Any = frozenset(),
    auto: Any = frozenset(),
) -> Any:
    """``f`` run on every shard of its arguments (see the module docstring).

    ``in_specs``: a PartitionSpec per positional argument (a pytree prefix of
    the arguments; one spec for all of them if there is one argument); a
    None entry passes that argument unchanged to every device (JAX's static
    argument), ``in_specs=None`` all of them. Left out, the specs come from
    the arguments' shardings -- only on a mesh whose axes are all
    ``AxisType.Explicit``, as in JAX. ``out_specs`` (required): the same for
    the result; a None entry matches a None output. ``mesh`` defaults to the
    current one (``bt.set_mesh`` / ``with mesh:``).

    ``check_vma`` (default True; ``check_rep`` is its older name) checks
    that every output is the same along each mesh axis its out spec leaves
    out (baton/_shard_map_vma.py), raising ValueError otherwise; False skips
    the check (and the trace it takes). ``axis_names`` must be empty or
    every mesh axis, ``auto`` empty (baton has no partially manual
    shard_map).

    Example::

        mesh = bt.make_mesh((4,), ("i",))
        f = bt.shard_map(lambda x: bt.lax.psum(x, "i"), mesh=mesh,
                         in_specs=P("i"), out_specs=P())
        f(np.arange(8.0, dtype=np.float32))   # [12., 16.]
    """
    if check_vma is None:
        check_vma = check_rep
    if f is None:
        return functools.partial(
            shard_map,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs,
            check_vma=check_vma,
            axis_names=axis_names,
            auto=auto,
        )
    if not callable(f):
        raise TypeError(f"shard_map: f must be callable, not {type(f).__name__}")
    if auto:
        raise NotImplementedError(
            "shard_map: auto axes are not supported; name every axis"
        )
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(
            f"shard_map: mesh must be a bt.sharding.Mesh, not {type(mesh).__name__}"
        )
    if out_specs is _REQUIRED:
        raise TypeError(
            "shard_map: out_specs is required (a PartitionSpec or a pytree of them)"
        )
    checks: dict = {}  # the output check's verdicts, per argument signature

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = mesh if mesh is not None else current_mesh()
        if m is None:
            raise ValueError(
                "shard_map: no mesh; pass mesh= or call it inside "
                "`with bt.set_mesh(mesh):`"
            )
        if axis_names and frozenset(axis_names) != frozenset(m.axis_names):
            raise NotImplementedError(
                f"shard_map: axis_names={set(axis_names)} is not every mesh axis "
                f"{m.axis_names}; baton has no partially manual shard_map"
            )
        if getattr(_local, "ctx", None) is not None:
            raise NotImplementedError(
                "shard_map inside another shard_map is not supported"
            )
        if _lax.is_tracing():
            # In bt.jit / grad / vmap: the body vmapped over the mesh axes,
            # partitioned with the rest of the program (_shard_map_trace).
            paths, leaves, treedef, specs = _leaf_specs(m, in_specs, args)
            return traced_runner(
                f,
                m,
                specs,
                out_specs,
                leaves,
                treedef,
                paths,
                lambda o, v: _broadcast_specs(o, v, "out_specs"),
                check_vma,
            )
        return _run(f, m, in_specs, out_specs, args, check_vma, checks)

    mapped._baton_shard_map = True
    mapped._baton_shard_map_checks = checks
    return mapped


# shard_map called in a trace: baton._shard_map_trace.run_traced, which
# registers itself here (it vmaps, a layer above; imported by baton).
traced_runner: Callable[..., Any] = None  # type: ignore[assignment]
# A top-level body the per-device compile refuses, as one partitioned
# program: baton._shard_map_trace.lower_body, registered likewise.
body_lowerer: Callable[..., Any] = None  # type: ignore[assignment]


def jit_of(mapped: Callable[..., Any], donate_nums: Any, donate_names: Any) -> Any:
    """What ``bt.jit`` of a shard_map'ed function is: the shard_map itself
    (its devices already run in parallel; jit inside ``f`` compiles). Donated
    arguments are deleted once the call has made its results (their storage
    is released then, not reused for the results)."""
    nums, names = frozenset(donate_nums), frozenset(donate_names)

    @functools.wraps(mapped)
    def call(*args: Any, **kwargs: Any) -> Any:
        out = mapped(*args, **kwargs)
        donated = [a for i, a in enumerate(args) if i in nums]
        donated += [v for k, v in kwargs.items() if k in names]
        for leaf in tree.leaves(donated):
            if isinstance(leaf, (ShardedArray, Array)):
                leaf.delete()
        return out

    call._baton_shard_map = True
    return call


def _broadcast_specs(specs: Any, value: Any, what: str) -> list:
    """One spec per leaf of ``value`` (``specs`` a pytree prefix of it; a
    None spec matches a None subtree, and a None among in_specs -- a static
    argument -- covers its whole subtree)."""
    inputs = what == "in_specs"
    try:
        full = optree.tree_broadcast_prefix(
            specs,
            value,
            is_leaf=_is_spec if inputs else _is_partition_spec,
            none_is_leaf=inputs,
            namespace=tree.NAMESPACE,
        )
    except ValueError as e:
        raise ValueError(f"shard_map: {what} do not match the structure: {e}") from None
    if isinstance(full, PartitionSpec):
        return [full]
    if inputs:
        # One spec per leaf of the value under it (a None spec: a static
        # argument, None for each of its leaves).
        out: list = []
        optree.tree_map(
            lambda spec, sub: out.extend([spec] * len(tree.leaves(sub))),
            full,
            value,
            is_leaf=_is_spec,
            none_is_leaf=True,
            namespace=tree.NAMESPACE,
        )
        return out
    return optree.tree_leaves(
        full, is_leaf=_is_partition_spec, none_is_leaf=False, namespace=tree.NAMESPACE
    )


def _is_partition_spec(x: Any) -> bool:
    return isinstance(x, PartitionSpec)


def _spec_or_replicated(spec: Any) -> PartitionSpec:
    return PartitionSpec() if spec is None else spec


def _explicit(mesh: Mesh) -> bool:
    types = getattr(mesh, "axis_types", None)
    return bool(types) and all(t is AxisType.Explicit for t in types)


def _inferred_spec(leaf: Any, mesh: Mesh, where: str) -> PartitionSpec:
    """The spec of an argument on an Explicit mesh: its sharding's."""
    s = getattr(leaf, "sharding", None)
    if isinstance(leaf, (ShardedArray, ShardedDonated)):
        if s.mesh != mesh:
            raise ValueError(
                f"shard_map: argument {where} is sharded over {s.mesh}, not the "
                f"shard_map's mesh {mesh}; bt.reshard it first"
            )
        return s.spec
    return PartitionSpec()


def _leaf_specs(mesh: Mesh, in_specs: Any, args: tuple) -> tuple:
    """(paths, leaves, treedef, specs) of the arguments: one PartitionSpec
    per leaf (None: a static leaf, passed unchanged), checked."""
    paths, leaves, treedef = tree.paths_and_leaves(args)
    explicit = _explicit(mesh)
    if in_specs is Infer:
        if not explicit:
            types = ", ".join(str(t) for t in getattr(mesh, "axis_types", ()))
            raise TypeError(
                "shard_map: in_specs must be a pytree of PartitionSpecs; it can be "
                f"left out only when every mesh axis is AxisType.Explicit (this "
                f"mesh's axes {mesh.axis_names} are {types}); pass in_specs=, or "
                "build the mesh with axis_types=(AxisType.Explicit, ...)"
            )
        specs = [
            _inferred_spec(leaf, mesh, f"args{tree.keystr(path)}")
            for path, leaf in zip(paths, leaves)
        ]
    else:
        if in_specs is None:
            specs_tree: Any = None
        elif len(args) == 1 and isinstance(in_specs, PartitionSpec):
            specs_tree = (in_specs,)
        else:
            specs_tree = tuple(in_specs) if isinstance(in_specs, list) else in_specs
            if isinstance(specs_tree, tuple) and not isinstance(
                specs_tree, PartitionSpec
            ):
                specs_tree = tuple(specs_tree)
        specs = (
            [None] * len(leaves)
            if specs_tree is None
            else _broadcast_specs(specs_tree, tuple(args), "in_specs")
        )
        if len(specs) != len(leaves):
            raise ValueError(
                f"shard_map: in_specs give {len(specs)} spec(s) for {len(leaves)} "
                "array argument(s)"
            )
        if explicit:
            for path, leaf, spec in zip(paths, leaves, specs):
                if spec is None:
                    continue
                have = _inferred_spec(leaf, mesh, f"args{tree.keystr(path)}")
                if NamedSharding(mesh, have) != NamedSharding(mesh, spec):
                    raise ValueError(
                        f"shard_map: in_specs {spec} for argument "
                        f"args{tree.keystr(path)} does not match its sharding's spec "
                        f"{have} (the mesh's axes are Explicit, so an argument is "
                        "not resharded); leave in_specs out to take them from the "
                        "arguments, or bt.reshard the argument first"
                    )
    return paths, leaves, treedef, specs


def _run(
    f: Callable[..., Any],
    mesh: Mesh,
    in_specs: Any,
    out_specs: Any,
    args: tuple,
    check_vma: bool = False,
    checks: dict | None = None,
) -> Any:
    paths, leaves, treedef, specs = _leaf_specs(mesh, in_specs, args)
    placed = []
    for path, leaf, spec in zip(paths, leaves, specs):
        if spec is None:  # static: passed unchanged
            placed.append(leaf)
            continue
        sharding = NamedSharding(mesh, spec)
        if (
            isinstance(leaf, (ShardedArray, ShardedDonated))
            and leaf.sharding == sharding
        ):
            placed.append(leaf)
        else:
            if isinstance(leaf, ShardedDonated):
                raise ValueError(
                    f"shard_map: the donated argument args{tree.keystr(path)} has "
                    f"sharding {leaf.sharding}, not {sharding} from in_specs; donate "
                    "an array placed as in_specs says"
                )
            placed.append(_device_put.device_put(leaf, sharding))
    devices = [
        (d, pos)
        for d, pos in mesh.device_positions()
        if getattr(d, "process_index", 0) == _process_index()
    ]
    if len({getattr(d, "process_index", 0) for d, _ in mesh.device_positions()}) > 1:
        # A multi-process operation: bt.thread_guard applies, here on the
        # caller's thread (the device bodies run on pool threads).
        check_thread_guard("bt.shard_map over a mesh of several processes")
    by_value = False
    collectives = None  # the check's trace's, when it ran
    if check_vma and not _promises_nothing(mesh, out_specs):
        # JAX's check_vma, before anything runs (nothing is consumed when
        # it fails); a body that cannot be traced is checked on its values.
        traced = _traced_vmas(
            f,
            mesh,
            placed,
            specs,
            treedef,
            devices[0],
            checks if checks is not None else {},
        )
        if traced is None:
            by_value = True
        else:
            out_def, vmas, collectives = traced
            _raise_if_varying(
                f, mesh, out_specs, tree.unflatten(out_def, [0] * len(vmas)), vmas
            )
    if _compiles(specs, False):
        # A body the output check could not trace (a collective inside a
        # grad of it) may still be one partitioned program.
        body = _compiled_body(
            f, mesh, placed, specs, treedef, devices, checks, collectives, out_specs,
            lowered_only=by_value, check_vma=check_vma,
        )
        if body is not None and getattr(body, "global_outputs", False):
            return body.run(placed)
        if body is not None:
            return _assemble(
                mesh, out_specs, body.run(placed, devices), [d for d, _ in devices]
            )
    exchange = Exchange()

    def local_value(p: Any, spec: Any, j: int, device: Any) -> Any:
        if spec is not None:
            return p._shards[j].data
        if isinstance(p, Array) and p.device != device:
            return _device_put.device_put(p, device)  # a static array, here
        return p

    def body(j: int) -> Any:
        device, position = devices[j]
        local = [local_value(p, s, j, device) for p, s in zip(placed, specs)]
        a = tree.unflatten(treedef, local)
        _local.ctx = DeviceContext(mesh, position, device, exchange)
        # Arrays the body creates are that device's (JAX: per-shard values).
        previous = _baton._set_thread_default_device(device)
        try:
            with guard_checked():
                return f(*a)
        except BaseException as e:
            exchange.fail(e)
            raise
        finally:
            _baton._set_thread_default_device(previous)
            _local.ctx = None
            exchange.finish(tuple(sorted(position.items())))

    if len(devices) == 1:
        outs = [body(0)]
    else:
        futures = [_executor(len(devices)).submit(body, j) for j in range(len(devices))]
        outs, errors = [], []
        for fut in futures:
            try:
                outs.append(fut.result())
            except BaseException as e:
                errors.append(e)
        if errors:  # the original error, not its echoes on the other devices
            raise next((e for e in errors if not isinstance(e, _Aborted)), errors[0])
    if by_value:
        _raise_if_varying(
            f,
            mesh,
            out_specs,
            outs[0],
            _vmas_by_value(mesh, outs, [p for _, p in devices]),
            ran=True,
        )
    return _assemble(mesh, out_specs, outs, [d for d, _ in devices])


# Whether bodies that can be are compiled once for every device
# (baton/_shard_map_compile.py); False runs every body per device on
# threads, as bodies that cannot be compiled run.
compile_bodies = True


def _compiles(specs: list, by_value: bool) -> bool:
    """Whether a compiled body is tried: every argument has a spec (and the
    output check could trace the body)."""
    return compile_bodies and not by_value and all(s is not None for s in specs)


def _compiled_body(
    f: Callable[..., Any],
    mesh: Mesh,
    placed: list,
    specs: list,
    treedef: Any,
    devices: list,
    checks: dict | None,
    collectives: list | None,
    out_specs: Any = None,
    lowered_only: bool = False,
    check_vma: bool = True,
) -> Any:
    """The body compiled for this signature (cached in ``checks``), or None
    when it cannot be (it then runs per device). ``collectives``: what the
    output check's trace recorded, if it ran (not traced again). A body
    the per-device compile refuses may still be one partitioned program (a
    ``LoweredBody``, whose ``run`` gives the global outputs);
    ``lowered_only``: only that is tried (the output check could not trace
    the body per device)."""
    key: Any = (
        "compiled",
        mesh,
        _shapes(placed),
        tuple(specs),
        treedef,
    )
    cache = checks if checks is not None else {}
    if key in cache:
        return cache[key]
    try:
        if lowered_only:
            raise _shard_map_compile.NotCompilable("the output check could not trace it")
        body = _shard_map_compile.compile_body(
            f, mesh, placed, treedef, _tracing(mesh, devices[0]), devices, collectives
        )
    except _shard_map_compile.NotCompilable:
        # The body vmapped over the mesh axes, partitioned as jit partitions
        # (baton/_shard_map_trace.py); on a mesh spanning processes too,
        # whose stages then exchange through the bt.distributed group.
        body = body_lowerer(
            f,
            mesh,
            placed,
            specs,
            treedef,
            out_specs,
            lambda o, v: _broadcast_specs(o, v, "out_specs"),
            check_vma,
        )
    cache[key] = body
    return body


def compiled(mapped: Callable[..., Any], *args: Any) -> bool | None:
    """Whether ``mapped`` (a ``bt.shard_map`` function) runs ``args``'s
    signature as one compiled program (True) or per device on threads
    (False); None before that signature was called."""
    for key, body in getattr(mapped, "_baton_shard_map_checks", {}).items():
        if isinstance(key, tuple) and key and key[0] == "compiled":
            if key[2] == _shapes(tree.leaves(args)):
                return body is not None
    return None


def _shapes(leaves: list) -> tuple:
    """The (shape, dtype name) of each leaf: the part of a compiled body's
    cache key that :func:`compiled` is asked about."""
    return tuple((tuple(a.shape), np.dtype(a.dtype).name) for a in leaves)


def _vmas_by_value(mesh: Mesh, outs: list, positions: list) -> list[frozenset]:
    """Each output's vma from its values: the mesh axes along which two
    devices hold different values (bitwise; NaNs equal)."""
    columns = [tree.leaves(o) for o in outs]
    result = []
    for n in range(len(columns[0])):
        host = [np.asarray(col[n]) for col in columns]
        varying = set()
        for a in mesh.axis_names:
            first: dict = {}
            for pos, h in zip(positions, host):
                k = tuple(sorted((b, i) for b, i in pos.items() if b != a))
                if k not in first:
                    first[k] = h
                elif not np.array_equal(first[k], h, equal_nan=h.dtype.kind in "fc"):
                    varying.add(a)
                    break
        result.append(frozenset(varying))
    return result


def _named_axes(spec: PartitionSpec) -> set:
    return {a for d in range(len(spec)) for a in spec.axes_of(d)}


def _promises_nothing(mesh: Mesh, out_specs: Any) -> bool:
    """Whether every out spec names every mesh axis (nothing to check)."""
    axes = set(mesh.axis_names)
    leaves = optree.tree_leaves(
        out_specs,
        is_leaf=_is_partition_spec,
        none_is_leaf=False,
        namespace=tree.NAMESPACE,
    )
    return all(isinstance(s, PartitionSpec) and _named_axes(s) >= axes for s in leaves)


def _tracing(mesh: Mesh, device_position: tuple) -> Callable[[Any], Any]:
    """A context manager factory: ``install(trace)`` puts a shard_map context
    of ``device_position`` ((device, position)) in trace mode on this thread
    (``ctx.vma = trace``: collectives stand in for their results)."""
    device, position = device_position

    @contextlib.contextmanager
    def install(trace: Any) -> Any:
        ctx = DeviceContext(mesh, position, device, None)
        ctx.vma = trace
        _local.ctx = ctx
        try:
            yield
        finally:
            _local.ctx = None

    return install


def _traced_vmas(
    f: Callable[..., Any],
    mesh: Mesh,
    placed: list,
    specs: list,
    treedef: Any,
    device0: tuple,
    checks: dict,
) -> Any:
    """(output treedef, each output leaf's vma, the collectives it called as
    _shard_map_compile.recorded gives them) from tracing the body once
    (baton/_shard_map_vma.py), cached in ``checks`` per argument signature;
    None when the body cannot be traced."""
    dynamic = [i for i, s in enumerate(specs) if s is not None]
    in_avals = [
        (
            tuple(placed[i]._shards[0].data.shape),
            placed[i]._shards[0].data.dtype.name,
            False,
            None,
        )
        for i in dynamic
    ]
    key: Any = (mesh, tuple(in_avals), tuple(specs), treedef)
    try:
        if key in checks:
            return checks[key]
    except TypeError:  # an unhashable static argument
        key = None
    in_vmas = [_named_axes(specs[i]) for i in dynamic]

    def rebuild(tracers: list) -> tuple:
        full = list(placed)
        for i, t in zip(dynamic, tracers):
            full[i] = t
        return tree.unflatten(treedef, full)

    install = _tracing(mesh, device0)
    values = [placed[i]._shards[0].data for i in dynamic]
    try:
        out_def, vmas, records = _shard_map_vma.trace_collectives(
            lambda *a: f(*a), in_avals, in_vmas, rebuild, install, 8, values
        )
        verdict = (out_def, vmas, _shard_map_compile.recorded(records))
    except Exception:
        # The body cannot be traced (it reads a collective's value on the
        # host ...): the caller compares the devices' values instead.
        return None
    if key is not None:
        checks[key] = verdict
    return verdict


def _raise_if_varying(
    f: Callable[..., Any],
    mesh: Mesh,
    out_specs: Any,
    out: Any,
    vmas: list,
    ran: bool = False,
) -> None:
    """ValueError naming each output of ``out`` (a pytree like the body's
    result) that varies over a mesh axis its out spec leaves out."""
    out_spec_list = _broadcast_specs(out_specs, out, "out_specs")
    paths = [tree.keystr(p) for p in tree.paths_and_leaves(out)[0]]
    problems = []
    for n, (spec, vma) in enumerate(zip(out_spec_list, vmas)):
        missing = [
            a for a in mesh.axis_names if a in vma and a not in _named_axes(spec)
        ]
        if missing:
            problems.append((n, paths[n] if n < len(paths) else "", spec, vma, missing))
    if problems:
        name = getattr(f, "__name__", repr(f))
        lines = [
            f"  output {n} (out{path}) has out spec {spec}, which promises it is the "
            f"same along mesh axis {', '.join(repr(a) for a in missing)}, but it "
            f"varies over {sorted(vma)}"
            for n, path, spec, vma, missing in problems
        ]
        raise ValueError(
            f"shard_map applied to {name!r} was given out_specs that need "
            f"replication which the function does not guarantee (mesh axes "
            f"{mesh.axis_names}, sizes {mesh.axis_sizes}):\n"
            + "\n".join(lines)
            + "\nEither reduce the value over those axes inside the function "
            "(bt.lax.psum / pmean / pmax / pmin), or name the axes in its out "
            "spec (e.g. P('i')) to concatenate the devices' values; if the value "
            "is the same on every device anyway, pass check_vma=False (or "
            "check_rep=False) to skip this check." + ("" if ran else " Nothing ran.")
        )


def _process_index() -> int:
    from baton import _device_queries

    return _device_queries.process_index()


def _assemble(mesh: Mesh, out_specs: Any, outs: list, devices: list) -> Any:
    flat0, out_def = tree.flatten(outs[0])
    columns = [tree.flatten(o) for o in outs]
    for j, (_, d) in enumerate(columns):
        if d != out_def:
            raise ValueError(
                f"shard_map: the function returned {d} on {devices[j]} but {out_def} "
                f"on {devices[0]}; every device must return the same structure"
            )
    specs = _broadcast_specs(out_specs, outs[0], "out_specs")
    if len(specs) != len(flat0):
        raise ValueError(
            f"shard_map: out_specs give {len(specs)} spec(s) for {len(flat0)} outputs"
        )
    result = []
    for n, spec in enumerate(specs):
        datas = []
        for j, (col, _) in enumerate(columns):
            v = col[n]
            if not isinstance(v, Array):
                if isinstance(v, Donated):
                    raise ValueError(
                        "shard_map: the function returned a donate() marker"
                    )
                v = _device_put.device_put(v, devices[j])
            elif v.device != devices[j]:
                # A closed-over array (or one put elsewhere): copied here, as
                # JAX's shard_map broadcasts a constant output.
                v = _device_put.device_put(v, devices[j])
            datas.append(v)
        shapes = {tuple(a.shape) for a in datas}
        if len(shapes) != 1:
            raise ValueError(
                f"shard_map: output {n} has different shapes on different devices: "
                f"{sorted(shapes)}"
            )
        sharding = NamedSharding(mesh, _spec_or_replicated(spec))
        local = datas[0].shape
        if len(sharding.spec) > len(local):
            raise ValueError(
                f"shard_map: out spec {sharding.spec} for output {n} has more entries "
                f"than its rank {len(local)}"
            )
        gshape = tuple(
            s * sharding.split_count(d) if d < len(sharding.spec) else s
            for d, s in enumerate(local)
        )
        result.append(ShardedArray.from_shards(gshape, sharding, datas))
    return tree.unflatten(out_def, result)
