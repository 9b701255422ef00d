"""Several baton processes working together (DESIGN 5.6), over Gloo's TCP
transport or, in a job started by ``mpirun``, over MPI.

Every process calls :func:`initialize` with the same ``coordinator_address``
(``host:port``; process 0 serves a small rendezvous store there) and
``num_processes``, and its own ``process_id``; then ``bt.process_index()`` and
``bt.process_count()`` say where it stands. :func:`shutdown` leaves the group.

The host-level collectives ``_allreduce``, ``_allgather``, ``_broadcast`` and
``_barrier`` (private: for ``shard_map``'s collectives) work on numpy arrays.
Over Gloo each is bounded by ``collective_timeout``: a peer that died or
hangs raises :class:`baton.errors.DistributedError` naming the operation,
never a hang (under ``mpirun``, a dead process ends the job).

``tools/launch_processes.py -n 4 -- python3 script.py`` starts N processes
with the environment variables below set; ``mpirun -n 4 python3 script.py``
starts an MPI job, which ``initialize()`` joins over MPI.

Example::

    import baton as bt
    bt.distributed.initialize("127.0.0.1:12345", num_processes=2, process_id=0)
    print(bt.process_index(), bt.process_count())  # 0 2
    bt.distributed.shutdown()
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from baton._config_states import check_thread_guard
from baton.errors import DistributedError

__all__ = [
    "available",
    "backend",
    "device_collectives",
    "initialize",
    "is_initialized",
    "shutdown",
]

_ENV_ADDRESS = "BATON_COORDINATOR_ADDRESS"
_ENV_COUNT = "BATON_NUM_PROCESSES"
_ENV_ID = "BATON_PROCESS_ID"
_REDUCE_DTYPES = ("float32", "float64", "int32", "int64")

# The runtime keeps process counts and ids as C ints, and timeouts in
# milliseconds as 64-bit integers (a year is far beyond any useful wait).
_MAX_PROCESSES = 2**31 - 1
_MAX_TIMEOUT_S = 365 * 24 * 3600.0

_group: Any = None  # the _baton._ProcessGroup of this process, once initialized
# Its _baton._NcclExchange when blocks move between GPUs through NCCL
# (device_collectives), else None; and what device_collectives() says.
_exchange: Any = None
_exchange_note: str | None = None
_single = False  # initialized with num_processes == 1 (no group, no network)
# One collective at a time: every process must issue them in the same order,
# and the group's message tags are taken in call order.
_lock = threading.Lock()


def _int_arg(name: str, value: Any, env: str) -> int:
    if value is None:
        text = os.environ.get(env)
        if text is None:
            raise ValueError(
                f"initialize: {name} was not given and ${env} is not set; pass {name}=... "
                f"or set {env}"
            )
        try:
            return int(text)
        except ValueError:
            raise ValueError(
                f"initialize: ${env} is {text!r}, not an integer"
            ) from None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"initialize: {name} must be an int, got {type(value).__name__}"
        )
    return int(value)


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: Any = None,
    initialization_timeout: float = 60,
    *,
    collective_timeout: float = 60,
    interface_address: str = "127.0.0.1",
    backend: str | None = None,
    device_collectives: str = "auto",
) -> None:
    """Joins this process to a group of ``num_processes`` baton processes.

    Two engines carry the collectives (``backend``):

    - ``"gloo"``: Gloo over TCP. Arguments left None come from
      ``$BATON_COORDINATOR_ADDRESS``, ``$BATON_NUM_PROCESSES`` and
      ``$BATON_PROCESS_ID``. Process 0 serves the rendezvous at
      ``coordinator_address`` (``host:port``). Blocks until every process has
      arrived or ``initialization_timeout`` seconds have passed (then raises
      :class:`~baton.errors.DistributedError` saying which process never
      came). ``collective_timeout`` (seconds) bounds each collective.
    - ``"mpi"``: the MPI job this process was started in by ``mpirun``; the
      process count and index are MPI's (``num_processes``/``process_id``,
      when given, must agree). MPI has no per-collective timeout: when a
      process dies, ``mpirun`` ends the job.

    ``backend=None`` chooses ``"mpi"`` when the process was started by
    ``mpirun`` (``$OMPI_COMM_WORLD_SIZE`` or ``$PMI_SIZE`` is set) and no
    coordinator address is given, ``"gloo"`` otherwise.
    ``device_collectives`` says how partitioned calls (``jit`` of sharded
    arrays, ``shard_map``) move blocks between processes' devices:

    - ``"nccl"``: through NCCL, GPU memory to GPU memory on the compute
      stream; every process must have exactly one CUDA device (one process
      per GPU: ``CUDA_VISIBLE_DEVICES``) and NCCL must load, else every
      process raises :class:`~baton.errors.DistributedError` saying which
      cannot and why.
    - ``"host"``: through host copies and the group's all-gather (Gloo or
      MPI); every platform.
    - ``"auto"`` (default): NCCL when every process can use it, else host.

    :func:`device_collectives` says which was chosen and why.
    ``local_device_ids`` is accepted for JAX's signature; baton's devices of
    a process are all its own. Calling it twice without :func:`shutdown` is
    an error. With Gloo and ``num_processes == 1`` nothing is connected.

    Example::

        bt.distributed.initialize("10.0.0.1:1234", num_processes=4, process_id=2)
        # or, in a script started by `mpirun -n 4 python3 script.py`:
        bt.distributed.initialize()
    """
    global _single
    if is_initialized():
        raise RuntimeError(
            "bt.distributed.initialize was already called in this process; "
            "call bt.distributed.shutdown() first to join another group"
        )
    for name, t in (
        ("initialization_timeout", initialization_timeout),
        ("collective_timeout", collective_timeout),
    ):
        number = (int, float, np.integer, np.floating)
        if isinstance(t, bool) or not isinstance(t, number):
            raise TypeError(
                f"initialize: {name} must be a number of seconds, got "
                f"{type(t).__name__}"
            )
        if not 0 < t <= _MAX_TIMEOUT_S:
            raise ValueError(
                f"initialize: {name} is {t!r}; give a number of seconds in "
                f"(0, {_MAX_TIMEOUT_S:g}]"
            )
    # Given counts and ids are checked before any engine is touched (the
    # runtime keeps them as C ints).
    if num_processes is not None:
        n = _int_arg("num_processes", num_processes, _ENV_COUNT)
        if not 1 <= n <= _MAX_PROCESSES:
            raise ValueError(
                f"initialize: num_processes is {n}; it must be in [1, {_MAX_PROCESSES}]"
            )
    if process_id is not None:
        pid = _int_arg("process_id", process_id, _ENV_ID)
        if not 0 <= pid < _MAX_PROCESSES:
            raise ValueError(
                f"initialize: process_id is {pid}; it must be in [0, num_processes)"
            )
    if not isinstance(interface_address, str):
        raise TypeError(
            "initialize: interface_address must be an IP address str such as "
            f"'127.0.0.1', got {type(interface_address).__name__}"
        )
    if device_collectives not in ("auto", "nccl", "host"):
        raise ValueError(
            f"initialize: device_collectives is {device_collectives!r}; use 'auto', "
            "'nccl' or 'host'"
        )
    if backend is None:
        by_mpirun = any(v in os.environ for v in _ENV_MPI_SIZE)
        given = coordinator_address is not None or _ENV_ADDRESS in os.environ
        backend = "mpi" if by_mpirun and not given else "gloo"
    if backend == "mpi":
        group = _connect_mpi(num_processes, process_id)
    elif backend == "gloo":
        group = _connect_gloo(
            coordinator_address,
            num_processes,
            process_id,
            initialization_timeout,
            collective_timeout,
            interface_address,
        )
    else:
        raise ValueError(
            f"initialize: backend is {backend!r}; use 'gloo', 'mpi' or None (choose)"
        )
    if group is None:
        _single = True
        return
    _join(group)
    try:
        _connect_exchange(device_collectives)
    except BaseException:
        shutdown()
        raise


# Set by mpirun (Open MPI; MPICH's and Slurm's PMI) in the processes it starts.
_ENV_MPI_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


def _connect_gloo(
    coordinator_address: Any,
    num_processes: Any,
    process_id: Any,
    initialization_timeout: float,
    collective_timeout: float,
    interface_address: str,
) -> Any:
    """A Gloo group (None for a group of one: nothing to connect)."""
    n = _int_arg("num_processes", num_processes, _ENV_COUNT)
    if not 1 <= n <= _MAX_PROCESSES:
        raise ValueError(
            f"initialize: num_processes is {n}; it must be in [1, {_MAX_PROCESSES}]"
        )
    pid = (
        _int_arg("process_id", process_id, _ENV_ID)
        if n > 1 or process_id is not None
        else 0
    )
    if not 0 <= pid < n:
        raise ValueError(
            f"initialize: process_id is {pid}; it must be in [0, num_processes={n})"
        )
    if n == 1:
        return None
    address = (
        coordinator_address
        if coordinator_address is not None
        else os.environ.get(_ENV_ADDRESS)
    )
    if address is None:
        raise ValueError(
            f"initialize: coordinator_address was not given and ${_ENV_ADDRESS} is not "
            "set; pass e.g. coordinator_address='127.0.0.1:12345' (the same in every "
            "process)"
        )
    if not isinstance(address, str):
        raise TypeError(
            f"initialize: coordinator_address must be a 'host:port' str, got {address!r}"
        )
    from baton import _baton

    if not _baton._ProcessGroup.available():
        raise DistributedError(
            "baton was built without Gloo, so it cannot join several processes; install "
            "libgloo-dev (tools/install_deps.sh), rebuild, or use num_processes=1"
        )
    try:
        return _baton._ProcessGroup.connect(
            address,
            n,
            pid,
            float(initialization_timeout),
            float(collective_timeout),
            str(interface_address),
        )
    except ValueError as e:
        raise ValueError(f"initialize: {e}") from None
    except RuntimeError as e:
        raise DistributedError(str(e)) from None


def _connect_mpi(num_processes: Any, process_id: Any) -> Any:
    """The MPI job's group; ``num_processes``/``process_id`` must agree with it."""
    from baton import _baton

    if not _baton._ProcessGroup.mpi_available():
        raise DistributedError(
            "baton was built without MPI, so it cannot join an mpirun job; install "
            "libopenmpi-dev (tools/install_deps.sh) and rebuild, or use backend='gloo'"
        )
    if not any(v in os.environ for v in _ENV_MPI_SIZE):
        # MPI_Init outside a job may abort the process (Open MPI as root).
        raise DistributedError(
            "initialize(backend='mpi'): this process was not started by mpirun (none of "
            f"{', '.join('$' + v for v in _ENV_MPI_SIZE)} is set); start it with "
            "`mpirun -n N python3 script.py`, or use backend='gloo'"
        )
    try:
        group = _baton._ProcessGroup.connect_mpi()
    except RuntimeError as e:
        raise DistributedError(str(e)) from None
    for name, want, got in (
        ("num_processes", num_processes, group.size),
        ("process_id", process_id, group.rank),
    ):
        if want is not None and want != got:
            raise ValueError(
                f"initialize: {name} is {want!r} but the MPI job says {got}; leave it "
                "None with backend='mpi' (mpirun decides)"
            )
    return group


