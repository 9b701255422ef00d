"""``Lowered.compiler_ir()``: the compiled program's text, for code written
against JAX's ``jax.jit(f).lower(x).compiler_ir(dialect="hlo")``.

baton does not compile through XLA, so there is no HLO or StableHLO: the
object returned carries baton's own program text (``Lowered.as_text()``,
the optimized, scheduled program) in an HLO-shaped envelope -- an
``HloModule`` line and an ``ENTRY`` block -- so that code which locates the
entry computation, or compares two functions' programs for equality (as
optax's tests do), works unchanged. The instructions are baton's
(``multiply(%0, %0) : f32[2]``), not XLA's; docs/jax_surface.md says so.
"""

from __future__ import annotations

from typing import Any

from baton import _baton

__all__ = ["CompilerIR"]

_DIALECTS = (None, "hlo", "stablehlo", "baton")


class CompilerIR:
    """A lowered program's text (see the module docstring)."""

    def __init__(self, name: str, body: str, dialect: str | None) -> None:
        self.name = name
        self.dialect = dialect
        self._body = body

    def as_hlo_text(self) -> str:
        """``HloModule <name>``, then ``ENTRY <name> {`` and baton's program
        (its instructions, one a line) and ``}``."""
        return f"HloModule {self.name}\n\nENTRY {self.name} {{\n{self._body}}}\n"

    def as_text(self) -> str:
        return self.as_hlo_text()

    def __str__(self) -> str:
        return self.as_hlo_text()


def _compiler_ir(self: Any, dialect: str | None = None) -> CompilerIR:
    if dialect not in _DIALECTS:
        raise ValueError(
            f"compiler_ir: unknown dialect {dialect!r}; baton accepts "
            f"{', '.join(repr(d) for d in _DIALECTS)} and returns its own program "
            "text for each"
        )
    lines = self.as_text().splitlines()
    # The first line names the function (// name): not part of the program.
    body = "".join(f"{line}\n" for line in lines if not line.startswith("// ") or "memory:" in line)
    name = lines[0][3:].strip() if lines and lines[0].startswith("// ") else "main"
    return CompilerIR(name, body, dialect)


_baton.Lowered.compiler_ir = _compiler_ir  # type: ignore[attr-defined]
