"""Lowered.compiler_ir(): baton's program text in an HLO-shaped envelope,
so code written against jax.jit(f).lower(x).compiler_ir("hlo") finds the
entry computation and can compare two functions' programs."""

import re

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp

X = np.array([4.0, 5.2], np.float32)


def _entry(f, x):
    text = bt.jit(f).lower(x).compiler_ir(dialect="hlo").as_hlo_text()
    m = re.search(r"ENTRY.*", text, re.DOTALL)
    assert m, text
    return re.sub("ENTRY.*?{", "ENTRY XXXX", m.group())


def test_the_same_program_gives_the_same_text():
    # x * x, x ** 2, square and |x|^2 of real x are one program.
    forms = [lambda x: x * x, lambda x: x**2, bnp.square, lambda x: (bnp.conj(x) * x).real]
    texts = {_entry(f, X) for f in forms}
    assert len(texts) == 1, texts
    assert "multiply(%0, %0)" in texts.pop()


def test_complex_abs_square_is_a_different_program():
    z = np.array([4 + 1j, 5.2 + 1j], np.complex64)
    assert _entry(lambda x: x * x, z) != _entry(lambda x: (bnp.conj(x) * x).real, z)


def test_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="dialect"):
        bt.jit(lambda x: x).lower(X).compiler_ir(dialect="llvm")


def test_python_scalars_stay_weak_inside_a_trace():
    # jnp.asarray(0.5) is weakly typed in JAX: bfloat16 data keeps its type.
    y = bnp.ones(2, dtype=bnp.bfloat16)
    assert bt.jit(lambda y: bnp.asarray(0.5) * y)(y).dtype == bnp.bfloat16
    assert bt.jit(lambda y: bnp.array(2) * y)(y).dtype == bnp.bfloat16