def _join(group: Any) -> None:
    """Makes ``group`` this process's, and tells every process how many
    devices the others have: bt.devices() then lists them all
    (baton/_remote_device.py)."""
    global _group
    from baton import _baton, _remote_device

    _group = group
    try:
        local = len(_baton.devices())
        counts = _allgather(np.array([local], np.int64)).reshape(-1)
    except BaseException:
        _group = None
        raise
    _remote_device.set_layout(group.rank, [int(c) for c in counts])


def _why_no_nccl(mode: str) -> str | None:
    """Why this process cannot move blocks through NCCL (None: it can)."""
    from baton import _baton

    if mode == "host":
        return "device_collectives='host' was asked for"
    gpus = [d for d in _baton.devices() if d.platform == "cuda"]
    if len(gpus) != 1:
        return (
            f"process {_group.rank} has {len(gpus)} CUDA devices; NCCL needs exactly one "
            "per process (start one process per GPU, each with its own "
            "CUDA_VISIBLE_DEVICES)"
        )
    reason = str(_baton._NcclExchange.unavailable_reason())
    return f"process {_group.rank}: {reason}" if reason else None


def _connect_exchange(mode: str) -> None:
    """Joins NCCL when every process can (``mode`` "auto" or "nccl"); the
    processes first agree through the group, since joining is a collective
    that every process must take part in or none."""
    global _exchange, _exchange_note
    from baton import _baton

    why = _why_no_nccl(mode)
    ready = _allgather(np.array([why is None], np.int64)).reshape(-1)
    if all(ready):
        gpu = next(d for d in _baton.devices() if d.platform == "cuda")
        try:
            _exchange = _baton._NcclExchange.connect(_group, gpu)
        except (RuntimeError, ValueError) as e:
            raise DistributedError(f"initialize: joining NCCL failed: {e}") from None
        _exchange_note = f"nccl on {gpu}"
        return
    not_ready = [i for i, r in enumerate(ready) if not r]
    reason = why or f"process(es) {not_ready} cannot use NCCL"
    if mode == "nccl":
        raise DistributedError(f"initialize(device_collectives='nccl'): {reason}")
    _exchange_note = f"host-staged over {_group.backend}: {reason}"


