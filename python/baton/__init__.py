"""baton: an array runtime with explicit, predictable device memory.

    import baton as bt

Every decision a runtime usually hides -- who owns a buffer, when it is
freed, copied or reused -- is visible and controllable here: storage is
released deterministically (never by a garbage collector), ``x.delete()``
frees now, ``device_put(new, into=old)`` overwrites in place, ``bt.donate``
hands storage to the next call, ``np.asarray(x)`` is a zero-copy view whose
hold lives exactly as long as the numpy array, and ``bt.memory_stats()``
shows the effect of each.
"""

from baton._blas_environment import blas_load_environment as _blas_env  # noqa: I001

with _blas_env():  # OpenBLAS reads its environment as it loads
    from baton import _baton  # the extension first
from baton import tree
import atexit as _atexit

from baton._baton import (
    Array,
    Device,
    Donated,
    effects_barrier,
    live_arrays,
    memory_stats,
    reset_peak_memory_stats,
    set_memory_limit,
)
from baton._config import config
from baton._creation import empty, full, ones, zeros
from baton._dlpack import from_dlpack
from baton._donation import donate
from baton._device_put import device_get
from baton._transfer import block_until_ready
from baton.errors import (
    DeletedArrayError,
    DonationError,
    DonationWarning,
    InPlaceError,
    ResourceExhaustedError,
)
from baton import _array_methods  # noqa: F401 -- attaches Array's methods
from baton._array_type import Array  # noqa: F811 -- bt.Array: arrays and tracers
from baton import lax
from baton._jit import clear_caches, device_put, jit  # device_put: traced form too
from baton import _compiler_ir  # noqa: F401  (Lowered.compiler_ir)
from baton._compile_log import log_compiles
from baton import _operators  # noqa: F401 -- operators, indexing, .at[] (uses jit)
from baton._memory_kinds import memory  # noqa: E402 -- bt.memory.Space (jax.memory)
from baton._dslice import ds  # noqa: E402 -- x[bt.ds(i, n)] with a traced start
from baton._autodiff import grad, jvp, value_and_grad, vjp
from baton._vmap import vmap
from baton._jacobians import hessian, jacfwd, jacobian, jacrev
from baton._custom import custom_jvp, custom_vjp
from baton._checkpoint import checkpoint, checkpoint_policies, remat, saved_residuals
from baton import ad_checkpoint
from baton import random
from baton import errors, sharding, tree_util  # JAX's surface (DESIGN 5.4)
from baton import _array_sharding  # noqa: F401 -- Array.devices(), .sharding
from baton._device_queries import (
    default_backend,
    devices,
    device_count,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from baton._abstract_eval import ShapeDtypeStruct, eval_shape, make_jaxpr
from baton._sharded_array import Shard, ShardedArray
from baton._sharded_put import device_put_replicated, device_put_sharded
from baton.sharding import make_mesh
from baton._shard_map import shard_map
from baton import _shard_map_trace  # noqa: E402,F401  (shard_map in a trace)
from baton import _transform_batching  # noqa: E402,F401  (grad / jvp in a vmap body)
from baton import _numpy_special  # noqa: F401,E402 -- bnp.i0, kaiser, nextafter, spacing
from baton import nn, scipy  # bt.nn, bt.scipy.special (over baton.numpy)
from baton import debug  # bt.debug.print / callback (host callbacks)
from baton import core, dtypes, typing  # noqa: F401 -- jax.core / jax.dtypes / jax.typing names
from baton import profiler  # bt.profiler: pprof, Chrome trace, memory scopes
from baton import distributed  # noqa: F401 -- processes; no network at import
from baton._toplevel import *  # noqa: F403 -- disable_jit, custom_gradient, ... (JAX's top level)
from baton._environment import print_environment_info, warn_if_blas_kernel_unfit
from baton._toplevel_more import *  # noqa: F403 -- pmap, fwd_and_bwd, set_mesh, ...
from baton._config_states import *  # noqa: F403 -- debug_nans, transfer_guard, ... (JAX's states)
from baton import _gc_guard  # noqa: F401,E402 -- array_garbage_collection_guard's gc hook
from baton import custom_batching, custom_derivatives, dlpack, experimental, image, monitoring, ops  # noqa: F401
from baton import stages, version  # noqa: F401 -- jax.stages / jax.version
from baton._ref import Ref, empty_ref, free_ref, freeze, new_ref  # jax.Ref, jax.new_ref, ...
from baton import ref  # noqa: F401 -- jax.ref

warn_if_blas_kernel_unfit()  # a generic BLAS kernel on a modern CPU: say so once
del warn_if_blas_kernel_unfit

for _cls in (Array, Device, Donated):
    try:
        _cls.__module__ = "baton"
    except (AttributeError, TypeError):
        pass
del _cls

from baton._version import __version__  # noqa: E402, F401


def _warn_before_fork():
    # os.fork() copies only the calling thread: a child forked now has none
    # of baton's worker threads, and baton refuses to run there (every call
    # that computes raises RuntimeError; src/baton/runtime/fork_guard.h).
    if _baton._runtime_threads() > 0:
        import warnings

        warnings.warn(
            "os.fork() was called while baton's worker threads are running. "
            "The child process cannot use baton (its calls raise "
            "RuntimeError, since the threads that run the work do not exist "
            "there). Use multiprocessing's 'spawn' or 'forkserver' start "
            "method instead, e.g. multiprocessing.get_context('spawn').",
            RuntimeWarning,
            stacklevel=2,
        )


def _install_fork_warning():
    import os

    if hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(before=_warn_before_fork)


_install_fork_warning()


__all__ = [
    "Array",
    "DeletedArrayError",
    "Device",
    "Donated",
    "DonationError",
    "DonationWarning",
    "InPlaceError",
    "Ref",
    "ResourceExhaustedError",
    "ShapeDtypeStruct",
    "ShardedArray",
    "ad_checkpoint",
    "block_until_ready",
    "checkpoint",
    "checkpoint_policies",
    "clear_caches",
    "config",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "device_put_replicated",
    "device_put_sharded",
    "devices",
    "donate",
    "effects_barrier",
    "empty",
    "empty_ref",
    "errors",
    "eval_shape",
    "free_ref",
    "freeze",
    "from_dlpack",
    "full",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "log_compiles",
    "make_jaxpr",
    "make_mesh",
    "memory_stats",
    "new_ref",
    "nn",
    "ones",
    "print_environment_info",
    "process_count",
    "process_index",
    "profiler",
    "random",
    "ref",
    "remat",
    "reset_peak_memory_stats",
    "saved_residuals",
    "scipy",
    "set_memory_limit",
    "shard_map",
    "sharding",
    "tree",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
    "zeros",
]


def _finish_enqueued_work() -> None:
    """At interpreter exit, the work enqueued so far finishes while Python
    still runs: its host callbacks (bt.debug.print/callback) need the
    interpreter, and an accelerator's streams outlive it. Errors are the
    programs' own, already reported when their outputs were read."""
    try:
        effects_barrier()
    except Exception:  # noqa: BLE001 - exiting; nothing left to tell
        pass


_atexit.register(_finish_enqueued_work)
