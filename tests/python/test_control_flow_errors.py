"""Errors of bt.lax control flow (DESIGN 5.2), as JAX raises them: carries
that change structure or type, cond_fun results that are no boolean
scalars, branches that disagree, scan lengths, bad operands and bounds."""

import pytest

import baton as bt
import baton.numpy as bnp
from baton import lax


def test_carry_structure_change_is_a_type_error():
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.fori_loop(0, 3, lambda i, x: (x, x), bnp.float32(0))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.while_loop(lambda d: False, lambda d: {"b": d["a"]}, {"a": bnp.float32(0)})
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.scan(lambda c, x: ([c[0], c[1]], None), (0.0, 0.0), bnp.arange(3.0))
    with pytest.raises(TypeError, match="same pytree structure"):
        bt.jit(lambda n, x: lax.fori_loop(0, n, lambda i, c: [c], x))(
            bnp.int32(3), bnp.float32(0)
        )


@pytest.mark.parametrize(
    "loop, got, want",
    [
        (
            lambda: lax.fori_loop(0, 3, lambda i, x: x.astype(bnp.int32), bnp.zeros(3)),
            "int32[3]",
            "float32[3]",
        ),
        (
            lambda: lax.while_loop(
                lambda x: True, lambda x: bnp.zeros(4), bnp.zeros(3)
            ),
            "float32[4]",
            "float32[3]",
        ),
        (
            lambda: lax.scan(lambda c, x: (c[:2], None), bnp.zeros(3), bnp.arange(2.0)),
            "float32[2]",
            "float32[3]",
        ),
        (
            lambda: lax.scan(
                lambda c, x: ((c[0], c[1].astype(bnp.float16)), x),
                (bnp.int32(0), bnp.zeros(2)),
                bnp.arange(2.0),
            ),
            "float16[2]",
            "float32[2]",
        ),
    ],
    ids=["fori-dtype", "while-shape", "scan-shape", "scan-dtype-pytree"],
)
def test_carry_type_change_is_a_type_error_naming_both_types(loop, got, want):
    with pytest.raises(TypeError, match="identical types") as e:
        loop()
    assert got in str(e.value) and want in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "cond_fun, what",
    [
        (lambda x: x, r"float32\[\]"),
        (lambda x: bnp.int32(0), r"int32\[\]"),
        (lambda x: bnp.array([True]), r"bool\[1\]"),
        (lambda x: (x < 1, x < 2), r"bool\[\], bool\[\]"),
    ],
    ids=["float", "int", "bool-vector", "pair"],
)
def test_while_cond_fun_must_return_a_boolean_scalar(cond_fun, what):
    with pytest.raises(
        TypeError, match=r"cond_fun must return a boolean scalar.*" + what
    ):
        lax.while_loop(cond_fun, lambda x: x + 1, bnp.float32(0))


def test_cond_branches_must_agree():
    with pytest.raises(TypeError, match="same type structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, bnp.float32(0))
    with pytest.raises(TypeError, match="identical types") as e:
        lax.cond(True, lambda x: x, lambda x: x[:2], bnp.zeros(3))
    assert "float32[2]" in str(e.value) and "float32[3]" in str(e.value)
    with pytest.raises(TypeError, match=r"identical types.*int32\[3\]"):
        lax.switch(
            0, [lambda x: x, lambda x: x.astype(bnp.int32), lambda x: x], bnp.zeros(3)
        )
    with pytest.raises(TypeError, match="same type structure"):
        bt.jit(lambda k: lax.switch(k, [lambda: {"a": 1.0}, lambda: {"b": 1.0}]))(
            bnp.int32(0)
        )


def test_cond_mismatch_message_names_true_fun_first():
    with pytest.raises(TypeError, match=r"float32\[\] and int32\[\]"):
        lax.cond(True, lambda x: x, lambda x: x.astype(bnp.int32), bnp.float32(0))


def test_cond_and_switch_operand_checks():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        bt.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(bnp.array([True, True]))
    with pytest.raises(TypeError, match="integer"):
        bt.jit(lambda k: lax.switch(k, [lambda: 1.0, lambda: 2.0]))(bnp.float32(1))
    with pytest.raises(TypeError, match="integer"):
        lax.switch(True, [lambda: 1.0, lambda: 2.0])


def test_scan_length_errors_are_value_errors():
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, None), 0.0, (bnp.zeros(3), bnp.zeros(4)))
    with pytest.raises(ValueError, match="`length` argument of 4 which disagrees"):
        lax.scan(lambda c, x: (c, None), 0.0, bnp.zeros(3), length=4)
    with pytest.raises(
        ValueError, match="no values to scan over and `length` not provided"
    ):
        lax.scan(lambda c, x: (c, None), 0.0)
    with pytest.raises(ValueError, match="no leading axis"):
        lax.scan(lambda c, x: (c + x, None), 0.0, bnp.float32(1))
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.map(lambda x: x, {"a": bnp.zeros(2), "b": bnp.zeros(3)})


def test_scan_body_must_return_a_pair():
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c + x, 0.0, bnp.arange(3.0))


def test_switch_with_no_branches_is_a_value_error():
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        bt.jit(lambda k: lax.switch(k, (), 1.0))(bnp.int32(0))


@pytest.mark.parametrize(
    "call",
    [
        lambda: lax.cond(True, 1, lambda: 2),
        lambda: lax.switch(0, [lambda: 1.0, 2]),
        lambda: lax.scan(1, 0.0, bnp.zeros(3)),
        lambda: lax.while_loop(1, lambda x: x, 0.0),
        lambda: lax.while_loop(lambda x: x < 1, 2, 0.0),
        lambda: lax.fori_loop(0, 3, 1, 0.0),
        lambda: lax.map(1, bnp.zeros(3)),
    ],
    ids=["cond", "switch", "scan", "while-cond", "while-body", "fori", "map"],
)
def test_non_callable_is_a_type_error(call):
    with pytest.raises(TypeError, match="callable"):
        call()


def test_fori_loop_bounds_of_different_dtypes_are_a_type_error():
    f = bt.jit(lambda a, b: lax.fori_loop(a, b, lambda i, x: x + 1, bnp.int32(0)))
    with pytest.raises(TypeError, match="must have equal types, got int32 and int16"):
        f(bnp.int32(0), bnp.int16(3))
    with pytest.raises(TypeError, match="must have equal types"):
        f(bnp.int32(0), bnp.float32(3))
