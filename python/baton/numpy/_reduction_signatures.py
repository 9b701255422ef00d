"""The public signatures of ``baton.numpy``'s reductions, each declared once.

numpy's reductions come in a few signature shapes: sum's (``dtype``,
``initial``, ``where``), max's (no ``dtype``), any's and mean's
(keyword-only ``where``), var's (``ddof``), argmax's (keyword-only
``keepdims``) and nanargmax's. ``_reductions`` and ``_nan_reductions`` list
their functions in a table -- name, shape, body, docstring -- and
:func:`define` makes each public function: one with its shape's signature
(what ``inspect.signature`` shows, as numpy's) that passes its arguments on,
in order, to the body, which checks them and runs the reduction.
"""

from __future__ import annotations

from typing import Any, Callable

Body = Callable[..., Any]


def _sum_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: None = None,
        where: None = None,
    ) -> Any:
        return body(a, axis, dtype, out, keepdims, initial, where)

    return reduction


def _max_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: None = None,
        where: None = None,
    ) -> Any:
        return body(a, axis, out, keepdims, initial, where)

    return reduction


def _any_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        where: None = None,
    ) -> Any:
        return body(a, axis, out, keepdims, where)

    return reduction


def _mean_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        where: None = None,
    ) -> Any:
        return body(a, axis, dtype, out, keepdims, where)

    return reduction


def _var_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        where: None = None,
    ) -> Any:
        return body(a, axis, dtype, out, ddof, keepdims, where)

    return reduction


def _argmax_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any, axis: Any = None, out: None = None, *, keepdims: bool = False
    ) -> Any:
        return body(a, axis, out, keepdims)

    return reduction


def _nanargmax_shape(body: Body) -> Callable[..., Any]:
    def reduction(
        a: Any, axis: Any = None, out: None = None, keepdims: bool = False
    ) -> Any:
        return body(a, axis, out, keepdims)

    return reduction


SHAPES: dict[str, Callable[[Body], Callable[..., Any]]] = {
    "sum": _sum_shape,
    "max": _max_shape,
    "any": _any_shape,
    "mean": _mean_shape,
    "var": _var_shape,
    "argmax": _argmax_shape,
    "nanargmax": _nanargmax_shape,
}


def define(namespace: dict[str, Any], table: list[tuple[str, str, Body, str]]) -> None:
    """Defines each ``(name, shape, body, doc)`` of ``table`` in ``namespace``
    (a module's globals) as the public function ``name``."""
    for name, shape, body, doc in table:
        fn = SHAPES[shape](body)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = doc
        fn.__module__ = namespace["__name__"]
        namespace[name] = fn
