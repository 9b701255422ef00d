"""``jnp.vectorize``: a function of core-shaped arrays mapped over the
leading (loop) dimensions of its broadcast arguments with ``bt.vmap``.

Without ``signature`` every argument's core is a scalar. With a
generalized-ufunc signature such as ``"(n),(n)->()"`` or
``"(m,n),(n)->(m)"`` each positional argument keeps its trailing core
dimensions; the loop dimensions (everything before them) broadcast
together. Core dimension names bind to sizes across arguments and the
outputs (inconsistent sizes raise ValueError); an output whose rank or
sizes differ from the signature raises ValueError.

A loop dimension of size 1 in an argument is not mapped for it (vmap's
``in_axes=None``), so broadcasting never materializes copies; a loop
dimension of size 1 in every argument is added back to the result.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from baton import tree
from baton._vmap import vmap
from baton.numpy import _creation, _shapes

__all__ = ["vectorize"]

_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_CORES}->{_CORES}$")

Core = tuple  # tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[Core], list[Core]]:
    """``"(n),(n)->()"`` -> ``([("n",), ("n",)], [()])``."""
    if not isinstance(signature, str):
        raise TypeError(
            f"vectorize: `signature` must be a str such as '(n),(n)->()', not "
            f"{type(signature).__name__}"
        )
    s = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(s):
        raise ValueError(
            f"vectorize: {signature!r} is not a valid gufunc signature; write "
            "comma-separated core shapes of named dimensions on each side of "
            "'->', e.g. '(m,n),(n)->(m)' or '(n),(n)->(),()'"
        )
    ins, outs = s.split("->")

    def cores(part: str) -> list[Core]:
        return [tuple(re.findall(_NAME, c)) for c in re.findall(_CORE, part)]

    return cores(ins), cores(outs)


def _bind(
    sizes: dict[str, int], core: Core, shape: tuple[int, ...], what: str, signature: str
) -> None:
    """Binds the names of ``core`` to the trailing sizes of ``shape``."""
    if len(shape) < len(core):
        raise ValueError(
            f"vectorize: {what} has {len(shape)} dimension(s) (shape "
            f"{shape}), fewer than the {len(core)} core dimension(s) "
            f"{'(' + ','.join(core) + ')'} of signature {signature!r}"
        )
    for name, size in zip(core, shape[len(shape) - len(core) :]):
        known = sizes.setdefault(name, int(size))
        if known != size:
            raise ValueError(
                f"vectorize: core dimension {name!r} of signature "
                f"{signature!r} has size {known} in one place and {size} in "
                f"{what} (shape {shape})"
            )


def _checked(
    fn: Callable[..., Any], sizes: dict[str, int], outs: list[Core], signature: str
) -> Callable[..., Any]:
    """``fn`` whose result is checked against the output cores (one array
    for a single output, a tuple of ``len(outs)`` arrays otherwise)."""

    def call(*vals: Any) -> Any:
        out = fn(*vals)
        many = len(outs) != 1
        if many:
            if not isinstance(out, (tuple, list)) or len(out) != len(outs):
                got = (
                    f"{len(out)} outputs"
                    if isinstance(out, (tuple, list))
                    else f"a {type(out).__name__}"
                )
                raise ValueError(
                    f"vectorize: signature {signature!r} has {len(outs)} "
                    f"outputs; the function returned {got}"
                )
            results = tuple(_creation.asarray(o) for o in out)
        else:
            if isinstance(out, (tuple, list)):
                raise ValueError(
                    f"vectorize: signature {signature!r} has one output; the "
                    f"function returned a {type(out).__name__} of {len(out)}"
                )
            results = (_creation.asarray(out),)
        own = dict(sizes)
        for k, (r, core) in enumerate(zip(results, outs)):
            shape = tuple(r.shape)
            what = f"output {k}"
            if len(shape) != len(core):
                raise ValueError(
                    f"vectorize: {what} has shape {shape}, but signature "
                    f"{signature!r} gives it {len(core)} core dimension(s) "
                    f"{'(' + ','.join(core) + ')'}"
                )
            _bind(own, core, shape, what, signature)
        return results if many else results[0]

    return call


def vectorize(
    pyfunc: Callable[..., Any],
    *,
    excluded: Any = frozenset(),
    signature: str | None = None,
) -> Callable[..., Any]:
    """``pyfunc`` mapped (with ``bt.vmap``) over the broadcast loop
    dimensions of its array arguments.

    ``excluded``: positions (ints) and keywords (strs) passed through
    unmapped. ``signature``: a gufunc signature (``"(n),(n)->()"``) giving
    the trailing core dimensions each positional argument keeps and the
    outputs must have; without it all cores are scalars and unexcluded
    keyword arguments are mapped too. With a signature, keyword arguments
    must be excluded (the signature only describes positions). ``None``
    positional arguments are passed through when their core is scalar.
    """
    if not callable(pyfunc):
        raise TypeError(
            f"vectorize: `pyfunc` must be callable, not {type(pyfunc).__name__}"
        )
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (int, str)) or isinstance(e, bool):
            raise TypeError(
                f"vectorize: `excluded` entries must be ints (positions) or "
                f"strs (keywords), not {type(e).__name__}"
            )
        if isinstance(e, int) and e < 0:
            raise ValueError(f"vectorize: `excluded` positions must be >= 0, not {e}")
    parsed = None if signature is None else _parse_signature(signature)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        kws = [k for k in kwargs if k not in excluded]
        if parsed is not None and kws:
            raise TypeError(
                f"vectorize: keyword argument(s) {kws} are not in `excluded`; "
                f"with signature {signature!r} only positional arguments are "
                "mapped: pass them by position or add them to `excluded`"
            )
        dyn = [i for i in range(len(args)) if i not in excluded]
        if parsed is None:
            ins: list[Core] = [()] * (len(dyn) + len(kws))
            outs = None
        else:
            ins, outs = parsed
            if len(ins) != len(dyn):
                raise TypeError(
                    f"vectorize: signature {signature!r} has {len(ins)} "
                    f"input(s); the call passed {len(dyn)} unexcluded "
                    "positional argument(s)"
                )
        # None arguments with a scalar core are passed through, like excluded.
        for j in reversed(range(len(dyn))):
            if args[dyn[j]] is None:
                if ins[j] != ():
                    raise ValueError(
                        f"vectorize: argument {dyn[j]} is None, but signature "
                        f"{signature!r} gives it core dimensions {ins[j]}"
                    )
                del dyn[j]
                ins = ins[:j] + ins[j + 1 :]
        fixed = {i: a for i, a in enumerate(args) if i not in dyn}
        fixed_kw = {k: v for k, v in kwargs.items() if k not in kws}
        vals = [_creation.asarray(args[i]) for i in dyn] + [
            _creation.asarray(kwargs[k]) for k in kws
        ]

        sizes: dict[str, int] = {}
        loops = []
        for j, (v, core) in enumerate(zip(vals, ins)):
            shape = tuple(v.shape)
            what = (
                f"argument {dyn[j]}"
                if j < len(dyn)
                else f"keyword argument {kws[j - len(dyn)]!r}"
            )
            _bind(sizes, core, shape, what, str(signature))
            loops.append(shape[: len(shape) - len(core)])
        try:
            loop = tuple(np.broadcast_shapes(*loops)) if loops else ()
        except ValueError:
            raise ValueError(
                f"vectorize: the loop (non-core) shapes {loops} of the "
                "arguments do not broadcast together"
            ) from None

        def call(*mapped: Any) -> Any:
            full = dict(fixed)
            full.update(zip(dyn, mapped[: len(dyn)]))
            kw = dict(fixed_kw)
            kw.update(zip(kws, mapped[len(dyn) :]))
            return pyfunc(*[full[i] for i in range(len(args))], **kw)

        fn = call if outs is None else _checked(call, sizes, outs, str(signature))

        # Each argument's loop shape, padded on the left to len(loop); its
        # size-1 loop dimensions are squeezed away and not mapped.
        n = len(loop)
        padded = [(1,) * (n - len(ls)) + ls for ls in loops]
        squeezed = []
        for v, ls in zip(vals, loops):
            ones = tuple(i for i, s in enumerate(ls) if s == 1)
            squeezed.append(_shapes.squeeze(v, axis=ones) if ones else v)
        unmapped = []
        for axis in reversed(range(n)):
            in_axes = tuple(None if p[axis] == 1 else 0 for p in padded)
            if all(a is None for a in in_axes):
                unmapped.append(axis)
            else:
                fn = vmap(fn, in_axes=in_axes)
        out = fn(*squeezed)
        if not unmapped:
            return out
        dims = tuple(sorted(unmapped))
        return tree.map(lambda r: _shapes.expand_dims(r, dims), out)

    wrapped.__name__ = getattr(pyfunc, "__name__", "vectorized")
    wrapped.__qualname__ = getattr(pyfunc, "__qualname__", wrapped.__name__)
    wrapped.__doc__ = getattr(pyfunc, "__doc__", None)
    wrapped.__wrapped__ = pyfunc  # type: ignore[attr-defined]
    return wrapped
