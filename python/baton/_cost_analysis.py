"""``Lowered.cost_analysis()`` / ``Compiled.cost_analysis()``: an estimate
of one call's work, in the keys of JAX's (XLA's) cost analysis.

baton has no cost model in C++, so the estimate is computed here from the
compiled program's text (``as_text()``: every instruction with its operands'
and result's types), with XLA's ``HloCostAnalysis`` counting rules:

- ``dot_general``: ``2 * (result elements) * (contracted elements)`` flops
  (``2*m*n*k`` for a matmul, as JAX reports);
- ``reduce``: one flop per input element;
- ``exp``/``log``/``sin``/``cos``/``tan``/``tanh``/``logistic``/``sqrt``/
  ``rsqrt``/``cbrt``/``pow``/``erf``/``atan2``/...: one *transcendental*
  per result element;
- other elementwise instructions: one flop per result element;
- data movement (reshape, transpose, broadcast, slice, pad, concatenate,
  gather, constants, iota, ...): no flops;
- ``bytes accessed``: the bytes of every instruction's operands and result
  (``bytes accessed{i}{}``: of operand ``i``; ``bytes accessedout{}``: of the
  results), constants excluded. A key whose value is zero is left out, as
  in JAX's dict (a matmul has no ``transcendentals``, a reshape no
  ``flops``).

A loop or branch body is counted once, as XLA's analysis does. XLA fuses
elementwise chains before counting bytes, baton's program text is unfused,
so ``bytes accessed`` is larger than JAX's for such chains; flops and
transcendentals match for matmuls and elementwise work. JAX's
``utilization*`` keys (XLA's per-operand reuse) are not reported.
"""

from __future__ import annotations

import math
import re

__all__ = ["cost_analysis_of_text"]

_DTYPE_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8,
    "c64": 8, "c128": 16, "f8e4m3fn": 1, "f8e5m2": 1, "s4": 1, "u4": 1,
}

_TRANSCENDENTAL = frozenset({
    "exponential", "exponential_minus_one", "exp", "expm1", "log",
    "log_plus_one", "log1p", "logistic", "sine", "sin", "cosine", "cos",
    "tangent", "tan", "tanh", "sqrt", "rsqrt", "cbrt", "power", "pow",
    "erf", "erf_inv", "atan2", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "lgamma", "digamma", "igamma", "igammac",
    "erfc", "bessel_i0e", "bessel_i1e", "random_gamma_grad", "polygamma",
    "zeta",
})

_NO_FLOPS = frozenset({
    "constant", "iota", "reshape", "transpose", "broadcast_in_dim",
    "broadcast", "slice", "dynamic_slice", "dynamic_update_slice",
    "concatenate", "pad", "gather", "rev", "squeeze", "expand_dims",
    "copy", "bitcast_convert", "to_memory_kind", "device_put", "tuple",
    "get_tuple_element", "optimization_barrier", "parameter",
})

# Instructions holding bodies (their work is counted in the body).
_CONTAINERS = frozenset({
    "scan", "while", "while_loop", "cond", "call", "switch", "checkpoint",
    "custom_jvp", "custom_vjp", "map", "pjit", "closed_call",
})

_TYPE = re.compile(r"^([a-z0-9]+)\[([0-9,]*)\]$")
_PARAM = re.compile(r"%(\d+):\s*([a-z0-9]+\[[0-9,]*\])")
_INSTR = re.compile(r"^\s*%(\d+) = ([a-zA-Z_0-9.]+)\((.*?)\)(.*?)(?: : (\S+))?$")
_OPERAND = re.compile(r"%(\d+)")


def _parse_type(t: str) -> tuple[int, int, tuple[int, ...]] | None:
    """(elements, bytes, dims) of ``f32[4,3]``; None for other forms."""
    m = _TYPE.match(t.strip())
    if not m:
        return None
    dims = tuple(int(d) for d in m.group(2).split(",") if d)
    n = math.prod(dims)
    return n, n * _DTYPE_BYTES.get(m.group(1), 4), dims


def _params(header: str) -> dict:
    """The parameters' types of a ``func(%0: f32[4,3], ...)`` header."""
    return {int(i): _parse_type(t) for i, t in _PARAM.findall(header)}


def _contracted(attrs: str, lhs_dims: tuple[int, ...]) -> int:
    m = re.search(r"contracting_dims=\[([0-9,]*)\]x", attrs)
    if not m:
        return 1
    axes = [int(a) for a in m.group(1).split(",") if a]
    return math.prod(lhs_dims[a] for a in axes if a < len(lhs_dims))


def cost_analysis_of_text(text: str) -> dict[str, float]:
    """The cost estimate of the first program in ``text`` (the entry
    function; nested bodies are printed inside it), as JAX's dict."""
    flops = 0.0
    transcendentals = 0.0
    per_operand: dict[int, float] = {}
    out_bytes = 0.0
    scopes: list[dict[int, tuple[int, int, tuple[int, ...]]]] = []
    started = False
    for line in text.splitlines():
        stripped = line.strip()
        if not started:
            if stripped.startswith("func("):
                started = True
                header = stripped.split("->", 1)[0]
                scopes.append(_params(header))
            continue
        if stripped.startswith("// memory:") or (line == "}" and len(scopes) == 1):
            break
        if stripped.startswith("}"):  # the end of a nested body: "} : type"
            if len(scopes) > 1:
                scopes.pop()
            continue
        m = _INSTR.match(line)
        if not m:
            continue
        vid, op, operands, attrs, typ = m.groups()
        scope = scopes[-1]
        if stripped.endswith("{") and "func(" in stripped:
            # An instruction with a body: its result type is on the closing
            # line; the body gets a scope of its own.
            header = stripped.split("func(", 1)[1].split("->", 1)[0]
            scopes.append(_params("(" + header))
            continue
        result = _parse_type(typ) if typ else None
        if result is not None:
            scope[int(vid)] = result
        if op in _CONTAINERS or result is None or op == "constant":
            continue
        ins = [scope.get(int(o)) for o in _OPERAND.findall(operands)]
        for i, t in enumerate(ins):
            if t is not None:
                per_operand[i] = per_operand.get(i, 0.0) + t[1]
        out_bytes += result[1]
        if op == "dot_general":
            lhs = ins[0] if ins and ins[0] is not None else (1, 0, ())
            flops += 2.0 * result[0] * _contracted(attrs, lhs[2])
        elif op == "reduce":
            flops += float(ins[0][0]) if ins and ins[0] is not None else 0.0
        elif op in _TRANSCENDENTAL:
            transcendentals += result[0]
        elif op not in _NO_FLOPS:
            flops += result[0]
    out: dict[str, float] = {
        "flops": flops,
        "transcendentals": transcendentals,
        "bytes accessed": sum(per_operand.values()) + out_bytes,
    }
    for i in sorted(per_operand):
        out[f"bytes accessed{i}{{}}"] = per_operand[i]
    out["bytes accessedout{}"] = out_bytes
    # XLA's dict holds the non-zero properties only (a reshape has no
    # "flops", a matmul no "transcendentals").
    return {k: v for k, v in out.items() if v}