def device_collectives() -> str | None:
    """How partitioned calls move blocks between this group's processes:
    ``"nccl on cuda:0"``, or ``"host-staged over gloo: <why not NCCL>"``;
    None when not initialized or a group of one (nothing crosses processes).

    Example: ``print(bt.distributed.device_collectives())``.
    """
    return _exchange_note if _group is not None else None


def available(backend: str = "gloo") -> bool:
    """Whether this baton was built with ``backend`` ("gloo" or "mpi"), so
    :func:`initialize` can join several processes with it.

    Example: ``if not bt.distributed.available(): print("one process only")``.
    """
    from baton import _baton

    if backend == "gloo":
        return bool(_baton._ProcessGroup.available())
    if backend == "mpi":
        return bool(_baton._ProcessGroup.mpi_available())
    raise ValueError(f"available: backend is {backend!r}; use 'gloo' or 'mpi'")


def backend() -> str | None:
    """The engine of this process's group: "gloo", "mpi", or None (not
    initialized, or a group of one).

    Example: ``bt.distributed.backend()`` is ``"mpi"`` under ``mpirun``.
    """
    return None if _group is None else str(_group.backend)


def shutdown() -> None:
    """Leaves the group joined by :func:`initialize` (a no-op if none).

    Example::

        bt.distributed.shutdown()
    """
    global _group, _single, _exchange, _exchange_note
    from baton import _remote_device

    _remote_device.set_layout(0, None)
    _exchange = None  # NCCL's communicator before the group it came through
    _exchange_note = None
    _group = None
    _single = False


