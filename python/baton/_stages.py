"""The stages of a ``bt.jit`` function, as ``jax.stages``: ``Traced``
(``f.trace(*args)``), ``Lowered`` (``f.lower(*args)``) and ``Compiled``
(``f.lower(*args).compile()``).

``Lowered`` and ``Compiled`` wrap the C++ objects of the same names
(``python/src/compiled.cc``, which trace, compile and run) and add what
JAX's have on top: a ``Compiled`` of a function with static arguments is
called with the dynamic arguments only (the static values are the ones it
was lowered with), and ``cost_analysis()`` (``_cost_analysis``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _abstract_eval, _baton, _cost_analysis, tree
from baton._sharded_array import is_sharded

__all__ = ["ArgInfo", "Compiled", "Lowered", "ShardedCompiled", "ShardedLowered", "Traced"]


class _Statics:
    """The static arguments a function was lowered with, and how to put
    them back among the dynamic ones of a ``Compiled`` call."""

    def __init__(
        self, name: str, args: tuple, kwargs: dict, nums: frozenset, names: frozenset
    ) -> None:
        self.name = name
        n = len(args)
        self.positions = {i: args[i] for i in range(n) if i in nums}
        self.n_args = n
        self.keywords = {k: v for k, v in kwargs.items() if k in names}

    def __bool__(self) -> bool:
        return bool(self.positions or self.keywords)

    def full(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        n_dyn = self.n_args - len(self.positions)
        given = [k for k in kwargs if k in self.keywords]
        if len(args) != n_dyn or given:
            what = (
                f"static keyword argument(s) {given} were given"
                if given
                else f"{len(args)} positional argument(s) were given, "
                f"{n_dyn} expected"
            )
            raise TypeError(
                f"{self.name}: function compiled with input pytree does not match "
                f"the input pytree it was called with: {what}. A Compiled of a "
                "function with static arguments takes only its dynamic arguments "
                "(the static ones are those it was lowered with), as in JAX."
            )
        it = iter(args)
        full = tuple(
            self.positions[i] if i in self.positions else next(it)
            for i in range(self.n_args)
        )
        return full, {**kwargs, **self.keywords}


class _Stage:
    """What the stages of one lowered signature share: the object they wrap
    (``_inner``: the C++ ``Lowered`` / ``Compiled``, or for sharded
    arguments the partitioned program) and the static arguments it was
    lowered with (``_statics``)."""

    def __init__(self, inner: Any, statics: _Statics) -> None:
        self._inner = inner
        self._statics = statics

    def _call(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """``fn`` called with the dynamic arguments of a compiled stage and
        the static ones it was lowered with."""
        if self._statics:
            args, kwargs = self._statics.full(args, kwargs)
        return fn(*args, **kwargs)

    @staticmethod
    def _refuse_compiler_options(
        compiler_options: Any, error: type[Exception], message: str
    ) -> None:
        """``compile(compiler_options=...)``: baton has none to take."""
        if compiler_options:
            raise error(message)


class _CppStage(_Stage):
    """``Lowered`` / ``Compiled``: the C++ object's attributes and repr,
    and the cost analysis of its program."""

    def cost_analysis(self) -> dict[str, float]:
        """JAX's cost-analysis dict (``flops``, ``transcendentals``,
        ``bytes accessed``, ``bytes accessed{i}{}``, ``bytes accessedout{}``)
        estimated from the program (see ``baton/_cost_analysis.py``)::

            f = bt.jit(lambda a, b: a @ b)
            f.lower(a34, b35).compile().cost_analysis()["flops"]  # 2*4*5*3
        """
        return _cost_analysis.cost_analysis_of_text(self._inner.as_text())

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("_inner")
        if inner is None:  # during copy / unpickling
            raise AttributeError(name)
        return getattr(inner, name)

    def __repr__(self) -> str:
        return repr(self._inner)


class Compiled(_CppStage):
    """A compiled signature of a jitted function
    (``f.lower(*args).compile()``).

    Call it with the dynamic arguments only (static ones were fixed by
    ``lower``)::

        f = bt.jit(lambda x, n: x * n, static_argnums=1)
        c = f.lower(x, 3).compile()
        c(x)                        # x * 3
        c.cost_analysis()["flops"]  # x.size
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(self._inner, args, kwargs)

    def memory_analysis(self) -> Any:
        """Argument, output, alias, temporary, constant and peak bytes of
        one call (``bt.stages.Compiled.memory_analysis``)."""
        return self._inner.memory_analysis()

    def as_text(self) -> str:
        """The optimized program with its memory analysis."""
        return self._inner.as_text()


