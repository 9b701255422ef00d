"""``bt.jit``: trace a Python function once per signature, compile it, call it.

The call path is C++ (``baton._baton.JitFunction``, python/src/jit.cc): it
splits static from dynamic arguments, flattens pytrees, looks up the compiled
program and runs it. This module validates ``jit``'s options, and holds the
helpers the C++ side calls on slow paths: tracing (rebuilding the argument
pytrees with Tracers, flattening the outputs), inlining a jitted function
called inside another trace, converting numpy / scalar leaves, naming leaves
in messages and warning. It also provides the traced form of
``bt.device_put`` and ``bt.clear_caches``.
"""

from __future__ import annotations

import functools
import inspect
import time
import types
import warnings
import weakref
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np
import optree

from baton import (
    _baton,
    _compile_log,
    _config_states,
    _device_put,
    _donation,
    _dtypes,
    _memory_kinds,
    _monitoring,
    _ref_state,
    _sharded_call,
    _stages,
    tree,
)
from baton._baton import Array, Donated, JitFunction, transforms
from baton._baton import lax as _lax
from baton._config import config as _config
from baton import _sharding_api
from baton._sharded_array import ShardedArray, ShardedDonated, is_sharded
from baton.errors import DonationWarning

Tracer = _lax.Tracer

__all__ = ["clear_caches", "device_put", "jit"]


# ---- bt.jit ----


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        out = []
        for v in value:
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise TypeError(f"jit: {what} must contain ints, not {v!r}")
            out.append(int(v))
        return tuple(out)
    raise TypeError(f"jit: {what} must be an int or a sequence of ints, not {value!r}")


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        out = []
        for v in value:
            if not isinstance(v, str):
                raise TypeError(f"jit: {what} must contain strings, not {v!r}")
            out.append(v)
        return tuple(out)
    raise TypeError(f"jit: {what} must be a str or a sequence of str, not {value!r}")