def is_initialized() -> bool:
    """Whether :func:`initialize` was called (and not undone by :func:`shutdown`).

    Example::

        if not bt.distributed.is_initialized():
            bt.distributed.initialize()
    """
    return _group is not None or _single


def _process_index() -> int:
    return 0 if _group is None else _group.rank


def _process_count() -> int:
    return 1 if _group is None else _group.size


def _run(op: str, fn: Any, *args: Any) -> None:
    try:
        with _lock:
            fn(*args)
    except RuntimeError as e:
        raise DistributedError(str(e)) from None


def _guard(what: str) -> None:
    """bt.thread_guard: a collective of an initialized process group (a
    multi-process operation) must come from the guard's thread."""
    if is_initialized():
        check_thread_guard(f"bt.distributed {what}")


def _host(a: Any) -> np.ndarray:
    """A fresh C-contiguous native-byte-order copy (the network sends raw bytes)."""
    x = np.array(a, copy=True, order="C")
    if x.dtype.hasobject:
        raise TypeError(
            "bt.distributed collectives take numeric arrays, not object arrays"
        )
    return x if x.dtype.isnative else x.astype(x.dtype.newbyteorder("="))


def _allreduce(a: np.ndarray, op: str = "sum", *, in_place: bool = False) -> np.ndarray:
    """The elementwise ``op`` ("sum", "max", "min") of ``a`` over all processes.

    ``a`` is float32/float64/int32/int64 of the same shape everywhere; it is
    not modified unless ``in_place`` (then a writable, C-contiguous,
    native-order ``a`` receives the result and is returned, with no copy).
    Example: ``_allreduce(np.ones(3, np.float32))`` is ``[N, N, N]`` in each
    of N processes.
    """
    _guard("all-reduce")
    direct = (
        in_place
        and isinstance(a, np.ndarray)
        and a.flags.c_contiguous
        and a.flags.writeable
        and a.dtype.isnative
    )
    out = a if direct else _host(a)
    if out.dtype.name not in _REDUCE_DTYPES:
        raise TypeError(
            f"_allreduce: dtype {out.dtype} is not supported; use one of {_REDUCE_DTYPES}"
        )
    if op not in ("sum", "max", "min"):
        raise ValueError(f"_allreduce: op is {op!r}; use 'sum', 'max' or 'min'")
    if _group is not None:
        _run("all_reduce", _group.allreduce_, out, out.dtype.name, op)
    return out


def _allgather(a: np.ndarray) -> np.ndarray:
    """Every process's ``a``, stacked: shape ``(process_count, *a.shape)``.

    Example: ``_allgather(np.array([bt.process_index()]))`` is
    ``[[0], [1], ...]`` everywhere.
    """
    _guard("all-gather")
    x = _host(a)
    out = np.empty((_process_count(),) + x.shape, x.dtype)
    if _group is None:
        out[0] = x
    else:
        _run("all_gather", _group.allgather, x, out)
    return out


def _broadcast(a: np.ndarray, root: int = 0) -> np.ndarray:
    """Process ``root``'s ``a`` (same shape and dtype everywhere), in every process.

    Example: ``_broadcast(np.arange(3) * bt.process_index(), root=1)`` is
    ``[0, 1, 2]`` everywhere.
    """
    _guard("broadcast")
    out = _host(a)
    if not 0 <= root < _process_count():
        raise ValueError(
            f"_broadcast: root is {root}; it must be in [0, process_count={_process_count()})"
        )
    if _group is not None:
        _run("broadcast", _group.broadcast_, out, int(root))
    return out


def _barrier() -> None:
    """Returns once every process has called it (or raises DistributedError).

    Example: ``_barrier()`` before reading a file another process wrote.
    """
    _guard("barrier")
    if _group is not None:
        _run("barrier", _group.barrier)
