"""``x.at[idx]``: functional updates, JAX's syntax.

    y = x.at[idx].set(v)         # also .add .multiply .min .max, and .get()

``x`` is unchanged; ``y`` is a new array -- except inside ``bt.jit`` when
x is dead afterwards (a donated argument, or a value computed in the
function), where the update is written into x's buffer: ``x.at[i].set(v)``,
``x.at[:].add(v)`` and updates at traced indices each compile to one
in-place scatter, dynamic_update_slice or elementwise op (check with
``f.lower(...).compile().memory_analysis()``).

Indices follow numpy when static (out of range raises IndexError, negative
ones wrap) and JAX when traced (negative ones wrap, out-of-range updates are
dropped, reads clamp). Repeated indices accumulate for add, multiply, min and
max; for set one of them wins. The value is converted to x's dtype and must
broadcast to the shape of ``x[idx]``.
"""

from __future__ import annotations

from typing import Any

from baton import _indexing

__all__ = ["IndexUpdateHelper", "IndexUpdateRef"]


class IndexUpdateHelper:
    """``x.at``: index it to get an :class:`IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[idx]``: the update methods below return new arrays."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self) -> Any:
        """``x[idx]``."""
        return _indexing.getitem(self.array, self.index)

    def set(self, values: Any) -> Any:
        """x with ``x[idx] = values`` (of repeated indices, one wins)."""
        return _indexing.update(self.array, self.index, values, "set")

    def add(self, values: Any) -> Any:
        """x with ``x[idx] += values`` (repeated indices accumulate)."""
        return _indexing.update(self.array, self.index, values, "add")

    def multiply(self, values: Any) -> Any:
        """x with ``x[idx] *= values`` (repeated indices accumulate)."""
        return _indexing.update(self.array, self.index, values, "mul")

    mul = multiply

    def min(self, values: Any) -> Any:
        """x with ``x[idx] = minimum(x[idx], values)``."""
        return _indexing.update(self.array, self.index, values, "min")

    def max(self, values: Any) -> Any:
        """x with ``x[idx] = maximum(x[idx], values)``."""
        return _indexing.update(self.array, self.index, values, "max")