class Lowered(_CppStage):
    """A jitted function traced for one signature (``f.lower(*args)``);
    nothing was run or consumed. ``compile()`` gives the :class:`Compiled`;
    ``as_text()``, ``compiler_ir()`` and ``cost_analysis()`` describe the
    program."""

    def compile(self, compiler_options: Any = None) -> Compiled:
        """The compiled program (compilation happened in ``lower()``)."""
        self._refuse_compiler_options(
            compiler_options,
            NotImplementedError,
            "Lowered.compile(compiler_options=...): baton has no XLA compiler "
            "options",
        )
        return Compiled(self._inner.compile(), self._statics)

    def as_text(self, *args: Any, **kwargs: Any) -> str:
        """The optimized program."""
        return self._inner.as_text()

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The program text in an HLO-shaped envelope (``_compiler_ir``)."""
        return self._inner.compiler_ir(dialect)

    def cost_analysis(self) -> dict[str, float]:
        """As :meth:`Compiled.cost_analysis` (the same program)."""
        return super().cost_analysis()


class ArgInfo:
    """One array argument of a :class:`Traced` (JAX's ``stages.ArgInfo``):
    its ``shape``, ``dtype`` and whether it is ``donated``."""

    def __init__(self, aval: Any, donated: bool) -> None:
        self._aval = aval
        self.donated = donated

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ArgInfo)
            and self._aval == other._aval
            and self.donated == other.donated
        )

    def __hash__(self) -> int:
        return hash((self._aval, self.donated))

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class Traced:
    """``bt.jit(f).trace(*args)``: ``f`` traced for these arguments,
    nothing compiled or run (JAX's ``jax.stages.Traced``).

    - ``jaxpr``: the traced program (what ``bt.make_jaxpr`` gives: baton's
      program text, not JAX's jaxpr syntax);
    - ``out_info``: the outputs as a pytree of ``bt.ShapeDtypeStruct``;
    - ``args_info``: ``(args, kwargs)`` of the dynamic arguments as
      :class:`ArgInfo` leaves (static arguments left out, as JAX's);
    - ``fun_name``; ``in_avals`` / ``out_avals``;
    - ``lower()``: the :class:`Lowered` ``bt.jit(f).lower(*args)`` gives.

    Example::

        t = bt.jit(lambda x: x * 2).trace(np.ones(3, np.float32))
        t.out_info         # ShapeDtypeStruct(shape=(3,), dtype=float32)
        t.lower().compile()(np.ones(3, np.float32))
    """

    def __init__(
        self,
        jitted: Any,
        args: tuple,
        kwargs: dict,
        nums: frozenset,
        names: frozenset,
        donated: Callable[[int | str], bool],
    ) -> None:
        self._jitted = jitted
        self._args = args
        self._kwargs = kwargs
        self.fun_name = getattr(jitted, "__name__", "fn")
        static_kw = {k: v for k, v in kwargs.items() if k in names}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in names}
        fun = jitted._fun
        static_pos = frozenset(i for i in range(len(args)) if i in nums)

        def call(*a: Any, **k: Any) -> Any:
            return fun(*a, **k, **static_kw)

        call.__name__ = self.fun_name
        self.jaxpr, self.out_info = _abstract_eval.make_jaxpr(
            call, static_argnums=tuple(sorted(static_pos)), return_shape=True
        )(*args, **dyn_kw)
        self.in_avals = self.jaxpr.in_avals
        self.out_avals = self.jaxpr.out_avals
        self.out_tree = tree.structure(self.out_info)

        def info(x: Any, key: int | str) -> Any:
            aval = _abstract_eval._aval(x)
            if aval is None:
                return x
            sds = _abstract_eval.ShapeDtypeStruct(aval[0], aval[1], weak_type=aval[2])
            return ArgInfo(sds, donated(key))

        dyn_args = tuple(
            tree.map(lambda x, i=i: info(x, i), a)
            for i, a in enumerate(args)
            if i not in static_pos
        )
        self.args_info = (
            dyn_args,
            {k: tree.map(lambda x, k=k: info(x, k), v) for k, v in dyn_kw.items()},
        )
        self.in_tree = tree.structure(self.args_info)

    def lower(self) -> Lowered:
        """The :class:`Lowered` of these arguments (as ``f.lower(*args)``)."""
        return self._jitted.lower(*self._args, **self._kwargs)

    def __repr__(self) -> str:
        return f"<Traced {self.fun_name}>"


def _is_struct(x: Any) -> bool:
    """A ``bt.ShapeDtypeStruct`` or another shape-and-dtype-only leaf
    (``jax.ShapeDtypeStruct``): not an array, no data."""
    return isinstance(x, _abstract_eval.ShapeDtypeStruct) or (
        not isinstance(x, (type, np.ndarray, np.generic, _baton.Array))
        and hasattr(x, "shape")
        and hasattr(x, "dtype")
        and not hasattr(x, "__array__")
    )


def _placeholder(x: Any) -> Any:
    """A struct leaf as a numpy array of its shape and dtype that holds one
    element (a broadcast view): the C++ lowering reads only the signature of
    host leaves, and sees the same one as for a real array."""
    if not _is_struct(x):
        return x
    return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape))


class _ShardedStage(_Stage):
    """``ShardedLowered`` / ``ShardedCompiled``: a jitted function's program
    partitioned over the mesh of its sharded arguments (``_inner``:
    ``_partitioned_call``'s compiled program)."""

    def __init__(self, jitted: Any, compiled: Any, statics: _Statics) -> None:
        super().__init__(compiled, statics)
        self._jitted = jitted

    def as_text(self) -> str:
        """The partitioned program (its stages and the communication between
        them) and each compute stage's compiled program on the first device."""
        return self._inner.exe.as_text()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._statics.name})"


class ShardedCompiled(_ShardedStage):
    """``f.lower(*args).compile()`` for sharded arguments: the program
    partitioned over their mesh and compiled for each device
    (``jit/spmd_executable.h``). ``memory_analysis()`` is one device's: the
    one of this process's with the highest peak (devices differ only in
    which combines a collective; ``memory_analysis_per_device()`` gives
    each), as JAX reports its per-device SPMD program. It is counted stage by
    stage; stages run asynchronously, and memory a stage releases is freed
    when its work is done, so a measured peak can exceed it by blocks in
    flight between stages::

        x = bt.device_put(np.ones((64, 32), np.float32), NamedSharding(mesh, P("i")))
        c = bt.jit(lambda a: a @ a.T).lower(x).compile()
        c.memory_analysis().argument_size_in_bytes   # 64 * 32 * 4 / 4
        c(x)                                           # runs it
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(self._jitted, args, kwargs)

    def memory_analysis(self) -> Any:
        """What one call holds on a device of the mesh (its blocks):
        arguments, outputs, aliases, temporaries, constants, peak -- that of
        this process's device with the highest peak."""
        return max(self.memory_analysis_per_device(),
                   key=lambda a: a.peak_memory_in_bytes)

    def memory_analysis_per_device(self) -> list:
        """memory_analysis() of each of this process's devices of the mesh,
        in mesh order."""
        exe = self._inner.exe
        return [exe.memory_analysis(k) for k in range(len(exe.local_positions))]

    @property
    def output_shardings(self) -> Any:
        from baton.sharding import NamedSharding

        mesh = self._inner.mesh
        specs = [
            NamedSharding(mesh, _partitioned_spec(dims, mesh))
            for dims in self._inner.exe.output_shardings
        ]
        return tree.unflatten(self._inner.out_def, specs)


class ShardedLowered(_ShardedStage):
    """``f.lower(*args)`` for sharded arguments; ``compile()`` gives a
    :class:`ShardedCompiled` (the partitioning happens there)."""

    def compile(self, compiler_options: Any = None) -> ShardedCompiled:
        self._refuse_compiler_options(
            compiler_options,
            ValueError,
            "compile(compiler_options=...): baton has no compiler options",
        )
        return ShardedCompiled(self._jitted, self._inner, self._statics)


def _partitioned_spec(dims: list, mesh: Any) -> Any:
    from baton import _partitioned_call

    return _partitioned_call._spec(dims, mesh)


def _lower_sharded(jitted: Any, args: tuple, kwargs: dict, statics: _Statics) -> Any:
    from baton import _partitioned_call, _sharded_call

    leaves, rebuild, names = _sharded_call._split(jitted, args, kwargs)
    donated = {
        i for i in _sharded_call._donated_leaves(jitted, args, kwargs)
        if is_sharded(leaves[i])
    }
    compiled = _partitioned_call.compile_for(
        jitted, kwargs, leaves, rebuild, names, donated
    )
    return ShardedLowered(jitted, compiled, statics)


def lower(jitted: Any, args: tuple, kwargs: dict) -> Lowered:
    """``jitted.lower(*args, **kwargs)`` (the C++ lowering) wrapped; struct
    leaves of dynamic arguments become placeholders. Sharded arguments give
    a ShardedLowered (the program partitioned over their mesh)."""
    nums, names = jitted._static_nums, jitted._static_names
    statics = _Statics(getattr(jitted, "__name__", "fn"), args, kwargs, nums, names)
    dynamic = [a for i, a in enumerate(args) if i not in nums]
    dynamic += [v for k, v in kwargs.items() if k not in names]
    if any(is_sharded(leaf) for leaf in tree.leaves(dynamic)):
        return _lower_sharded(jitted, args, kwargs, statics)
    args = tuple(
        a if i in nums else tree.map(_placeholder, a) for i, a in enumerate(args)
    )
    kwargs = {
        k: v if k in names else tree.map(_placeholder, v) for k, v in kwargs.items()
    }
    return Lowered(_baton.JitFunction.lower(jitted, *args, **kwargs), statics)