class _Options:
    """jit's argument options, validated against fn's signature and
    cross-filled (an argnum also covers the parameter passed by keyword, an
    argname the parameter passed by position)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
        donate_argnums: tuple[int, ...],
        donate_argnames: tuple[str, ...],
    ) -> None:
        self.require_in_place = False
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        self.param_names: list[str] = []
        self.var_positional: str | None = None
        self.unverified: set[int] = set()
        if sig is None:
            # Validated at the call instead.
            for n in static_argnums + donate_argnums:
                if n < 0:
                    raise ValueError(
                        f"jit({name}): negative argnums ({n}) need a function "
                        "whose signature can be inspected"
                    )
            self.unverified.update(static_argnums + donate_argnums)
            self.static_nums = set(static_argnums)
            self.donate_nums = set(donate_argnums)
            self.static_names = set(static_argnames)
            self.donate_names = set(donate_argnames)
        else:
            params = list(sig.parameters.values())
            P = inspect.Parameter
            positional = [
                p
                for p in params
                if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
            ]
            self.param_names = [p.name for p in positional]
            var_pos = [p for p in params if p.kind is P.VAR_POSITIONAL]
            self.var_positional = var_pos[0].name if var_pos else None
            has_var_kw = any(p.kind is P.VAR_KEYWORD for p in params)
            by_name = {
                p.name: p
                for p in params
                if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)
            }
            n_pos = len(positional)

            def nums(values: tuple[int, ...], what: str) -> set[int]:
                out = set()
                for n in values:
                    if self.var_positional is None:
                        m = n + n_pos if n < 0 else n
                        if not 0 <= m < n_pos:
                            raise ValueError(
                                f"jit({name}): {what} contains {n}, but {name} takes "
                                f"{n_pos} positional argument(s)"
                            )
                        out.add(m)
                    else:
                        if n < 0:
                            raise ValueError(
                                f"jit({name}): {what} contains {n}; negative "
                                f"argnums are ambiguous for a function with "
                                f"*{self.var_positional}"
                            )
                        if n >= n_pos:
                            self.unverified.add(n)
                        out.add(n)
                return out

            def names(values: tuple[str, ...], what: str) -> set[str]:
                for v in values:
                    if v not in by_name and not has_var_kw:
                        known = ", ".join(by_name) or "none"
                        raise ValueError(
                            f"jit({name}): {what} contains {v!r}, but {name} has "
                            f"no parameter of that name that can be passed by "
                            f"keyword (parameters: {known})"
                        )
                return set(values)

            self.static_nums = nums(static_argnums, "static_argnums")
            self.donate_nums = nums(donate_argnums, "donate_argnums")
            self.static_names = names(static_argnames, "static_argnames")
            self.donate_names = names(donate_argnames, "donate_argnames")
            for nums_set, names_set in (
                (self.static_nums, self.static_names),
                (self.donate_nums, self.donate_names),
            ):
                for n in list(nums_set):
                    if n < n_pos and positional[n].kind is P.POSITIONAL_OR_KEYWORD:
                        names_set.add(positional[n].name)
                for v in list(names_set):
                    p = by_name.get(v)
                    if p is not None and p.kind is P.POSITIONAL_OR_KEYWORD:
                        nums_set.add(self.param_names.index(v))
        both_nums = self.static_nums & self.donate_nums
        both_names = self.static_names & self.donate_names
        if both_nums or both_names:
            what = ", ".join(
                [f"argument {n}" for n in sorted(both_nums)]
                + [repr(v) for v in sorted(both_names)]
            )
            raise ValueError(
                f"jit({name}): {what} is both static and donated; a static "
                "argument is hashed into the cache key, not passed as a buffer, "
                "so it cannot be donated"
            )


class _Jitted(JitFunction):
    """A function compiled by ``bt.jit`` (see :func:`jit`)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        options: _Options,
    ) -> None:
        super().__init__(
            fn,
            name,
            sorted(options.static_nums),
            sorted(options.static_names),
            sorted(options.donate_nums),
            sorted(options.donate_names),
            sorted(options.unverified),
            options.require_in_place,
        )
        self._fun = fn
        self._static_nums = frozenset(options.static_nums)
        self._static_names = frozenset(options.static_names)
        self._donate_nums = frozenset(options.donate_nums)
        self._donate_names = frozenset(options.donate_names)
        self._param_names = tuple(options.param_names)
        self._var_positional = options.var_positional
        self._require_in_place = options.require_in_place
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Jitted methods bind like functions.
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<jitted function {getattr(self, '__qualname__', self._fun)}>"

    def lower(self, *args: Any, **kwargs: Any) -> _stages.Lowered:
        """Traces and compiles for these arguments without running anything
        or consuming any array (donate markers stay unused); returns a
        ``bt.stages.Lowered`` (``.compile()``, ``.as_text()``,
        ``.cost_analysis()``). Array leaves may be ``bt.ShapeDtypeStruct``s
        (or anything with ``.shape`` and ``.dtype``), as in JAX::

            f = bt.jit(lambda x: x * 2)
            c = f.lower(bt.ShapeDtypeStruct((3,), np.float32)).compile()
            c(np.ones(3, np.float32))  # [2. 2. 2.]

        With static arguments, the ``Compiled`` is called with the dynamic
        ones only. A ``weak_type=True`` ShapeDtypeStruct lowers as a strongly
        typed argument (baton's signature weak-types only Python scalars).
        """
        return _stages.lower(self, args, kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> _stages.Traced:
        """Traces for these arguments without compiling or running:
        a ``bt.stages.Traced`` (``.jaxpr``, ``.out_info``, ``.args_info``,
        ``.fun_name``, ``.lower()``), as JAX's ``jit(f).trace``::

            t = bt.jit(lambda x: x * 2).trace(np.ones(3, np.float32))
            t.out_info  # ShapeDtypeStruct(shape=(3,), dtype=float32)
        """

        def donated(key: int | str) -> bool:
            if isinstance(key, str):
                return key in self._donate_names
            return key in self._donate_nums

        return _stages.Traced(
            self, args, kwargs, self._static_nums, self._static_names, donated
        )

    def clear_cache(self) -> None:
        """Drops this function's compiled programs (and their constants)."""
        self._clear_cache()
        inner = self.__dict__.get("_refs_call")
        if inner is not None:
            inner.clear_cache()


class _JittedWithShardings(_Jitted):
    """A jitted function given ``in_shardings`` / ``out_shardings``: the
    positional arguments are placed before the call, the outputs after it
    (nothing is copied where a leaf is already placed so; a partitioned
    program makes its outputs in place, _partitioned_call.py). Inside
    another trace the call is inlined and the shardings do not apply (a
    traced program runs where its caller's runs)."""

    _in_shardings: Any = None
    _out_shardings: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _lax.is_tracing():
            return _inline(self, args, kwargs)
        name = f"jit({self.__name__})"
        if self._in_shardings is not None:
            # The positional arguments that are not static, as JAX counts them.
            dynamic = [i for i in range(len(args)) if i not in self._static_nums]
            placed = _sharding_api.place(
                tuple(args[i] for i in dynamic), self._in_shardings, f"{name} in_shardings"
            )
            args = list(args)
            for i, v in zip(dynamic, placed):
                args[i] = v
        out = super().__call__(*args, **kwargs)
        if self._out_shardings is None:
            return out
        return _sharding_api.place(out, self._out_shardings, f"{name} out_shardings")


class _JittedWithRefs(_Jitted):
    """A jitted function found to use bt.Refs it closes over (its class is
    switched to this one by the trace that found them, ``_trace``): each
    call passes those Refs to a jitted twin that takes them as a first
    argument, so their buffers go in donated and their final values come
    back into them, as for Refs passed explicitly. Calls run through Python
    (a few microseconds more than the C++ fast path)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _lax.is_tracing():
            return _inline(self, args, kwargs)
        while True:
            try:
                return self._twin()(tuple(self._closure_refs), *args, **kwargs)
            except _ref_state.RefEffects as e:
                # The twin found more closed-over Refs: take them too.
                if not (e.closure and e.frame.parent is None):
                    raise
                new = [r for r in e.refs if not any(r is q for q in self._closure_refs)]
                if not new:
                    raise
                self._closure_refs = [*self._closure_refs, *new]

    def _twin(self) -> _Jitted:
        twin = self.__dict__.get("_refs_call")
        if twin is None:
            fun = self._fun

            def with_refs(_baton_refs: Any, /, *args: Any, **kwargs: Any) -> Any:
                return fun(*args, **kwargs)

            try:
                sig = inspect.signature(fun)
                P = inspect.Parameter
                with_refs.__signature__ = sig.replace(  # type: ignore[attr-defined]
                    parameters=[
                        P("_baton_refs", P.POSITIONAL_ONLY),
                        *sig.parameters.values(),
                    ]
                )
            except (TypeError, ValueError):
                pass
            with_refs._baton_user = True  # type: ignore[attr-defined]
            with_refs._baton_refs_twin = True  # type: ignore[attr-defined]
            name = getattr(self, "__name__", "fn")
            with_refs.__name__ = with_refs.__qualname__ = name
            opts = _Options(
                with_refs,
                name,
                tuple(n + 1 for n in self._static_nums),
                tuple(self._static_names),
                tuple(n + 1 for n in self._donate_nums),
                tuple(self._donate_names),
            )
            opts.require_in_place = self._require_in_place
            twin = self.__dict__["_refs_call"] = _Jitted(with_refs, name, opts)
        return twin

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{getattr(self, '__name__', 'fn')}.lower(): the function uses bt.Refs "
            "it closes over; lowering it ahead of a call is not supported. Pass "
            "the Refs as arguments to lower it."
        )


def jit(
    fn: Callable[..., Any] | None = None,
    *,
    static_argnums: int | Iterable[int] = (),
    static_argnames: str | Iterable[str] = (),
    donate_argnums: int | Iterable[int] = (),
    donate_argnames: str | Iterable[str] = (),
    require_in_place: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Any:
    """Compiles ``fn`` for each distinct signature of its arguments.

    ``fn`` takes and returns pytrees of arrays (dicts, lists, tuples,
    namedtuples, None and dataclasses registered with
    ``bt.tree.register_dataclass``). The first call with a new signature --
    the pytree structure, the static arguments and each leaf's shape, dtype,
    memory kind and donation -- traces ``fn`` with ``bt.lax.Tracer`` values
    and compiles it; later calls with the same signature only run it.

    - numpy and scalar leaves are copied to the device (a snapshot) at each
      call. Python scalars become int32 / float32 / bool arrays that are
      weakly typed inside ``fn`` (``Tracer.weak_type``): like a literal they
      take the other operand's dtype, so ``step(params_bf16, 0.1)`` computes
      in bfloat16.
    - ``static_argnums`` / ``static_argnames``: arguments passed as Python
      values (hashed into the cache key, so they must be hashable); ``fn``
      sees them unchanged.
    - ``donate_argnums`` / ``donate_argnames``: arguments whose storage the
      call may reuse for outputs of the same byte size, dtype and memory
      kind (every leaf of a donated pytree). An argnum also covers the
      argument passed by keyword, an argname the argument passed by
      position. ``f(bt.donate(x))`` donates at the call site. Donated arrays
      are consumed (``is_deleted()``); a donated buffer that no output can
      use is freed after the call and reported with ``DonationWarning``
      naming the argument (``bt.config.update("donation", "error")`` raises
      ``DonationError`` instead, before anything runs). Refused with
      ``DonationError`` and nothing consumed: an array with live host views,
      the same array donated twice or donated and also passed undonated (or
      captured). A deleted argument raises ``DeletedArrayError``.
    - An undonated argument returned unchanged is returned as the same
      ``Array`` object. Arguments on different devices: ``ValueError``.
    - Closures: a baton ``Array`` the function closes over becomes a hidden
      argument (never copied into the program); a numpy array becomes a
      constant, snapshotted at trace time and stored once however often it
      is used. Compiled programs (and what they keep alive) live as long as
      the jitted function, or until ``bt.clear_caches()``.
    - Inside ``fn``, ``bt.device_put(t, memory_kind=...)`` moves a traced
      value between memory kinds; outputs keep the kind their value has.
    - A jitted function called while another is being traced is inlined
      into it and consumes nothing.
    - ``inline`` is accepted for JAX's signature and changes nothing: a
      jitted function called while another is traced is always inlined.
    - ``in_shardings`` / ``out_shardings`` (as JAX's): where the positional
      arguments are placed before the call and the outputs are laid out --
      one sharding (or PartitionSpec, on the current mesh) for every leaf,
      or a tuple / list / dict prefix of the arguments' or outputs'
      structure (None leaves a part as it is). A program partitioned over a
      mesh (sharded arguments) makes its outputs in those layouts (a last
      all-gather or slice where propagation chose another); otherwise the
      arguments and outputs are resharded before and after the call (a
      copy per leaf not already placed so).
    - ``require_in_place=True`` (beyond JAX): compiling fails with
      ``bt.InPlaceError`` (a ``ValueError``) when an update -- ``.at[]``,
      ``dynamic_update_slice``, a loop carry (``bt.lax.fori_loop`` ...) --
      would copy its operand instead of writing over it; the message names
      each such update and why (its operand is an argument that is not
      donated, or is read again after the update).

    Option errors (out-of-range argnums, unknown names, an argument both
    static and donated) raise ``ValueError`` here when ``fn``'s signature
    allows, else at the first call. ``f.lower(*args, **kwargs).compile()``
    compiles without running or consuming anything and gives
    ``memory_analysis()`` and ``as_text()``.
    """
    if not isinstance(inline, bool):
        raise TypeError(f"jit: inline must be a bool, not {type(inline).__name__}")
    options = dict(
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        require_in_place=require_in_place,
    )
    if in_shardings is not None:
        options["in_shardings"] = in_shardings
    if out_shardings is not None:
        options["out_shardings"] = out_shardings
    if fn is None:
        return functools.partial(jit, **options)
    if not callable(fn):
        raise TypeError(f"jit: expected a function, not {type(fn).__name__}")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    name = name or type(fn).__name__
    opts = _Options(
        fn,
        name,
        _ints(static_argnums, "static_argnums"),
        _names(static_argnames, "static_argnames"),
        _ints(donate_argnums, "donate_argnums"),
        _names(donate_argnames, "donate_argnames"),
    )
    opts.require_in_place = bool(require_in_place)
    if getattr(fn, "_baton_shard_map", False):
        from baton import _shard_map

        return _shard_map.jit_of(fn, opts.donate_nums, opts.donate_names)
    if in_shardings is not None or out_shardings is not None:
        jitted = _JittedWithShardings(fn, name, opts)
        jitted._in_shardings = in_shardings
        jitted._out_shardings = out_shardings
        return jitted
    return _Jitted(fn, name, opts)


# ---- Helpers called by the C++ call path ----


def _internal(fun: Any) -> bool:
    """A jitted function baton made for itself (eager ops, eager
    transformations), not one of the user's."""
    if getattr(fun, "_baton_user", False):
        return False
    mod = getattr(fun, "__module__", None) or type(fun).__module__ or ""
    parts = mod.split(".")
    return len(parts) > 1 and parts[0] == "baton" and parts[1].startswith("_")


def _substitute_leaf(leaf: Any, tracers: Any) -> Any:
    if isinstance(leaf, _ref_state.RefBase):  # the caller's Ref, bound to its parameter
        return _ref_state.bind_argument(leaf, next(tracers))
    return next(tracers)


def _substitute(arg: Any, tracers: Any) -> Any:
    if isinstance(arg, (Array, Donated)):
        return next(tracers)
    if isinstance(arg, _ref_state.RefBase):
        return _substitute_leaf(arg, tracers)
    leaves, treedef = tree.flatten(arg)
    return tree.unflatten(treedef, [_substitute_leaf(leaf, tracers) for leaf in leaves])


def _as_output(leaf: Any, jitted: _Jitted, treedef: Any) -> Any:
    if isinstance(leaf, Tracer):
        return leaf
    if isinstance(leaf, _ref_state.RefBase):
        raise _ref_state.returned_ref_error(jitted.__qualname__)
    if isinstance(leaf, Array):
        return _lax.capture(leaf)  # returned unchanged: the same object
    if _dtypes.is_python_scalar(leaf) or isinstance(leaf, (np.ndarray, np.generic)):
        return _lax.constant(leaf)
    raise TypeError(
        f"{jitted.__qualname__}: the function returned a {type(leaf).__name__} "
        f"in its output {treedef}; outputs must be arrays or pytrees of arrays "
        "(return other values from a function that is not jitted)"
    )


def _bind_arguments(jitted: _Jitted, args: tuple, kwargs: dict, tracers: list) -> None:
    """Binds each parameter Tracer to the argument leaf it stands for (the
    order of :func:`_substitute`), so values computed from them can be made
    concrete (``python/src/concrete.cc``): used by transformations called
    outside ``bt.jit`` (``_eager_transform.run_eagerly``)."""
    values: list = []
    for i, a in enumerate(args):
        if i not in jitted._static_nums:
            values.extend([a] if isinstance(a, (Array, Donated)) else tree.leaves(a))
    for k in sorted(kwargs):
        if k not in jitted._static_names:
            v = kwargs[k]
            values.extend([v] if isinstance(v, (Array, Donated)) else tree.leaves(v))
    if len(values) == len(tracers):
        transforms.bind(tracers, values)


# explain_cache_misses: the argument signatures each function was traced for.
_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MAX_SEEN = 32  # signatures kept per function


def _signature(jitted: _Jitted, args: tuple, kwargs: dict, tracers: list) -> dict:
    """What a compiled program of ``jitted`` depends on, per argument path."""
    it = iter(tracers)
    sig: dict[str, Any] = {}
    items = [(f"args[{i}]", i in jitted._static_nums, a) for i, a in enumerate(args)]
    items += [(f"kwargs[{k!r}]", k in jitted._static_names, kwargs[k]) for k in sorted(kwargs)]
    for path, is_static, a in items:
        if is_static:
            sig[path] = ("static value", repr(a))
            continue
        leaves, treedef = tree.flatten(a)
        if not isinstance(a, (Array, Donated)):
            sig[path + " structure"] = ("pytree", str(treedef))
        for j, _ in enumerate(leaves if not isinstance(a, (Array, Donated)) else [a]):
            t = next(it, None)
            if t is None:
                break
            where = path if isinstance(a, (Array, Donated)) or len(leaves) == 1 \
                else f"{path} leaf {j}"
            sig[where] = (
                "type",
                f"{np.dtype(t.dtype).name}{list(t.shape)}"
                + (" weak" if getattr(t, "weak_type", False) else ""),
            )
    return sig


def _explain_miss(jitted: _Jitted, args: tuple, kwargs: dict, tracers: list) -> None:
    import logging

    if not _config._values["explain_cache_misses"]:
        seen = _SEEN.setdefault(jitted, [])
        seen.append(_signature(jitted, args, kwargs, tracers))
        del seen[:-_MAX_SEEN]
        return
    name = getattr(jitted, "__name__", "fn")
    code = getattr(jitted._fun, "__code__", None)
    where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
    sig = _signature(jitted, args, kwargs, tracers)
    seen = _SEEN.setdefault(jitted, [])
    log = logging.getLogger(_compile_log.LOGGER_NAME)
    if not seen:
        log.warning("TRACING CACHE MISS at jit(%s)%s because:\n  never seen function", name, where)
    else:
        def diffs(old: dict) -> list[str]:
            keys = list(dict.fromkeys(list(old) + list(sig)))
            return [
                f"  {k}: {old.get(k, ('', 'absent'))[1]} before, now {sig.get(k, ('', 'absent'))[1]}"
                for k in keys
                if old.get(k) != sig.get(k)
            ]

        best = min((diffs(old) for old in seen), key=len)
        reason = "\n".join(best) if best else (
            "  the same argument signature as before (its program was dropped: "
            "clear_cache, clear_caches or a changed user context)"
        )
        log.warning(
            "TRACING CACHE MISS at jit(%s)%s because the closest traced signature "
            "differs:\n%s", name, where, reason,
        )
    seen.append(sig)
    del seen[:-_MAX_SEEN]


def _trace(jitted: _Jitted, args: tuple, kwargs: dict, tracers: list) -> tuple:
    """Calls the function with Tracers in place of the dynamic leaves (in
    a frame of its own for the bt.Refs it uses: ``_ref_state``)."""
    user = not _internal(jitted._fun)
    name = getattr(jitted, "__name__", "fn")
    frame = _ref_state.push("jit" if user else "internal", name)
    try:
        out = _trace_in_frame(jitted, args, kwargs, tracers, frame)
        if (
            user
            and frame.eager_touched
            and not getattr(jitted._fun, "_baton_refs_twin", False)
            and type(jitted) is _Jitted
        ):
            # Closed-over Refs: this call reads them as captured arrays and
            # writes their final values back; later calls pass them to a
            # twin taking them as arguments (_JittedWithRefs).
            jitted._closure_refs = list(frame.eager_touched)
            jitted.__class__ = _JittedWithRefs
            out = _ref_state.closure_outputs(out, frame, jitted._clear_cache)
        leaves, treedef = tree.flatten(out)
        outs = [_as_output(leaf, jitted, treedef) for leaf in leaves]
        try:
            spec = _out_spec(out, iter(range(len(leaves))))
        except _NotPlain:
            spec = None
    except BaseException:
        _ref_state.pop(frame, failed=True)
        raise
    _ref_state.pop(frame)
    return outs, treedef, spec


def _trace_in_frame(
    jitted: _Jitted, args: tuple, kwargs: dict, tracers: list, frame: Any
) -> Any:
    it = iter(tracers)
    static_nums, static_names = jitted._static_nums, jitted._static_names
    new_args = [
        a if i in static_nums else _substitute(a, it) for i, a in enumerate(args)
    ]
    new_kwargs = {}
    for k in sorted(kwargs):
        v = kwargs[k]
        new_kwargs[k] = v if k in static_names else _substitute(v, it)
    if getattr(jitted, "_binds_arguments", False):
        _bind_arguments(jitted, args, kwargs, tracers)
    if _config._values["no_tracing"] and not _internal(jitted._fun):
        raise RuntimeError(
            f"re-tracing function jit({getattr(jitted, '__name__', 'fn')}) for "
            "`jit`, but 'no_tracing' is set"
        )
    if not _internal(jitted._fun):  # recorded always, explained when asked
        try:
            _explain_miss(jitted, args, kwargs, tracers)
        except Exception:
            pass
    timed = _compile_log.active() or _monitoring.listening()
    start = time.perf_counter() if timed else None
    out = jitted._fun(*new_args, **new_kwargs)
    if start is not None:  # bt.log_compiles() or a listener: a cache miss
        took = time.perf_counter() - start
        if _compile_log.active():
            _compile_log.traced(getattr(jitted, "__name__", "fn"), took)
        _monitoring.record_event_duration_secs(
            "/jax/core/compile/jaxpr_trace_duration", took,
            fun_name=getattr(jitted, "__name__", "fn"),
        )
    # With the final values of the Ref arguments (written back to the caller's).
    return _ref_state.with_ref_outputs(out, frame, tracers)


class _NotPlain(Exception):
    pass


def _out_spec(out: Any, index: Any) -> tuple:
    """How the C++ call path rebuilds an output made of plain containers
    (dicts with str keys, lists, tuples, None) without optree: leaves are
    numbered in flattening order (dict keys sorted), dicts are rebuilt in
    sorted key order, as JAX's. Raises _NotPlain for anything else (optree
    rebuilds those)."""
    if isinstance(out, (Tracer, Array, np.ndarray, np.generic)) or (
        _dtypes.is_python_scalar(out)
    ):
        return ("*", next(index))
    if out is None:
        return ("n",)
    if type(out) is tuple or type(out) is list:
        return ("t" if type(out) is tuple else "l", [_out_spec(c, index) for c in out])
    if type(out) is dict and all(type(k) is str for k in out):
        keys = tuple(sorted(out))
        return ("d", keys, [_out_spec(out[k], index) for k in keys])
    raise _NotPlain


def _inline_leaf(leaf: Any) -> Any:
    if isinstance(leaf, (Tracer, _ref_state.RefBase)):
        return leaf  # a Ref: the inlined function updates it in this trace
    if isinstance(leaf, Donated):
        leaf = _baton._jit_undonate(leaf)  # the outer array is not consumed
    if isinstance(leaf, Array):
        return _lax.capture(leaf)
    if _dtypes.is_python_scalar(leaf):
        return leaf  # weakly typed, as in a call
    if isinstance(leaf, (str, bytes)):
        raise TypeError(
            f"a {type(leaf).__name__} is not an array; mark the argument static "
            "(static_argnums / static_argnames)"
        )
    return _lax.constant(leaf)  # numpy data and scalars, as a call converts them


def _inline(jitted: _Jitted, args: tuple, kwargs: dict) -> Any:
    """A jitted function called while another is traced becomes part of that
    trace: its dynamic leaves are Tracers of the outer trace (arrays
    captured, host data as constants, markers giving their arrays back), so
    nothing is consumed."""
    static_nums, static_names = jitted._static_nums, jitted._static_names
    if jitted._donate_nums or jitted._donate_names or any(
        isinstance(leaf, Donated) for leaf in tree.leaves((args, kwargs))
    ):
        _donation.note_inlined_donation()  # the trace ignores it
    new_args = [
        a if i in static_nums else tree.map(_inline_leaf, a) for i, a in enumerate(args)
    ]
    new_kwargs = {
        k: v if k in static_names else tree.map(_inline_leaf, v)
        for k, v in kwargs.items()
    }
    return jitted._fun(*new_args, **new_kwargs)


def _to_array(leaf: Any, device: Any) -> Array:
    # (A sharded leaf never comes here: the C++ call path hands such calls
    # to _sharded_call.call.)
    return _device_put.device_put(leaf, device)


def _host_spec(leaf: Any) -> tuple[tuple[int, ...], str]:
    if _dtypes.is_python_scalar(leaf):
        return (), _dtypes.python_scalar_dtype(leaf).name
    if isinstance(leaf, (str, bytes)):
        raise TypeError(f"a {type(leaf).__name__} is not an array")
    if is_sharded(leaf):
        raise TypeError(
            "a sharded array; a program for sharded arguments is made at call time "
            "(each device runs it on its shard), so it cannot be lowered ahead"
        )
    a = np.asarray(leaf)
    return tuple(a.shape), _dtypes.name_of(_dtypes.canonical(a.dtype))


_REF_LEAF = " (a bt.Ref)"  # how messages name a Ref argument's buffer


def _leaf_names_of(arg: Any, root: str) -> list[str]:
    if isinstance(arg, (Array, Donated)):
        return [root]
    if isinstance(arg, _ref_state.RefBase):
        return [root + _REF_LEAF]
    accessors, leaves, _ = optree.tree_flatten_with_accessor(
        arg, none_is_leaf=False, namespace=tree.NAMESPACE
    )
    return [
        a.codify(root) + (_REF_LEAF if isinstance(leaf, _ref_state.RefBase) else "")
        for a, leaf in zip(accessors, leaves)
    ]


def _leaf_names(jitted: _Jitted, args: tuple, kwargs: dict) -> list[str]:
    """How the user would write each dynamic leaf: ``x``, ``state.u``,
    ``params['w'][0]``, ``args[3]``."""
    names: list[str] = []
    params = jitted._param_names
    for i, a in enumerate(args):
        if i in jitted._static_nums:
            continue
        if i < len(params):
            root = params[i]
        elif jitted._var_positional is not None:
            root = f"{jitted._var_positional}[{i - len(params)}]"
        else:
            root = f"args[{i}]"
        names.extend(_leaf_names_of(a, root))
    for k in sorted(kwargs):
        if k not in jitted._static_names:
            names.extend(_leaf_names_of(kwargs[k], k))
    return names


def _warn(message: str) -> None:
    # A bt.Ref argument's buffer is donated so the program can update it in
    # place; where it cannot (the new value comes from a cond branch, say),
    # the old buffer is freed after the call, as the Ref semantics want:
    # nothing to warn about when only Refs are listed.
    listed = message.split("computed after the program's last read of the buffer): ", 1)
    if len(listed) == 2:
        items = listed[1].rsplit(". They are freed", 1)[0].split("; ")
        if all(_REF_LEAF in item for item in items):
            return
    warnings.warn(message, DonationWarning, stacklevel=2)


_baton._jit_set_helpers(
    _ref_state.jit_flatten,  # optree's, with bt.Ref arguments as donated buffers
    _trace,
    _inline,
    _to_array,
    _host_spec,
    _leaf_names,
    _warn,
    (ShardedArray, ShardedDonated),  # calls with these go to _sharded_call.call
    _sharded_call.call,
)


# ---- bt.device_put inside a trace, bt.clear_caches ----


def _put_traced(leaf: Any, memory_kind: str | None) -> Any:
    if isinstance(leaf, Donated):
        raise TypeError(
            "device_put: a bt.donate() marker cannot be put inside a traced "
            "function; donate at the jit call instead"
        )
    t = leaf if isinstance(leaf, Tracer) else _lax.as_tracer(leaf)
    return t if memory_kind is None else _lax.to_memory_kind(t, memory_kind)


def device_put(
    x: Any,
    device: Any = None,
    *,
    memory_kind: str | None = None,
    may_alias: bool = False,
    into: Any = None,
) -> Any:
    if isinstance(device, _memory_kinds.MemorySpace):  # jax.memory.Space
        if memory_kind is not None:
            raise TypeError("device_put: give a memory space or memory_kind=, not both")
        device, memory_kind = None, _memory_kinds.kind_of_space(device)
    if not _lax.is_tracing():
        if _config._values["transfer_guard_host_to_device"] != "allow":
            for leaf in tree.leaves(x):
                if not isinstance(leaf, (Array, Donated)) and not is_sharded(leaf):
                    _config_states.check_transfer(
                        "host_to_device", True, f"{type(leaf).__name__} (device_put)"
                    )
        return _device_put.device_put(
            x, device, memory_kind=memory_kind, may_alias=may_alias, into=into
        )
    # Inside a function being traced: values of the program, not transfers.
    if into is not None:
        raise TypeError(
            "device_put(into=...) cannot be used inside a traced function; "
            "donate the argument instead and return the new value"
        )
    _device_put.check_device(device)
    _memory_kinds.check_kind(memory_kind)
    if device is not None and device != _lax._trace_device():
        raise ValueError(
            f"device_put: cannot move a traced value to {device}; the function "
            f"is compiled for {_lax._trace_device()}"
        )
    return tree.map(lambda leaf: _put_traced(leaf, memory_kind), x)


device_put.__doc__ = (
    (_device_put.device_put.__doc__ or "")
    + """
    Inside a function traced by ``bt.jit``: a Tracer is moved to
    ``memory_kind`` by the program (``lax.to_memory_kind``), a baton Array is
    captured (a hidden argument), host data becomes a constant (a snapshot,
    stored once); ``into=`` is not allowed.
    """
)

_CACHE_CLEARERS: list[Callable[[], None]] = []


def register_cache_clearer(fn: Callable[[], None]) -> None:
    """Calls ``fn()`` on every ``bt.clear_caches()`` (for layers that keep
    their own compiled-program caches, e.g. eager operations)."""
    _CACHE_CLEARERS.append(fn)


def clear_caches() -> None:
    """Drops every compiled program of every jitted function (and the
    constants and captured arrays they keep alive). Later calls recompile."""
    _baton._jit_clear_caches()
    for fn in list(_CACHE_CLEARERS):
        fn()


_config_states._cache_clearer.append(clear_caches)
